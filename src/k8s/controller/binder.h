// Binder: carries the engine's placements and preemptions out through the API, on a pool of
// workers so that many requests are in flight while the scheduling loop goes on: pods/binding
// (protobuf unless the server refuses it, with the GPU indices as annotations the server copies
// onto the pod) and Evictions (policy/v1, or v1beta1 on servers older than 1.22).
//
// Apart from the loop because it is the controller's only path that writes pod placements: the
// retries, the encodings and what a bind's answer means live here; the loop only decides. Results
// go back to the loop through the callbacks (the Binder never touches the loop's state).
//
// Thread-safety: Bind and Evict from one thread (the loop); the callbacks run on the pool's
// workers and must be thread-safe. Destruction waits for the requests already posted.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "k8s/client/kube_client.h"
#include "k8s/client/task_pool.h"
#include "k8s/controller/controller.h"
#include "k8s/controller/dra_objects.h"
#include "k8s/controller/objects.h"
#include "k8s/observe/metrics.h"

namespace tessera::k8s {

class Binder {
 public:
  // The status of a bind that was never sent (the replica stopped or stopped leading first).
  static constexpr long kDropped = -1;

  struct Callbacks {
    // A bind's outcome: the HTTP status (0: no answer; kDropped: not sent).
    std::function<void(const std::string& pod, const std::string& node, long status)> bind_done;
    // A bind answered 409: the pod as the server has it now (null when it is gone). Comes before
    // that bind's bind_done.
    std::function<void(const std::string& pod, json object)> conflict_pod;
  };

  // `stop` and `active` are the controller's flags (they outlive the Binder): nothing new is sent
  // once it stops or stops leading, and retries end when it stops. Sends nothing itself (the
  // Eviction API version is asked at the first eviction).
  Binder(KubeClient* client, const ControllerOptions& options, Metrics* metrics,
         const std::atomic<bool>& stop, const std::atomic<bool>& active, Callbacks callbacks);
  ~Binder();  // runs what was posted: sent binds finish, queued ones are dropped
  Binder(const Binder&) = delete;
  Binder& operator=(const Binder&) = delete;

  // Binds the pod to `node`, recording the devices it was given (kGpuIndicesAnnotation,
  // kMigStartsAnnotation), and with `protect`, that consolidation must leave its node alone
  // (kDoNotDisruptAnnotation, kSafeToEvictAnnotation).
  // With DRA claims (dra_objects.h), each claim is allocated and reserved for the pod first, as
  // kube-scheduler does; a claim that cannot be fails the bind (its status: 409 or the
  // server's), and a bind that fails undoes the claims reserved for it.
  void Bind(const PodInfo& pod, const std::string& node, const std::vector<int32_t>& gpus,
            const std::vector<int8_t>& mig_starts, bool protect = false,
            std::vector<ClaimReservation> claims = {});
  // Tells the pod it is about to go, then evicts it with its own grace period (retried while a
  // PodDisruptionBudget says not now). The notice is the DisruptionTarget=True condition with
  // reason PreemptionByScheduler and `message`, as kube-scheduler and Kueue set it; it is sent
  // before the eviction, on the same worker, so the pod carries it before it is deleted.
  void Evict(const PodInfo& pod, const std::string& message);

 private:
  // A Binding to send: the pod, its node, and annotations the server copies onto the pod.
  struct BindingBody {
    std::string ns, name, uid, node;
    std::vector<std::pair<std::string, std::string>> annotations;
    std::vector<ClaimReservation> claims;
  };
  // Runs on a worker: reserves the pod's claims; on a failure undoes those reserved and returns
  // the status (200: all reserved).
  long ReserveClaims(const std::string& key, const BindingBody& b);
  void UnreserveClaims(const BindingBody& b, size_t count);
  // "v1" where the server serves resource.k8s.io/v1, else "v1beta2" (asked once).
  std::string DraVersion();
  static std::string BindingJson(const BindingBody& b);
  // Runs on a worker: sends the Binding, retrying server errors; returns the HTTP status.
  long Send(const std::string& path, const BindingBody& b);
  void SendBind(const std::string& key, const std::string& path, const BindingBody& b);
  // Runs on a worker: the DisruptionTarget condition onto the pod's status (a few tries).
  void SendDisruptionTarget(const std::string& ns, const std::string& name,
                            const std::string& message);

  KubeClient* const client_;
  const bool protobuf_;
  Metrics* const metrics_;
  const std::atomic<bool>& stop_;
  const std::atomic<bool>& active_;
  const Callbacks callbacks_;
  // "policy/v1" or "policy/v1beta1", or "" when not known (a transport error, or not asked yet).
  std::string EvictionVersion();
  // `served` when the server answers 200 at `path`, `otherwise` when it answers another status
  // below 500; both kept in `cache` and not asked again. `unknown` (not kept) while the server
  // cannot say: a transport error or a server error.
  std::string ServedVersion(const char* path, const char* served, const char* otherwise,
                            const char* unknown, std::string& cache);
  std::mutex version_mu_;
  std::string eviction_version_;         // GUARDED_BY(version_mu_)
  std::string dra_version_;              // GUARDED_BY(version_mu_)
  std::atomic<bool> json_binds_{false};  // the server refused a protobuf Binding: JSON from now
  std::unique_ptr<TaskPool> pool_;       // last: its workers use the members above
};

}  // namespace tessera::k8s
