// KAI and Volcano queues to Kueue's ClusterQueues, Cohorts and LocalQueues
// (config/foreign_queues.h).
//
// The hierarchy: a queue that another names as its parent becomes a Cohort; every other queue a
// ClusterQueue in the Cohort of its parent. KAI's and Volcano's top-level queues divide the
// cluster among themselves, where Kueue's divide only quota: they join a root Cohort per
// scheduler (kai-root, root) whose quota stands for the cluster ("unlimited": 1000000 units,
// 1Pi of memory), so that what a queue may take beyond its own quota is bounded by its limit and
// by the nodes, as in KAI and Volcano.
//
// Quotas: a leaf's deserved quota is its nominalQuota. A parent's children hold their quotas as
// ClusterQueues; its Cohort adds what the parent deserves beyond their sum. The limit (KAI limit,
// Volcano capability) becomes borrowingLimit = limit - the queue's (subtree's) quota. Volcano's
// guarantee is never lent: lendingLimit = nominalQuota - guarantee; KAI's lendingLimit maps as
// it is.
#include "config/foreign_queues.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "fmt/format.h"

namespace tessera {
namespace {

constexpr int64_t kUnlimitedUnits = 1000000;
constexpr size_t kMaxDepth = 64;  // levels of queues above a queue

std::string ParentPath(const ForeignQueue& q) {
  return q.origin == ForeignQueue::Origin::kKai ? "spec.parentQueue" : "spec.parent";
}
constexpr int64_t kUnlimitedBytes = int64_t{1} << 50;  // 1Pi

int64_t Unlimited(const std::string& resource) {
  if (resource == "cpu") return kUnlimitedUnits * 1000;
  if (resource == "memory") return kUnlimitedBytes;
  return kUnlimitedUnits;
}

// A Kubernetes quantity for `v` in Tessera's units of `resource`.
std::string Quantity(const std::string& resource, int64_t v) {
  if (resource == "cpu") return v % 1000 == 0 ? std::to_string(v / 1000) : fmt::format("{}m", v);
  if (resource == "memory" && v > 0) {
    for (auto [unit, size] : {std::pair{"Pi", int64_t{1} << 50}, std::pair{"Ti", int64_t{1} << 40},
                              std::pair{"Gi", int64_t{1} << 30}, std::pair{"Mi", int64_t{1} << 20},
                              std::pair{"G", int64_t{1000000000}}, std::pair{"M", int64_t{1000000}}})
      if (v % size == 0) return fmt::format("{}{}", v / size, unit);
  }
  return std::to_string(v);
}

// A name for YAML: quoted when it could read as something other than a string.
std::string Str(const std::string& s) { return "\"" + s + "\""; }

struct Quota {
  std::string resource;
  int64_t nominal = 0;
  std::optional<int64_t> borrowing_limit;
  std::optional<int64_t> lending_limit;
};

struct Node {
  const ForeignQueue* q = nullptr;
  std::string parent;  // the Cohort it joins
  std::vector<size_t> children;
  bool cohort = false;
  std::map<std::string, int64_t> total;  // per resource: the subtree's quota
  bool totalled = false;
  std::vector<Quota> quotas;             // the object's own
};

class Converter {
 public:
  Converter(const std::vector<ForeignQueue>& queues, const ConvertOptions& options)
      : options_(options) {
    std::map<std::string, size_t> index;
    for (const ForeignQueue& q : queues) {
      if (!index.emplace(q.name, nodes_.size()).second) {
        Notice(q, "", "a queue of this name is already converted; this one is left out");
        continue;
      }
      Node n;
      n.q = &q;
      nodes_.push_back(std::move(n));
    }
    for (size_t i = 0; i < nodes_.size(); ++i) Link(i, index);
  }

  ConvertedQueues Run() {
    for (size_t i = 0; i < nodes_.size(); ++i) Totals(i, 0);
    for (Node& n : nodes_) Quotas(n);
    std::string& y = out_.yaml;
    if (nodes_.empty()) return std::move(out_);
    y += "# Converted by tessera convert from KAI Scheduler and Volcano queues "
         "(docs/manifests.md, \"KAI and Volcano queues\").\n";
    if (options_.emit_flavor) {
      y += "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: " +
           Str(options_.flavor) + "\n";
    }
    for (const auto& [root, resources] : roots_) EmitRoot(root, resources);
    for (const Node& n : nodes_) {
      if (n.cohort) EmitCohort(n);
    }
    for (const Node& n : nodes_) {
      if (!n.cohort) EmitClusterQueue(n);
    }
    for (const std::string& ns : options_.namespaces)
      for (const Node& n : nodes_)
        if (!n.cohort) {
          y += "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: " +
               Str(n.q->name) + "\n  namespace: " + Str(ns) + "\nspec:\n  clusterQueue: " +
               Str(n.q->name) + "\n";
        }
    return std::move(out_);
  }

 private:
  void Notice(const ForeignQueue& q, const std::string& path, const std::string& why) {
    out_.notices.push_back({Diagnostic::Severity::kNotice, q.file, q.line, "",
                            q.Describe() + ": " + (path.empty() ? "" : path + ": ") + why});
  }

  std::string RootOf(const ForeignQueue& q) const {
    return std::string(q.origin == ForeignQueue::Origin::kKai ? kKaiRootCohort
                                                              : kVolcanoRootCohort);
  }

  void Link(size_t i, const std::map<std::string, size_t>& index) {
    Node& n = nodes_[i];
    const ForeignQueue& q = *n.q;
    const std::string root = RootOf(q);
    n.parent = root;
    if (q.parent.empty() || (q.origin == ForeignQueue::Origin::kVolcano && q.parent == root)) {
      roots_[root];
      return;
    }
    auto it = index.find(q.parent);
    if (it == index.end() || nodes_[it->second].q->origin != q.origin) {
      Notice(q, ParentPath(q),
             "parent queue " + q.parent + " is not in the input; it becomes a Cohort without "
             "quota under " + root);
      n.parent = q.parent;
      implicit_[q.parent] = root;
      roots_[root];
      return;
    }
    // A parent chain that comes back to this queue, or goes deeper than kMaxDepth levels, is
    // broken here (which also bounds the recursion of Totals).
    bool top = false;
    size_t p = it->second, steps = 0;
    for (; steps < kMaxDepth; ++steps) {
      if (p == i) break;
      const ForeignQueue& pq = *nodes_[p].q;
      auto next = index.find(pq.parent);
      if (pq.parent.empty() || next == index.end()) {
        top = true;
        break;
      }
      p = next->second;
    }
    if (!top) {
      Notice(q, ParentPath(q),
             p == i ? "the parent chain comes back to this queue; Tessera puts it under " + root
                    : fmt::format("the parent chain is deeper than {} levels (or runs into a "
                                  "cycle); Tessera puts this queue under {}",
                                  kMaxDepth, root));
      roots_[root];
      return;
    }
    n.parent = q.parent;
    nodes_[it->second].children.push_back(i);
    nodes_[it->second].cohort = true;
  }

  // The subtree's quota per resource: a leaf's deserved, a parent's the larger of its own
  // deserved and its children's sum.
  const std::map<std::string, int64_t>& Totals(size_t i, size_t depth) {
    Node& n = nodes_[i];
    if (n.totalled || depth > nodes_.size()) return n.total;
    n.totalled = true;
    std::map<std::string, int64_t> sum;
    for (size_t c : n.children)
      for (const auto& [r, v] : Totals(c, depth + 1)) sum[r] += v;
    for (const ForeignQueueResource& r : n.q->resources) {
      int64_t own = r.deserved_unlimited ? 0 : r.deserved.value_or(0);
      n.total[r.name] = std::max(own, sum[r.name]);
    }
    for (const auto& [r, v] : sum) n.total.emplace(r, v);
    return n.total;
  }

  void Quotas(Node& n) {
    const ForeignQueue& q = *n.q;
    const bool kai = q.origin == ForeignQueue::Origin::kKai;
    std::map<std::string, int64_t> children;
    for (size_t c : n.children)
      for (const auto& [r, v] : nodes_[c].total) children[r] += v;
    auto resource_path = [&](const std::string& r, const char* kai_field,
                             const char* volcano_field) {
      if (kai) return "spec.resources." + std::string(r == "nvidia.com/gpu" ? "gpu" : r) + "." +
                      kai_field;
      return std::string("spec.") + volcano_field + "." + r;
    };
    for (const ForeignQueueResource& r : q.resources) {
      roots_[RootOf(q)].insert(r.name);
      Quota quota;
      quota.resource = r.name;
      const int64_t total = n.total[r.name];
      if (r.deserved_unlimited) {
        Notice(q, resource_path(r.name, "quota", "deserved"),
               "-1 (all the queue can get) has no Kueue equivalent; nominalQuota 0, and the "
               "queue borrows up to its limit from the cohort");
      }
      const int64_t deserved = r.deserved_unlimited ? 0 : r.deserved.value_or(0);
      if (n.cohort) {
        quota.nominal = total - children[r.name];
        if (children[r.name] > deserved && deserved > 0) {
          Notice(q, resource_path(r.name, "quota", "deserved"),
                 fmt::format("its children's quotas ({}) exceed its own ({}); the Cohort adds "
                             "none of its own",
                             Quantity(r.name, children[r.name]), Quantity(r.name, deserved)));
        }
      } else {
        quota.nominal = deserved;
      }
      if (r.limit) {
        if (*r.limit < total) {
          Notice(q, resource_path(r.name, "limit", "capability"),
                 fmt::format("{} is below the quota {}; borrowingLimit 0",
                             Quantity(r.name, *r.limit), Quantity(r.name, total)));
        }
        quota.borrowing_limit = std::max<int64_t>(0, *r.limit - total);
      }
      if (r.lending_limit) quota.lending_limit = std::min(*r.lending_limit, quota.nominal);
      if (r.guarantee) {
        if (*r.guarantee > quota.nominal) {
          Notice(q, "spec.guarantee.resource." + r.name,
                 fmt::format("{} is more than the queue's own nominalQuota {}; Kueue reserves at "
                             "most that (lendingLimit 0)",
                             Quantity(r.name, *r.guarantee), Quantity(r.name, quota.nominal)));
        }
        quota.lending_limit = std::max<int64_t>(0, quota.nominal - *r.guarantee);
      }
      n.quotas.push_back(quota);
    }
    for (const auto& [path, why] : q.unmapped) Notice(q, path, why);
    std::string became =
        n.cohort ? "Cohort " + q.name + " (parent " + n.parent + ")"
                 : "ClusterQueue " + q.name + " (cohort " + n.parent + ")";
    std::string amounts;
    for (const Quota& x : n.quotas) {
      amounts += (amounts.empty() ? "" : ", ") + x.resource + " " + Quantity(x.resource, x.nominal);
      if (x.borrowing_limit)
        amounts += " (borrowingLimit " + Quantity(x.resource, *x.borrowing_limit) + ")";
    }
    Notice(q, "", "converted to " + became +
                      (amounts.empty() ? ", without quota" : ", nominalQuota " + amounts) +
                      (q.weight ? fmt::format(", fairSharing weight {}", *q.weight) : ""));
    if (n.cohort)
      out_.parents.push_back(q.name);
    else
      out_.leaf_queues.push_back(q.name);
  }

  void EmitGroups(const std::vector<Quota>& quotas) {
    std::string& y = out_.yaml;
    if (quotas.empty()) return;
    y += "  resourceGroups:\n  - coveredResources: [";
    for (size_t i = 0; i < quotas.size(); ++i) y += (i ? ", " : "") + Str(quotas[i].resource);
    y += "]\n    flavors:\n    - name: " + Str(options_.flavor) + "\n      resources:\n";
    for (const Quota& x : quotas) {
      y += "      - name: " + Str(x.resource) +
           "\n        nominalQuota: " + Str(Quantity(x.resource, x.nominal)) + "\n";
      if (x.borrowing_limit)
        y += "        borrowingLimit: " + Str(Quantity(x.resource, *x.borrowing_limit)) + "\n";
      if (x.lending_limit)
        y += "        lendingLimit: " + Str(Quantity(x.resource, *x.lending_limit)) + "\n";
    }
  }

  void EmitWeight(const ForeignQueue& q) {
    if (q.weight) out_.yaml += fmt::format("  fairSharing:\n    weight: \"{}\"\n", *q.weight);
  }

  void EmitRoot(const std::string& root, const std::set<std::string>& resources) {
    out_.yaml += "---\n# Stands for the cluster, which the top-level queues share.\n"
                 "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata:\n  name: " +
                 Str(root) + "\nspec:\n";
    std::vector<Quota> quotas;
    for (const std::string& r : resources) quotas.push_back({r, Unlimited(r), {}, {}});
    if (quotas.empty()) out_.yaml += "  resourceGroups: []\n";
    EmitGroups(quotas);
    for (const auto& [name, parent] : implicit_) {
      if (parent != root) continue;
      out_.yaml += "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata:\n  name: " +
                   Str(name) + "\nspec:\n  parent: " + Str(root) + "\n";
    }
  }

  void EmitCohort(const Node& n) {
    out_.yaml += "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata:\n  name: " +
                 Str(n.q->name) + "\nspec:\n  parent: " + Str(n.parent) + "\n";
    EmitGroups(n.quotas);
    EmitWeight(*n.q);
  }

  void EmitClusterQueue(const Node& n) {
    out_.yaml += "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n"
                 "  name: " +
                 Str(n.q->name) + "\nspec:\n  cohort: " + Str(n.parent) +
                 "\n  namespaceSelector: {}\n  preemption:\n    reclaimWithinCohort: Any\n";
    if (n.quotas.empty()) out_.yaml += "  resourceGroups: []\n";
    EmitGroups(n.quotas);
    EmitWeight(*n.q);
  }

  const ConvertOptions& options_;
  std::vector<Node> nodes_;
  std::map<std::string, std::set<std::string>> roots_;  // root Cohort -> resources
  std::map<std::string, std::string> implicit_;        // parent not in the input -> root
  ConvertedQueues out_;
};

}  // namespace

std::string ForeignQueue::Describe() const {
  return (origin == Origin::kKai ? "KAI Queue " : "Volcano Queue ") + name;
}

ConvertedQueues ConvertForeignQueues(const std::vector<ForeignQueue>& queues,
                                     const ConvertOptions& options) {
  return Converter(queues, options).Run();
}

}  // namespace tessera

namespace tessera {

void LoadForeignQueues(const std::vector<ForeignQueue>& queues, LoadResult& into) {
  if (queues.empty()) return;
  ConvertOptions options;
  for (const ResourceFlavor& f : into.model.flavors)
    if (f.name == options.flavor) options.emit_flavor = false;
  ConvertedQueues converted = ConvertForeignQueues(queues, options);
  into.diagnostics.insert(into.diagnostics.end(), converted.notices.begin(),
                          converted.notices.end());
  const size_t cqs = into.model.cluster_queues.size(), cohorts = into.model.cohorts.size();
  LoadManifestText(converted.yaml, kConvertedSource, into);
  std::map<std::string, const ForeignQueue*> by_name;
  for (const ForeignQueue& q : queues) by_name.emplace(q.name, &q);
  auto source = [&](const std::string& name, std::string& out) {
    if (auto it = by_name.find(name); it != by_name.end())
      out = it->second->file + ":" + std::to_string(it->second->line);
  };
  for (size_t i = cqs; i < into.model.cluster_queues.size(); ++i)
    source(into.model.cluster_queues[i].name, into.model.cluster_queues[i].source);
  for (size_t i = cohorts; i < into.model.cohorts.size(); ++i)
    source(into.model.cohorts[i].name, into.model.cohorts[i].source);
  into.foreign_queues.insert(into.foreign_queues.end(), queues.begin(), queues.end());

  // Implicit LocalQueues: KAI and Volcano have none; their workloads name the queue itself.
  std::set<std::string> leaves(converted.leaf_queues.begin(), converted.leaf_queues.end());
  std::set<std::string> local;
  for (const LocalQueue& lq : into.model.local_queues) local.insert(lq.ns + "/" + lq.name);
  for (const Workload& w : into.model.workloads) {
    if (w.queue_name.empty() || !leaves.count(w.queue_name)) continue;
    if (!local.insert(w.ns + "/" + w.queue_name).second) continue;
    const ForeignQueue& q = *by_name.at(w.queue_name);
    LocalQueue lq;
    lq.ns = w.ns;
    lq.name = w.queue_name;
    lq.cluster_queue = w.queue_name;
    lq.source = q.file + ":" + std::to_string(q.line);
    into.model.local_queues.push_back(lq);
    into.diagnostics.push_back(
        {Diagnostic::Severity::kNotice, q.file, q.line, "",
         "LocalQueue " + w.ns + "/" + w.queue_name + " created for " + q.Describe() + ": " +
             w.kind + " " + w.Key() + " names the queue, and no LocalQueue of that name is in " +
             "its namespace"});
  }
}

}  // namespace tessera
