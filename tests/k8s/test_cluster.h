// A real control plane for integration tests and benchmarks: etcd and kube-apiserver on
// 127.0.0.1 started through scripts/k8s/cluster.sh in a temporary directory, with helpers to
// create nodes, pods and any object given as YAML or JSON.
//
// Thread-safety: the helpers may be called from several threads (they only use KubeClient).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "k8s/client/kube_client.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s::testing {

using json = nlohmann::json;

// The whole file at `path` ("" when it cannot be read: the test's own checks then fail).
std::string ReadFile(const std::string& path);

// YAML (one or more documents) to JSON values. Quoted scalars stay strings; plain ones become
// booleans, integers or floats where they look like one.
std::vector<json> YamlToJson(const std::string& text);

class TestCluster {
 public:
  // Starts a cluster of Version(), or returns nullptr and says why in `*why` (binaries not built,
  // start failure). The caller skips (not built) or fails (start failure) on that; with CI=true
  // binaries that are not built count as a failure too (`*not_built` stays false).
  static std::unique_ptr<TestCluster> Start(std::string* why, bool* not_built);
  ~TestCluster();

  static std::string RepoRoot();
  // Where scripts/k8s/build-apiserver.sh keeps its binaries (one folder per version).
  static std::string CacheDir();
  // The Kubernetes minor version the tests run on: $TESSERA_K8S_VERSION, default "1.37".
  static std::string Version();
  // CacheDir()/v<Version()>/bin: kube-apiserver, kube-controller-manager, kube-scheduler, etcd.
  static std::string BinDir();
  // The kube-scheduler built by build-apiserver.sh, or "" when absent.
  static std::string KubeSchedulerPath();

  const std::string& dir() const { return dir_; }
  std::string kubeconfig_path() const { return dir_ + "/kubeconfig"; }
  KubeClient& client() { return *client_; }
  // The API server's --feature-gates (cluster.sh's DIR/env; "" when none): a kube-scheduler run
  // against it needs the same, e.g. GenericWorkload=true on 1.37 for the Workload API's gangs.
  std::string FeatureGates() const;
  const KubeConfig& config() const { return client_->config(); }

  bool StopApiServer();
  bool StartApiServer();

  // Starts kube-controller-manager on this cluster (cluster.sh start-controller-manager: the
  // Job, ReplicaSet, Deployment, StatefulSet and garbage-collector controllers). false with the
  // reason in `*why` when it is not built or does not start.
  bool StartControllerManager(std::string* why);

  // Where scripts/k8s/build-controllers.sh keeps the job controllers (jobset, lws, kuberay).
  static std::string JobControllerBinDir();
  // Applies the CRDs of job controller `name` (read from the Go module cache), starts its manager
  // against this cluster through scripts/k8s/job-controller.sh (log DIR/NAME.log; stopped with
  // the cluster) and waits until it is ready. false with the reason in `*why` otherwise;
  // `*not_built` (when given) is true when its binary is not built and CI is not "true": the
  // caller then skips, else fails.
  bool StartJobController(const std::string& name, std::string* why, bool* not_built = nullptr);

  // `n` nodes named PREFIX-i with `gpus` nvidia.com/gpu each, Ready, with `labels` and taints.
  void CreateNodes(int n, int gpus, const std::string& prefix, const json& labels = json::object(),
                   const json& taints = json::array());
  void CreateNamespace(const std::string& ns, const json& labels = json::object());
  // A pod asking for `gpus` GPUs (and 1 cpu), terminationGracePeriodSeconds 0.
  json PodSpec(const std::string& ns, const std::string& name, int gpus,
               const std::string& scheduler = "tessera", const json& labels = json::object(),
               const json& annotations = json::object()) const;
  // Creates any object (POST to the collection its apiVersion/kind/namespace name). Returns the
  // created object; fails the current test on an error status.
  json Create(const json& obj);
  // Creates every document of a YAML file or text.
  void Apply(const std::string& yaml_text);
  // Apply of a file of the repository (e.g. "deploy/crds/scheduling.x-k8s.io_podgroups.yaml").
  void ApplyRepoFile(const std::string& rel);
  // Deletes a pod at once (grace period 0), bound or not.
  void DeletePod(const std::string& ns, const std::string& name);
  void DeleteAllPods(const std::string& ns);
  std::vector<json> Pods(const std::string& ns);
  int BoundPods(const std::string& ns);
  json Get(const std::string& path);

  // Polls `cond` every 50 ms for up to `timeout_s` seconds.
  static bool WaitFor(const std::function<bool()>& cond, double timeout_s);

  // Starts `argv` in the background with stdout and stderr to `log`; returns its pid or -1.
  static int Spawn(const std::vector<std::string>& argv, const std::string& log);
  // SIGTERM, then SIGKILL after 5 s; reaps it.
  static void Kill(int pid);

  // The collection path for an object (e.g. /apis/tessera.dev/v1alpha1/clusterqueues).
  static std::string CollectionPath(const json& obj);

 private:
  TestCluster() = default;
  int Script(const std::string& args) const;

  std::string dir_;
  std::unique_ptr<KubeClient> client_;
};

}  // namespace tessera::k8s::testing
