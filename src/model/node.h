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

struct Node {
  std::string name;
  Labels labels;
  std::vector<Taint> taints;
  Resources allocatable;  // includes kGpu: the number of whole GPU devices
  bool unschedulable = false;
  std::string gpu_model;  // from nvidia.com/gpu.product, may be empty
  std::string source;     // "file:line" where it was declared, for messages

  int gpu_count() const { return static_cast<int>(allocatable[kGpu]); }
};

}  // namespace tessera
