// Dynamic Resource Allocation in the engine (docs/dra.md): every device the nodes' slices
// publish, which claim holds it, and the allocation of a pod's claims on a node (dra/allocator.h)
// as part of its placement. A pod's claims are allocated when the Statement places it and freed
// when it is taken off, so a gang rolled back, a victim evicted or a look ahead reinstated moves
// its devices with it. A claim from a template is the pod's own; a ResourceClaim shared by pods
// is allocated with its first pod, and its devices held while any pod that uses it is placed.
// A device that allows multiple allocations (consumable capacity) is shared by claims: each
// share consumes part of its capacities, tracked here per device.
//
// Thread-safety: none; part of one engine.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dra/allocator.h"
#include "dra/filters.h"
#include "engine/scheduler.h"
#include "model/model.h"

namespace tessera {

// Every device the slices of `model`'s nodes publish, in DraState's id order: node by node, in
// the nodes' order, then in slice order.
std::vector<std::pair<NodeId, const dra::Device*>> DraDevices(const Model& model);

class DraState {
 public:
  // Indexes the devices of `model`'s nodes and compiles every claim's filters.
  explicit DraState(const Model& model,
                    dra::SelectorCompiler compiler = dra::DefaultSelectorCompiler());

  // Whether a pod of pod set `ps` of workload `w` gets its claims on node n now (`empty_node`:
  // with nothing allocated on it).
  bool Feasible(const Workload& w, int ps, NodeId n, bool empty_node = false);
  // Why not, in words (for the pending reason).
  std::string Reason(const Workload& w, int ps, NodeId n, bool empty_node = false);
  // Allocates the pod's claims on node n: one DraAllocation per PodSet::claims entry; empty
  // (nothing taken) when they do not fit.
  std::vector<DraAllocation> Allocate(const Workload& w, int ps, NodeId n);
  // Gives back what Allocate (or Take) took for one pod.
  void Release(const Workload& w, int ps, const std::vector<DraAllocation>& a);
  // Takes exactly `a` again (a pod reinstated or restored).
  void Take(const Workload& w, int ps, NodeId n, const std::vector<DraAllocation>& a);

  // "" when no exclusive device is held by two claims, no device's shares consume more than its
  // capacities (nor a device without shares any), and every shared claim's count of pods is
  // right; else what is wrong (engine/verify.cc).
  std::string Check() const;

  const dra::Device& device(int32_t id) const { return *devices_[id]; }
  NodeId device_node(int32_t id) const { return device_node_[id]; }
  int32_t num_devices() const { return static_cast<int32_t>(devices_.size()); }

 private:
  struct NodeIndex {
    const dra::NodeDevices* devices = nullptr;  // null: the node publishes none
    int32_t first = 0;                          // its first device id
    std::vector<bool> in_use;                   // exclusive devices held
    std::vector<dra::DeviceShares> shares;      // devices that allow multiple allocations
    bool any_shared = false;                    // some device allows multiple allocations
    int64_t free = 0;  // exclusive devices not in use, and every shared one
    std::map<std::string, std::map<std::string, int64_t>> counters;
  };
  struct SharedClaim {
    NodeId node = -1;
    int32_t pods = 0;
    DraAllocation devices;
    // Allocated before this engine (status.allocation): its devices are taken while no pod
    // of this engine uses it (another scheduler's, or pods not here), and freed with the last
    // of its pods here, as the ResourceClaim controller frees them; node -1 when not seen.
    bool pinned = false;
    bool allocated() const { return pods > 0 || pinned; }
  };
  // The claims with a status.allocation take their devices.
  void PinAllocated();
  // The inputs for the claims of pod set `ps` that need allocating now (shared claims already
  // allocated are left out), with their PodSet::claims index; false when some claim can
  // never be allocated on node n (missing, or shared and held on another node), with `why`.
  bool Inputs(const Workload& w, int ps, NodeId n, std::vector<dra::ClaimInput>& in,
              std::vector<int32_t>& which, std::string* why) const;
  dra::AllocateOutcome Run(const std::vector<dra::ClaimInput>& in, NodeId n, bool empty_node);
  void Mark(NodeId n, const DraAllocation& a, bool take);

  const Model& model_;
  std::vector<const dra::Device*> devices_;
  std::vector<NodeId> device_node_;
  std::vector<NodeIndex> nodes_;
  std::unique_ptr<dra::FilterBank> bank_;
  // Per claim (DraModel::claims) and template (DraModel::templates): its allocator input.
  std::vector<dra::ClaimInput> claim_inputs_, template_inputs_;
  // The fewest devices each can be allocated with (a quick bound before the allocator runs).
  std::vector<int64_t> claim_min_, template_min_;
  // The fewest devices pod set `ps` needs on a node now (its claims not allocated yet).
  int64_t Demand(const Workload& w, int ps) const;
  std::vector<SharedClaim> shared_;  // per DraModel::claims entry
  std::vector<int32_t> holders_;     // per device: claims holding it (0 or 1)
};

}  // namespace tessera
