// Events on API objects, aggregated the way client-go's EventCorrelator does: one v1 Event per
// (object, type, reason, message) whose `count` and `lastTimestamp` are PATCHed when it happens
// again, instead of a new Event each time; and a token bucket per object (client-go's spam
// filter: a burst of 25, then one write per 5 minutes) that holds writes back without losing
// occurrences: what the bucket holds back is folded into the next write of that Event (Flush).
//
// Writes run on the caller's executor (a TaskPool): at most one request per Event is in flight,
// and occurrences that arrive meanwhile are coalesced into the next PATCH, so that a PATCH never
// overtakes the POST that creates its Event. An Event the server no longer has (Events expire
// after an hour) is created again on the PATCH's 404.
//
// Events are best effort, as in client-go (whose broadcaster drops what does not fit its queue of
// 1,000): at most `max_queued` writes wait in the executor. An occurrence beyond that stays
// counted in its Event and a later Flush writes it when there is room; if the Event is forgotten
// first (the LRU), its unwritten occurrences are dropped and counted in stats().dropped. Without
// the bound, a scheduler binding faster than the server takes Events would queue them without
// limit.
//
// Thread-safety: every method is thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "k8s/client/kube_client.h"

namespace tessera::k8s {

// The wall clock as RFC 3339 in UTC (seconds), as Events and status conditions write it.
std::string WallRfc3339();

struct ObjectRef {
  std::string api_version = "v1";
  std::string kind = "Pod";
  std::string ns, name, uid;
};

struct EventRecorderOptions {
  std::string component = "tessera";  // source.component, reportingComponent
  std::string instance = "tessera";   // reportingInstance
  size_t cache_size = 4096;           // Events remembered for aggregation (LRU), as client-go
  double burst = 25;                  // writes per object at once ...
  double refill_per_s = 1.0 / 300;    // ... then one per 5 minutes, as client-go's spam filter
  size_t max_queued = 10000;          // writes handed to the executor and not finished
  bool protobuf = false;  // offer protobuf for the answers (the created Event), as proto.h
};

struct EventRecorderStats {
  int64_t created = 0;  // POSTs that created an Event
  int64_t patched = 0;  // PATCHes of count / lastTimestamp
  int64_t failed = 0;   // writes that failed (the occurrence stays counted for the next one)
  int64_t held = 0;     // writes held back by the rate limit or max_queued (occurrences kept)
  // Occurrences: counted by Record, on the server, and given up (forgotten before they were
  // written, or cut short by Stop). recorded - written - dropped are still to be written.
  int64_t recorded = 0, written = 0, dropped = 0;
  int64_t queued = 0;  // writes handed to the executor and not finished
};

class EventRecorder {
 public:
  using Executor = std::function<void(std::function<void()>)>;
  // `now` is seconds on any monotonic clock (injected for tests); `wall` returns the RFC 3339
  // time written into timestamps. Either may be null for the real clocks.
  EventRecorder(KubeClient* client, Executor executor, EventRecorderOptions options,
                std::function<double()> now = nullptr, std::function<std::string()> wall = nullptr);
  ~EventRecorder();
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  // One occurrence. `type` is "Normal" or "Warning".
  void Record(const ObjectRef& obj, const std::string& type, const std::string& reason,
              const std::string& message);
  // Writes the occurrences the rate limit held back where the object's bucket allows now.
  void Flush();
  // Stops writing: later Records and Flushes are dropped; writes already handed to the executor
  // return at once.
  void Stop();

  EventRecorderStats stats() const;

 private:
  struct Entry;
  struct Bucket {
    double tokens = 0;
    double at = 0;
  };
  bool TakeToken(const std::string& object_key);  // REQUIRES: mu_ held
  // Counts one occurrence; returns the entry when a write is due now (marked in flight).
  // REQUIRES: mu_ held.
  std::shared_ptr<Entry> Occurrence(const ObjectRef& obj, const std::string& type,
                                    const std::string& reason, const std::string& message);
  // Hands a write of `e` (marked in flight) to the executor. Must be called without mu_ held (an
  // inline executor writes at once); stats_.queued was raised under it.
  void Hand(std::shared_ptr<Entry> e);
  void Write(std::shared_ptr<Entry> e);
  void Evict();  // REQUIRES: mu_ held

  KubeClient* const client_;
  const Executor executor_;
  const EventRecorderOptions options_;
  const std::function<double()> now_;
  const std::function<std::string()> wall_;

  mutable std::mutex mu_;
  bool stopped_ = false;  // GUARDED_BY(mu_)
  // Most recently used first.
  std::list<std::shared_ptr<Entry>> lru_;  // GUARDED_BY(mu_)
  std::unordered_map<std::string, std::list<std::shared_ptr<Entry>>::iterator>
      index_;                                        // GUARDED_BY(mu_)
  std::unordered_map<std::string, Bucket> buckets_;  // GUARDED_BY(mu_)
  EventRecorderStats stats_;                         // GUARDED_BY(mu_)
  uint64_t serial_ = 0;                              // GUARDED_BY(mu_)
  size_t bucket_sweep_at_;                           // GUARDED_BY(mu_): buckets_ size to sweep
};

}  // namespace tessera::k8s
