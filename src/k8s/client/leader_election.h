// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it: the
// holder renews spec.renewTime every `retry_period`; another replica takes the lease over once
// renewTime + leaseDurationSeconds has passed on its own clock since it last saw the lease
// change. Writes carry the resourceVersion read, so two replicas cannot both win (the loser gets
// 409 Conflict).
//
// Thread-safety: Start/Stop from one thread; is_leader() from any.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "k8s/client/kube_client.h"

namespace tessera::k8s {

struct LeaderElectionOptions {
  std::string ns = "kube-system";
  std::string name = "tessera";
  std::string identity;  // unique per replica (hostname + pid by default)
  double lease_duration_s = 15;
  double renew_deadline_s = 10;  // a leader that could not renew for this long steps down
  double retry_period_s = 2;
  // Each request of an acquire or renew is cut after this long (a GET and a PUT fit in
  // renew_deadline_s), and Stop() cuts the one in flight at once.
  double request_timeout_s = 3;
  // Stop(): the release (a GET and a PUT) is given up after this long.
  double release_timeout_s = 3;
};

class LeaderElector {
 public:
  // `on_change(true)` when this replica becomes the leader, `on_change(false)` when it loses the
  // lease (the caller should stop scheduling at once: another replica may be taking over).
  LeaderElector(KubeClient* client, LeaderElectionOptions options,
                std::function<void(bool)> on_change);
  ~LeaderElector();

  void Start();
  // Stops; a leader releases the lease (empty holder) so that a successor need not wait.
  // Returns within about a second plus release_timeout_s, whatever the server does.
  void Stop();
  bool is_leader() const { return leader_.load(); }
  // From now on this replica never takes the lease (it is shutting down: a follower that became
  // the leader now would only release it again and delay the next one); a leader still renews it
  // until Stop(), so that nobody takes over while its binds drain.
  void StopAcquiring() { no_acquire_ = true; }

 private:
  void Run();
  // One attempt to acquire or renew; true when this replica holds the lease afterwards.
  bool TryAcquireOrRenew();
  void Release();
  RequestLimits Limits() const;
  std::string Path() const;

  KubeClient* const client_;
  const LeaderElectionOptions options_;
  const std::function<void(bool)> on_change_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> leader_{false};
  std::atomic<bool> no_acquire_{false};
  std::thread thread_;
  // What we last observed of somebody else's lease, and when (our clock).
  std::string observed_rv_;
  std::chrono::steady_clock::time_point observed_at_{};
  std::chrono::steady_clock::time_point last_renew_{};
};

}  // namespace tessera::k8s
