// A node as the scheduler sees it: labels, taints and allocatable resources.
//
// Thread-safety: value type.
#pragma once

#include <string>
#include <vector>

#include "model/labels.h"
#include "model/resources.h"

namespace tessera {

using NodeId = int32_t;

// One GPU device of a node and how it connects: devices in one NVLink domain talk fastest, then
// those under one NUMA node / PCIe switch. From the annotation tessera.dev/gpu-layout (or a
// NodePool's spec.gpuLayout); without it every device is in NVLink domain 0 and NUMA node 0.
struct GpuDevice {
  int16_t nvlink = 0;
  int16_t numa = 0;
  int16_t pcie = -1;  // -1: unknown
};

struct Node {
  std::string name;
  Labels labels;
  std::vector<Taint> taints;
  Resources allocatable;  // includes kGpu: the number of whole GPU devices
  bool unschedulable = false;
  std::string gpu_model;        // from nvidia.com/gpu.product, may be empty
  int64_t gpu_memory_mib = 0;   // per device, from nvidia.com/gpu.memory (GFD); 0: unknown
  std::vector<GpuDevice> gpus;  // per device; empty: the default layout (one NVLink domain)
  // Tessera chooses the MIG layout of the node's GPUs (annotation tessera.dev/mig: dynamic): a
  // device serves whole-GPU pods or MIG instances of its family's profiles (model/mig.h).
  bool mig_dynamic = false;
  // Time-slicing (the NVIDIA device plugin's sharing.timeSlicing.replicas): every physical GPU
  // is advertised as this many nvidia.com/gpu, so allocatable[kGpu] and the device slots the
  // engine hands out count replicas. Replica r of physical GPU g is slot r * physical_gpus() + g,
  // so that the lowest slots are one replica of each GPU. 1: no time-slicing.
  int32_t gpu_replicas = 1;
  // Kubernetes mode: devices among allocatable[kGpu] that the device plugin does not offer
  // (status.capacity - status.allocatable: it marked them unhealthy); serve says which ones are
  // failed (k8s/controller/gpu_health.h) and gives them to nobody.
  int32_t unhealthy_gpus = 0;
  std::string source;  // "file:line" where it was declared, for messages
  // Index in Model::node_pools of the NodePool it came from; -1: a Node object.
  int32_t pool = -1;
  // False for a node of an elastic NodePool (docs/autoscaling.md) that is not provisioned at the
  // start: the engine offers nothing on it until Scheduler::SetNodeOnline brings it.
  bool provisioned = true;

  int gpu_count() const { return static_cast<int>(allocatable[kGpu]); }  // device slots
  int physical_gpus() const { return gpu_count() / gpu_replicas; }
};

}  // namespace tessera
