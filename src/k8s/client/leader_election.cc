#include "k8s/client/leader_election.h"

#include <algorithm>
#include <ctime>

#include "fmt/format.h"
#include "model/bounded_json.h"
#include "model/json_text.h"
#include "nlohmann/json.hpp"
#include "spdlog/spdlog.h"

namespace tessera::k8s {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// metav1.MicroTime.
std::string MicroTimeNow() {
  auto now = std::chrono::system_clock::now();
  auto t = std::chrono::system_clock::to_time_t(now);
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() %
            1000000;
  std::tm tm;
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:06d}Z", buf, us);
}

}  // namespace

LeaderElector::LeaderElector(KubeClient* client, LeaderElectionOptions options,
                             std::function<void(bool)> on_change)
    : client_(client), options_(std::move(options)), on_change_(std::move(on_change)) {}

LeaderElector::~LeaderElector() { Stop(); }

std::string LeaderElector::Path() const {
  return fmt::format("/apis/coordination.k8s.io/v1/namespaces/{}/leases", options_.ns);
}

void LeaderElector::Start() {
  stop_ = false;
  thread_ = std::thread([this] { Run(); });
}

void LeaderElector::Stop() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
  if (leader_) {
    Release();
    leader_ = false;
    on_change_(false);
  }
}

RequestLimits LeaderElector::Limits() const {
  RequestLimits l;
  l.cancel = &stop_;
  l.timeout = std::chrono::milliseconds(static_cast<int64_t>(options_.request_timeout_s * 1000));
  return l;
}

bool LeaderElector::TryAcquireOrRenew() {
  const std::string path = Path() + "/" + options_.name;
  auto got = client_->Get(path, "application/json", Limits());
  if (!got.ok()) return false;
  if (no_acquire_ && !leader_) return false;  // shutting down: renew only (StopAcquiring)
  const int lease_s = static_cast<int>(options_.lease_duration_s);
  json spec = {{"holderIdentity", options_.identity},
               {"leaseDurationSeconds", lease_s},
               {"renewTime", MicroTimeNow()}};
  if (got->status == 404) {
    spec["acquireTime"] = MicroTimeNow();
    spec["leaseTransitions"] = 0;
    json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                  {"kind", "Lease"},
                  {"metadata", {{"name", options_.name}, {"namespace", options_.ns}}},
                  {"spec", spec}};
    auto r = client_->Post(Path(), DumpJson(lease), "application/json", Limits());
    return r.ok() && r->status == 201;
  }
  if (got->status != 200) return false;
  json lease = ParseJsonOrDiscarded(got->body);
  if (!lease.is_object()) return false;
  json& cur = lease["spec"];
  const std::string holder = cur.value("holderIdentity", "");
  const std::string rv = lease["metadata"].value("resourceVersion", "");
  const auto now = Clock::now();
  if (rv != observed_rv_) {
    observed_rv_ = rv;
    observed_at_ = now;
  }
  if (!holder.empty() && holder != options_.identity) {
    const int their_s = cur.value("leaseDurationSeconds", lease_s);
    // Expiry is judged on our own clock since we saw the lease last change, never on the
    // holder's timestamps: clocks of two machines need not agree.
    if (std::chrono::duration<double>(now - observed_at_).count() < their_s) return false;
  }
  if (holder != options_.identity) {
    spec["acquireTime"] = MicroTimeNow();
    spec["leaseTransitions"] = cur.value("leaseTransitions", 0) + 1;
  } else {
    if (cur.contains("acquireTime")) spec["acquireTime"] = cur["acquireTime"];
    spec["leaseTransitions"] = cur.value("leaseTransitions", 0);
  }
  lease["spec"] = spec;
  // carries metadata.resourceVersion: 409 if stale
  auto r = client_->Put(path, DumpJson(lease), Limits());
  if (!r.ok() || r->status != 200) return false;
  json updated = ParseJsonOrDiscarded(r->body);
  if (updated.is_object()) {
    observed_rv_ = updated["metadata"].value("resourceVersion", "");
    observed_at_ = Clock::now();
  }
  return true;
}

void LeaderElector::Release() {
  const std::string path = Path() + "/" + options_.name;
  const auto deadline = Clock::now() + std::chrono::milliseconds(
                                           static_cast<int64_t>(options_.release_timeout_s * 1000));
  auto limits = [&] {
    RequestLimits l;  // not Limits(): stop_ is set by now
    l.timeout =
        std::max(std::chrono::milliseconds(1),
                 std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
    return l;
  };
  auto got = client_->Get(path, "application/json", limits());
  if (!got.ok() || got->status != 200) {
    spdlog::warn(
        "tessera: could not release the lease {}/{}: {}", options_.ns, options_.name,
        got.ok() ? fmt::format("HTTP {}", got->status) : std::string(got.status().message()));
    return;
  }
  json lease = ParseJsonOrDiscarded(got->body);
  if (!lease.is_object() || lease["spec"].value("holderIdentity", "") != options_.identity) return;
  lease["spec"]["holderIdentity"] = "";
  lease["spec"]["leaseDurationSeconds"] = 1;
  auto put = client_->Put(path, DumpJson(lease), limits());
  if (!put.ok() || put->status != 200)
    spdlog::warn(
        "tessera: could not release the lease {}/{}: {}", options_.ns, options_.name,
        put.ok() ? fmt::format("HTTP {}", put->status) : std::string(put.status().message()));
  else
    spdlog::info("tessera: released the lease {}/{}", options_.ns, options_.name);
}

void LeaderElector::Run() {
  while (!stop_) {
    const bool ok = TryAcquireOrRenew();
    const auto now = Clock::now();
    if (ok) {
      last_renew_ = now;
      if (!leader_) {
        leader_ = true;
        spdlog::info("tessera: {} became the leader (lease {}/{})", options_.identity, options_.ns,
                     options_.name);
        on_change_(true);
      }
    } else if (leader_ && std::chrono::duration<double>(now - last_renew_).count() >
                              options_.renew_deadline_s) {
      leader_ = false;
      spdlog::warn("tessera: {} lost the lease {}/{}", options_.identity, options_.ns,
                   options_.name);
      on_change_(false);
    }
    for (double waited = 0; waited < options_.retry_period_s && !stop_; waited += 0.05)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace tessera::k8s
