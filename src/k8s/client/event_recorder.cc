#include "k8s/client/event_recorder.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <vector>

#include "fmt/format.h"
#include "k8s/client/proto.h"
#include "model/json_text.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"

namespace tessera::k8s {
namespace {

using json = nlohmann::json;

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

uint64_t WallNanos() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

}  // namespace

std::string WallRfc3339() {
  auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm;
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

struct EventRecorder::Entry {
  std::string key;         // aggregation key
  std::string object_key;  // rate-limit key
  ObjectRef obj;
  std::string type, reason, message;
  std::string name;             // metadata.name of the Event on the server; "" until created
  std::string first_timestamp;  // of the first occurrence
  std::string last_timestamp;   // of the latest occurrence
  int64_t count = 0;            // occurrences so far
  int64_t written = 0;          // count the server holds
  bool in_flight = false;
};

EventRecorder::EventRecorder(KubeClient* client, Executor executor, EventRecorderOptions options,
                             std::function<double()> now, std::function<std::string()> wall)
    : client_(client),
      executor_(std::move(executor)),
      options_(std::move(options)),
      now_(now ? std::move(now) : SteadySeconds),
      wall_(wall ? std::move(wall) : WallRfc3339),
      bucket_sweep_at_(4 * options_.cache_size) {}

EventRecorder::~EventRecorder() = default;

void EventRecorder::Stop() {
  std::lock_guard<std::mutex> l(mu_);
  stopped_ = true;
}

EventRecorderStats EventRecorder::stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return stats_;
}

bool EventRecorder::TakeToken(const std::string& object_key) {
  const double now = now_();
  auto [it, inserted] = buckets_.try_emplace(object_key);
  Bucket& b = it->second;
  if (inserted) {
    b.tokens = options_.burst;
  } else {
    b.tokens = std::min(options_.burst, b.tokens + (now - b.at) * options_.refill_per_s);
  }
  b.at = now;
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

void EventRecorder::Record(const ObjectRef& obj, const std::string& type, const std::string& reason,
                           const std::string& message) {
  std::shared_ptr<Entry> to_write;
  {
    std::lock_guard<std::mutex> l(mu_);
    to_write = Occurrence(obj, type, reason, message);
  }
  // Outside the lock: an inline executor writes at once.
  if (to_write) Hand(std::move(to_write));
}

void EventRecorder::Hand(std::shared_ptr<Entry> e) {
  executor_([this, e] {
    Write(e);
    std::lock_guard<std::mutex> l(mu_);
    --stats_.queued;
  });
}

std::shared_ptr<EventRecorder::Entry> EventRecorder::Occurrence(const ObjectRef& obj,
                                                                const std::string& type,
                                                                const std::string& reason,
                                                                const std::string& message) {
  if (stopped_) return nullptr;
  const std::string object_key = obj.kind + "/" + obj.ns + "/" + obj.name + "/" + obj.uid;
  std::string key = object_key;
  for (const std::string* part : {&type, &reason, &message}) {
    key.push_back('\0');
    key += *part;
  }
  std::shared_ptr<Entry> e;
  if (auto it = index_.find(key); it != index_.end()) {
    e = *it->second;
    lru_.splice(lru_.begin(), lru_, it->second);  // most recently used
  } else {
    e = std::make_shared<Entry>();
    e->key = key;
    e->object_key = object_key;
    e->obj = obj;
    e->type = type;
    e->reason = reason;
    e->message = message;
    e->first_timestamp = wall_();
    lru_.push_front(e);
    index_[key] = lru_.begin();
    Evict();
  }
  ++e->count;
  ++stats_.recorded;
  e->last_timestamp = wall_();
  if (e->in_flight) return nullptr;  // the write in flight picks this occurrence up when done
  if (static_cast<size_t>(stats_.queued) >= options_.max_queued || !TakeToken(object_key)) {
    ++stats_.held;
    return nullptr;
  }
  e->in_flight = true;
  ++stats_.queued;
  return e;
}

void EventRecorder::Flush() {
  std::vector<std::shared_ptr<Entry>> to_write;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stopped_) return;
    for (const auto& e : lru_) {
      if (static_cast<size_t>(stats_.queued) >= options_.max_queued) break;
      if (!e->in_flight && e->count > e->written && TakeToken(e->object_key)) {
        e->in_flight = true;
        ++stats_.queued;
        to_write.push_back(e);
      }
    }
  }
  for (auto& e : to_write) Hand(std::move(e));
}

void EventRecorder::Evict() {
  // The least recently used Events are forgotten, as client-go's LRU does, whether or not a
  // write of theirs is in flight: that write keeps its entry alive and finishes; a later
  // occurrence of the same Event starts a new one. (Skipping entries in flight made every
  // Record walk them all when thousands of Scheduled Events were queued at once.)
  while (lru_.size() > options_.cache_size) {
    const Entry& old = *lru_.back();
    // A write in flight still takes what this Event counted; otherwise it is lost.
    if (!old.in_flight) stats_.dropped += old.count - old.written;
    index_.erase(old.key);
    lru_.pop_back();
  }
  if (buckets_.size() > bucket_sweep_at_) {
    // Full buckets carry no information: drop them. The next sweep waits until the map has
    // doubled again, so that a map of buckets in use is not rescanned on every Record.
    const double now = now_();
    for (auto it = buckets_.begin(); it != buckets_.end();) {
      double tokens = it->second.tokens + (now - it->second.at) * options_.refill_per_s;
      it = tokens >= options_.burst ? buckets_.erase(it) : std::next(it);
    }
    bucket_sweep_at_ = std::max(4 * options_.cache_size, 2 * buckets_.size());
  }
}

void EventRecorder::Write(std::shared_ptr<Entry> e) {
  for (;;) {
    std::string name, path, body;
    int64_t count;
    bool create;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stopped_) {
        stats_.dropped += e->count - e->written;
        e->written = e->count;  // given up: a second Stop-ed write does not count it again
        e->in_flight = false;
        return;
      }
      count = e->count;
      create = e->name.empty();
      if (create) {
        // The name is ours to choose (client-go's is the object's name and a timestamp), so that
        // the PATCHes that follow need not wait for the server's answer to learn it.
        name = fmt::format("{}.{:x}{:x}", e->obj.name, WallNanos(), ++serial_);
        // A cluster-scoped object's Events live in "default", as client-go puts them.
        const std::string events_ns = e->obj.ns.empty() ? "default" : e->obj.ns;
        json ev = {{"apiVersion", "v1"},
                   {"kind", "Event"},
                   {"metadata", {{"name", name}, {"namespace", events_ns}}},
                   {"involvedObject",
                    {{"apiVersion", e->obj.api_version},
                     {"kind", e->obj.kind},
                     {"namespace", e->obj.ns},
                     {"name", e->obj.name},
                     {"uid", e->obj.uid}}},
                   {"type", e->type},
                   {"reason", e->reason},
                   {"message", e->message},
                   {"source", {{"component", options_.component}}},
                   {"reportingComponent", options_.component},
                   {"reportingInstance", options_.instance},
                   {"firstTimestamp", e->first_timestamp},
                   {"lastTimestamp", e->last_timestamp},
                   {"count", count}};
        path = fmt::format("/api/v1/namespaces/{}/events", events_ns);
        body = DumpJson(ev);
      } else {
        name = e->name;
        path = fmt::format("/api/v1/namespaces/{}/events/{}",
                           e->obj.ns.empty() ? "default" : e->obj.ns, name);
        body = DumpJson(json{{"count", count}, {"lastTimestamp", e->last_timestamp}});
      }
    }
    // The answer (the Event as stored) is not read: protobuf costs the server less to encode.
    const std::string_view accept = options_.protobuf ? proto::kAccept : "application/json";
    auto resp = create ? client_->Post(path, body, accept)
                       : client_->Patch(path, body, PatchType::kMerge, accept);
    const long status = resp.ok() ? resp->status : 0;
    std::lock_guard<std::mutex> l(mu_);
    if (status == 200 || status == 201) {
      if (create) {
        e->name = name;
        ++stats_.created;
      } else {
        ++stats_.patched;
      }
      stats_.written += count - e->written;
      e->written = count;
    } else if (!create && status == 404) {
      // The Event expired on the server (its TTL is an hour): the next write creates it again,
      // with the count so far.
      e->name.clear();
      continue;
    } else {
      ++stats_.failed;
      spdlog::debug("event {} {}: HTTP {}", e->reason, e->obj.name, status);
      e->in_flight = false;
      return;  // the occurrences stay counted; a later Record or Flush writes them
    }
    // Occurrences that arrived while the request was in flight go out in one PATCH, if the
    // object's bucket allows it now (else Flush does it later).
    if (stopped_ || e->count == e->written || !TakeToken(e->object_key)) {
      if (!stopped_ && e->count != e->written) ++stats_.held;
      e->in_flight = false;
      return;
    }
  }
}

}  // namespace tessera::k8s
