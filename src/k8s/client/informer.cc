#include "k8s/client/informer.h"

#include <algorithm>
#include <chrono>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "k8s/client/proto.h"
#include "model/bounded_json.h"
#include "model/json_text.h"
#include "spdlog/spdlog.h"

namespace tessera::k8s {

Informer::Informer(KubeClient* client, std::string resource, std::string path, Handler handler,
                   bool optional, bool protobuf)
    : client_(client),
      resource_(std::move(resource)),
      paths_{std::move(path)},
      handler_(std::move(handler)),
      optional_(optional),
      protobuf_(protobuf) {}

std::string_view Informer::Accept() const {
  return protobuf_ ? proto::kAccept : std::string_view("application/json");
}

Informer::~Informer() { Stop(); }

void Informer::SetAlternatePaths(std::vector<std::string> paths) {
  paths_.resize(1);
  paths_.insert(paths_.end(), paths.begin(), paths.end());
}

void Informer::Start() {
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void Informer::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

void Informer::Sleep(int ms) {
  // In small steps so that Stop() is not held up by a long back-off.
  for (int waited = 0; waited < ms && !stop_; waited += 20)
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(20, ms - waited)));
}

bool Informer::List() {
  std::vector<nlohmann::json> items;
  std::string cont;
  std::string rv;
  const size_t was_served = served_;
  served_ = 0;
  while (true) {
    // The first list asks for resourceVersion=0, as client-go's reflector does: the API server
    // answers from its watch cache in one piece instead of paging through etcd (for 5,000 nodes
    // and 10,000 pods, a quarter of a second of server CPU and as much wall time saved at
    // start). The answer may lag etcd a little; the watch from its version catches up, and a
    // bind based on a stale pod meets a 409 that resyncs it. Relists (after 410 Gone, or an
    // error) read etcd, page by page, so that they never go back in time.
    std::string path = first_list_ ? fmt::format("{}{}resourceVersion=0", this->path(), Sep())
                                   : fmt::format("{}{}limit=500", this->path(), Sep());
    if (!cont.empty()) path += "&continue=" + UrlEncode(cont);
    RequestLimits limits;
    limits.cancel = &stop_;  // Stop() does not wait for a stalled server
    auto resp = client_->Get(path, Accept(), limits);
    if (stop_) return false;
    if (!resp.ok()) {
      ++stats_.errors;
      healthy_ = false;
      spdlog::warn("informer {}: list: {}", resource_, std::string(resp.status().message()));
      return false;
    }
    if (resp->status == 410 && !cont.empty()) {
      // The continue token expired: start the list over.
      items.clear();
      cont.clear();
      continue;
    }
    if (optional_ && resp->status == 404 && served_ + 1 < paths_.size()) {
      ++served_;  // not this version: the next one the server may serve instead
      items.clear();
      cont.clear();
      continue;
    }
    if (resp->status != 200) {
      ++stats_.errors;
      if (optional_ && resp->status == 404) {
        served_ = 0;
        healthy_ = true;  // the server answered: this kind is simply not there
        // The kind is not installed (a CRD not applied yet): it has no objects. Say so once, so
        // that the consumer does not wait for it, and keep looking for it slowly.
        if (!synced_) {
          WatchEvent ev;
          ev.type = WatchEvent::Type::kReplace;
          ev.resource = resource_;
          ev.served = false;
          handler_(std::move(ev));
          synced_ = true;
          if (paths_.size() == 1)
            spdlog::info("informer {}: {} is not served (CRD not installed?); treating it as empty",
                         resource_, this->path());
          else
            spdlog::info(
                "informer {}: none of {} is served (API not enabled?); treating it as empty",
                resource_, fmt::join(paths_, ", "));
        }
        return false;
      }
      healthy_ = false;
      spdlog::warn("informer {}: list: HTTP {}: {}", resource_, resp->status,
                   proto::ErrorText(resp->body, resp->content_type));
      return false;
    }
    nlohmann::json doc;
    if (proto::IsProtobuf(resp->content_type)) {
      auto decoded = proto::DecodeObject(resp->body);
      if (!decoded.ok()) {
        ++stats_.errors;
        spdlog::warn("informer {}: list: {}", resource_, std::string(decoded.status().message()));
        return false;
      }
      ++stats_.protobuf_messages;
      doc = std::move(*decoded);
    } else {
      // Bounded nesting: a document nested 300,000 deep would crash the first dump or copy.
      auto parsed = ParseJsonBounded(resp->body, "the answer");
      if (!parsed.ok()) {
        ++stats_.errors;
        spdlog::warn("informer {}: list: {}", resource_,
                     std::string(parsed.status().message()).substr(0, 300));
        return false;
      }
      doc = std::move(*parsed);
    }
    if (!doc.is_object()) {
      ++stats_.errors;
      spdlog::warn("informer {}: list: the answer is not a JSON object", resource_);
      return false;
    }
    // Read without throwing: a server that sends "resourceVersion": 5 is wrong, not fatal.
    const nlohmann::json& md = doc["metadata"];
    auto text = [&md](const char* key) {
      auto it = md.find(key);  // end() when md is not an object
      return it != md.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    rv = text("resourceVersion");
    cont = text("continue");
    if (doc["items"].is_array())
      for (auto& it : doc["items"]) items.push_back(std::move(it));
    if (cont.empty() || stop_) break;
  }
  if (stop_) return false;
  if (paths_.size() > 1 && (served_ != was_served || first_list_))
    spdlog::info("informer {}: listing and watching {}", resource_, this->path());
  ++stats_.lists;
  first_list_ = false;
  rv_ = rv;
  WatchEvent ev;
  ev.type = WatchEvent::Type::kReplace;
  ev.resource = resource_;
  ev.objects = std::move(items);
  handler_(std::move(ev));
  synced_ = true;
  healthy_ = true;
  return true;
}

bool Informer::Garbled(std::string_view what) {
  // A message that is not an event (truncated or garbled): what it said is lost, and the cache
  // would stay wrong until some later relist. Relist, after the back-off (a server that keeps
  // sending garbage must not be relisted in a tight loop).
  ++stats_.errors;
  spdlog::warn("informer {}: watch: {}; relisting", resource_, what.substr(0, 300));
  watch_failed_ = true;
  return false;
}

bool Informer::OnWatchMessage(std::string_view message, bool framed) {
  nlohmann::json doc;
  if (framed) {
    auto decoded = proto::DecodeWatchEvent(message);
    if (!decoded.ok()) return Garbled(std::string(decoded.status().message()));
    ++stats_.protobuf_messages;
    doc = std::move(*decoded);
  } else {
    // Bounded nesting (model/bounded_json.h): an ERROR event whose Status nests 300,000 arrays
    // is undecodable like any garbled event, and relisted, instead of crashing on its dump().
    auto parsed = ParseJsonBounded(message, "an event");
    if (!parsed.ok()) return Garbled(std::string(parsed.status().message()));
    doc = std::move(*parsed);
  }
  if (!doc.is_object()) return Garbled("an event that is not a JSON object");
  if (!doc["type"].is_string() || !doc["object"].is_object())
    return Garbled("an event without a type or an object");
  const std::string type = doc["type"];
  auto& obj = doc["object"];
  if (type == "ERROR") {
    // A Status object; 410 Gone: our resourceVersion is too old.
    if (obj.value("code", 0) == 410) {
      ++stats_.gone;
      need_relist_ = true;
      return false;
    }
    // Another error: the server is in trouble; back off, then relist.
    return Garbled("error " + DumpJson(obj));
  }
  if (obj["metadata"].is_object()) {
    std::string rv = obj["metadata"].value("resourceVersion", "");
    if (!rv.empty()) rv_ = rv;
  }
  if (type == "BOOKMARK") {
    ++stats_.bookmarks;
    return true;
  }
  WatchEvent ev;
  ev.resource = resource_;
  if (type == "ADDED")
    ev.type = WatchEvent::Type::kAdded;
  else if (type == "MODIFIED")
    ev.type = WatchEvent::Type::kModified;
  else if (type == "DELETED")
    ev.type = WatchEvent::Type::kDeleted;
  else
    return Garbled(fmt::format("an event of unknown type \"{}\"", type.substr(0, 40)));
  ++stats_.events;
  ev.object = std::move(obj);
  handler_(std::move(ev));
  return true;
}

Informer::WatchEnd Informer::Watch() {
  ++stats_.watches;
  // The server ends a watch after timeoutSeconds; we then simply re-watch from rv_. A little
  // jitter keeps many informers from reconnecting in lock-step.
  const std::string path =
      fmt::format("{}{}watch=1&allowWatchBookmarks=true&resourceVersion={}&timeoutSeconds={}",
                  this->path(), Sep(), UrlEncode(rv_),
                  240 + (std::hash<std::string>{}(resource_) % 60));
  need_relist_ = false;
  watch_failed_ = false;
  auto resp = client_->Stream(
      path,
      [this](std::string_view message, bool framed) {
        try {
          return OnWatchMessage(message, framed);
        } catch (const nlohmann::json::exception& e) {
          // A field of the wrong type ("code": "x"): as garbled as bad JSON.
          return Garbled(e.what());
        }
      },
      &stop_, Accept());
  if (stop_) return WatchEnd::kRewatch;  // cut short by Stop: not an error (the loop ends)
  if (!resp.ok()) {
    ++stats_.errors;
    healthy_ = false;
    spdlog::warn("informer {}: watch: {}", resource_, std::string(resp.status().message()));
    return WatchEnd::kBackOff;
  }
  if (resp->status == 410) {
    ++stats_.gone;
    return WatchEnd::kRelist;
  }
  if (resp->status != 200) {
    ++stats_.errors;
    healthy_ = false;
    spdlog::warn("informer {}: watch: HTTP {}", resource_, resp->status);
    return WatchEnd::kBackOff;
  }
  if (watch_failed_) {
    healthy_ = false;
    return WatchEnd::kBackOff;
  }
  return need_relist_ ? WatchEnd::kRelist : WatchEnd::kRewatch;
}

void Informer::Run() {
  int backoff_ms = 100;
  bool listed = false;
  while (!stop_) {
    if (!listed) {
      if (!List()) {
        Sleep(optional_ ? std::max(backoff_ms, 2000) : backoff_ms);
        backoff_ms = std::min(backoff_ms * 2, 5000);
        continue;
      }
      // The back-off is reset by a watch that worked, not by a list: a watch that keeps
      // failing must not make a relist every 100 ms.
      listed = true;
    }
    switch (Watch()) {
      case WatchEnd::kRewatch:
        backoff_ms = 100;
        break;
      case WatchEnd::kRelist:
        listed = false;  // 410 Gone: relist at once
        break;
      case WatchEnd::kBackOff:
        // Events may have been missed meanwhile: relist (the back-off goes on if it fails).
        Sleep(backoff_ms);
        backoff_ms = std::min(backoff_ms * 2, 5000);
        listed = false;
        break;
    }
  }
}

}  // namespace tessera::k8s
