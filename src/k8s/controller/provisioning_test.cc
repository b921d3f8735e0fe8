// ProvisioningRequests' pure pieces (provisioning.h): names, bodies, how conditions are read, the
// backoff; and the Provisioner's choices against a server that answers from a script.
#include "k8s/controller/provisioning.h"

#include <gtest/gtest.h>

namespace tessera::k8s {
namespace {

json Request(const std::string& name, std::vector<std::pair<std::string, std::string>> conds) {
  json c = json::array();
  for (const auto& [type, status] : conds)
    c.push_back({{"type", type}, {"status", status}, {"message", type + " says so"}});
  return {{"metadata", {{"name", name}, {"namespace", "ns"}}}, {"status", {{"conditions", c}}}};
}

TEST(Provisioning, ConditionsAreReadInKueuesOrder) {
  EXPECT_EQ(ReadProvisioningState(json::object()).phase, ProvisioningPhase::kWaiting);
  EXPECT_EQ(ReadProvisioningState(Request("r", {{"Accepted", "True"}})).phase,
            ProvisioningPhase::kAccepted);
  EXPECT_EQ(
      ReadProvisioningState(Request("r", {{"Accepted", "True"}, {"Provisioned", "False"}})).phase,
      ProvisioningPhase::kAccepted);
  auto p = ReadProvisioningState(Request("r", {{"Accepted", "True"}, {"Provisioned", "True"}}));
  EXPECT_EQ(p.phase, ProvisioningPhase::kProvisioned);
  EXPECT_EQ(p.message, "Provisioned says so");
  // A booking that expired, or capacity revoked, outranks Provisioned; Failed outranks all.
  EXPECT_EQ(
      ReadProvisioningState(Request("r", {{"Provisioned", "True"}, {"BookingExpired", "True"}}))
          .phase,
      ProvisioningPhase::kBookingExpired);
  EXPECT_EQ(
      ReadProvisioningState(Request("r", {{"Provisioned", "True"}, {"CapacityRevoked", "True"}}))
          .phase,
      ProvisioningPhase::kCapacityRevoked);
  EXPECT_EQ(
      ReadProvisioningState(Request("r", {{"CapacityRevoked", "True"}, {"Failed", "True"}})).phase,
      ProvisioningPhase::kFailed);
  EXPECT_TRUE(NeedsRetry(ProvisioningPhase::kFailed));
  EXPECT_TRUE(NeedsRetry(ProvisioningPhase::kBookingExpired));
  EXPECT_TRUE(NeedsRetry(ProvisioningPhase::kCapacityRevoked));
  EXPECT_FALSE(NeedsRetry(ProvisioningPhase::kProvisioned));
  // Garbage is "waiting", never a crash.
  EXPECT_EQ(ReadProvisioningState(json{{"status", {{"conditions", 3}}}}).phase,
            ProvisioningPhase::kWaiting);
  EXPECT_EQ(
      ReadProvisioningState(json{{"status", {{"conditions", {1, "x", json::object()}}}}}).phase,
      ProvisioningPhase::kWaiting);
}

TEST(Provisioning, NamesAreDeterministicAndBounded) {
  EXPECT_EQ(ProvisioningRequestName("PodGroup", "train", 1), "tessera-podgroup-train-1");
  EXPECT_EQ(AttemptOf("tessera-podgroup-train-12"), 12);
  EXPECT_EQ(AttemptOf("tessera-podgroup-train"), 0);
  EXPECT_EQ(AttemptOf("x-"), 0);
  const std::string long_name(250, 'a');
  const std::string n = ProvisioningRequestName("Job", long_name, 3);
  EXPECT_LE(PodTemplateName(n, 99).size(), 253u);
  EXPECT_EQ(n, ProvisioningRequestName("Job", long_name, 3));
  EXPECT_NE(n, ProvisioningRequestName("Job", long_name + "b", 3));
  EXPECT_EQ(AttemptOf(n), 3);
  EXPECT_EQ(PodTemplateName("r-1", 0), "r-1-ps0");
}

TEST(Provisioning, BackoffDoublesUpToItsMaximum) {
  ProvisioningOptions o;
  EXPECT_EQ(RetryDelay(o, 1), 60);
  EXPECT_EQ(RetryDelay(o, 2), 120);
  EXPECT_EQ(RetryDelay(o, 3), 240);
  EXPECT_EQ(RetryDelay(o, 10), 1800);
}

TEST(Provisioning, BodiesFollowTheUpstreamApi) {
  ProvisioningOptions o;
  o.class_name = "check-capacity.autoscaling.x-k8s.io";
  o.parameters["ValidUntilSeconds"] = "600";
  json r = BuildProvisioningRequest("tessera-job-a-1", "ns", "Job:ns/a", o,
                                    {{"ns/a-0", 4}, {"ns/a-launcher", 1}});
  EXPECT_EQ(r["apiVersion"], "autoscaling.x-k8s.io/v1");
  EXPECT_EQ(r["kind"], "ProvisioningRequest");
  EXPECT_EQ(r["spec"]["provisioningClassName"], "check-capacity.autoscaling.x-k8s.io");
  EXPECT_EQ(r["spec"]["parameters"]["ValidUntilSeconds"], "600");
  ASSERT_EQ(r["spec"]["podSets"].size(), 2u);
  EXPECT_EQ(r["spec"]["podSets"][0]["podTemplateRef"]["name"], "tessera-job-a-1-ps0");
  EXPECT_EQ(r["spec"]["podSets"][0]["count"], 4);
  EXPECT_EQ(r["spec"]["podSets"][1]["count"], 1);
  EXPECT_EQ(r["metadata"]["labels"][kManagedByLabel], kManagedByValue);
  EXPECT_EQ(r["metadata"]["annotations"][kGangAnnotation], "Job:ns/a");

  json pod = {{"metadata",
               {{"name", "a-0"}, {"namespace", "ns"}, {"labels", {{"app", "a"}}}, {"uid", "u"}}},
              {"spec",
               {{"nodeName", "n1"},
                {"schedulerName", "tessera"},
                {"containers", {{{"name", "c"}, {"resources", {{"requests", {{"cpu", "1"}}}}}}}}}},
              {"status", {{"phase", "Pending"}}}};
  json t = BuildPodTemplate("tessera-job-a-1-ps0", pod);
  EXPECT_EQ(t["kind"], "PodTemplate");
  EXPECT_EQ(t["metadata"]["namespace"], "ns");
  EXPECT_FALSE(t["template"]["spec"].contains("nodeName"));
  EXPECT_EQ(t["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"], "1");
  EXPECT_EQ(t["template"]["metadata"]["labels"]["app"], "a");
  EXPECT_FALSE(t.contains("status"));
  // A pod of an odd shape gives a template of what there is, not a crash.
  EXPECT_EQ(BuildPodTemplate("x", json::array())["template"]["spec"], json::object());
}

// The PodTemplates carry the spot rules, so that the autoscaler adds spot nodes only for pods
// that may run there.
TEST(Provisioning, PodTemplatesCarryTheSpotRules) {
  NodePolicyOptions spot;
  spot.spot_labels = {{"karpenter.sh/capacity-type", "spot"}};
  json pod = {{"metadata", {{"name", "p"}, {"namespace", "ns"}}},
              {"spec", {{"containers", json::array()}}}};
  json t = BuildPodTemplate("t", pod, &spot);
  const json& terms = t["template"]["spec"]["affinity"]["nodeAffinity"]
                       ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
  ASSERT_EQ(terms.size(), 1u) << t.dump();
  EXPECT_EQ(
      terms[0]["matchExpressions"][0],
      (json{{"key", "karpenter.sh/capacity-type"}, {"operator", "NotIn"}, {"values", {"spot"}}}));
  // The pod's own terms each get the exclusion (they are ORed).
  pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
     ["nodeSelectorTerms"] = {
         {{"matchExpressions", {{{"key", "zone"}, {"operator", "In"}, {"values", {"a"}}}}}},
         {{"matchExpressions", {{{"key", "zone"}, {"operator", "In"}, {"values", {"b"}}}}}}};
  t = BuildPodTemplate("t", pod, &spot);
  const json& both = t["template"]["spec"]["affinity"]["nodeAffinity"]
                      ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
  ASSERT_EQ(both.size(), 2u);
  for (const json& term : both) {
    ASSERT_EQ(term["matchExpressions"].size(), 2u) << term.dump();
    EXPECT_EQ(term["matchExpressions"][1]["operator"], "NotIn");
  }
  // Interruptible: a preference for spot, no exclusion.
  json tolerant = {{"metadata", {{"annotations", {{kInterruptibleAnnotation, "true"}}}}},
                   {"spec", json::object()}};
  t = BuildPodTemplate("t", tolerant, &spot);
  const json& na = t["template"]["spec"]["affinity"]["nodeAffinity"];
  EXPECT_FALSE(na.contains("requiredDuringSchedulingIgnoredDuringExecution")) << na.dump();
  ASSERT_EQ(na["preferredDuringSchedulingIgnoredDuringExecution"].size(), 1u);
  EXPECT_EQ(na["preferredDuringSchedulingIgnoredDuringExecution"][0]["weight"], 100);
  // The workload's mark (its priority class or queue) where the pod has none; the pod's own
  // "false" wins over it.
  json plain = {{"metadata", {{"name", "p"}}}, {"spec", json::object()}};
  EXPECT_TRUE(
      BuildPodTemplate("t", plain, &spot, true)["template"]["spec"]["affinity"]["nodeAffinity"]
          .contains("preferredDuringSchedulingIgnoredDuringExecution"));
  json refuses = {{"metadata", {{"annotations", {{kInterruptibleAnnotation, "false"}}}}},
                  {"spec", json::object()}};
  EXPECT_TRUE(
      BuildPodTemplate("t", refuses, &spot, true)["template"]["spec"]["affinity"]["nodeAffinity"]
          .contains("requiredDuringSchedulingIgnoredDuringExecution"));
  // Off, or without a policy: the spec as the pod has it.
  spot.spot_policy = false;
  EXPECT_FALSE(BuildPodTemplate("t", tolerant, &spot)["template"]["spec"].contains("affinity"));
  EXPECT_FALSE(BuildPodTemplate("t", tolerant)["template"]["spec"].contains("affinity"));
  // An affinity of the wrong type is left alone, not a crash.
  spot.spot_policy = true;
  json odd = {{"spec", {{"affinity", "x"}}}};
  EXPECT_EQ(BuildPodTemplate("t", odd, &spot)["template"]["spec"]["affinity"], "x");
}

// Kueue's podSetMergePolicy: pod sets share a PodTemplate when their templates are the same
// (IdenticalPodTemplates) or when what the autoscaler schedules by is
// (IdenticalWorkloadSchedulingRequirements); each set joins the first it may, in order.
TEST(Provisioning, PodSetsAreMergedAsKueuesPolicySays) {
  auto pod = [](const std::string& role, const std::string& gpus, const json& extra) {
    json spec = {{"containers",
                  {{{"name", "c"},
                    {"image", "train:" + role},
                    {"resources", {{"requests", {{"nvidia.com/gpu", gpus}}}}}}}}};
    spec.update(extra);
    return json{{"metadata", {{"name", role}, {"namespace", "ns"}, {"labels", {{"role", role}}}}},
                {"spec", spec}};
  };
  const json tolerate = {{"tolerations", {{{"key", "dedicated"}, {"operator", "Exists"}}}}};
  // worker-0 and worker-1 differ in a label and an image only; the launcher tolerates a taint;
  // big asks for more GPUs; copy is worker-0 again, with an empty nodeSelector.
  std::vector<json> t = {
      BuildPodTemplate("", pod("worker-0", "8", json::object())),
      BuildPodTemplate("", pod("launcher", "8", tolerate)),
      BuildPodTemplate("", pod("worker-1", "8", json::object())),
      BuildPodTemplate("", pod("big", "16", json::object())),
      BuildPodTemplate("", pod("worker-0", "8", {{"nodeSelector", json::object()}}))};
  const std::vector<int32_t> counts = {2, 1, 3, 1, 4};
  using P = std::vector<std::pair<size_t, int32_t>>;
  EXPECT_EQ(MergePodSets(t, counts, PodSetMergePolicy::kNone),
            (P{{0, 2}, {1, 1}, {2, 3}, {3, 1}, {4, 4}}));
  // The same template: only worker-0's copy (an empty nodeSelector is an absent one).
  EXPECT_EQ(MergePodSets(t, counts, PodSetMergePolicy::kIdenticalPodTemplates),
            (P{{0, 6}, {1, 1}, {2, 3}, {3, 1}}));
  // The same scheduling requirements: every 8-GPU worker, whatever its labels and image.
  EXPECT_EQ(MergePodSets(t, counts, PodSetMergePolicy::kIdenticalWorkloadSchedulingRequirements),
            (P{{0, 9}, {1, 1}, {3, 1}}));
  // The token volume the API server gives each pod (a name of its own per pod) is not a
  // difference; another volume is.
  auto with_volume = [&](const std::string& volume) {
    json p = pod("worker-0", "8", json::object());
    p["spec"]["volumes"] = {{{"name", volume}, {"projected", {{"sources", json::array()}}}}};
    p["spec"]["containers"][0]["volumeMounts"] = {
        {{"name", volume}, {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"}}};
    return BuildPodTemplate("", p);
  };
  EXPECT_TRUE(CanMergePodTemplates(with_volume("kube-api-access-abcde"),
                                   with_volume("kube-api-access-fghij"),
                                   PodSetMergePolicy::kIdenticalPodTemplates));
  EXPECT_TRUE(CanMergePodTemplates(with_volume("kube-api-access-abcde"), t[0],
                                   PodSetMergePolicy::kIdenticalPodTemplates));
  EXPECT_FALSE(CanMergePodTemplates(with_volume("data"), with_volume("kube-api-access-fghij"),
                                    PodSetMergePolicy::kIdenticalPodTemplates));
  // What is compared: requests in container order, init containers, affinity (the spot rules
  // are in it), nodeSelector.
  json a = pod("a", "8", json::object()), b = a;
  b["spec"]["containers"].push_back({{"name", "side"}});
  EXPECT_FALSE(CanMergePodTemplates(BuildPodTemplate("", a), BuildPodTemplate("", b),
                                    PodSetMergePolicy::kIdenticalWorkloadSchedulingRequirements));
  b = a;
  b["spec"]["initContainers"] = {{{"name", "i"}, {"resources", {{"requests", {{"cpu", "1"}}}}}}};
  EXPECT_FALSE(CanMergePodTemplates(BuildPodTemplate("", a), BuildPodTemplate("", b),
                                    PodSetMergePolicy::kIdenticalWorkloadSchedulingRequirements));
  b = a;
  b["spec"]["nodeSelector"] = {{"zone", "a"}};
  EXPECT_FALSE(CanMergePodTemplates(BuildPodTemplate("", a), BuildPodTemplate("", b),
                                    PodSetMergePolicy::kIdenticalWorkloadSchedulingRequirements));
  NodePolicyOptions spot;
  json cheap = a;
  cheap["metadata"]["annotations"] = {{kInterruptibleAnnotation, "true"}};
  EXPECT_FALSE(CanMergePodTemplates(BuildPodTemplate("", a, &spot),
                                    BuildPodTemplate("", cheap, &spot),
                                    PodSetMergePolicy::kIdenticalWorkloadSchedulingRequirements));
  // Interruptible by its own mark or by its queue's: the same rules, merged.
  EXPECT_TRUE(CanMergePodTemplates(BuildPodTemplate("", cheap, &spot),
                                   BuildPodTemplate("", a, &spot, true),
                                   PodSetMergePolicy::kIdenticalWorkloadSchedulingRequirements));
  // Names as Kueue spells them.
  EXPECT_EQ(ParsePodSetMergePolicy("IdenticalWorkloadSchedulingRequirements"),
            PodSetMergePolicy::kIdenticalWorkloadSchedulingRequirements);
  EXPECT_EQ(ParsePodSetMergePolicy("IdenticalPodTemplates"),
            PodSetMergePolicy::kIdenticalPodTemplates);
  EXPECT_EQ(ParsePodSetMergePolicy("None"), PodSetMergePolicy::kNone);
  EXPECT_FALSE(ParsePodSetMergePolicy("identicalpodtemplates").has_value());
  EXPECT_STREQ(PodSetMergePolicyName(PodSetMergePolicy::kIdenticalPodTemplates),
               "IdenticalPodTemplates");
}

// The Cluster Autoscaler's annotations for a request's pods: set with a merge patch, removed with
// nulls; only serve's own request names are ever taken off.
TEST(Provisioning, ConsumeAnnotationsAreSetAndRemovedByMergePatch) {
  EXPECT_EQ(ConsumeAnnotationsPatch("tessera-job-a-1",
                                    "best-effort-atomic-scale-up.autoscaling.x-k8s.io"),
            json::parse(R"({"metadata": {"annotations": {
                "autoscaling.x-k8s.io/consume-provisioning-request": "tessera-job-a-1",
                "autoscaling.x-k8s.io/provisioning-class-name":
                    "best-effort-atomic-scale-up.autoscaling.x-k8s.io"}}})"));
  EXPECT_EQ(ConsumeAnnotationsPatch("", "x"), json::parse(R"({"metadata": {"annotations": {
                "autoscaling.x-k8s.io/consume-provisioning-request": null,
                "autoscaling.x-k8s.io/provisioning-class-name": null}}})"));
  EXPECT_TRUE(IsOurRequestName(ProvisioningRequestName("PodGroup", "train", 3)));
  EXPECT_TRUE(IsOurRequestName(ProvisioningRequestName("Job", std::string(300, 'x'), 1)));
  EXPECT_FALSE(IsOurRequestName("my-own-request"));
  EXPECT_FALSE(IsOurRequestName("tessera-podgroup-train"));
  EXPECT_FALSE(IsOurRequestName(""));
}

}  // namespace
}  // namespace tessera::k8s
