// A list+watch informer for one resource: lists (paged), then watches from the list's
// resourceVersion with bookmarks, re-watches from the last seen resourceVersion when the stream
// ends, relists when the server answers 410 Gone (the version was compacted away), and backs off
// exponentially (100 ms doubling to 5 s) while the server cannot be reached. A watch that fails
// (a transport error, an unexpected status) is followed by a relist, as client-go's reflector
// does: what happened during an outage comes back whole.
//
// Events go to a handler on the informer's own thread. A (re)list delivers one kReplace event
// with every object, so that the consumer can drop what disappeared while it was not watching.
//
// Thread-safety: Start/Stop from one thread; the handler runs on the informer thread.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "k8s/client/kube_client.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s {

struct WatchEvent {
  enum class Type { kAdded, kModified, kDeleted, kReplace };
  Type type = Type::kAdded;
  std::string resource;                 // the informer's name ("pods", "nodes", ...)
  nlohmann::json object;                // kAdded/kModified/kDeleted
  std::vector<nlohmann::json> objects;  // kReplace
  // kReplace: false when an optional kind answered 404 (its CRD is not installed), so that the
  // consumer can tell "none exist" from "this kind does not exist here".
  bool served = true;
};

struct InformerStats {
  std::atomic<int64_t> lists{0};
  std::atomic<int64_t> watches{0};
  std::atomic<int64_t> gone{0};    // 410 answers that forced a relist
  std::atomic<int64_t> errors{0};  // transport errors and unexpected statuses
  std::atomic<int64_t> bookmarks{0};
  std::atomic<int64_t> events{0};
  std::atomic<int64_t> protobuf_messages{0};  // lists and watch events that came as protobuf
};

class Informer {
 public:
  using Handler = std::function<void(WatchEvent)>;

  // `path` is the collection's path, e.g. "/api/v1/pods" or
  // "/apis/scheduling.x-k8s.io/v1alpha1/podgroups". `optional`: a 404 on list (a CRD that is not
  // installed) is retried slowly and quietly instead of being reported as an error.
  // `protobuf`: offer the server protobuf for lists and watches (only for the kinds proto.h
  // decodes: Pods and Nodes); objects then hold the fields objects.h reads, not every field.
  Informer(KubeClient* client, std::string resource, std::string path, Handler handler,
           bool optional = false, bool protobuf = false);
  ~Informer();

  // Paths to try, in order, where `path` is not served (404): other versions of the same kind
  // (scheduling.k8s.io/v1beta1, then v1alpha3 ...). Each (re)list starts from `path`; the first
  // path served is listed and watched. REQUIRES: `optional`, before Start().
  void SetAlternatePaths(std::vector<std::string> paths);

  void Start();
  // Asks the thread to end without waiting (so that many informers stop in parallel).
  void RequestStop() { stop_ = true; }
  void Stop();  // returns once the thread has ended: a list in flight is cut short

  // True once the first list was delivered.
  bool synced() const { return synced_.load(); }
  // True while the informer is in touch with the server: since its last (re)list succeeded (or
  // an optional kind was found not served), until a list or watch fails. /readyz reads it.
  bool healthy() const { return healthy_.load(); }
  const InformerStats& stats() const { return stats_; }
  const std::string& resource() const { return resource_; }

 private:
  void Run();
  // Lists everything; returns false (and leaves rv_ unchanged) on failure.
  bool List();
  enum class WatchEnd { kRewatch, kRelist, kBackOff };
  // Watches from rv_ until the stream ends; says what to do next.
  WatchEnd Watch();
  // One message of the watch stream: applies it; false ends the watch (need_relist_ or
  // watch_failed_ says why). May throw nlohmann::json::exception on a field of the wrong type.
  bool OnWatchMessage(std::string_view message, bool framed);
  // Counts and logs a message that cannot be followed; false (the watch ends).
  bool Garbled(std::string_view what);
  void Sleep(int ms);
  const std::string& path() const { return paths_[served_]; }
  char Sep() const { return path().find('?') == std::string::npos ? '?' : '&'; }
  std::string_view Accept() const;

  KubeClient* const client_;
  const std::string resource_;
  std::vector<std::string> paths_;  // the path, then its alternates; constant once started
  size_t served_ = 0;               // the informer thread's: the one listed and watched
  const Handler handler_;
  const bool optional_;
  const bool protobuf_;
  std::string rv_;
  bool first_list_ = true;  // the informer thread's
  std::atomic<bool> stop_{false};
  std::atomic<bool> synced_{false};
  std::atomic<bool> healthy_{false};
  // Watch's thread only: the watch ended on 410 Gone / on what cannot be followed.
  bool need_relist_ = false;
  bool watch_failed_ = false;
  InformerStats stats_;
  std::thread thread_;
};

}  // namespace tessera::k8s
