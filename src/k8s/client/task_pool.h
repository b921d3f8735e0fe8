// A fixed set of threads that run posted tasks in order of posting: the binder and status
// writers, so that many API requests are in flight at once while the scheduling loop goes on.
//
// Thread-safety: Post and Drain may be called from any thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tessera::k8s {

class TaskPool {
 public:
  explicit TaskPool(int threads);
  ~TaskPool();  // runs what was posted, then joins
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  void Post(std::function<void()> task);
  // Waits until every task posted so far has run.
  void Drain();
  size_t queued() const;

 private:
  void Work();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable idle_cv_;
  std::deque<std::function<void()>> tasks_;  // GUARDED_BY(mu_)
  int running_ = 0;                          // GUARDED_BY(mu_)
  bool stop_ = false;                        // GUARDED_BY(mu_)
  std::vector<std::thread> threads_;
};

}  // namespace tessera::k8s
