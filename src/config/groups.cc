// The table of API groups and kinds the manifest loader reads or skips (config/groups.h).
#include "config/groups.h"

#include "config/compute_domain.h"
#include "config/dra_objects.h"
#include "config/foreign_queues.h"

namespace tessera::config_internal {

std::vector<GroupSpec>* BaseGroups() {
  return new std::vector<GroupSpec>{
      {"",
       {"v1"},
       {{"Node", ReadNode, false},
        {"Namespace", ReadNamespace, false},

        {"List", nullptr, false},  // handled by the loader itself
        {"ConfigMap", nullptr, true},
        {"Secret", nullptr, true},
        {"Service", nullptr, true},
        {"ServiceAccount", nullptr, true},
        {"PersistentVolumeClaim", nullptr, true},
        {"PersistentVolume", nullptr, false},
        {"ResourceQuota", nullptr, true},
        {"LimitRange", nullptr, true},
        {"Endpoints", nullptr, true},
        {"Event", nullptr, true},
        {"ReplicationController", nullptr, true},
        {"PodTemplate", nullptr, true},
        {"Binding", nullptr, true},
        {"ComponentStatus", nullptr, false}}},
      {"batch", {"v1"}, {{"CronJob", nullptr, true}}},
      {"apps",
       {"v1"},
       {{"StatefulSet", nullptr, true},
        {"DaemonSet", nullptr, true},
        {"ReplicaSet", nullptr, true},
        {"ControllerRevision", nullptr, true}}},
      {"scheduling.k8s.io", {"v1"}, {{"PriorityClass", ReadPriorityClass, false}}},
      {"resource.k8s.io",  // Dynamic Resource Allocation (config/dra_objects.h)
       {"v1", "v1beta2"},
       {{"DeviceClass", ReadDeviceClass, false},
        {"ResourceSlice", ReadResourceSlice, false},
        {"ResourceClaim", ReadResourceClaim, true},
        {"ResourceClaimTemplate", ReadResourceClaimTemplate, true},
        {"DeviceTaintRule", nullptr, false}}},
      {"resource.nvidia.com",  // NVIDIA's DRA driver (config/compute_domain.h)
       {"v1beta1"},
       {{"ComputeDomain", ReadComputeDomain, true}, {"ComputeDomainClique", nullptr, true}}},
      {"config.kueue.x-k8s.io",
       {"v1beta1", "v1beta2"},
       {{"Configuration", ReadKueueConfiguration, false}}},
      {"kueue.x-k8s.io",
       {"v1beta1", "v1beta2", "v1alpha1"},
       {{"ResourceFlavor", ReadResourceFlavor, false},
        {"ClusterQueue", ReadClusterQueue, false},
        {"LocalQueue", ReadLocalQueue, true},
        {"Cohort", ReadCohort, false},
        {"WorkloadPriorityClass", ReadWorkloadPriorityClass, false},
        {"Topology", ReadTopology, false},
        {"AdmissionCheck", nullptr, false},
        {"MultiKueueCluster", nullptr, false},
        {"MultiKueueConfig", nullptr, false},
        {"ProvisioningRequestConfig", nullptr, false}}},
      {"tessera.dev",
       {"v1alpha1"},
       {{"NodePool", ReadNodePool, false},
        {"SchedulerConfig", ReadSchedulerConfig, false},
        // Tessera's own CRDs for Kubernetes mode: Kueue's kinds and spec field names, so that a
        // Kueue user changes only the apiVersion.
        {"ResourceFlavor", ReadResourceFlavor, false},
        {"ClusterQueue", ReadClusterQueue, false},
        {"LocalQueue", ReadLocalQueue, true},
        {"Cohort", ReadCohort, false},
        {"WorkloadPriorityClass", ReadWorkloadPriorityClass, false},
        {"Topology", ReadTopology, false}}},
      {"scheduling.run.ai",  // KAI Scheduler: its Queue is converted (config/foreign_queues.h)
       {"v2", "v2alpha2"},
       {{"Queue", ReadKaiQueue, false},
        {"PodGroup", nullptr, true},
        {"BindRequest", nullptr, true}}},
      {"scheduling.volcano.sh",  // Volcano's Queue is converted too
       {"v1beta1"},
       {{"Queue", ReadVolcanoQueue, false}, {"PodGroup", nullptr, true}}},
      {"batch.volcano.sh", {"v1alpha1"}, {{"CronJob", nullptr, true}}},
      {"scheduling.x-k8s.io", {"v1alpha1"}, {{"ElasticQuota", nullptr, true}}},
      {"scheduling.sigs.k8s.io", {"v1alpha1"}, {{"ElasticQuota", nullptr, true}}},
      {"kubeflow.org",
       {"v1"},
       {{"MPIJob", nullptr, true},
        {"XGBoostJob", nullptr, true},
        {"PaddleJob", nullptr, true},
        {"JAXJob", nullptr, true},
        {"MXJob", nullptr, true},
        {"Notebook", nullptr, true},
        {"Experiment", nullptr, true},
        {"Trial", nullptr, true},
        {"Suggestion", nullptr, true},
        {"Profile", nullptr, false},
        {"PodDefault", nullptr, true}}},
  };
}

}  // namespace tessera::config_internal
