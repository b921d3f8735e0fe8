// The controller's part in Dynamic Resource Allocation (docs/dra.md, "Kubernetes mode"): the
// pods' claims found in the engine's model, and what serve writes to them before a bind.
#include <set>

#include "config/dra_quota.h"
#include "dra/compute_domain.h"
#include "engine/dra_state.h"
#include "k8s/controller/controller_impl.h"

namespace tessera::k8s {

void Controller::Impl::IndexDra() {
  claim_index.clear();
  const auto& claims = engine->model().dra.claims;
  for (size_t i = 0; i < claims.size(); ++i)
    claim_index[claims[i].ns + "/" + claims[i].name] = static_cast<int32_t>(i);
  dra_devices = DraDevices(engine->model());
  claim_quota.clear();
  if (!engine->model().dra.mappings.empty())
    for (const dra::Claim& c : claims) claim_quota.push_back(DraClaimQuota(engine->model().dra, c));
}

void Controller::Impl::ResolveClaims(Workload& w) const {
  for (PodSet& ps : w.pod_sets)
    for (dra::PodClaim& pc : ps.claims) {
      pc.claim = -1;
      if (pc.claim_name.empty() || !pc.unsupported.empty()) continue;
      auto it = claim_index.find(w.ns + "/" + pc.claim_name);
      if (it == claim_index.end()) continue;
      pc.claim = it->second;
      if (!pc.template_name.empty() && static_cast<size_t>(pc.claim) < claim_quota.size())
        ps.requests += claim_quota[pc.claim];
      // A ComputeDomain's pods share one NVLink clique: each pod with a template claim is a pod
      // set of its own here, so they form a topology group, by the template they claim from.
      const dra::DraModel& dra = engine->model().dra;
      if (dra::ClaimsComputeDomainChannel(dra, dra.claims[pc.claim].spec))
        dra::KeepInOneClique(
            ps, "compute-domain:" + (pc.template_name.empty() ? pc.claim_name : pc.template_name));
    }
}

std::vector<ClaimReservation> Controller::Impl::Reservations(const std::string& key,
                                                             const std::string& node,
                                                             const PodPlacement& pl) const {
  std::vector<ClaimReservation> out;
  auto p = pods.find(key);
  if (p == pods.end() || pl.dra.empty()) return out;
  const auto& pod_claims = p->second.set.claims;
  const auto& model_claims = engine->model().dra.claims;
  for (size_t i = 0; i < pl.dra.size() && i < pod_claims.size(); ++i) {
    const DraAllocation& a = pl.dra[i];
    if (a.devices.empty()) continue;
    ClaimReservation r;
    r.ns = p->second.ns;
    r.name = pod_claims[i].claim_name;
    r.node = node;
    std::set<std::string> requests;
    for (size_t k = 0; k < a.devices.size(); ++k) {
      const int32_t id = a.devices[k];
      if (id < 0 || static_cast<size_t>(id) >= dra_devices.size()) continue;
      const dra::Device& d = *dra_devices[id].second;
      dra::AllocatedDevice ad;
      ad.request = a.requests[k];
      ad.driver = d.driver;
      ad.pool = d.pool;
      ad.device = d.name;
      if (d.allow_multiple_allocations) {
        if (k < a.consumed.size()) ad.consumed = a.consumed[k];
        ad.share_id = NewShareId();
      }
      r.devices.push_back(std::move(ad));
      requests.insert(a.requests[k]);
    }
    // The configs of each request's class, as kube-scheduler copies them (FromClass).
    auto ci = claim_index.find(r.ns + "/" + r.name);
    if (ci != claim_index.end()) {
      for (const std::string& req : requests) {
        const std::string top = req.substr(0, req.find('/'));
        const std::string sub =
            req.find('/') == std::string::npos ? "" : req.substr(top.size() + 1);
        for (const dra::DeviceRequest& dr : model_claims[ci->second].spec.requests) {
          if (dr.name != top) continue;
          for (const dra::ExactRequest& alt : dr.alternatives) {
            if (!sub.empty() && alt.name != sub) continue;
            const nlohmann::json& configs = cache.dra().ClassConfig(alt.device_class);
            if (!configs.is_array()) continue;
            for (const nlohmann::json& c : configs) {
              nlohmann::json e = c;
              e["requests"] = {req};
              r.class_configs.push_back(std::move(e));
            }
          }
        }
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace tessera::k8s
