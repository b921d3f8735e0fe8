#include "model/pod_requests.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <utility>

#include "model/quantity.h"

namespace tessera {
namespace {

using Items = std::initializer_list<std::pair<const char*, const char*>>;

ResourceId Id(const char* name) { return *ResourceRegistry::Global().Intern(name); }

ResourceList List(Items items) {
  ResourceList l;
  for (const auto& [name, text] : items) {
    const ResourceId r = Id(name);
    l.Set(r, *ParseQuantity(text, r == kCpu));
  }
  return l;
}

ContainerResources Container(Items requests, Items limits = {}, bool sidecar = false) {
  return ContainerResources{List(requests), List(limits), sidecar};
}

ContainerResources Sidecar(Items requests, Items limits = {}) {
  return Container(requests, limits, /*sidecar=*/true);
}

// What Kubernetes' PodRequests returns, with `pods: 1` added as Tessera counts pods.
Resources Want(Items items) {
  Resources r = List(items).values;
  r.Set(kPods, 1);
  return r;
}

// The cases of k8s.io/component-helpers v0.37.2 resource/helpers_test.go
// (TestPodLevelResourceRequests, TestPodResourceRequests), the API server's defaulting of
// requests from limits (pkg/apis/core/v1 SetDefaults_Pod, pkg/api/pod DefaultPodLevelResources),
// and GPUs, which a pod-level request never names.
struct Case {
  const char* name;
  PodResources pod;
  Resources want;
};

std::vector<Case> Cases() {
  std::vector<Case> cases;
  auto add = [&](const char* name, PodResources pod, Resources want) {
    cases.push_back({name, std::move(pod), want});
  };
  add("nil", {}, Want({}));
  {
    PodResources p;
    p.requests = List({{"memory", "2Mi"}});
    add("pod level memory only", p, Want({{"memory", "2Mi"}}));
  }
  {
    PodResources p;
    p.requests = List({{"memory", "2Mi"}});
    p.containers = {Container({{"cpu", "2m"}})};
    add("pod level memory and container level cpu", p, Want({{"memory", "2Mi"}, {"cpu", "2m"}}));
  }
  {
    PodResources p;
    p.requests = List({{"ephemeral-storage", "2Mi"}});
    p.containers = {Container({{"ephemeral-storage", "3Mi"}})};
    add("unsupported resource at both levels: the containers'", p,
        Want({{"ephemeral-storage", "3Mi"}}));
  }
  {
    PodResources p;
    p.requests = List({{"ephemeral-storage", "2Mi"}});
    p.containers = {Container({{"memory", "3Mi"}})};
    add("unsupported resource at pod level only: ignored", p, Want({{"memory", "3Mi"}}));
  }
  {
    PodResources p;
    p.containers = {Container({{"memory", "3Mi"}, {"cpu", "2m"}})};
    add("containers only", p, Want({{"memory", "3Mi"}, {"cpu", "2m"}}));
  }
  {
    PodResources p;
    p.requests = List({{"memory", "6Mi"}, {"cpu", "8m"}});
    p.containers = {Container({{"memory", "3Mi"}, {"cpu", "2m"}})};
    add("both levels: the pod's", p, Want({{"memory", "6Mi"}, {"cpu", "8m"}}));
  }
  {
    PodResources p;
    p.containers = {Container({{"memory", "3Mi"}, {"cpu", "2m"}})};
    p.init_containers = {Container({{"memory", "5Mi"}, {"cpu", "4m"}})};
    add("init container raises the pod", p, Want({{"memory", "5Mi"}, {"cpu", "4m"}}));
  }
  {
    PodResources p;
    p.containers = {Container({{"memory", "3Mi"}, {"cpu", "2m"}})};
    p.init_containers = {Sidecar({{"memory", "5Mi"}, {"cpu", "4m"}})};
    add("sidecar adds to the containers", p, Want({{"memory", "8Mi"}, {"cpu", "6m"}}));
  }
  {
    PodResources p;
    p.containers = {Container({{"memory", "3Mi"}, {"cpu", "2m"}})};
    p.init_containers = {Sidecar({{"memory", "5Mi"}, {"cpu", "4m"}}),
                         Container({{"memory", "6Mi"}, {"cpu", "8m"}})};
    add("init container after a sidecar needs both", p, Want({{"memory", "11Mi"}, {"cpu", "12m"}}));
  }
  {
    PodResources p;
    p.requests = List({{"memory", "15Mi"}, {"cpu", "18m"}});
    p.containers = {Container({{"memory", "3Mi"}, {"cpu", "2m"}})};
    p.init_containers = {Sidecar({{"memory", "5Mi"}, {"cpu", "4m"}}),
                         Container({{"memory", "6Mi"}, {"cpu", "8m"}})};
    add("pod level over containers, init and sidecar", p,
        Want({{"memory", "15Mi"}, {"cpu", "18m"}}));
  }
  {
    PodResources p;
    p.limits = List({{"hugepages-2Mi", "2Mi"}});
    p.requests = List({{"memory", "10Mi"}, {"hugepages-2Mi", "2Mi"}});
    add("pod level hugepages", p, Want({{"memory", "10Mi"}, {"hugepages-2Mi", "2Mi"}}));
  }
  {
    PodResources p;
    p.limits = List({{"hugepages-2Mi", "10Mi"}});
    p.requests = List({{"cpu", "1"}, {"hugepages-2Mi", "10Mi"}});
    p.containers = {Container({{"memory", "4Mi"}, {"hugepages-1Gi", "1Gi"}},
                              {{"hugepages-1Gi", "1Gi"}})};
    add("hugepages of two sizes between the levels", p,
        Want({{"cpu", "1"},
              {"memory", "4Mi"},
              {"hugepages-2Mi", "10Mi"},
              {"hugepages-1Gi", "1Gi"}}));
  }
  {
    PodResources p;
    p.containers = {Container({{"cpu", "1"}}), Container({{"cpu", "2"}})};
    p.overhead = List({{"cpu", "100m"}, {"memory", "1Mi"}});
    add("overhead added to containers", p, Want({{"cpu", "3100m"}, {"memory", "1Mi"}}));
  }
  {
    PodResources p;
    p.requests = List({{"cpu", "60"}});
    p.containers = {Container({{"cpu", "1"}})};
    p.overhead = List({{"cpu", "250m"}});
    add("overhead added to the pod level", p, Want({{"cpu", "60250m"}}));
  }
  {
    PodResources p;
    p.requests = List({{"cpu", "60"}, {"memory", "200Gi"}});
    p.containers = {Container({{"nvidia.com/gpu", "4"}}, {{"nvidia.com/gpu", "4"}}),
                    Container({{"cpu", "1"}, {"nvidia.com/gpu", "2"}})};
    add("GPUs from the containers while the pod sets cpu and memory", p,
        Want({{"cpu", "60"}, {"memory", "200Gi"}, {"nvidia.com/gpu", "6"}}));
  }
  {
    PodResources p;
    p.containers = {Container({}, {{"cpu", "2"}, {"nvidia.com/gpu", "1"}}),
                    Container({{"cpu", "0"}}, {{"cpu", "4"}})};
    add("a container's limit defaults its request, unless the request is named", p,
        Want({{"cpu", "2"}, {"nvidia.com/gpu", "1"}}));
  }
  {
    PodResources p;
    p.limits = List({{"cpu", "8"}, {"memory", "1Gi"}});
    add("pod level limits only: requests default to them", p,
        Want({{"cpu", "8"}, {"memory", "1Gi"}}));
  }
  {
    PodResources p;
    p.limits = List({{"cpu", "8"}, {"memory", "1Gi"}});
    p.containers = {Container({{"cpu", "1"}})};
    add("pod level limits: cpu from the containers, memory from the limit", p,
        Want({{"cpu", "1"}, {"memory", "1Gi"}}));
  }
  {
    PodResources p;
    p.limits = List({{"hugepages-2Mi", "4Mi"}});
    p.containers = {Container({{"cpu", "1"}})};
    add("pod level hugepages limit defaults the request", p,
        Want({{"cpu", "1"}, {"hugepages-2Mi", "4Mi"}}));
  }
  {
    PodResources p;
    p.requests = List({{"cpu", "2"}});
    p.containers = {Container({{"hugepages-2Mi", "6Mi"}}, {{"hugepages-2Mi", "6Mi"}})};
    add("hugepages limits of the containers become the pod's", p,
        Want({{"cpu", "2"}, {"hugepages-2Mi", "6Mi"}}));
  }
  return cases;
}

TEST(PodRequests, KubernetesRule) {
  for (const Case& c : Cases()) {
    EXPECT_EQ(EffectivePodRequests(c.pod).ToString(), c.want.ToString()) << c.name;
    EXPECT_EQ(EffectivePodRequests(c.pod), c.want) << c.name;
  }
}

TEST(PodRequests, PodLevelResourceNames) {
  EXPECT_TRUE(IsPodLevelResource("cpu"));
  EXPECT_TRUE(IsPodLevelResource("memory"));
  EXPECT_TRUE(IsPodLevelResource("hugepages-1Gi"));
  EXPECT_FALSE(IsPodLevelResource("nvidia.com/gpu"));
  EXPECT_FALSE(IsPodLevelResource("ephemeral-storage"));
}

}  // namespace
}  // namespace tessera
