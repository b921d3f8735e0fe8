#include "engine/actions/queue_order.h"

namespace tessera {
namespace {

class PriorityFifo : public QueueOrder {
 public:
  std::string_view name() const override { return "priority-fifo"; }
  bool NeedsShare() const override { return false; }
  bool Less(const HeadKey& a, const HeadKey& b) const override {
    if (bool less; QueuePriorityFirst(a, b, less)) return less;
    return PriorityFifoLess(a, b);
  }
};

class FairShare : public QueueOrder {
 public:
  std::string_view name() const override { return "fair-share"; }
  bool NeedsShare() const override { return true; }
  bool Less(const HeadKey& a, const HeadKey& b) const override {
    if (bool less; QueuePriorityFirst(a, b, less)) return less;
    if (a.share != b.share) return a.share < b.share;
    return PriorityFifoLess(a, b);
  }
};

}  // namespace

std::unique_ptr<QueueOrder> MakeQueueOrder(const SchedulerConfig& config) {
  if (config.fair_sharing) return std::make_unique<FairShare>();
  return std::make_unique<PriorityFifo>();
}

}  // namespace tessera
