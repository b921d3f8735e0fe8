#include "k8s/client/task_pool.h"

namespace tessera::k8s {

TaskPool::TaskPool(int threads) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
}

TaskPool::~TaskPool() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void TaskPool::Post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> l(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void TaskPool::Drain() {
  std::unique_lock<std::mutex> l(mu_);
  idle_cv_.wait(l, [this] { return tasks_.empty() && running_ == 0; });
}

size_t TaskPool::queued() const {
  std::lock_guard<std::mutex> l(mu_);
  return tasks_.size() + running_;
}

void TaskPool::Work() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    cv_.wait(l, [this] { return stop_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stop_ and nothing left
    auto task = std::move(tasks_.front());
    tasks_.pop_front();
    ++running_;
    l.unlock();
    task();
    l.lock();
    --running_;
    if (tasks_.empty() && running_ == 0) idle_cv_.notify_all();
  }
}

}  // namespace tessera::k8s
