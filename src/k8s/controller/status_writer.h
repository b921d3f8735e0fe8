// StatusWriter: what the controller tells users and other controllers, written through the API on
// pools of its own: Events on pods (FailedScheduling, Scheduled, Preempted; aggregated by the
// EventRecorder), the PodScheduled=False/Unschedulable condition of a pod that waits (what the
// cluster autoscaler looks for), PodGroup status (phase, scheduled) and ClusterQueue status
// (pending, admitted, usage per flavor; Kueue's names).
//
// Apart from the loop and the Binder because none of it is on the path of a bind: it is best
// effort, written behind the binds, and each status body is written only when it changed. The
// loop decides what to say (which pods wait, why, how many of a gang are bound); this says it.
//
// Writes to one object go out one at a time, and the newest body is the last one sent: with
// several workers, an older condition could otherwise land after a newer one and stay (the loop
// does not rewrite a condition it believes written). A body superseded before it was sent is not
// sent at all.
//
// Thread-safety: every method from one thread (the loop), except event_stats() and queued(),
// which are thread-safe. The writes run on the pools' workers and touch no loop state.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/scheduler.h"
#include "k8s/client/event_recorder.h"
#include "k8s/client/kube_client.h"
#include "k8s/client/task_pool.h"
#include "k8s/controller/controller.h"
#include "k8s/controller/objects.h"

namespace tessera::k8s {

class StatusWriter {
 public:
  // `stop` is the controller's flag (it outlives the writer): writes not yet sent are dropped
  // once it is set.
  StatusWriter(KubeClient* client, const ControllerOptions& options, const std::atomic<bool>& stop);
  ~StatusWriter();  // drains the pools: status writes first, then Events
  StatusWriter(const StatusWriter&) = delete;
  StatusWriter& operator=(const StatusWriter&) = delete;

  // One occurrence of an Event on the pod. `type` is "Normal" or "Warning".
  void Event(const PodInfo& pod, const char* type, const char* reason, const std::string& message);
  // One occurrence of an Event on another object (a Job, a PodGroup).
  void Event(const ObjectRef& ref, const char* type, const char* reason,
             const std::string& message);
  // The pod waits for `reason`: a FailedScheduling Event, and, when the reason is new
  // (`changed`) and the pod does not already say it, its PodScheduled condition.
  // `condition_reason`: the condition's reason (autoscalers act on Unschedulable only).
  void Unschedulable(const PodInfo& pod, const std::string& reason, bool changed,
                     const char* condition_reason = "Unschedulable");
  // The PodGroup's status: its phase from how many of its `members` are `scheduled`.
  void PodGroupStatus(const PodGroupInfo& pg, int32_t scheduled, int32_t members);
  // Every ClusterQueue's status from the engine's usage, with the pending and admitted
  // workloads counted per ClusterQueue (index in engine.model().cluster_queues).
  void ClusterQueueStatuses(const Scheduler& engine, const std::vector<int64_t>& pending,
                            const std::vector<int64_t>& admitted);
  // The admission fair sharing usage of every LocalQueue whose ClusterQueue orders by it, into
  // its status.fairSharing (Kueue's field; k8s/controller/fair_sharing_status.h). `wall_start`: the
  // wall-clock time of the engine's 0. Written when a sample changed it.
  void LocalQueueStatuses(const Scheduler& engine,
                          std::chrono::system_clock::time_point wall_start);
  // Writes the Event occurrences the per-object rate limit held back.
  void FlushEvents();
  // Stops writing Events: later ones are dropped, those queued return at once.
  void StopEvents();

  EventRecorderStats event_stats() const;
  size_t queued() const;  // status writes not yet sent

 private:
  // PATCHes {"status": status} onto `path` (a status subresource) unless that body was the last
  // written there.
  void Write(const std::string& path, const json& status);

  // How a body is sent: a pod's condition (strategic merge, the answer in protobuf where
  // enabled) or a status (merge patch; onto the main resource where there is no status
  // subresource).
  enum class Kind { kPodCondition, kStatus };
  // Sends `body` to `path` after any write to it in flight; replaces one not yet sent.
  void Send(const std::string& path, std::string body, Kind kind);
  // On a worker: sends the newest body of `path` until there is none left.
  void SendLatest(const std::string& path);
  void Patch(const std::string& path, const std::string& body, Kind kind);

  struct Outbox {
    std::string body;  // the newest body not yet sent
    Kind kind = Kind::kStatus;
    bool waiting = false;  // `body` is to be sent
  };

  KubeClient* const client_;
  const bool protobuf_;
  const std::atomic<bool>& stop_;
  std::map<std::string, std::string> written_;  // path -> last status body written
  std::mutex outbox_mu_;
  // Paths with a write queued or in flight (a worker owns each entry until it erases it).
  std::map<std::string, Outbox> outbox_;  // GUARDED_BY(outbox_mu_)
  std::unique_ptr<TaskPool> status_pool_, event_pool_;
  std::unique_ptr<EventRecorder> events_;  // writes on event_pool_
};

}  // namespace tessera::k8s
