// Queue ordering plugins: which ClusterQueue head is tried first in a scheduling round.
//
// Both first try the head of the ClusterQueue with the higher queue priority (KAI's queue
// priority, tessera.dev/queue-priority; 0 unless set). Then PriorityFifo: higher priority, then
// earlier creation (Kueue's default). FairShare: lower weighted dominant-resource share of the
// ClusterQueue after admitting the head first, then PriorityFifo (Kueue's fair sharing).
// MakeQueueOrder is the one place that picks.
//
// Thread-safety: implementations are immutable after construction.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "model/model.h"

namespace tessera {

struct HeadKey {
  int32_t priority = 0;
  double created = 0;
  int32_t id = 0;              // tie-break: input order
  double share = 0;            // filled only when NeedsShare()
  int32_t queue_priority = 0;  // its ClusterQueue's (ClusterQueue::queue_priority)
};

class QueueOrder {
 public:
  virtual ~QueueOrder() = default;
  virtual std::string_view name() const = 0;
  virtual bool NeedsShare() const = 0;
  virtual bool Less(const HeadKey& a, const HeadKey& b) const = 0;
};

// Priority desc, creation asc, id asc: the order inside every queue.
inline bool PriorityFifoLess(const HeadKey& a, const HeadKey& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.created != b.created) return a.created < b.created;
  return a.id < b.id;
}

// Higher queue priority first (KAI's queue order puts it before fair share).
inline bool QueuePriorityFirst(const HeadKey& a, const HeadKey& b, bool& less) {
  if (a.queue_priority == b.queue_priority) return false;
  less = a.queue_priority > b.queue_priority;
  return true;
}

std::unique_ptr<QueueOrder> MakeQueueOrder(const SchedulerConfig& config);

}  // namespace tessera
