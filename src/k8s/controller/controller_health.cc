// GPUs that fail in Kubernetes mode: Controller::Impl::CheckGpuHealth (controller_impl.h).
// What each signal says is gpu_health.h's; here the loop gathers the signals of the nodes they
// point at, tells the engine, and carries out the ClusterQueue's policy.
#include <map>
#include <string>
#include <unordered_map>

#include "fmt/format.h"
#include "k8s/controller/controller_impl.h"
#include "k8s/controller/gpu_health.h"
#include "spdlog/spdlog.h"

namespace tessera::k8s {
namespace {

ObjectRef NodeRef(const std::string& node) {
  ObjectRef ref;
  ref.kind = "Node";
  ref.name = node;
  return ref;
}

}  // namespace

void Controller::Impl::CheckGpuHealth() {
  health_dirty = false;
  if (!engine) return;
  const Model& m = engine->model();
  // The nodes a signal points at: devices not offered, a failure said before (to see it
  // repaired), a hardware XID, a pod the kubelet says has an unhealthy device.
  std::unordered_map<std::string, NodeHealthInput> in;
  auto input = [&](const std::string& node) -> NodeHealthInput* {
    auto ni = node_index.find(node);
    if (ni == node_index.end()) return nullptr;
    const Node& n = m.nodes[ni->second];
    if (n.gpu_count() == 0 || n.gpu_replicas != 1) return nullptr;
    auto [it, fresh] = in.try_emplace(node);
    if (fresh) {
      it->second.node = node;
      it->second.capacity = n.gpu_count();
      it->second.allocatable = n.gpu_count() - n.unhealthy_gpus;
      it->second.held.assign(n.gpu_count(), false);
    }
    return &it->second;
  };
  for (size_t i = 0; i < m.nodes.size() && i < node_names.size(); ++i)
    if (m.nodes[i].unhealthy_gpus > 0) input(node_names[i]);
  for (const auto& [node, failed] : failed_gpus) input(node);
  const std::vector<GpuReading> readings =
      options.dcgm ? options.dcgm->Readings() : std::vector<GpuReading>{};
  for (const GpuReading& r : readings)
    if (r.gpu >= 0 && r.gpu_instance.empty() && r.xid && HardwareXid(*r.xid))
      if (NodeHealthInput* i = input(r.hostname)) i->xids[r.gpu] = *r.xid;
  for (const auto& [key, p] : pods)
    if (p.Bound() && !p.unhealthy.empty()) input(p.node_name);
  const DraTaints dra_taints = NoExecuteTaints(m.dra);
  if (in.empty() && failed_gpus.empty() && dra_taints.tainted.empty()) {
    metrics->SetGauges("tessera_failed_gpus", {});
    return;
  }
  // dcgm-exporter's UUIDs of the nodes judged: the kubelet names a device by its UUID.
  for (const GpuReading& r : readings)
    if (r.gpu >= 0 && r.gpu_instance.empty() && !r.uuid.empty())
      if (auto it = in.find(r.hostname); it != in.end()) it->second.uuid_index[r.uuid] = r.gpu;
  for (const auto& [key, p] : pods) {
    const std::string* node = BoundNode(key);
    auto it = node ? in.find(*node) : in.end();
    if (it == in.end()) continue;
    auto a = assumed.find(key);
    const std::vector<int32_t>& gpus = a != assumed.end() ? a->second.gpus : p.gpu_indices;
    for (int32_t g : gpus)
      if (g >= 0 && g < it->second.capacity) it->second.held[g] = true;
    it->second.pods.push_back({key, gpus, p.unhealthy});
  }

  std::map<std::string, std::map<int32_t, std::string>> now_failed;
  std::map<std::string, std::string> hit_groups;  // group key -> why (its first pod's)
  std::map<LabelValues, double> gauge;
  for (auto& [node, i] : in) {
    const NodeHealth h = JudgeNode(i);
    if (!h.failed.empty()) now_failed[node] = h.failed;
    if (!h.failed.empty() || h.unplaced > 0)
      gauge[{node}] = static_cast<double>(h.failed.size() + h.unplaced);
    for (const auto& [pod, why] : h.hit_pods)
      if (auto p = pods.find(pod); p != pods.end())
        hit_groups.try_emplace(p->second.GroupKey(),
                               fmt::format("{} on node {}: {}", pod, node, why));
    int32_t& said = unplaced_said[node];
    if (h.unplaced != said && h.unplaced > 0) {
      const std::string msg = fmt::format(
          "{} of the node's GPUs are not offered by the device plugin and are under running pods; "
          "neither the kubelet's resource health nor a dcgm-exporter XID says which, so those "
          "pods are left running and no pod is given a device of theirs when they leave",
          h.unplaced);
      spdlog::warn("tessera: node {}: {}", node, msg);
      status_writer->Event(NodeRef(node), "Warning", "GPUFailed", msg);
    }
    said = h.unplaced;
  }
  // DRA: the allocator gives a tainted device to nobody already; the pods on one are hit.
  for (const auto& [node, n] : dra_taints.tainted) gauge[{node}] += n;
  for (const auto& [pod, why] : dra_taints.pods)
    if (auto p = pods.find(pod); p != pods.end() && p->second.Bound())
      hit_groups.try_emplace(p->second.GroupKey(),
                             fmt::format("{} on node {}: {}", pod, p->second.node_name, why));
  // The engine: failed devices to nobody, repaired ones back. A rebuilt engine knows none.
  for (const auto& [node, failed] : failed_gpus) {
    auto now = now_failed.find(node);
    for (const auto& [g, why] : failed) {
      if (now != now_failed.end() && now->second.count(g)) continue;
      if (auto ni = node_index.find(node); ni != node_index.end())
        engine->SetGpuFailed(ni->second, g, false);
      status_writer->Event(NodeRef(node), "Normal", "GPURepaired",
                           fmt::format("GPU {} is offered again ({} before)", g, why));
      spdlog::info("tessera: node {}: GPU {} repaired", node, g);
    }
  }
  for (const auto& [node, failed] : now_failed) {
    auto before = failed_gpus.find(node);
    for (const auto& [g, why] : failed) {
      if (auto ni = node_index.find(node); ni != node_index.end())
        engine->SetGpuFailed(ni->second, g, true);
      if (before != failed_gpus.end() && before->second.count(g)) continue;
      status_writer->Event(NodeRef(node), "Warning", "GPUFailed",
                           fmt::format("GPU {} failed: {}; no pod is given it", g, why));
      spdlog::warn("tessera: node {}: GPU {} failed: {}", node, g, why);
    }
  }
  failed_gpus = std::move(now_failed);
  metrics->SetGauges("tessera_failed_gpus", std::move(gauge));

  // The workloads on them, by their ClusterQueue's policy.
  for (const auto& [key, why] : hit_groups) {
    auto git = groups.find(key);
    if (git == groups.end()) continue;
    Group& g = git->second;
    if (g.foreign || g.state != Group::State::kInEngine || g.id < 0 || !g.admitted) continue;
    if (g.gpu_failure_said == why) continue;
    g.gpu_failure_said = why;
    const int32_t cq = engine->status(g.id).cluster_queue;
    const bool requeue =
        cq < 0 || m.cluster_queues[cq].gpu_failure_policy == GpuFailurePolicy::kRequeue;
    const std::string cq_name = cq >= 0 ? m.cluster_queues[cq].name : "(none)";
    const std::string message =
        requeue ? fmt::format(
                      "a GPU it runs on failed ({}); the gang is requeued whole and "
                      "starts again from its last checkpoint",
                      why)
                : fmt::format(
                      "a GPU it runs on failed ({}); left to its controller "
                      "(ClusterQueue {}: tessera.dev/gpu-failure-policy "
                      "LeaveToController)",
                      why, cq_name);
    spdlog::warn("tessera: {}: {}", g.key, message);
    for (const std::string& pk : g.pods)
      if (auto p = pods.find(pk); p != pods.end())
        status_writer->Event(p->second, "Warning", "GPUFailed", message);
    OwnerEvent(g, "Warning", "GPUFailed", fmt::format("gang {}: {}", g.name, message));
    if (!requeue) continue;
    metrics->Add("tessera_gpu_failure_requeues_total", {cq_name});
    EndRun(g, accounting::RunEnd::kFailed, "GPU failed: " + why);
    EvictGroup(g, "GPU failed: " + why);
    need_cycle = true;
  }
}

}  // namespace tessera::k8s
