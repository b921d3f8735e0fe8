#include "config/gpu_fields.h"

#include <charconv>
#include <cstdlib>

#include "config/yaml_util.h"
#include "fmt/format.h"
#include "model/limits.h"
#include "model/mig.h"

namespace tessera {

std::string CheckGpuSlots(int64_t slots) {
  if (slots >= 0 && slots <= kMaxGpuSlotsPerNode) return "";
  return fmt::format(
      "{} GPUs on one node is out of range: at most {} device slots (16 GPUs x 64 time-slicing "
      "replicas) per node",
      slots, kMaxGpuSlotsPerNode);
}

std::string ParseGpuLayoutText(const std::string& text, int gpus, std::vector<GpuDevice>& out) {
  out.assign(gpus, GpuDevice{});
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(';', pos);
    if (end == std::string::npos) end = text.size();
    std::string part = text.substr(pos, end - pos);
    pos = end + 1;
    if (part.empty()) continue;
    size_t eq = part.find('=');
    std::string key = eq == std::string::npos ? part : part.substr(0, eq);
    if (key != "nvlink" && key != "numa" && key != "pcie")
      return fmt::format("unknown key \"{}\" in the GPU layout; allowed: nvlink, numa, pcie", key);
    std::vector<int16_t> values;
    std::string list = eq == std::string::npos ? "" : part.substr(eq + 1);
    size_t p = 0;
    while (p <= list.size()) {
      size_t comma = list.find(',', p);
      if (comma == std::string::npos) comma = list.size();
      std::string v = list.substr(p, comma - p);
      p = comma + 1;
      int n = 0;
      bool ok = !v.empty() && v.size() <= 4;
      for (char c : v) ok = ok && c >= '0' && c <= '9';
      if (ok) n = std::stoi(v);
      if (!ok) return fmt::format("{}: \"{}\" is not a domain number (0..9999)", key, v);
      values.push_back(static_cast<int16_t>(n));
    }
    if (static_cast<int>(values.size()) != gpus)
      return fmt::format("{} lists {} devices but the node has {} GPUs", key, values.size(), gpus);
    for (int i = 0; i < gpus; ++i) {
      if (key == "nvlink") out[i].nvlink = values[i];
      if (key == "numa") out[i].numa = values[i];
      if (key == "pcie") out[i].pcie = values[i];
    }
  }
  return "";
}

std::string ApplyGpuReplicas(const std::string& text, Node& node) {
  int replicas = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), replicas);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size() || replicas < 1 ||
      replicas > 64)
    return fmt::format("\"{}\" is not a number of replicas per GPU (1..64)", text);
  if (node.mig_dynamic && replicas > 1)
    return "a node whose MIG layout Tessera chooses cannot also time-slice its GPUs";
  const int slots = node.gpu_count();
  if (slots % replicas != 0)
    return fmt::format(
        "the node advertises {} nvidia.com/gpu, not a whole number of GPUs of {} replicas", slots,
        replicas);
  node.gpu_replicas = replicas;
  return "";
}

void ExpandLayoutToSlots(Node& node) {
  const int physical = node.physical_gpus();
  if (node.gpu_replicas <= 1 || static_cast<int>(node.gpus.size()) != physical) return;
  std::vector<GpuDevice> per_slot(node.gpu_count());
  for (int s = 0; s < node.gpu_count(); ++s) per_slot[s] = node.gpus[s % physical];
  node.gpus = std::move(per_slot);
}

std::string ApplyMigMode(const std::string& value, Node& node) {
  if (value == "static" || value.empty()) return "";
  if (value != "dynamic") return fmt::format("\"{}\" is not a MIG mode (dynamic or static)", value);
  if (node.gpu_replicas > 1)
    return "a node whose GPUs are time-sliced (gpu replicas) cannot have its MIG layout chosen";
  std::string product = node.gpu_model;
  if (auto it = node.labels.find("nvidia.com/gpu.product");
      product.empty() && it != node.labels.end())
    product = it->second;
  if (MigProfilesFor(node.gpu_memory_mib, product).empty()) {
    return fmt::format(
        "dynamic MIG needs GPUs of a MIG family Tessera knows (A100 40/80GB, H100 80/94GB, "
        "H200), from nvidia.com/gpu.product and nvidia.com/gpu.memory; the node says \"{}\", {} "
        "MiB",
        product, node.gpu_memory_mib);
  }
  node.mig_dynamic = true;
  return "";
}

std::vector<FieldProblem> ApplyNodeGpuFields(const Labels& annotations, Node& node) {
  std::vector<FieldProblem> out;
  // The callers check this first, with the field's place; nothing below may see such a count.
  if (std::string err = CheckGpuSlots(node.allocatable[kGpu]); !err.empty()) {
    out.push_back({true, false, std::string(kGpuResourceName), err});
    return out;
  }
  if (auto it = node.labels.find(std::string(kGpuMemoryLabel)); it != node.labels.end()) {
    if (auto mib = config_internal::ParseNonNegativeNumber(it->second)) {
      node.gpu_memory_mib = static_cast<int64_t>(*mib);
    } else {
      out.push_back({false, true, std::string(kGpuMemoryLabel),
                     fmt::format("\"{}\" is not a number of MiB; ignored", it->second)});
    }
  }
  // Time-slicing first: the GPU count and the layout are of physical GPUs.
  std::string replicas_text;
  bool replicas_in_labels = false;
  if (auto it = annotations.find(std::string(kGpuReplicasAnnotation)); it != annotations.end()) {
    replicas_text = it->second;
  } else if (auto lt = node.labels.find(std::string(kGpuReplicasLabel)); lt != node.labels.end()) {
    replicas_text = lt->second;
    replicas_in_labels = true;
  }
  if (!replicas_text.empty()) {
    if (std::string err = ApplyGpuReplicas(replicas_text, node); !err.empty())
      out.push_back({true, replicas_in_labels,
                     std::string(replicas_in_labels ? kGpuReplicasLabel : kGpuReplicasAnnotation),
                     err});
  }
  if (auto it = node.labels.find(std::string(kGpuCountLabel));
      it != node.labels.end() && it->second != std::to_string(node.physical_gpus())) {
    out.push_back(
        {false, true, std::string(kGpuCountLabel),
         node.gpu_replicas > 1
             ? fmt::format("says {} GPUs but the node advertises {} nvidia.com/gpu of "
                           "{} replicas each ({} GPUs); Tessera uses the latter",
                           it->second, node.gpu_count(), node.gpu_replicas, node.physical_gpus())
             : fmt::format("says {} GPUs but the node advertises {} nvidia.com/gpu; "
                           "Tessera uses the latter",
                           it->second, node.gpu_count())});
  }
  if (auto it = annotations.find(std::string(kGpuLayoutAnnotation)); it != annotations.end()) {
    std::string err = ParseGpuLayoutText(it->second, node.physical_gpus(), node.gpus);
    if (!err.empty()) {
      node.gpus.clear();
      out.push_back({true, false, std::string(kGpuLayoutAnnotation), err});
    }
  }
  ExpandLayoutToSlots(node);  // the annotation's layout, or a NodePool's
  if (auto it = annotations.find(std::string(kMigAnnotation)); it != annotations.end()) {
    std::string err = ApplyMigMode(it->second, node);
    if (!err.empty()) out.push_back({true, false, std::string(kMigAnnotation), err});
  }
  return out;
}

std::vector<FieldProblem> ApplyGpuShareAnnotations(const Labels& annotations, Resources& requests) {
  std::vector<FieldProblem> out;
  auto fraction = annotations.find("gpu-fraction");
  auto memory = annotations.find("gpu-memory");
  if (fraction != annotations.end() && memory != annotations.end()) {
    out.push_back({true, false, "gpu-memory",
                   "a pod asks for a GPU share by gpu-fraction or by gpu-memory, not both"});
    return out;
  }
  if (fraction != annotations.end()) {
    char* end = nullptr;
    double f = std::strtod(fraction->second.c_str(), &end);
    if (fraction->second.empty() || end == nullptr || *end != '\0' || !(f > 0) || f > 1) {
      out.push_back(
          {true, false, "gpu-fraction",
           fmt::format("\"{}\" is not a fraction of one GPU in (0, 1]", fraction->second)});
      return out;
    }
    requests[kGpu] = 0;
    requests[kGpuMemory] = 0;
    requests[kGpuMilli] = static_cast<int64_t>(f * kMilliPerGpu + 0.5);
  }
  if (memory != annotations.end()) {
    int64_t mib = 0;
    const std::string& v = memory->second;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), mib);
    if (v.empty() || ec != std::errc() || p != v.data() + v.size() || mib <= 0) {
      out.push_back({true, false, "gpu-memory",
                     fmt::format("\"{}\" is not a positive amount of GPU memory in MiB", v)});
      return out;
    }
    requests[kGpu] = 0;
    requests[kGpuMilli] = 0;
    requests[kGpuMemory] = mib;
  }
  return out;
}

std::vector<FieldProblem> ApplyTopologyAnnotations(const Labels& annotations,
                                                   TopologyRequest& topology) {
  std::vector<FieldProblem> out;
  for (const auto& [key, required] :
       {std::pair<std::string_view, bool>{kRequiredTopologyAnnotation, true},
        {kPreferredTopologyAnnotation, false}}) {
    auto it = annotations.find(std::string(key));
    if (it == annotations.end()) continue;
    if (it->second.empty()) {
      out.push_back({true, false, std::string(key), "names no topology level"});
      return out;
    }
    if (topology.required) continue;  // required wins over preferred
    topology.level = it->second;
    topology.required = required;
  }
  if (auto it = annotations.find(std::string(kPodSetGroupAnnotation)); it != annotations.end()) {
    if (!topology.present())
      out.push_back({false, false, std::string(kPodSetGroupAnnotation),
                     "names a pod set group but no topology level: it has no effect"});
    else
      topology.group = it->second;
  }
  return out;
}

}  // namespace tessera
