#include "k8s/controller/binder.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "fmt/format.h"
#include "k8s/client/event_recorder.h"
#include "k8s/client/proto.h"
#include "k8s/controller/node_policy.h"
#include "model/bounded_json.h"
#include "model/json_text.h"
#include "spdlog/spdlog.h"

namespace tessera::k8s {

using Clock = std::chrono::steady_clock;

Binder::Binder(KubeClient* client, const ControllerOptions& options, Metrics* metrics,
               const std::atomic<bool>& stop, const std::atomic<bool>& active, Callbacks callbacks)
    : client_(client),
      protobuf_(options.protobuf),
      metrics_(metrics),
      stop_(stop),
      active_(active),
      callbacks_(std::move(callbacks)),
      pool_(std::make_unique<TaskPool>(options.bind_workers)) {}

std::string Binder::ServedVersion(const char* path, const char* served, const char* otherwise,
                                  const char* unknown, std::string& cache) {
  std::lock_guard<std::mutex> l(version_mu_);
  if (!cache.empty()) return cache;
  RequestLimits limits;
  limits.cancel = &stop_;
  auto r = client_->Get(path, "application/json", limits);
  if (!r.ok() || r->status >= 500) return unknown;  // ask again at the next attempt
  cache = r->status == 200 ? served : otherwise;
  return cache;
}

std::string Binder::EvictionVersion() {
  // The Eviction API moved to policy/v1 in Kubernetes 1.22; older servers only have v1beta1.
  // Asked at the first eviction, on a worker, not at Start: a server that stalls or is down at
  // start must neither hold Start up nor make the answer v1beta1 for good.
  return ServedVersion("/apis/policy/v1", "policy/v1", "policy/v1beta1", "", eviction_version_);
}

Binder::~Binder() { pool_.reset(); }

std::string Binder::BindingJson(const BindingBody& b) {
  json body = {{"apiVersion", "v1"},
               {"kind", "Binding"},
               {"metadata", {{"name", b.name}, {"namespace", b.ns}, {"uid", b.uid}}},
               {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", b.node}}}};
  for (const auto& [k, v] : b.annotations) body["metadata"]["annotations"][k] = v;
  return DumpJson(body);
}

void Binder::Bind(const PodInfo& p, const std::string& node, const std::vector<int32_t>& gpus,
                  const std::vector<int8_t>& mig_starts, bool protect,
                  std::vector<ClaimReservation> claims) {
  // The server copies a Binding's annotations onto the pod in the same write.
  BindingBody b{p.ns, p.name, p.uid, node, {}, std::move(claims)};
  if (!gpus.empty()) b.annotations.emplace_back(kGpuIndicesAnnotation, FormatGpuIndices(gpus));
  if (!mig_starts.empty())
    b.annotations.emplace_back(kMigStartsAnnotation, FormatGpuIndices(std::vector<int32_t>(
                                                         mig_starts.begin(), mig_starts.end())));
  if (protect) {
    b.annotations.emplace_back(kDoNotDisruptAnnotation, "true");
    b.annotations.emplace_back(kSafeToEvictAnnotation, "false");
  }
  std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}/binding", p.ns, p.name);
  pool_->Post([this, key = p.Key(), path, b = std::move(b)] { SendBind(key, path, b); });
}

long Binder::Send(const std::string& path, const BindingBody& b) {
  // As protobuf unless --json-only: the server decodes it for less than JSON. Encoded here,
  // off the scheduling loop.
  bool pb = protobuf_ && !json_binds_;
  std::string payload =
      pb ? proto::EncodeBinding(b.ns, b.name, b.uid, b.annotations, b.node) : BindingJson(b);
  long status = 0;
  for (int attempt = 0; attempt < 4 && !stop_; ++attempt) {
    auto t0 = Clock::now();
    auto resp = pb ? client_->Request("POST", path, payload, proto::kMediaType, proto::kAccept)
                   : client_->Post(path, payload);
    metrics_->bind_latency.Observe(std::chrono::duration<double>(Clock::now() - t0).count());
    if (pb && resp.ok() && resp->status == 415) {
      // A server (or proxy) that takes no protobuf bodies: JSON from now on.
      if (!json_binds_.exchange(true))
        spdlog::warn("tessera: the API server refused a protobuf Binding (415); binding with JSON");
      pb = false;
      payload = BindingJson(b);
      --attempt;
      continue;
    }
    if (resp.ok() && resp->status < 500 && resp->status != 429) {
      status = resp->status;
      break;
    }
    status = resp.ok() ? resp->status : 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(100 << attempt));
  }
  return status;
}

void Binder::SendBind(const std::string& key, const std::string& path, const BindingBody& b) {
  // Queued binds are dropped once this replica stops or stops leading: only binds already sent
  // finish. The pod stays pending, and the next leader (or this one, rebuilt) decides.
  if (stop_ || !active_) {
    callbacks_.bind_done(key, b.node, kDropped);
    return;
  }
  if (!b.claims.empty()) {
    if (const long reserved = ReserveClaims(key, b); reserved != 200) {
      callbacks_.bind_done(key, b.node, reserved);
      return;
    }
  }
  const long status = Send(path, b);
  if (status != 200 && status != 201) UnreserveClaims(b, b.claims.size());
  if (status == 409) {
    // Someone else bound it, or a resync is due: fetch the pod as it is now.
    auto slash = key.find('/');
    auto got = client_->Get(
        fmt::format("/api/v1/namespaces/{}/pods/{}", key.substr(0, slash), key.substr(slash + 1)));
    json object;
    if (got.ok() && got->status == 200) object = ParseJsonOrDiscarded(got->body);
    if (got.ok() && (got->status == 200 || got->status == 404))
      callbacks_.conflict_pod(key, std::move(object));
  }
  callbacks_.bind_done(key, b.node, status);
}

std::string Binder::DraVersion() {
  return ServedVersion("/apis/resource.k8s.io/v1", "v1", "v1beta2", "v1", dra_version_);
}

long Binder::ReserveClaims(const std::string& key, const BindingBody& b) {
  const std::string version = DraVersion();
  for (size_t i = 0; i < b.claims.size(); ++i) {
    std::string why;
    const long status =
        ReserveClaim(*client_, version, b.claims[i], ClaimPod{b.name, b.uid}, stop_, &why);
    if (status == 200) continue;
    spdlog::warn("tessera: pod {} not bound to {}: {}", key, b.node, why);
    UnreserveClaims(b, i);
    return status == 0 || status == 200 ? 409 : status;
  }
  return 200;
}

void Binder::UnreserveClaims(const BindingBody& b, size_t count) {
  if (count == 0) return;
  const std::string version = DraVersion();
  for (size_t i = 0; i < count && i < b.claims.size(); ++i)
    UnreserveClaim(*client_, version, b.claims[i], ClaimPod{b.name, b.uid}, stop_);
}

void Binder::SendDisruptionTarget(const std::string& ns, const std::string& name,
                                  const std::string& message) {
  // A strategic merge on the status subresource: conditions merge by type, so the pod's other
  // conditions stay. Servers before 1.26 know no DisruptionTarget but keep any condition type.
  json patch = {{"status",
                 {{"conditions",
                   {{{"type", "DisruptionTarget"},
                     {"status", "True"},
                     {"reason", "PreemptionByScheduler"},
                     {"message", message},
                     {"lastTransitionTime", WallRfc3339()}}}}}}};
  const std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}/status", ns, name);
  for (int attempt = 0; attempt < 3 && !stop_; ++attempt) {
    auto resp = client_->Patch(path, DumpJson(patch), PatchType::kStrategicMerge);
    if (resp.ok() && resp->status < 500 && resp->status != 429) return;  // done, or pod gone
    std::this_thread::sleep_for(std::chrono::milliseconds(100 << attempt));
  }
  // Not told: the eviction goes ahead all the same (the preemptor must not wait on a notice).
}

void Binder::Evict(const PodInfo& p, const std::string& message) {
  json body = {{"kind", "Eviction"},
               {"metadata", {{"name", p.name}, {"namespace", p.ns}}},
               {"deleteOptions", {{"gracePeriodSeconds", p.grace_period}}}};
  std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}/eviction", p.ns, p.name);
  pool_->Post([this, path, ns = p.ns, name = p.name, message, body = std::move(body)]() mutable {
    if (stop_ || !active_) return;
    SendDisruptionTarget(ns, name, message);
    for (int attempt = 0; attempt < 20 && !stop_; ++attempt) {
      const std::string version = EvictionVersion();
      if (version.empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(std::min(2000, 100 << attempt)));
        continue;
      }
      body["apiVersion"] = version;
      auto resp = client_->Post(path, DumpJson(body));
      if (resp.ok() && (resp->status == 200 || resp->status == 201 || resp->status == 404)) {
        ++metrics_->evictions_ok;
        return;
      }
      // 429: a PodDisruptionBudget says not now; 5xx and transport errors: try again.
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(2000, 100 << attempt)));
    }
    ++metrics_->evictions_error;
  });
}

}  // namespace tessera::k8s
