// What Kubeflow's training jobs share beyond their pod templates (config/kinds/kubeflow.cc
// reads PyTorchJob and TFJob, config/kinds/mpi_job.cc MPIJob).
//
// Internal to src/config. Thread-safety: pure functions over their arguments.
#pragma once

#include <string>

#include "config/kinds.h"

namespace tessera::config_internal {

// spec.runPolicy: activeDeadlineSeconds, and schedulingPolicy's minAvailable (> 0: the gang's
// minimum), queue (when the markers name none) and scheduleTimeoutSeconds (a notice) into `w`;
// returns the priority class schedulingPolicy names ("" when none).
std::string ReadRunPolicy(DocContext& ctx, const YAML::Node& spec, Workload& w);

}  // namespace tessera::config_internal
