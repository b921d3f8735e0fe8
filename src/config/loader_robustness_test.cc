// Deterministic fuzzing of the loader, so that CI (g++ with ASan/UBSan) exercises what the
// clang-only libFuzzer target (loader_fuzz.cc) does: seeded random mutations of the test
// manifests must never crash, hang or throw, and every diagnostic must point inside the input.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "config/loader.h"
#include "config/loader_test_util.h"
#include "gtest/gtest.h"
#include "model/limits.h"

namespace tessera {
namespace {

using testing::SourceDir;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The documents of the test manifests, one seed each: mutating one or two small documents at a
// time keeps each iteration cheap (a few thousand fit in seconds under ASan) and focused.
std::vector<std::string> Seeds() {
  std::vector<std::string> seeds;
  for (const char* name : {"cluster.yaml", "workloads.yaml", "bad.yaml"}) {
    std::string text = ReadFile(SourceDir() + "/tests/manifests/" + name);
    size_t pos = 0;
    while (pos < text.size()) {
      size_t next = text.find("\n---\n", pos);
      size_t end = next == std::string::npos ? text.size() : next + 1;
      seeds.push_back(text.substr(pos, end - pos));
      pos = next == std::string::npos ? text.size() : next + 5;
    }
  }
  return seeds;
}

std::vector<std::string> SplitLines(const std::string& s) {
  std::vector<std::string> lines;
  std::string cur;
  for (char c : s) {
    if (c == '\n') {
      lines.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  lines.push_back(cur);
  return lines;
}

std::string JoinLines(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out.push_back('\n');
    out += lines[i];
  }
  return out;
}

// Mutations in the spirit of a fuzzer, driven by a fixed-seed engine (mt19937's output is
// specified by the standard, and we take it modulo by hand, so runs are identical everywhere).
class Mutator {
 public:
  explicit Mutator(uint32_t seed) : rng_(seed) {}

  size_t Below(size_t n) { return n == 0 ? 0 : rng_() % n; }

  void Mutate(std::string& s, const std::vector<std::string>& seeds) {
    static const std::string kSpecial = "[]{}:-,'\"&*!|>#?%@` \t\n0123456789.e";
    switch (Below(9)) {
      case 0:  // flip bytes
        for (size_t k = 0, n = 1 + Below(8); k < n && !s.empty(); ++k)
          s[Below(s.size())] = static_cast<char>(rng_() & 0xff);
        break;
      case 1:  // YAML punctuation where it hurts
        for (size_t k = 0, n = 1 + Below(8); k < n && !s.empty(); ++k)
          s[Below(s.size())] = kSpecial[Below(kSpecial.size())];
        break;
      case 2:  // truncate
        s.resize(Below(s.size() + 1));
        break;
      case 3: {  // swap two lines
        auto lines = SplitLines(s);
        std::swap(lines[Below(lines.size())], lines[Below(lines.size())]);
        s = JoinLines(lines);
        break;
      }
      case 4: {  // delete or duplicate a line
        auto lines = SplitLines(s);
        size_t i = Below(lines.size());
        if (rng_() & 1) {
          lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(i));
        } else {
          lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(i), lines[i]);
        }
        s = JoinLines(lines);
        break;
      }
      case 5: {  // re-indent a line
        auto lines = SplitLines(s);
        size_t i = Below(lines.size());
        lines[i] = std::string(Below(12), ' ') + lines[i];
        s = JoinLines(lines);
        break;
      }
      case 6: {  // deep nesting
        static const char* kOpen[] = {"[", "{", "- ", "a: &x ", "? "};
        std::string deep;
        const char* open = kOpen[Below(5)];
        for (size_t k = 0, n = 1 + Below(10000); k < n; ++k) deep += open;
        s.insert(Below(s.size() + 1), deep);
        break;
      }
      case 7: {  // splice a piece of another seed
        const std::string& other = seeds[Below(seeds.size())];
        size_t from = Below(other.size());
        s.insert(Below(s.size() + 1), other.substr(from, Below(400)));
        break;
      }
      default: {  // numbers at the edges of the ranges the loader checks
        static const char* kNumbers[] = {"-1",    "0",    "99999999999999999999",
                                         "1e400", "-0",   "2147483648",
                                         "1.5",   "0x10", "NaN",
                                         "500m",  "4Ti",  "1Ei",
                                         "100000"};
        const char* n = kNumbers[Below(sizeof(kNumbers) / sizeof(kNumbers[0]))];
        size_t at = s.find(": ", Below(s.size() + 1));
        if (at != std::string::npos) {
          size_t end = s.find('\n', at);
          s.replace(at + 2, (end == std::string::npos ? s.size() : end) - at - 2, n);
        }
        break;
      }
    }
  }

 private:
  std::mt19937 rng_;
};

void CheckSane(const std::string& input, const LoadResult& r) {
  const int lines = static_cast<int>(std::count(input.begin(), input.end(), '\n')) + 1;
  for (const Diagnostic& d : r.diagnostics) {
    ASSERT_GE(d.line, 0) << d.ToString();
    ASSERT_LE(d.line, lines) << d.ToString();
    ASSERT_FALSE(d.message.empty()) << d.ToString();
  }
  for (const Workload& w : r.model.workloads) ASSERT_FALSE(w.name.empty());
  for (const Node& n : r.model.nodes) ASSERT_FALSE(n.allocatable.AnyNegative()) << n.name;
}

TEST(LoaderRobustnessTest, SeededMutationsNeverCrash) {
  std::vector<std::string> seeds = Seeds();
  ASSERT_FALSE(seeds.empty()) << "no seeds under " << SourceDir() << "/tests/manifests";
  Mutator m(20240611);
  constexpr int kIterations = 3000;
  for (int i = 0; i < kIterations; ++i) {
    std::string input = seeds[m.Below(seeds.size())];
    if (m.Below(3) == 0) input += "---\n" + seeds[m.Below(seeds.size())];
    for (size_t k = 0, n = 1 + m.Below(4); k < n; ++k) m.Mutate(input, seeds);
    LoadResult r;
    LoadManifestText(input, "fuzz.yaml", r);
    (void)CheckReferences(r.model);
    CheckSane(input, r);
    if (HasFatalFailure()) {
      ADD_FAILURE() << "iteration " << i << " input:\n" << input.substr(0, 2000);
      return;
    }
  }
}

TEST(LoaderRobustnessTest, HostileInputs) {
  std::vector<std::string> inputs = {
      "",
      std::string(1, '\0'),
      std::string("apiVersion: v1\0kind: Node\n", 26),
      "---\n---\n---",
      "\t- a\n\tb: c",
      "apiVersion: v1\nkind: Node\nmetadata: {name: \xff\xfe}\n",
      std::string(100000, 'a'),
      std::string(10000, '['),
      std::string(10000, '{'),
      "a: " + std::string(5000, '['),
      "&a [*a]",
      "apiVersion: v1\nkind: List\nitems: &i [{apiVersion: v1, kind: List, items: *i}]\n",
      "apiVersion: v1\nkind: Node\nmetadata: &a {name: x, labels: {k: *a}}\n",
      "apiVersion: tessera.dev/v1alpha1\nkind: NodePool\nmetadata: {name: p}\n"
      "spec: {count: 99999999999, labels: {a: '{index/0}'}}\n",
      "apiVersion: tessera.dev/v1alpha1\nkind: NodePool\nmetadata: {name: p}\n"
      "spec: {count: 3, labels: {a: '{index%', b: '{}', c: '{index/99999999999999}'}}\n",
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n"
      "spec: {replicas: 2147483648, template: {spec: {containers: []}}}\n",
      "? [a, b]\n: c\n",
      "apiVersion: [v1]\nkind: {a: b}\n",
      "%YAML 1.2\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: n}\n",
  };
  std::string dashes;
  for (int i = 0; i < 5000; ++i) dashes += "- ";
  inputs.push_back(dashes);
  std::string indented;
  for (int i = 0; i < 1000; ++i) indented += std::string(i, ' ') + "a:\n";
  inputs.push_back(indented);
  for (const std::string& input : inputs) {
    LoadResult r;
    LoadManifestText(input, "hostile.yaml", r);
    (void)CheckReferences(r.model);
    CheckSane(input, r);
  }
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// Counts that become allocations are bounded (model/limits.h, docs/robustness.md): a node of
// 2^31 GPUs used to validate "ok" and then abort the simulator (a 32-bit GPU count), 2^32 became
// 0 GPUs. Each is now an error at its field.
TEST(LoaderLimitsTest, GpusPerNodeBeyondTheLimitAreAnErrorAtTheField) {
  for (const char* gpus : {"1025", "2147483647", "2147483648", "4294967296", "16777216"}) {
    LoadResult r = testing::Load(std::string("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n"
                                             "status:\n  allocatable:\n    cpu: \"8\"\n"
                                             "    nvidia.com/gpu: \"") +
                                 gpus + "\"\n");
    EXPECT_FALSE(r.ok()) << gpus;
    EXPECT_TRUE(r.model.nodes.empty()) << gpus;
    const Diagnostic* d = testing::Find(r, Diagnostic::Severity::kError, "at most 1024");
    ASSERT_NE(d, nullptr) << testing::AllDiagnostics(r);
    EXPECT_NE(d->ToString().find("t.yaml:7:"), std::string::npos) << d->ToString();
    EXPECT_NE(d->ToString().find("status.allocatable"), std::string::npos) << d->ToString();
  }
  LoadResult ok = testing::Load(
      "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n"
      "status: {capacity: {nvidia.com/gpu: \"1024\"}}\n");
  EXPECT_TRUE(ok.ok()) << testing::AllDiagnostics(ok);
  ASSERT_EQ(ok.model.nodes.size(), 1u);
  EXPECT_EQ(ok.model.nodes[0].gpu_count(), 1024);
}

TEST(LoaderLimitsTest, NodePoolGpusAndClusterTotalAreBounded) {
  LoadResult r = testing::Load(
      "apiVersion: tessera.dev/v1alpha1\nkind: NodePool\nmetadata: {name: p}\n"
      "spec: {count: 2, capacity: {nvidia.com/gpu: \"2147483648\"}}\n");
  EXPECT_FALSE(r.ok());
  EXPECT_NE(testing::Find(r, Diagnostic::Severity::kError, "spec.capacity"), nullptr)
      << testing::AllDiagnostics(r);
  // 500,000 nodes of 1024 GPUs each: every node is fine, the cluster is not.
  r = testing::Load(
      "apiVersion: tessera.dev/v1alpha1\nkind: NodePool\nmetadata: {name: p}\n"
      "spec: {count: 500000, capacity: {nvidia.com/gpu: \"1024\"}}\n");
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.model.nodes.empty());
  EXPECT_NE(testing::Find(r, Diagnostic::Severity::kError, "spec.count"), nullptr)
      << testing::AllDiagnostics(r);
  // Two pools under the limit each, over it together: the second is refused.
  r = testing::Load(
      "apiVersion: tessera.dev/v1alpha1\nkind: NodePool\nmetadata: {name: a}\n"
      "spec: {count: 4000, capacity: {nvidia.com/gpu: \"1024\"}}\n---\n"
      "apiVersion: tessera.dev/v1alpha1\nkind: NodePool\nmetadata: {name: b}\n"
      "spec: {count: 200, capacity: {nvidia.com/gpu: \"1024\"}}\n");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.model.nodes.size(), 4000u);
  EXPECT_NE(testing::Find(r, Diagnostic::Severity::kError, "t.yaml:6:"), nullptr)
      << testing::AllDiagnostics(r);
}

TEST(LoaderLimitsTest, PodsPerWorkloadAreBoundedOverAllPodSets) {
  // Two tasks of 600,000 pods: each within kMaxPodsPerWorkload, the workload not.
  LoadResult r = testing::Load(
      "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j}\n"
      "spec:\n  tasks:\n"
      "  - {name: a, replicas: 600000, template: {spec: {containers: [{name: c}]}}}\n"
      "  - {name: b, replicas: 600000, template: {spec: {containers: [{name: c}]}}}\n");
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.model.workloads.empty());
  EXPECT_NE(testing::Find(r, Diagnostic::Severity::kError, "1200000 pods"), nullptr)
      << testing::AllDiagnostics(r);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// Input beyond the size limit is refused before it is read whole: /dev/zero used to be read
// until a bad_alloc at 4.2 GB, and a file larger than the limit is refused by its size alone.
TEST(LoaderInputTest, FilesBeyondTheSizeLimitAreRefusedBeforeTheyAreRead) {
  LoadResult zero = LoadManifestFiles({"/dev/zero"});
  ASSERT_EQ(zero.diagnostics.size(), 1u) << testing::AllDiagnostics(zero);
  EXPECT_EQ(zero.diagnostics[0].ToString(),
            "/dev/zero: error: larger than 268435456 bytes, the limit for a manifest file "
            "(256 MiB)");
  const std::string sparse = ::testing::TempDir() + "/tessera_sparse.yaml";
  std::ofstream(sparse).close();
  std::filesystem::resize_file(sparse, kMaxManifestFileBytes + 1);  // no disk, no reading
  LoadResult big = LoadManifestFiles({sparse});
  std::filesystem::remove(sparse);
  EXPECT_NE(testing::Find(big, Diagnostic::Severity::kError, "larger than 268435456 bytes"),
            nullptr)
      << testing::AllDiagnostics(big);
}

// Pods whose labels, annotations and nodeSelector alias a map of 1000 aliases of a 1000-byte
// string: 12 KB of text, 3 MB of Model each. 200 of them (2.8 MB) took 470 MB; 2,000 would
// take gigabytes. The file's alias budget refuses them once aliases have added 16 MiB.
TEST(LoaderInputTest, AliasesOfAliasesAreRefusedOnceTheFileBudgetIsSpent) {
  const std::string value(1000, 'x');
  std::string text;
  for (int i = 0; i < 20; ++i) {
    text += "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p" + std::to_string(i) +
            "\n  labels: &L\n    k0: &v \"" + value + "\"\n";
    for (int k = 1; k < 1000; ++k) text += "    k" + std::to_string(k) + ": *v\n";
    text += "  annotations: *L\nspec:\n  nodeSelector: *L\n  containers: [{name: c}]\n";
  }
  LoadResult r = testing::Load(text);
  EXPECT_FALSE(r.ok());
  EXPECT_GE(r.model.workloads.size(), 1u);
  EXPECT_LE(r.model.workloads.size(), 6u);  // 3 MB each within 16 MiB
  const Diagnostic* d = testing::Find(r, Diagnostic::Severity::kError, "YAML aliases expand");
  ASSERT_NE(d, nullptr) << testing::AllDiagnostics(r);
  EXPECT_GT(d->line, 1000);  // at an alias of a later document, not the first
  // The classic: nine levels of ten aliases each, 10^9 strings if copied; refused at a5 (line
  // 11), the first level past a million nodes.
  std::string lol = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  labels:\n";
  lol += "    a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int k = 1; k < 9; ++k) {
    lol += "    a" + std::to_string(k) + ": &a" + std::to_string(k) + " [";
    for (int j = 0; j < 10; ++j) lol += (j ? ", *a" : "*a") + std::to_string(k - 1);
    lol += "]\n";
  }
  r = testing::Load(lol);
  EXPECT_NE(testing::Find(r, Diagnostic::Severity::kError, "t.yaml:11: error: YAML aliases"),
            nullptr)
      << testing::AllDiagnostics(r);
  // A few anchors, as people write them, are fine.
  r = testing::Load(
      "apiVersion: v1\nkind: Node\nmetadata: {name: n, labels: &l {zone: a}}\n"
      "spec: {taints: [{key: k, effect: NoSchedule}]}\n---\n"
      "apiVersion: v1\nkind: Node\nmetadata: {name: m, labels: *l}\n");
  EXPECT_FALSE(r.ok());  // anchors do not cross documents: *l is undefined there
  r = testing::Load(
      "apiVersion: v1\nkind: List\nitems:\n"
      "- {apiVersion: v1, kind: Node, metadata: {name: n, labels: &l {zone: a}}}\n"
      "- {apiVersion: v1, kind: Node, metadata: {name: m, labels: *l}}\n");
  EXPECT_TRUE(r.ok()) << testing::AllDiagnostics(r);
  EXPECT_EQ(r.model.nodes.size(), 2u);
}

// yaml-cpp keeps both entries of a duplicated key and a lookup finds the first: replicas 8
// became 2 without a word. kubectl's strict decoding refuses it; so does the loader.
TEST(LoaderInputTest, DuplicateKeysAreAnErrorNamingBothLines) {
  LoadResult r = testing::Load(
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  replicas: 2\n"
      "  template:\n    spec:\n      containers: [{name: c, name: d}]\n  replicas: 8\n");
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.model.workloads.empty());
  EXPECT_NE(testing::Find(r, Diagnostic::Severity::kError,
                          "t.yaml:9: error: spec.replicas: duplicate key \"replicas\": it is "
                          "also at line 5"),
            nullptr)
      << testing::AllDiagnostics(r);
  EXPECT_NE(testing::Find(r, Diagnostic::Severity::kError,
                          "t.yaml:8: error: spec.template.spec.containers[0].name: duplicate"),
            nullptr)
      << testing::AllDiagnostics(r);
}

// Kubernetes counts extended resources in whole units; "0.0001" GPUs became 1 GPU.
TEST(LoaderInputTest, FractionalExtendedResourcesAreAnErrorAtTheField) {
  LoadResult r = testing::Load(
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n"
      "    resources:\n      limits: {nvidia.com/gpu: \"0.0001\"}\n");
  EXPECT_FALSE(r.ok());
  EXPECT_NE(testing::Find(r, Diagnostic::Severity::kError,
                          "t.yaml:8: error: spec.containers[0].resources.limits[\"nvidia.com/"
                          "gpu\"]: 0.0001 is not a whole number"),
            nullptr)
      << testing::AllDiagnostics(r);
  r = testing::Load(
      "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n"
      "status: {allocatable: {nvidia.com/gpu: 1.5}}\n");
  EXPECT_NE(testing::Find(r, Diagnostic::Severity::kError, "1.5 is not a whole number"), nullptr)
      << testing::AllDiagnostics(r);
  r = testing::Load(
      "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n"
      "status: {capacity: {example.com/fpga: 500m}}\n");
  EXPECT_NE(testing::Find(r, Diagnostic::Severity::kError, "500m is not a whole number"), nullptr)
      << testing::AllDiagnostics(r);
  r = testing::Load(
      "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n"
      "status: {allocatable: {cpu: 500m, memory: 1.5Gi, nvidia.com/gpu: \"8\", "
      "example.com/fpga: 2k}}\n");
  EXPECT_TRUE(r.ok()) << testing::AllDiagnostics(r);
}

// Names must be Kubernetes names; whatever is quoted back is escaped, never sent raw to the
// terminal (an escape sequence in a name used to reach it as written).
TEST(LoaderInputTest, InvalidNamesAreRefusedAndControlCharactersEscaped) {
  LoadResult r = testing::Load("apiVersion: v1\nkind: Node\nmetadata: {name: \"a\\e[31mb\"}\n");
  EXPECT_FALSE(r.ok());
  const Diagnostic* d = testing::Find(r, Diagnostic::Severity::kError, "metadata.name");
  ASSERT_NE(d, nullptr) << testing::AllDiagnostics(r);
  EXPECT_NE(d->ToString().find("\"a\\x1b[31mb\" is not a valid name"), std::string::npos)
      << d->ToString();
  for (const Diagnostic& diag : r.diagnostics)
    EXPECT_EQ(diag.ToString().find('\x1b'), std::string::npos);
  for (const char* bad : {"Upper", "a_b", "-a", "a-", "a..b", "a.-b"}) {
    r = testing::Load(std::string("apiVersion: v1\nkind: Node\nmetadata: {name: \"") + bad +
                      "\"}\n");
    EXPECT_NE(testing::Find(r, Diagnostic::Severity::kError, "is not a valid name"), nullptr)
        << bad;
  }
  r = testing::Load(
      "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, namespace: team.a}\n"
      "spec: {template: {spec: {containers: [{name: c}]}}}\n");
  EXPECT_NE(testing::Find(r, Diagnostic::Severity::kError,
                          "metadata.namespace: \"team.a\" is not a valid namespace name"),
            nullptr)
      << testing::AllDiagnostics(r);
  r = testing::Load("apiVersion: v1\nkind: Node\nmetadata: {name: gpu-node.rack-1.example}\n");
  EXPECT_TRUE(r.ok()) << testing::AllDiagnostics(r);
  Diagnostic utf8{Diagnostic::Severity::kError, "données.yaml", 1, "",
                  std::string("\x9b") + "2J \xc2\x9b"};
  EXPECT_EQ(utf8.ToString(), "données.yaml:1: error: \\x9b2J \\xc2\\x9b");
}

// Kubernetes reads a Gt / Lt value as one 64-bit integer; "8Gi" validated and matched nothing.
TEST(LoaderInputTest, GtAndLtNeedAnInteger) {
  auto pod = [](const std::string& value) {
    return testing::Load(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c}]\n"
        "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "        nodeSelectorTerms:\n        - matchExpressions:\n"
        "          - key: nvidia.com/gpu.count\n            operator: Gt\n"
        "            values: [\"" +
        value + "\"]\n");
  };
  for (const char* bad : {"8Gi", "1.5", "", "0x10", "99999999999999999999", "+-1"}) {
    LoadResult r = pod(bad);
    EXPECT_NE(testing::Find(r, Diagnostic::Severity::kError,
                            "t.yaml:13: error: spec.affinity.nodeAffinity."
                            "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
                            "matchExpressions[0].values[0]: operator Gt and Lt need a whole "
                            "number"),
              nullptr)
        << bad << "\n"
        << testing::AllDiagnostics(r);
  }
  for (const char* good : {"8", "-3", "+4"}) {
    LoadResult r = pod(good);
    EXPECT_TRUE(r.ok()) << good << "\n" << testing::AllDiagnostics(r);
  }
}

}  // namespace
}  // namespace tessera
