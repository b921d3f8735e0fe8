#include "trace/queue_totals.h"

namespace tessera::trace {

int DelayBin(double wait) {
  for (int b = 0; b < static_cast<int>(kDelayBinEdges.size()); ++b)
    if (wait <= kDelayBinEdges[static_cast<size_t>(b)]) return b;
  return kDelayBins - 1;
}

void QueueTotals::Sum(ReplayResult& res, const std::vector<int64_t>& queue_milli) {
  const double span = res.end - res.start;
  ValueList all_waits, all_jcts;
  std::vector<double> fairness;
  QueueResult& all = res.all;
  all.name = "(all)";
  for (size_t q = 0; q < res.queues.size(); ++q) {
    QueueResult& r = res.queues[q];
    all_waits.Append(waits_[q]);
    all_jcts.Append(jcts_[q]);
    r.wait = waits_[q].Summary();
    r.jct = jcts_[q].Summary();
    r.mean_gpus =
        span > 0 ? r.gpu_hours * 3600.0 / span : static_cast<double>(queue_milli[q]) / 1000.0;
    all.quota_gpus += r.quota_gpus;
    all.jobs += r.jobs;
    all.admitted += r.admitted;
    all.finished += r.finished;
    all.rejected += r.rejected;
    all.pending_at_end += r.pending_at_end;
    all.running_at_end += r.running_at_end;
    all.preempted += r.preempted;
    all.gpu_hours += r.gpu_hours;
    all.gpu_hours_lost += r.gpu_hours_lost;
    all.gpu_hours_in_grace += r.gpu_hours_in_grace;
    all.mean_gpus += r.mean_gpus;
    for (int b = 0; b < kDelayBins; ++b) all.wait_histogram[b] += r.wait_histogram[b];
    if (r.quota_gpus > 0) fairness.push_back(r.mean_gpus / r.quota_gpus);
  }
  all.wait = all_waits.Summary();
  all.jct = all_jcts.Summary();
  all.peak_gpus = res.peak_allocation_pct * static_cast<double>(res.gpus_total) / 100.0;
  res.gpu_hours_lost = all.gpu_hours_lost;
  res.gpu_hours_in_grace = all.gpu_hours_in_grace;
  // "(none)" is listed only when some job had no ClusterQueue.
  if (res.queues.back().jobs == 0) {
    res.queues.pop_back();
    res.channels.pop_back();
  }
  res.jain_index = JainIndex(fairness);
}

}  // namespace tessera::trace
