// libFuzzer entry for the kubeconfig reader: any text gives a KubeConfig or an error naming the
// field; never a crash or an exception out. Built with TESSERA_FUZZ (clang); scripts/fuzz.sh runs
// it on tests/fuzz/kubeconfig/. Files a kubeconfig names (certificate-authority: PATH) are read
// only when they exist; the corpus names none.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "k8s/client/kube_client.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)tessera::k8s::ParseKubeconfig(text, "fuzz", "");
  (void)tessera::k8s::ParseKubeconfig(text, "fuzz", "other");
  return 0;
}
