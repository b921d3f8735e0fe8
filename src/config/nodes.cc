// Readers for nodes: v1 Node, v1 Namespace and Tessera's compact NodePool.
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "config/autoscaling_fields.h"
#include "config/gpu_fields.h"
#include "config/kinds.h"
#include "fmt/format.h"
#include "model/limits.h"

namespace tessera::config_internal {
namespace {

constexpr std::string_view kGpuProductLabel = "nvidia.com/gpu.product";
constexpr std::string_view kHostnameLabel = "kubernetes.io/hostname";
// The kubelet's default --max-pods, used when a node does not say how many pods it takes.
constexpr int64_t kDefaultMaxPods = 110;

// nvidia.com/gpu of the resource map at `path` within kMaxGpuSlotsPerNode; else an error there.
bool CheckGpuCount(DocContext& ctx, const YAML::Node& map, const std::string& path,
                   const Node& node) {
  std::string err = CheckGpuSlots(node.allocatable[kGpu]);
  if (err.empty()) return true;
  YAML::Node at = Child(map, kGpuResourceName);
  ctx.Error(IsNullish(at) ? map : at, JoinPath(path, std::string(kGpuResourceName)), err);
  return false;
}

// Fills defaults every node shares: the hostname label, the pod count, the GPU model.
void FinishNode(Node& node, bool pods_named) {
  node.labels.try_emplace(std::string(kHostnameLabel), node.name);
  if (!pods_named) node.allocatable.Set(kPods, kDefaultMaxPods);
  if (node.gpu_model.empty()) {
    if (auto it = node.labels.find(std::string(kGpuProductLabel)); it != node.labels.end())
      node.gpu_model = it->second;
  }
}

// The GPU fields are interpreted in config/gpu_fields (shared with Kubernetes mode); these
// adapters report their problems at the manifest's place.
bool ParseGpuLayout(DocContext& ctx, const YAML::Node& at, const std::string& path,
                    const std::string& text, int gpus, std::vector<GpuDevice>& out) {
  std::string err = ParseGpuLayoutText(text, gpus, out);
  if (!err.empty()) ctx.Error(at, path, err);
  return err.empty();
}

bool ReadMigMode(DocContext& ctx, const YAML::Node& at, const std::string& path,
                 const std::string& value, Node& node) {
  std::string err = ApplyMigMode(value, node);
  if (!err.empty()) ctx.Error(at, path, err);
  return err.empty();
}

// A node's GPU labels and annotations; false when one of them makes the node unusable.
bool ReadNodeGpuFields(DocContext& ctx, const ObjectMeta& meta, Node& node) {
  bool ok = true;
  for (const FieldProblem& p : ApplyNodeGpuFields(meta.annotations, node)) {
    std::string path = JoinPath(p.in_labels ? "metadata.labels" : "metadata.annotations", p.key);
    if (p.error) {
      ctx.Error(meta.metadata, path, p.message);
      ok = false;
    } else {
      ctx.Warning(meta.metadata, path, p.message);
    }
  }
  return ok;
}

// A NodePool's GPU labels (spec.labels): warnings only, once for the pool.
void ReadGpuLabels(DocContext& ctx, const YAML::Node& at, const std::string& path, Node& node) {
  for (const FieldProblem& p : ApplyNodeGpuFields({}, node))
    ctx.Warning(at, JoinPath(path, p.key), p.message);
}

bool Contains(const std::vector<ResourceId>& ids, ResourceId id) {
  for (ResourceId x : ids)
    if (x == id) return true;
  return false;
}

// One piece of a NodePool label template: literal text, or the node's index divided or taken
// modulo by a constant.
struct Piece {
  enum class Op { kText, kIndex, kDiv, kMod };
  Op op = Op::kText;
  std::string text;
  int64_t n = 1;
};

using Template = std::vector<Piece>;

std::optional<Template> ParseTemplate(DocContext& ctx, const YAML::Node& at,
                                      const std::string& path, const std::string& value) {
  Template out;
  size_t pos = 0;
  auto bad = [&](const std::string& what) {
    ctx.Error(at, path,
              "unknown placeholder " + what + "; use {index}, {index/N} or {index%N} (N > 0)");
    return std::nullopt;
  };
  while (pos < value.size()) {
    size_t open = value.find('{', pos);
    if (open == std::string::npos) {
      out.push_back({Piece::Op::kText, value.substr(pos), 1});
      break;
    }
    if (open > pos) out.push_back({Piece::Op::kText, value.substr(pos, open - pos), 1});
    size_t close = value.find('}', open);
    if (close == std::string::npos) return bad(value.substr(open));
    std::string inner = value.substr(open + 1, close - open - 1);
    std::string whole = value.substr(open, close - open + 1);
    if (inner == "index") {
      out.push_back({Piece::Op::kIndex, "", 1});
    } else if (inner.size() > 6 && inner.compare(0, 5, "index") == 0 &&
               (inner[5] == '/' || inner[5] == '%')) {
      std::string digits = inner.substr(6);
      int64_t n = 0;
      for (char c : digits) {
        if (c < '0' || c > '9' || n > 1'000'000'000) return bad(whole);
        n = n * 10 + (c - '0');
      }
      if (n <= 0) return bad(whole);
      out.push_back({inner[5] == '/' ? Piece::Op::kDiv : Piece::Op::kMod, "", n});
    } else {
      return bad(whole);
    }
    pos = close + 1;
  }
  return out;
}

std::string Render(const Template& t, int64_t index) {
  std::string out;
  for (const Piece& p : t) {
    switch (p.op) {
      case Piece::Op::kText:
        out += p.text;
        break;
      case Piece::Op::kIndex:
        out += std::to_string(index);
        break;
      case Piece::Op::kDiv:
        out += std::to_string(index / p.n);
        break;
      case Piece::Op::kMod:
        out += std::to_string(index % p.n);
        break;
    }
  }
  return out;
}

}  // namespace

void ReadNode(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  Node node;
  node.name = meta.name;
  node.labels = meta.labels;
  node.source = meta.source;
  YAML::Node spec = Child(meta.root, "spec");
  if (!IsNullish(spec) && !ExpectMap(ctx, spec, "spec")) return;
  ReadTaints(ctx, Child(spec, "taints"), "spec.taints", node.taints);
  node.unschedulable = GetBool(ctx, spec, "unschedulable", "spec.unschedulable").value_or(false);
  YAML::Node status = Child(meta.root, "status");
  if (!IsNullish(status) && !ExpectMap(ctx, status, "status")) return;
  std::vector<ResourceId> named;
  if (YAML::Node alloc = Child(status, "allocatable"); !IsNullish(alloc)) {
    ReadResourceMap(ctx, alloc, "status.allocatable", node.allocatable, &named);
    if (!ctx.failed() && !CheckGpuCount(ctx, alloc, "status.allocatable", node)) return;
  } else if (YAML::Node cap = Child(status, "capacity"); !IsNullish(cap)) {
    ReadResourceMap(ctx, cap, "status.capacity", node.allocatable, &named);
    if (!ctx.failed() && !CheckGpuCount(ctx, cap, "status.capacity", node)) return;
  } else {
    ctx.Warning(meta.root, "status.allocatable",
                "node has neither status.allocatable nor status.capacity; it offers no cpu, "
                "memory or GPUs");
  }
  if (ctx.failed()) return;
  if (!ReadNodeGpuFields(ctx, meta, node)) return;
  FinishNode(node, Contains(named, kPods));
  out.node_names.push_back(node.name);
  out.model.nodes.push_back(std::move(node));
}

void ReadNamespace(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  Labels labels = meta.labels;
  labels["kubernetes.io/metadata.name"] = meta.name;
  out.model.namespace_labels[meta.name] = std::move(labels);
}

void ReadNodePool(DocContext& ctx, const ObjectMeta& meta, Staged& out) {
  YAML::Node spec = Child(meta.root, "spec");
  if (IsNullish(spec)) {
    ctx.Error(meta.root, "spec", "required field is missing");
    return;
  }
  if (!ExpectMap(ctx, spec, "spec")) return;
  NodePoolSpec pool;
  pool.name = meta.name;
  pool.source = meta.source;
  ReadNodePoolElasticity(ctx, spec, pool);
  if (ctx.failed()) return;
  YAML::Node count_node = Child(spec, "count");
  std::optional<int64_t> count;
  if (pool.autoscaling) {
    // Elastic: spec.count is how many nodes exist at the start (default minNodes); all maxNodes
    // are expanded, the others not provisioned yet.
    const NodePoolAutoscaling& a = *pool.autoscaling;
    count = IsNullish(count_node)
                ? std::optional<int64_t>(a.min_nodes)
                : ScalarInt(ctx, count_node, "spec.count", a.min_nodes, a.max_nodes);
    if (!count) return;
  } else if (IsNullish(count_node)) {
    ctx.Error(spec, "spec.count", "required field is missing");
    return;
  } else {
    count = ScalarInt(ctx, count_node, "spec.count", 0, kMaxNodePoolSize);
  }
  const int64_t provisioned = count.value_or(0);
  if (pool.autoscaling) count = pool.autoscaling->max_nodes;
  std::string prefix =
      GetString(ctx, spec, "namePrefix", "spec.namePrefix").value_or(meta.name + "-");
  auto gpu_model = GetString(ctx, spec, "gpuModel", "spec.gpuModel");

  // Label values are parsed once into templates, then rendered per node: linear in count.
  std::vector<std::pair<std::string, Template>> labels;
  ForEachMap(ctx, Child(spec, "labels"), "spec.labels",
             [&](const std::string& key, const YAML::Node& value, const std::string& path) {
               auto text = ScalarString(ctx, value, path);
               if (!text) return false;
               auto t = ParseTemplate(ctx, value, path, *text);
               if (!t) return false;
               labels.emplace_back(key, std::move(*t));
               return true;
             });
  Node base;
  base.source = meta.source;
  ReadTaints(ctx, Child(spec, "taints"), "spec.taints", base.taints);
  base.unschedulable = GetBool(ctx, spec, "unschedulable", "spec.unschedulable").value_or(false);
  std::vector<ResourceId> named;
  YAML::Node capacity = Child(spec, "capacity");
  if (IsNullish(capacity)) {
    ctx.Warning(spec, "spec.capacity",
                "no capacity: the pool's nodes offer no cpu, memory or GPUs");
  }
  ReadResourceMap(ctx, capacity, "spec.capacity", base.allocatable, &named);
  if (!count || ctx.failed()) return;
  if (!CheckGpuCount(ctx, capacity, "spec.capacity", base)) return;
  if (*count * base.allocatable[kGpu] > kMaxClusterGpuSlots) {
    ctx.Error(pool.autoscaling ? spec : count_node,
              pool.autoscaling ? "spec.autoscaling.maxNodes" : "spec.count",
              fmt::format("{} nodes of {} GPUs are {} device slots, more than the {} a cluster "
                          "may have",
                          *count, base.allocatable[kGpu], *count * base.allocatable[kGpu],
                          kMaxClusterGpuSlots));
    return;
  }
  if (gpu_model && !gpu_model->empty()) base.gpu_model = *gpu_model;
  // Time-slicing (spec.gpuReplicas) first: the layout lists the physical GPUs.
  if (YAML::Node r = Child(spec, "gpuReplicas"); !IsNullish(r)) {
    std::optional<std::string> replicas = ScalarString(ctx, r, "spec.gpuReplicas");
    if (!replicas) return;
    if (std::string err = ApplyGpuReplicas(*replicas, base); !err.empty()) {
      ctx.Error(r, "spec.gpuReplicas", err);
      return;
    }
  }
  if (auto layout = GetString(ctx, spec, "gpuLayout", "spec.gpuLayout")) {
    if (!ParseGpuLayout(ctx, Child(spec, "gpuLayout"), "spec.gpuLayout", *layout,
                        base.physical_gpus(), base.gpus))
      return;
    ExpandLayoutToSlots(base);
  }
  bool pods_named = Contains(named, kPods);
  std::optional<std::string> mig = GetString(ctx, spec, "mig", "spec.mig");

  pool.first_node = static_cast<NodeId>(out.model.nodes.size());
  pool.num_nodes = static_cast<int32_t>(*count);
  base.pool = static_cast<int32_t>(out.model.node_pools.size());
  out.model.node_pools.push_back(std::move(pool));
  out.model.nodes.reserve(out.model.nodes.size() + *count);
  out.node_names.reserve(out.node_names.size() + *count);
  for (int64_t i = 0; i < *count; ++i) {
    Node node = base;
    node.name = prefix + std::to_string(i);
    for (const auto& [key, tmpl] : labels) node.labels[key] = Render(tmpl, i);
    // spec.gpuModel wins over a spec.labels entry for the same label.
    if (!base.gpu_model.empty()) node.labels[std::string(kGpuProductLabel)] = base.gpu_model;
    if (i == 0) {
      ReadGpuLabels(ctx, spec, "spec.labels", node);  // warn once for the pool
      // Time-slicing said by a label (GFD's nvidia.com/gpu.replicas) holds for the whole pool.
      if (node.gpu_replicas != base.gpu_replicas) {
        base.gpu_replicas = node.gpu_replicas;
        base.gpus = node.gpus;
      }
    }
    if (base.gpu_memory_mib == 0 && i == 0) base.gpu_memory_mib = node.gpu_memory_mib;
    node.gpu_memory_mib = base.gpu_memory_mib;
    if (mig && !ReadMigMode(ctx, Child(spec, "mig"), "spec.mig", *mig, node)) return;
    FinishNode(node, pods_named);
    node.provisioned = i < provisioned;
    out.node_names.push_back(node.name);
    out.model.nodes.push_back(std::move(node));
  }
}

}  // namespace tessera::config_internal
