#include "engine/quota_tree.h"

#include <algorithm>

#include "fmt/format.h"

namespace tessera {

std::string FormatQuota(ResourceId r, int64_t q) {
  const int64_t scale = QuotaScale(r);
  if (q % scale == 0) return FormatQuantity(r, q / scale);
  return fmt::format("{:g}", static_cast<double>(q) / static_cast<double>(scale));
}

QuotaTree::QuotaTree(int num_cluster_queues, int num_cohorts, int num_flavors)
    : num_cqs_(num_cluster_queues), num_frs_(std::max(1, num_flavors) * kMaxResources) {
  nodes_.resize(num_cluster_queues + num_cohorts);
  for (auto& n : nodes_) {
    n.nominal.assign(num_frs_, 0);
    n.borrowing_limit.assign(num_frs_, kUnlimited);
    n.lending_limit.assign(num_frs_, kUnlimited);
    n.subtree.assign(num_frs_, 0);
    n.usage.assign(num_frs_, 0);
  }
}

void QuotaTree::SetParent(int node, int parent) { nodes_[node].parent = parent; }

void QuotaTree::SetQuota(int node, FlavorResource fr, int64_t nominal, int64_t borrowing_limit,
                         int64_t lending_limit) {
  nodes_[node].nominal[fr] = nominal;
  nodes_[node].borrowing_limit[fr] = borrowing_limit;
  nodes_[node].lending_limit[fr] = lending_limit;
}

absl::Status QuotaTree::Finalize() {
  // Cycle check: walking up from any node must end within num_nodes steps.
  for (int i = 0; i < num_nodes(); ++i) {
    int steps = 0;
    for (int p = nodes_[i].parent; p >= 0; p = nodes_[p].parent) {
      if (++steps > num_nodes()) {
        return absl::InvalidArgumentError("cohort parents form a cycle");
      }
    }
  }
  for (auto& n : nodes_) n.children.clear();
  for (int i = 0; i < num_nodes(); ++i)
    if (nodes_[i].parent >= 0) nodes_[nodes_[i].parent].children.push_back(i);
  // Post-order: subtree = nominal + sum(children subtree - guaranteed).
  std::vector<int> order;
  std::vector<int> stack;
  for (int i = 0; i < num_nodes(); ++i)
    if (nodes_[i].parent < 0) stack.push_back(i);
  while (!stack.empty()) {
    int n = stack.back();
    stack.pop_back();
    order.push_back(n);
    for (int c : nodes_[n].children) stack.push_back(c);
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    QNode& n = nodes_[*it];
    for (int fr = 0; fr < num_frs_; ++fr) {
      int64_t s = n.nominal[fr];
      for (int c : n.children) s += nodes_[c].subtree[fr] - guaranteed(c, fr);
      n.subtree[fr] = s;
    }
  }
  return absl::OkStatus();
}

int QuotaTree::root(int node) const {
  while (nodes_[node].parent >= 0) node = nodes_[node].parent;
  return node;
}

int64_t QuotaTree::guaranteed(int node, FlavorResource fr) const {
  const QNode& n = nodes_[node];
  if (n.lending_limit[fr] >= kUnlimited) return 0;
  return std::max<int64_t>(0, n.subtree[fr] - n.lending_limit[fr]);
}

int64_t QuotaTree::UsageInParent(int node, FlavorResource fr, int64_t usage) const {
  return std::max<int64_t>(0, usage - guaranteed(node, fr));
}

int64_t QuotaTree::Available(int node, FlavorResource fr) const {
  const QNode& n = nodes_[node];
  if (n.parent < 0) return n.subtree[fr] - n.usage[fr];
  int64_t g = guaranteed(node, fr);
  int64_t local = std::max<int64_t>(0, g - n.usage[fr]);
  int64_t from_parent = Available(n.parent, fr);
  if (n.borrowing_limit[fr] < kUnlimited) {
    int64_t stored_in_parent = n.subtree[fr] - g;
    int64_t used_in_parent = std::max<int64_t>(0, n.usage[fr] - g);
    int64_t with_max = stored_in_parent - used_in_parent + n.borrowing_limit[fr];
    from_parent = std::min(from_parent, with_max);
  }
  return local + from_parent;
}

void QuotaTree::AddUsage(int cq, FlavorResource fr, int64_t delta) {
  int node = cq;
  while (node >= 0 && delta != 0) {
    QNode& n = nodes_[node];
    int64_t before = UsageInParent(node, fr, n.usage[fr]);
    n.usage[fr] += delta;
    int64_t after = UsageInParent(node, fr, n.usage[fr]);
    delta = after - before;
    node = n.parent;
  }
}

int64_t QuotaTree::MaxPossible(int cq, FlavorResource fr) const {
  // With no usage anywhere, Available is the most the queue could ever get.
  const QNode& n = nodes_[cq];
  if (n.parent < 0) return n.subtree[fr];
  int64_t g = guaranteed(cq, fr);
  int64_t root_total = nodes_[root(cq)].subtree[fr];
  int64_t from_parent = root_total;
  if (n.borrowing_limit[fr] < kUnlimited)
    from_parent = std::min(from_parent, n.subtree[fr] - g + n.borrowing_limit[fr]);
  return g + from_parent;
}

double QuotaTree::DominantShare(int node,
                                const std::vector<std::pair<FlavorResource, int64_t>>& delta,
                                double weight) const {
  const QNode& n = nodes_[node];
  if (n.parent < 0) return 0;
  const QNode& r = nodes_[root(node)];
  double share = 0;
  auto consider = [&](FlavorResource fr, int64_t usage) {
    int64_t borrowed = usage - n.subtree[fr];
    if (borrowed <= 0) return;
    int64_t lendable = r.subtree[fr];
    if (lendable <= 0) return;
    share = std::max(share, static_cast<double>(borrowed) * 1000.0 / lendable);
  };
  for (int fr = 0; fr < num_frs_; ++fr) {
    int64_t u = n.usage[fr];
    for (const auto& [dfr, d] : delta)
      if (dfr == fr) u += d;
    if (u != 0) consider(fr, u);
  }
  if (share == 0) return 0;
  if (weight <= 0) return std::numeric_limits<double>::infinity();
  return share / weight;
}

}  // namespace tessera
