// The list of job kinds (config/kinds/registry.h). A new kind: its file, its factory declared in
// registry.h, one line here, one in src/CMakeLists.txt.
#include "config/kinds/registry.h"

namespace tessera::config_internal {

const std::vector<JobKind>& JobKinds() {
  static const auto* kinds = new std::vector<JobKind>{
      PodKind(),
      BatchJobKind(),
      DeploymentKind(),
      StatefulSetKind(),
      JobSetKind(),
      LeaderWorkerSetKind(),
      PodGroupKind(),
      SigsPodGroupKind(),
      VolcanoJobKind(),
      PyTorchJobKind(),
      TFJobKind(),
      RayClusterKind(),
      RayJobKind(),
      RayServiceKind(),
      AppWrapperKind(),
      MPIJobKind(),
      TrainJobKind(),
      TrainingRuntimeKind(),
      ClusterTrainingRuntimeKind(),
      KueueWorkloadKind(),
  };
  return *kinds;
}

const JobKind* FindJobKind(std::string_view group, std::string_view kind) {
  for (const JobKind& k : JobKinds())
    if (k.group == group && k.kind == kind) return &k;
  return nullptr;
}

}  // namespace tessera::config_internal
