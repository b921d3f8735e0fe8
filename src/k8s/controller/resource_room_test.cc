// A cluster with more distinct resource names than the ResourceRegistry has room for
// (model/resources.h, kMaxResources): a node keeps every resource it can track and says which it
// cannot, a bound pod is read without the names nobody can track, and a pod Tessera is to place
// that requests one is an error naming the field. The registry is one per process and never
// forgets a name, so each case fills it in a child process (gtest's EXPECT_EXIT) and the other
// tests of this binary keep their room.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "k8s/controller/objects.h"
#include "model/resources.h"

namespace tessera::k8s {
namespace {

// Interns made-up names until the registry refuses one.
void FillTheRegistry() {
  for (int i = 0; i < 2 * kMaxResources; ++i)
    if (!ResourceRegistry::Global().Intern(fmt::format("example.com/filler-{}", i)).ok()) return;
}

json PodRequesting(const std::string& resource, const std::string& node) {
  json pod = json::parse(R"({
    "metadata": {"name": "p", "namespace": "ml", "uid": "u"},
    "spec": {"schedulerName": "tessera",
             "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}
  })");
  pod["spec"]["containers"][0]["resources"]["limits"][resource] = "1";
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  return pod;
}

// Each check prints what failed and exits 1; 0 when all hold.
void Check(bool ok, const std::string& what) {
  if (ok) return;
  std::cerr << "failed: " << what << "\n";
  std::exit(1);
}

TEST(ResourceRoom, ANodeKeepsWhatCanBeTrackedAndSaysWhatCannot) {
  EXPECT_EXIT(
      {
        (void)ResourceRegistry::Global().Intern(kGpuResourceName);
        FillTheRegistry();
        json node = json::parse(R"({"metadata": {"name": "n1"},
          "status": {"allocatable": {"cpu": "64", "nvidia.com/gpu": "8",
                                     "example.com/fpga": "2"}}})");
        std::vector<std::string> problems;
        auto n = ParseNode(node, nullptr, &problems);
        Check(n.ok(), "the node is kept");
        Check(n->gpu_count() == 8, "its GPUs are counted");
        Check(problems.size() == 1 &&
                  problems[0].find("status.allocatable.example.com/fpga: not tracked") !=
                      std::string::npos,
              "the untracked resource is said");
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(ResourceRoom, ABoundPodIsReadWithoutTheUntrackedName) {
  EXPECT_EXIT(
      {
        (void)ResourceRegistry::Global().Intern(kGpuResourceName);
        FillTheRegistry();
        auto p = ParsePod(PodRequesting("example.com/fpga", "n1"));
        Check(p.ok(), "a bound pod is read");
        Check(p->set.requests[kGpu] == 2, "with the GPUs it holds");
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(ResourceRoom, APodToPlaceThatRequestsAnUntrackedNameIsAnErrorNamingTheField) {
  EXPECT_EXIT(
      {
        (void)ResourceRegistry::Global().Intern(kGpuResourceName);
        FillTheRegistry();
        auto p = ParsePod(PodRequesting("example.com/fpga", ""));
        Check(!p.ok(), "a pod to place is refused");
        const std::string m(p.status().message());
        Check(m.find("spec.containers[0].resources.limits.example.com/fpga: not tracked") !=
                  std::string::npos,
              "naming the field: " + m);
        // A name already tracked still reads when the registry is full.
        Check(ParsePod(PodRequesting(std::string(kGpuResourceName), "")).ok(),
              "tracked names still read");
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace tessera::k8s
