#!/usr/bin/env bash
# Installs the Debian packages Tessera builds with, only those missing. Safe to run again.
set -euo pipefail
PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libyaml-cpp-dev nlohmann-json3-dev libabsl-dev libfmt-dev libspdlog-dev libcli11-dev
  libgtest-dev libgmock-dev librapidcheck-dev libbenchmark-dev
  # The accounting store (docs/accounting.md): embedded SQLite.
  libsqlite3-dev
  # The regular expressions of DRA CEL selectors (matches(), docs/dra-cel.md).
  libre2-dev
  # Kubernetes mode: REST client, metrics endpoint. Its integration tests run a control plane that
  # scripts/k8s/build-apiserver.sh builds with the machine's Go (1.26, not Debian's) from the Go
  # module proxy; cluster.sh needs openssl, curl and python3. ccache keeps compiled objects.
  libcurl4-openssl-dev libcpp-httplib-dev ccache openssl ca-certificates curl python3
  # scripts/k8s/job-controller.sh reads the job controllers' CRD and webhook YAML.
  python3-yaml
  # The dashboard's browser test (src/k8s/integration/dashboard_browser_test.cc): headless
  # Chromium driven over WebDriver by chromedriver.
  chromium chromium-driver
  # The fuzz targets (scripts/fuzz.sh, ctest fuzz.run): clang with its libFuzzer runtime.
  clang libclang-rt-14-dev
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
