// VerifyEngine: every invariant recomputed from the placements alone.
#include "engine/verify.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "engine/engine.h"
#include "fmt/format.h"

namespace tessera {
namespace {

// What the placements add up to, per node and device, and per ClusterQueue.
struct Counts {
  std::vector<Resources> used;
  std::vector<std::vector<int32_t>> owners, milli;
  std::vector<std::vector<uint8_t>> mig;  // used MIG memory slices per device
  std::vector<std::vector<int64_t>> usage;
};

// Adds up every placed pod; checks gangs, device counts and double booking on the way. A gang
// below its minimum is a broken invariant unless it is a restored one within its grace time
// (engine/stale_gangs.h).
absl::Status CountPods(const Engine& e, Counts& c) {
  const EngineState& s = e.st;
  auto& [used, owners, milli, mig, usage] = c;
  for (WorkloadId id = 0; id < static_cast<WorkloadId>(s.status.size()); ++id) {
    if (s.recs.retired(static_cast<size_t>(id))) continue;
    const WorkloadRec& rec = s.recs[id];
    const Workload& w = s.model.workloads[id];
    bool admitted = s.status[id].state == WorkloadState::kAdmitted ||
                    s.status[id].state == WorkloadState::kTerminating;
    if (!admitted && !rec.placed.empty())
      return absl::InternalError(
          fmt::format("{} holds pods while {}", w.Key(), WorkloadStateName(s.status[id].state)));
    if (admitted && static_cast<int>(rec.placed.size()) < w.MinPods() &&
        !e.stale_gangs.Tolerated(id))
      return absl::InternalError(fmt::format("gang {} partly placed: {} of minimum {}", w.Key(),
                                             rec.placed.size(), w.MinPods()));
    // Every placed pod holds a device for each request of each of its DRA claims.
    for (const PlacedPod& p : rec.placed) {
      const auto& claims = w.pod_sets[p.placement.pod_set].claims;
      bool held = p.placement.dra.size() == claims.size();
      for (const DraAllocation& a : p.placement.dra) held = held && !a.devices.empty();
      if (!claims.empty() && !held)
        return absl::InternalError(
            fmt::format("a pod of {} is placed without the devices of "
                        "its DRA claims",
                        w.Key()));
    }
    // A preemptor that waits for its victims holds its claim (Terminations::Claim).
    for (const auto& [fr, q] : rec.claim) usage[rec.cq][fr] += q;
    for (const Room& room : rec.claim_room) {
      const NodeId n = room.node;
      used[n] += room.req;
      for (size_t i = 0; i < room.gpus.size(); ++i) {
        const int32_t g = room.gpus[i];
        const int32_t was = owners[n][g];
        if (!room.mig_slices.empty()) {  // free MIG slices of its instances
          if ((was != -1 && was != ClusterState::kMigDevice) || (mig[n][g] & room.mig_slices[i]))
            return absl::InternalError(fmt::format("MIG slices of GPU {} of node {} double-booked",
                                                   g, s.model.nodes[n].name));
          mig[n][g] |= room.mig_slices[i];
          owners[n][g] = ClusterState::kMigDevice;
          milli[n][g] = kMilliPerGpu;
        } else if (room.req[kGpuMilli] > 0) {  // the free part of a share's device
          if (was != -1 && was != ClusterState::kSharedDevice)
            return absl::InternalError(
                fmt::format("GPU {} of node {} double-booked", g, s.model.nodes[n].name));
          owners[n][g] = ClusterState::kSharedDevice;
          milli[n][g] += static_cast<int32_t>(room.req[kGpuMilli]);
          if (milli[n][g] > kMilliPerGpu)
            return absl::InternalError(fmt::format("GPU {} of node {} shared beyond 1000 milli", g,
                                                   s.model.nodes[n].name));
        } else {
          if (was != -1)
            return absl::InternalError(
                fmt::format("GPU {} of node {} double-booked", g, s.model.nodes[n].name));
          owners[n][g] = id;
          milli[n][g] = kMilliPerGpu;
        }
      }
    }
    for (const auto& p : rec.placed) {
      NodeId n = p.placement.node;
      const PodSet& ps = w.pod_sets[p.placement.pod_set];
      used[n] += ps.requests;
      if (!p.placement.mig_starts.empty()) {
        // MIG instances: valid starts, no slice used twice, nothing else on those devices.
        auto instances = s.cluster->MigInstances(n, ps.requests);
        if (instances.size() != p.placement.gpus.size() ||
            instances.size() != p.placement.mig_starts.size())
          return absl::InternalError(fmt::format("{} got {} MIG instances for a pod asking {}",
                                                 w.Key(), p.placement.gpus.size(),
                                                 instances.size()));
        for (size_t i = 0; i < instances.size(); ++i) {
          const int32_t g = p.placement.gpus[i];
          const int start = p.placement.mig_starts[i];
          const uint8_t take = MigSlices(*instances[i], start);
          if ((owners[n][g] != -1 && owners[n][g] != ClusterState::kMigDevice) ||
              (mig[n][g] & take) || !(instances[i]->starts >> start & 1u))
            return absl::InternalError(fmt::format(
                "MIG instance {} at slice {} of GPU {} of node {} overlaps or is misplaced",
                instances[i]->name, start, g, s.model.nodes[n].name));
          mig[n][g] |= take;
          owners[n][g] = ClusterState::kMigDevice;
          milli[n][g] = kMilliPerGpu;
        }
        for (const auto& [fr, q] : p.quota) usage[rec.cq][fr] += q;
        continue;
      }
      const int64_t share = s.cluster->ShareMilli(n, ps.requests);
      const int64_t want_devices = share ? 1 : ps.requests[kGpu];
      if (static_cast<int64_t>(p.placement.gpus.size()) != want_devices)
        return absl::InternalError(fmt::format("{} got {} GPUs for a pod asking {}", w.Key(),
                                               p.placement.gpus.size(), want_devices));
      for (int32_t g : p.placement.gpus) {
        if (owners[n][g] >= 0 || (!share && owners[n][g] != -1) ||
            owners[n][g] == ClusterState::kMigDevice)
          return absl::InternalError(
              fmt::format("GPU {} of node {} double-booked", g, s.model.nodes[n].name));
        if (share) {
          owners[n][g] = ClusterState::kSharedDevice;
          milli[n][g] += static_cast<int32_t>(share);
          if (milli[n][g] > kMilliPerGpu)
            return absl::InternalError(fmt::format("GPU {} of node {} shared beyond 1000 milli", g,
                                                   s.model.nodes[n].name));
        } else {
          owners[n][g] = id;
          milli[n][g] = kMilliPerGpu;
        }
      }
      for (const auto& [fr, q] : p.quota) usage[rec.cq][fr] += q;
    }
  }
  return absl::OkStatus();
}

// Failed devices (ClusterState::SetGpuFailed): one with nothing on it is out (owner
// kFailedDevice, used whole); one that still holds pods is padded full.
void CountFailed(const EngineState& s, Counts& c) {
  for (NodeId n = 0; n < static_cast<NodeId>(s.model.nodes.size()); ++n) {
    if (!s.cluster->online(n)) continue;
    for (int g = 0; g < s.model.nodes[n].gpu_count(); ++g) {
      if (!s.cluster->gpu_failed(n, g)) continue;
      int32_t& owner = c.owners[n][g];
      if (owner == -1) {
        owner = ClusterState::kFailedDevice;
        c.milli[n][g] = kMilliPerGpu;
      } else if (owner == ClusterState::kSharedDevice) {
        c.milli[n][g] = kMilliPerGpu;
      } else if (owner == ClusterState::kMigDevice) {
        c.mig[n][g] = 0xff;
      }
    }
  }
}

// Required topology: every pod of the pod set in one domain of the level; required hostname
// anti-affinity: at most one pod of the spread group per node.
absl::Status CheckTopology(const Engine& e) {
  const EngineState& s = e.st;
  absl::flat_hash_map<std::pair<int32_t, NodeId>, int> group_pods;
  for (WorkloadId id = 0; id < static_cast<WorkloadId>(s.status.size()); ++id) {
    if (s.recs.retired(static_cast<size_t>(id))) continue;
    const WorkloadRec& rec = s.recs[id];
    const Workload& w = s.model.workloads[id];
    if (rec.placed.empty()) continue;
    for (size_t ps = 0; ps < w.pod_sets.size(); ++ps) {
      const PodSet& set = w.pod_sets[ps];
      if (set.topology.required) {
        std::vector<std::string> levels;
        int requested = 0;
        std::string why;
        if (!e.topology.TopologyLevels(id, static_cast<int>(ps), rec.chosen, levels, requested,
                                       why))
          return absl::InternalError(
              fmt::format("{} admitted without a topology: {}", w.Key(), why));
        const TopologyPlacer::DomainIndex& di = e.topology.Domains(levels[requested]);
        int32_t domain = -2;
        for (const auto& p : rec.placed) {
          if (p.placement.pod_set != static_cast<int32_t>(ps)) continue;
          int32_t d = di.domain_of[p.placement.node];
          if (d < 0 || (domain != -2 && d != domain))
            return absl::InternalError(fmt::format("{} pod set {} spans {} domains", w.Key(),
                                                   set.name, levels[requested]));
          domain = d;
        }
      }
      if (set.anti_affinity == HostnameAntiAffinity::kRequired) {
        for (const auto& p : rec.placed) {
          if (p.placement.pod_set != static_cast<int32_t>(ps)) continue;
          if (++group_pods[{rec.spread_group, p.placement.node}] > 1)
            return absl::InternalError(
                fmt::format("{}: two pods on node {} despite hostname anti-affinity", w.Key(),
                            s.model.nodes[p.placement.node].name));
        }
      }
    }
  }
  return absl::OkStatus();
}

// Node capacity, free resources, devices and MIG slices as the cluster state keeps them.
absl::Status CheckNodes(const EngineState& s, const Counts& c) {
  const int nn = static_cast<int>(s.model.nodes.size());
  const auto& [used, owners, milli, mig, usage] = c;
  for (int n = 0; n < nn; ++n) {
    const Node& node = s.model.nodes[n];
    if (!s.cluster->online(n)) {
      // Not provisioned (docs/autoscaling.md): nothing on it, nothing offered.
      if (!(used[n] == Resources()) || !(s.cluster->free(n) == Resources()))
        return absl::InternalError(
            fmt::format("node {} is not provisioned but uses {} and offers {}", node.name,
                        used[n].ToString(), s.cluster->free(n).ToString()));
      continue;
    }
    if (!used[n].FitsIn(node.allocatable))
      return absl::InternalError(fmt::format("node {} over capacity: uses {} of {}", node.name,
                                             used[n].ToString(), node.allocatable.ToString()));
    // Devices: kGpu free = devices with nothing on them; kGpuMilli free = milli left on all.
    Resources expect_free = node.allocatable - used[n];
    expect_free[kGpu] = 0;
    expect_free[kGpuMilli] = 0;
    for (int g = 0; g < node.gpu_count(); ++g) {
      if (milli[n][g] == 0) ++expect_free[kGpu];
      expect_free[kGpuMilli] += kMilliPerGpu - milli[n][g];
    }
    expect_free[kGpuMemory] = expect_free[kGpuMilli] * s.cluster->gpu_memory_mib(n) / kMilliPerGpu;
    if (node.mig_dynamic) {
      for (const MigProfile& p : MigProfilesFor(node.gpu_memory_mib, node.gpu_model)) {
        ResourceId rid =
            ResourceRegistry::Global().Find(fmt::format("{}{}", kMigResourcePrefix, p.name));
        if (rid < 0) continue;
        expect_free[rid] = 0;
        for (int g = 0; g < node.gpu_count(); ++g)
          if (owners[n][g] == -1 || owners[n][g] == ClusterState::kMigDevice)
            expect_free[rid] += MigCapacity(mig[n][g], p);
      }
      for (int g = 0; g < node.gpu_count(); ++g)
        if (mig[n][g] != s.cluster->mig_masks(n)[g])
          return absl::InternalError(
              fmt::format("node {} GPU {} MIG slices out of sync", node.name, g));
    }
    if (!(expect_free == s.cluster->free(n)))
      return absl::InternalError(fmt::format("node {} free resources out of sync", node.name));
    for (int g = 0; g < node.gpu_count(); ++g)
      if (owners[n][g] != s.cluster->gpu_owners(n)[g] ||
          milli[n][g] != s.cluster->gpu_used_milli(n)[g])
        return absl::InternalError(fmt::format("node {} GPU {} owner out of sync", node.name, g));
  }
  return absl::OkStatus();
}

// Quota usage as the quota tree keeps it, within quota and borrowing limits.
absl::Status CheckQuota(const EngineState& s, const Counts& c) {
  const auto& usage = c.usage;
  for (size_t cq = 0; cq < s.queues.size(); ++cq) {
    for (int fr = 0; fr < s.quota->num_frs(); ++fr) {
      if (usage[cq][fr] != s.quota->usage(static_cast<int>(cq), fr))
        return absl::InternalError(
            fmt::format("ClusterQueue {} usage out of sync", s.model.cluster_queues[cq].name));
      if (usage[cq][fr] > 0 && s.quota->Available(static_cast<int>(cq), fr) < 0)
        return absl::InternalError(
            fmt::format("ClusterQueue {} over quota in {} {}", s.model.cluster_queues[cq].name,
                        s.model.flavors[FlavorOf(fr)].name, ResourceName(ResourceOf(fr))));
      int64_t bl = s.quota->borrowing_limit(static_cast<int>(cq), fr);
      if (bl < kUnlimited && usage[cq][fr] > s.quota->subtree_quota(static_cast<int>(cq), fr) + bl)
        return absl::InternalError(fmt::format("ClusterQueue {} over its borrowing limit",
                                               s.model.cluster_queues[cq].name));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyEngine(const Engine& e) {
  const EngineState& s = e.st;
  Counts c;
  const int nn = static_cast<int>(s.model.nodes.size());
  c.used.resize(nn);
  c.owners.resize(nn);
  c.milli.resize(nn);
  c.mig.resize(nn);
  for (int n = 0; n < nn; ++n) {
    c.owners[n].assign(s.model.nodes[n].gpu_count(), -1);
    c.milli[n].assign(s.model.nodes[n].gpu_count(), 0);
    c.mig[n].assign(s.model.nodes[n].gpu_count(), 0);
  }
  c.usage.assign(s.queues.size(), std::vector<int64_t>(s.quota->num_frs(), 0));
  if (auto st = CountPods(e, c); !st.ok()) return st;
  CountFailed(s, c);
  if (auto st = CheckTopology(e); !st.ok()) return st;
  if (auto st = CheckNodes(s, c); !st.ok()) return st;
  if (std::string dra = s.dra->Check(); !dra.empty()) return absl::InternalError(dra);
  return CheckQuota(s, c);
}

}  // namespace tessera
