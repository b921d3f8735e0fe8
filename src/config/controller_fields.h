// Fields of a job or queue that decide something, read where they are a scheduling decision
// (Kueue's ClusterQueue stopPolicy, Kubeflow's elasticPolicy) and otherwise named in one notice
// each, with file and line, saying which component acts on them (Volcano's job controller for
// policies, plugins and maxRetry; Kueue's admission check controllers; the training operator).
// A field a user wrote is never dropped without a word.
//
// Internal to src/config. Thread-safety: pure functions over their arguments.
#pragma once

#include <string>

#include "config/yaml_util.h"
#include "model/queues.h"
#include "model/workload.h"

namespace tessera::config_internal {

// ClusterQueue spec: stopPolicy and flavorFungibility (into `cq`); admissionChecks and
// admissionChecksStrategy (notices).
void ReadClusterQueueControl(DocContext& ctx, const YAML::Node& spec, ClusterQueue& cq);

// Volcano Job spec: policies, plugins, maxRetry and each task's policies and maxRetry
// (notices: the job controller's work).
void NoticeVolcanoJobFields(DocContext& ctx, const YAML::Node& spec);

// PyTorchJob spec.elasticPolicy: the Worker pod set holds at most maxReplicas pods, and the
// gang's minimum is minReplicas workers plus every pod of the other replica types (the
// Master). maxRestarts and metrics are noticed. Call after the pod sets are read; a
// schedulingPolicy.minAvailable read afterwards still wins.
void ReadElasticPolicy(DocContext& ctx, const YAML::Node& spec, Workload& w);

}  // namespace tessera::config_internal
