// CheckReferences: warnings for names that point at nothing. References do not fail a load,
// because the engine keeps such workloads pending with the reason, and a manifest set is often
// split over files that are loaded separately. Errors for what no split can fix: a cycle of
// cohort parents (no quota tree can be built), two globalDefault PriorityClasses (Kubernetes
// admits only one).
#include <map>
#include <set>
#include <string>
#include <utility>

#include "config/kinds.h"
#include "config/loader.h"

namespace tessera {

std::vector<Diagnostic> CheckReferences(const Model& model) {
  using config_internal::ParseSource;
  std::vector<Diagnostic> out;
  auto warn = [&](const std::string& source, std::string path, std::string message) {
    Diagnostic d;
    d.severity = Diagnostic::Severity::kWarning;
    ParseSource(source, d.file, d.line);
    d.path = std::move(path);
    d.message = std::move(message);
    out.push_back(std::move(d));
  };
  auto error = [&](const std::string& source, std::string path, std::string message) {
    warn(source, std::move(path), std::move(message));
    out.back().severity = Diagnostic::Severity::kError;
  };
  // Cohort parents that come back to where they started.
  std::map<std::string, const Cohort*> cohorts;
  for (const auto& c : model.cohorts) cohorts.emplace(c.name, &c);
  std::set<std::string> in_cycle;
  for (const auto& c : model.cohorts) {
    if (in_cycle.count(c.name)) continue;
    std::vector<std::string> path = {c.name};
    std::set<std::string> seen = {c.name};
    for (auto it = cohorts.find(c.parent); it != cohorts.end();
         it = cohorts.find(it->second->parent)) {
      path.push_back(it->first);
      if (it->first == c.name) {
        std::string chain;
        for (const auto& n : path) chain += (chain.empty() ? "" : " -> ") + n;
        error(c.source, "spec.parent",
              "cohorts form a cycle (" + chain +
                  "): no quota tree can be built, and every ClusterQueue under them is refused");
        in_cycle.insert(path.begin(), path.end());
        break;
      }
      if (!seen.insert(it->first).second) break;  // a cycle that does not pass through c
    }
  }
  // One globalDefault PriorityClass at most.
  const PriorityClass* global_default = nullptr;
  for (const auto& pc : model.priority_classes) {
    if (!pc.global_default) continue;
    if (global_default) {
      error(pc.source, "globalDefault",
            "PriorityClasses " + global_default->name + " and " + pc.name +
                " are both globalDefault; Kubernetes admits only one");
    } else {
      global_default = &pc;
    }
  }
  std::set<std::string> cqs, flavors, local_queues, pcs, wpcs;
  for (const auto& cq : model.cluster_queues) cqs.insert(cq.name);
  for (const auto& f : model.flavors) flavors.insert(f.name);
  for (const auto& lq : model.local_queues) local_queues.insert(lq.ns + "/" + lq.name);
  for (const auto& pc : model.priority_classes) pcs.insert(pc.name);
  for (const auto& pc : model.workload_priority_classes) wpcs.insert(pc.name);

  for (const auto& lq : model.local_queues) {
    if (!cqs.count(lq.cluster_queue)) {
      warn(lq.source, "spec.clusterQueue",
           "LocalQueue " + lq.ns + "/" + lq.name + " names ClusterQueue " + lq.cluster_queue +
               ", which is not defined; its workloads stay pending");
    }
  }
  auto check_groups = [&](const std::vector<ResourceGroup>& groups, const std::string& source,
                          const std::string& owner) {
    for (size_t g = 0; g < groups.size(); ++g) {
      for (size_t f = 0; f < groups[g].flavors.size(); ++f) {
        const std::string& name = groups[g].flavors[f].flavor;
        if (flavors.count(name)) continue;
        warn(source,
             "spec.resourceGroups[" + std::to_string(g) + "].flavors[" + std::to_string(f) +
                 "].name",
             owner + " names ResourceFlavor " + name +
                 ", which is not defined; its quota cannot be used");
      }
    }
  };
  // Cohorts named only by ClusterQueues (or as parents) are implicit, as in Kueue: no warning.
  for (const auto& cq : model.cluster_queues) {
    check_groups(cq.resource_groups, cq.source, "ClusterQueue " + cq.name);
    if (!cq.namespace_selector.present) {
      warn(cq.source, "spec.namespaceSelector",
           "ClusterQueue " + cq.name +
               " matches no namespace, as in Kueue; add namespaceSelector: {} to accept all");
    }
  }
  for (const auto& c : model.cohorts) check_groups(c.resource_groups, c.source, "Cohort " + c.name);

  // Kueue's default quotaCheckStrategy (BlockUndeclared) keeps a workload pending when it asks
  // for a resource its ClusterQueue covers in no resource group; Tessera's default does not.
  // One notice per ClusterQueue and resource, so that a Kueue user sees where they differ.
  std::map<std::string, const ClusterQueue*> cq_of_lq;
  for (const auto& lq : model.local_queues)
    for (const auto& cq : model.cluster_queues)
      if (cq.name == lq.cluster_queue) cq_of_lq[lq.ns + "/" + lq.name] = &cq;
  std::set<std::pair<std::string, ResourceId>> uncovered_seen;
  auto notice_uncovered = [&](const Workload& w) {
    if (model.config.block_undeclared || w.queue_name.empty()) return;
    auto it = cq_of_lq.find(w.ns + "/" + w.queue_name);
    if (it == cq_of_lq.end()) return;
    const ClusterQueue& cq = *it->second;
    for (const PodSet& ps : w.pod_sets) {
      for (ResourceId r = 0; r < kMaxResources; ++r) {
        // As the engine's check (Admission::Uncovered): pods and GPU shares never block.
        if (ps.requests[r] == 0 || r == kPods || r == kGpuMilli || r == kGpuMemory) continue;
        bool covered = false;
        for (const auto& g : cq.resource_groups)
          for (ResourceId c : g.covered) covered = covered || c == r;
        if (covered || !uncovered_seen.insert({cq.name, r}).second) continue;
        Diagnostic d;
        d.severity = Diagnostic::Severity::kNotice;
        ParseSource(w.source, d.file, d.line);
        d.message = w.kind + " " + w.Key() + " asks for " + std::string(ResourceName(r)) +
                    ", which ClusterQueue " + cq.name +
                    " does not cover: Kueue keeps such a workload pending (quotaCheckStrategy "
                    "BlockUndeclared, its default); Tessera limits it by node capacity only "
                    "(IgnoreUndeclared, Tessera's default; set SchedulerConfig "
                    "spec.quotaCheckStrategy to choose)";
        out.push_back(std::move(d));
      }
    }
  };
  for (const auto& w : model.workloads) {
    notice_uncovered(w);
    if (!w.queue_name.empty() && !local_queues.count(w.ns + "/" + w.queue_name)) {
      warn(w.source, "",
           w.kind + " " + w.Key() + " names LocalQueue " + w.queue_name +
               ", which is not defined in namespace " + w.ns + "; it stays pending");
    }
    if (!w.priority_class.empty() && !pcs.count(w.priority_class)) {
      warn(w.source, "",
           w.kind + " " + w.Key() + " names PriorityClass " + w.priority_class +
               ", which is not defined; it stays pending");
    }
    if (!w.workload_priority_class.empty() && !wpcs.count(w.workload_priority_class)) {
      warn(w.source, "",
           w.kind + " " + w.Key() + " names WorkloadPriorityClass " + w.workload_priority_class +
               ", which is not defined; it stays pending");
    }
  }
  return out;
}

}  // namespace tessera
