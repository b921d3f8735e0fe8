#include "k8s/controller/provisioning.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "fmt/format.h"
#include "k8s/controller/json_fields.h"
#include "model/bounded_json.h"
#include "model/json_text.h"
#include "spdlog/spdlog.h"

namespace tessera::k8s {

namespace {

using json_fields::At;
using json_fields::Str;

// FNV-1a, 64 bits: the same in every process (std::hash need not be).
uint64_t Fnv(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string Key(const json& obj) {
  return Str(At(obj, "metadata"), "namespace") + "/" + Str(At(obj, "metadata"), "name");
}

std::string GangOf(const json& request) {
  return Str(At(At(request, "metadata"), "annotations"), kGangAnnotation);
}

bool Ok(long status) { return status >= 200 && status < 300; }

// Absent, null, {} and [] are the same (Kubernetes' semantic equality: nil and empty alike);
// inside objects and arrays too.
bool SemanticEqual(const json& a, const json& b) {
  auto empty = [](const json& v) { return v.is_null() || (v.is_structured() && v.empty()); };
  if (empty(a) || empty(b)) return empty(a) && empty(b);
  if (a.is_object() && b.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it)
      if (!SemanticEqual(it.value(), At(b, it.key().c_str()))) return false;
    for (auto it = b.begin(); it != b.end(); ++it)
      if (!a.contains(it.key()) && !empty(it.value())) return false;
    return true;
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!SemanticEqual(a[i], b[i])) return false;
    return true;
  }
  return a == b;
}

// A pod's template less the service account token volume the API server gives each pod (1.21+:
// "kube-api-access-" and 5 random characters) and its mounts: the same template otherwise, as
// Kueue compares its pod sets' templates, which have no such volume.
json WithoutTokenVolume(json t) {
  auto ours = [](const json& v) {
    return v.is_object() && v.contains("name") && v["name"].is_string() &&
           v["name"].get<std::string>().rfind("kube-api-access-", 0) == 0;
  };
  auto drop = [&](json& list) {
    if (!list.is_array()) return;
    json kept = json::array();
    for (json& v : list)
      if (!ours(v)) kept.push_back(std::move(v));
    list = std::move(kept);
  };
  if (!t.is_object() || !t.contains("spec") || !t["spec"].is_object()) return t;
  json& spec = t["spec"];
  if (spec.contains("volumes")) drop(spec["volumes"]);
  for (const char* k : {"containers", "initContainers"}) {
    if (!spec.contains(k) || !spec[k].is_array()) continue;
    for (json& c : spec[k])
      if (c.is_object() && c.contains("volumeMounts")) drop(c["volumeMounts"]);
  }
  return t;
}

// The containers' resource requests, in order, compared.
bool SameRequests(const json& a, const json& b) {
  const size_t na = a.is_array() ? a.size() : 0, nb = b.is_array() ? b.size() : 0;
  if (na != nb) return false;
  for (size_t i = 0; i < na; ++i)
    if (!SemanticEqual(At(At(a[i], "resources"), "requests"),
                       At(At(b[i], "resources"), "requests")))
      return false;
  return true;
}

}  // namespace

std::optional<PodSetMergePolicy> ParsePodSetMergePolicy(const std::string& text) {
  if (text.empty() || text == "None") return PodSetMergePolicy::kNone;
  if (text == "IdenticalPodTemplates") return PodSetMergePolicy::kIdenticalPodTemplates;
  if (text == "IdenticalWorkloadSchedulingRequirements")
    return PodSetMergePolicy::kIdenticalWorkloadSchedulingRequirements;
  return std::nullopt;
}

const char* PodSetMergePolicyName(PodSetMergePolicy p) {
  switch (p) {
    case PodSetMergePolicy::kNone:
      return "None";
    case PodSetMergePolicy::kIdenticalPodTemplates:
      return "IdenticalPodTemplates";
    case PodSetMergePolicy::kIdenticalWorkloadSchedulingRequirements:
      return "IdenticalWorkloadSchedulingRequirements";
  }
  return "";
}

bool CanMergePodTemplates(const json& a, const json& b, PodSetMergePolicy p) {
  const json& ta = At(a, "template");
  const json& tb = At(b, "template");
  switch (p) {
    case PodSetMergePolicy::kNone:
      return false;
    case PodSetMergePolicy::kIdenticalPodTemplates:
      return SemanticEqual(WithoutTokenVolume(ta), WithoutTokenVolume(tb));
    case PodSetMergePolicy::kIdenticalWorkloadSchedulingRequirements: {
      const json& sa = At(ta, "spec");
      const json& sb = At(tb, "spec");
      if (!SameRequests(At(sa, "containers"), At(sb, "containers")) ||
          !SameRequests(At(sa, "initContainers"), At(sb, "initContainers")))
        return false;
      for (const char* k :
           {"resources", "nodeSelector", "tolerations", "affinity", "resourceClaims"})
        if (!SemanticEqual(At(sa, k), At(sb, k))) return false;
      return true;
    }
  }
  return false;
}

std::vector<std::pair<size_t, int32_t>> MergePodSets(const std::vector<json>& templates,
                                                     const std::vector<int32_t>& counts,
                                                     PodSetMergePolicy p) {
  std::vector<std::pair<size_t, int32_t>> out;
  for (size_t i = 0; i < templates.size() && i < counts.size(); ++i) {
    bool merged = false;
    for (auto& [first, count] : out) {
      if (!CanMergePodTemplates(templates[first], templates[i], p)) continue;
      count += counts[i];
      merged = true;
      break;
    }
    if (!merged) out.emplace_back(i, counts[i]);
  }
  return out;
}

ProvisioningState ReadProvisioningState(const json& request) {
  static const std::pair<const char*, ProvisioningPhase> kOrder[] = {
      {"Failed", ProvisioningPhase::kFailed},
      {"CapacityRevoked", ProvisioningPhase::kCapacityRevoked},
      {"BookingExpired", ProvisioningPhase::kBookingExpired},
      {"Provisioned", ProvisioningPhase::kProvisioned},
      {"Accepted", ProvisioningPhase::kAccepted},
  };
  const json& conditions = At(At(request, "status"), "conditions");
  ProvisioningState out;
  if (!conditions.is_array()) return out;
  for (const auto& [type, phase] : kOrder) {
    for (const json& c : conditions) {
      if (Str(c, "type") != type || Str(c, "status") != "True") continue;
      out.phase = phase;
      out.message = Str(c, "message");
      return out;
    }
  }
  return out;
}

const char* PhaseName(ProvisioningPhase p) {
  switch (p) {
    case ProvisioningPhase::kWaiting:
      return "waiting for the autoscaler";
    case ProvisioningPhase::kAccepted:
      return "Accepted";
    case ProvisioningPhase::kProvisioned:
      return "Provisioned";
    case ProvisioningPhase::kFailed:
      return "Failed";
    case ProvisioningPhase::kBookingExpired:
      return "BookingExpired";
    case ProvisioningPhase::kCapacityRevoked:
      return "CapacityRevoked";
  }
  return "";
}

bool NeedsRetry(ProvisioningPhase p) {
  return p == ProvisioningPhase::kFailed || p == ProvisioningPhase::kBookingExpired ||
         p == ProvisioningPhase::kCapacityRevoked;
}

std::string ProvisioningRequestName(const std::string& kind, const std::string& name, int attempt) {
  std::string base = "tessera-";
  for (char c : kind) base += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  base += "-" + name;
  // An object name is at most 253 characters; the PodTemplates add "-ps<N>" and the attempt
  // "-<N>": the base keeps 200 at most, a cut one ends in a hash of the whole.
  constexpr size_t kMax = 200;
  if (base.size() > kMax) base = fmt::format("{}-{:016x}", base.substr(0, kMax - 17), Fnv(base));
  return fmt::format("{}-{}", base, attempt);
}

int AttemptOf(const std::string& request_name) {
  const size_t dash = request_name.rfind('-');
  if (dash == std::string::npos || dash + 1 >= request_name.size()) return 0;
  int n = 0;
  for (size_t i = dash + 1; i < request_name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(request_name[i])) || n > 100000) return 0;
    n = n * 10 + (request_name[i] - '0');
  }
  return n;
}

std::string PodTemplateName(const std::string& request, size_t pod_set) {
  return fmt::format("{}-ps{}", request, pod_set);
}

double RetryDelay(const ProvisioningOptions& o, int attempt) {
  const double d = o.backoff_base_s * std::pow(2.0, std::max(0, attempt - 1));
  return std::min(d, o.backoff_max_s);
}

json BuildPodTemplate(const std::string& name, const json& pod, const NodePolicyOptions* spot,
                      std::optional<bool> fallback) {
  const json& md = At(pod, "metadata");
  json spec = At(pod, "spec").is_object() ? At(pod, "spec") : json::object();
  spec.erase("nodeName");  // the autoscaler places it, as a pending pod
  if (spot) {
    const std::string own = Str(At(md, "annotations"), kInterruptibleAnnotation);
    const bool interruptible = own == "true" || (own != "false" && fallback.value_or(false));
    ApplySpotPolicyToPodSpec(spec, interruptible, *spot);
  }
  json tmeta = json::object();
  if (At(md, "labels").is_object()) tmeta["labels"] = At(md, "labels");
  if (At(md, "annotations").is_object()) tmeta["annotations"] = At(md, "annotations");
  return {{"apiVersion", "v1"},
          {"kind", "PodTemplate"},
          {"metadata",
           {{"name", name},
            {"namespace", Str(md, "namespace")},
            {"labels", {{kManagedByLabel, kManagedByValue}}}}},
          {"template", {{"metadata", tmeta}, {"spec", spec}}}};
}

json ConsumeAnnotationsPatch(const std::string& request, const std::string& class_name) {
  const json consume = request.empty() ? json() : json(request);
  const json cls = request.empty() ? json() : json(class_name);
  return {
      {"metadata",
       {{"annotations", {{kConsumeRequestAnnotation, consume}, {kRequestClassAnnotation, cls}}}}}};
}

bool IsOurRequestName(const std::string& request_name) {
  return request_name.rfind("tessera-", 0) == 0 && AttemptOf(request_name) > 0;
}

json BuildProvisioningRequest(const std::string& name, const std::string& ns,
                              const std::string& gang_key, const ProvisioningOptions& o,
                              const std::vector<std::pair<std::string, int32_t>>& pod_sets) {
  json sets = json::array();
  for (size_t i = 0; i < pod_sets.size(); ++i)
    sets.push_back(
        {{"podTemplateRef", {{"name", PodTemplateName(name, i)}}}, {"count", pod_sets[i].second}});
  json spec = {{"provisioningClassName", o.class_name}, {"podSets", sets}};
  if (!o.parameters.empty()) spec["parameters"] = o.parameters;
  return {{"apiVersion", "autoscaling.x-k8s.io/v1"},
          {"kind", "ProvisioningRequest"},
          {"metadata",
           {{"name", name},
            {"namespace", ns},
            {"labels", {{kManagedByLabel, kManagedByValue}}},
            {"annotations", {{kGangAnnotation, gang_key}}}}},
          {"spec", spec}};
}

Provisioner::Provisioner(KubeClient* client, ProvisioningOptions options,
                         NodePolicyOptions node_policy, const std::atomic<bool>& stop)
    : client_(client),
      options_(std::move(options)),
      node_policy_(std::move(node_policy)),
      stop_(stop),
      pool_(std::make_unique<TaskPool>(1)) {}

Provisioner::~Provisioner() { pool_.reset(); }

void Provisioner::Apply(const WatchEvent& ev) {
  using T = WatchEvent::Type;
  if (ev.type == T::kReplace) {
    served_ = ev.served;
    if (!served_ && !said_absent_) {
      spdlog::warn(
          "tessera: ProvisioningRequests: {} is not served (CRD not installed?); gangs that do "
          "not fit wait without one, and their pods say Unschedulable",
          kProvisioningPath);
      said_absent_ = true;
    }
    if (served_ && said_absent_) {
      spdlog::info("tessera: ProvisioningRequests: {} is served now", kProvisioningPath);
      said_absent_ = false;
    }
    requests_.clear();
    for (const json& o : ev.objects) requests_[Key(o)] = o;
    return;
  }
  if (ev.type == T::kDeleted) {
    requests_.erase(Key(ev.object));
  } else {
    requests_[Key(ev.object)] = ev.object;
  }
}

const json* Provisioner::Latest(const std::string& gang_key) const {
  const json* best = nullptr;
  int best_attempt = -1;
  for (const auto& [k, r] : requests_) {
    if (GangOf(r) != gang_key) continue;
    const int a = AttemptOf(Str(At(r, "metadata"), "name"));
    if (a > best_attempt) {
      best = &r;
      best_attempt = a;
    }
  }
  return best;
}

void Provisioner::Drain() {
  std::vector<Done> done;
  {
    std::lock_guard<std::mutex> l(done_mu_);
    done.swap(done_);
  }
  for (Done& d : done) {
    if (!d.pod.empty()) {
      pod_writes_.erase(d.pod);
      if (!d.error.empty())
        spdlog::warn("tessera: pod {}: {} for ProvisioningRequest {}: {}", d.pod,
                     d.request.empty() ? "removing the annotations" : "annotating",
                     d.request.empty() ? "(none)" : d.request, d.error);
      continue;
    }
    if (auto b = busy_.find(d.gang); b != busy_.end() && --b->second <= 0) busy_.erase(b);
    if (d.create && d.status == 404 && d.error.empty()) {
      // The CRD went away (or was never there and the list has not said so yet).
      served_ = false;
      continue;
    }
    if (!d.error.empty()) {
      spdlog::warn("tessera: ProvisioningRequest {} for {}: {}", d.request, d.gang, d.error);
      continue;
    }
    if (d.create && d.object.is_object()) {
      // Known before its watch event comes; where the event came first, it is as new or newer.
      requests_.try_emplace(Key(d.object), std::move(d.object));
    } else if (!d.create) {
      for (auto it = requests_.begin(); it != requests_.end(); ++it) {
        if (Str(At(it->second, "metadata"), "name") == d.request && GangOf(it->second) == d.gang) {
          requests_.erase(it);
          break;
        }
      }
    }
  }
}

bool Provisioner::Sync(double now, const std::vector<CapacityNeed>& needs) {
  Drain();
  if (!served_) return false;
  std::set<std::string> needed;
  for (const CapacityNeed& need : needs) {
    needed.insert(need.gang_key);
    if (busy_.count(need.gang_key)) continue;
    const json* latest = Latest(need.gang_key);
    if (!latest) {
      Create(need, 1);
      continue;
    }
    const ProvisioningState st = ReadProvisioningState(*latest);
    if (!NeedsRetry(st.phase)) {
      retry_at_.erase(need.gang_key);
      continue;
    }
    const int attempt = AttemptOf(Str(At(*latest, "metadata"), "name"));
    if (attempt > options_.backoff_limit) continue;  // given up: the failed one stays
    auto [due, first] = retry_at_.try_emplace(need.gang_key, now + RetryDelay(options_, attempt));
    if (first)
      spdlog::info("tessera: ProvisioningRequest {} for {}: {} ({}); attempt {} in {:.0f}s",
                   Key(*latest), need.gang_key, PhaseName(st.phase), st.message, attempt + 1,
                   due->second - now);
    if (now < due->second) continue;
    retry_at_.erase(due);
    Delete(need.gang_key, *latest);
    Create(need, attempt + 1);
  }
  // Requests whose gang was bound, went away or needs no capacity now.
  std::vector<std::pair<std::string, json>> unused;
  for (const auto& [k, r] : requests_) {
    const std::string gang = GangOf(r);
    if (!needed.count(gang) && !busy_.count(gang)) unused.emplace_back(gang, r);
  }
  for (const auto& [gang, r] : unused) {
    retry_at_.erase(gang);
    Delete(gang, r);
  }
  bool changed = false;
  for (const CapacityNeed& need : needs) {
    std::string note = Note(need.gang_key, now);
    auto [it, fresh] = last_note_.try_emplace(need.gang_key, note);
    if (fresh || it->second != note) changed = true;
    it->second = std::move(note);
  }
  for (auto it = last_note_.begin(); it != last_note_.end();) {
    if (needed.count(it->first)) {
      ++it;
    } else {
      it = last_note_.erase(it);
      changed = true;
    }
  }
  return changed;
}

std::string Provisioner::Note(const std::string& gang_key, double now) const {
  (void)now;
  if (!served_) return "";
  const json* latest = Latest(gang_key);
  if (!latest) return "";
  const ProvisioningState st = ReadProvisioningState(*latest);
  const std::string name = Key(*latest);
  const int attempt = AttemptOf(Str(At(*latest, "metadata"), "name"));
  std::string note =
      fmt::format("ProvisioningRequest {} ({}, attempt {}): {}", name,
                  Str(At(*latest, "spec"), "provisioningClassName"), attempt, PhaseName(st.phase));
  if (!st.message.empty()) note += ": " + st.message;
  if (NeedsRetry(st.phase)) {
    if (attempt > options_.backoff_limit)
      note += fmt::format("; no more attempts (limit {})", options_.backoff_limit + 1);
    else
      note += fmt::format("; attempt {} after a backoff of {:.0f}s", attempt + 1,
                          RetryDelay(options_, attempt));
  } else if (st.phase == ProvisioningPhase::kProvisioned) {
    note += "; binding when the new nodes take the gang";
  }
  return note;
}

std::map<std::string, std::pair<std::string, std::string>> Provisioner::Consumed() const {
  std::map<std::string, std::pair<std::string, std::string>> out;
  if (!served_) return out;
  std::map<std::string, int> attempt;
  for (const auto& [k, r] : requests_) {
    const std::string gang = GangOf(r), name = Str(At(r, "metadata"), "name");
    const int a = AttemptOf(name);
    auto [it, fresh] = attempt.try_emplace(gang, a);
    if (!fresh && a <= it->second) continue;  // the newest, as Latest()
    it->second = a;
    out[gang] = {name, Str(At(r, "spec"), "provisioningClassName")};
  }
  return out;
}

void Provisioner::AnnotatePod(const std::string& pod_key, const std::string& request,
                              const std::string& class_name) {
  auto [it, fresh] = pod_writes_.try_emplace(pod_key, request);
  if (!fresh) return;  // one write per pod at a time; the next sync sees what it did
  pool_->Post([this, pod_key, request, class_name] {
    Done d;
    d.pod = pod_key;
    d.request = request;
    if (!stop_) {
      const size_t slash = pod_key.find('/');
      auto r =
          client_->Patch(fmt::format("/api/v1/namespaces/{}/pods/{}", pod_key.substr(0, slash),
                                     pod_key.substr(slash + 1)),
                         DumpJson(ConsumeAnnotationsPatch(request, class_name)), PatchType::kMerge);
      // 404: the pod is gone, nothing to say.
      if (!r.ok())
        d.error = std::string(r.status().message());
      else if (!Ok(r->status) && r->status != 404)
        d.error = fmt::format("HTTP {}: {}", r->status, r->body);
    }
    std::lock_guard<std::mutex> l(done_mu_);
    done_.push_back(std::move(d));
  });
}

void Provisioner::Create(const CapacityNeed& need, int attempt) {
  ++busy_[need.gang_key];
  const std::string name = ProvisioningRequestName(need.kind, need.name, attempt);
  pool_->Post([this, need, name] {
    Done d = DoCreate(need, name);
    std::lock_guard<std::mutex> l(done_mu_);
    done_.push_back(std::move(d));
  });
}

void Provisioner::Delete(const std::string& gang, const json& request) {
  ++busy_[gang];
  pool_->Post([this, gang, request] {
    Done d = DoDelete(gang, request);
    std::lock_guard<std::mutex> l(done_mu_);
    done_.push_back(std::move(d));
  });
}

Provisioner::Done Provisioner::DoCreate(const CapacityNeed& need, const std::string& request) {
  Done d;
  d.gang = need.gang_key;
  d.request = request;
  if (stop_) return d;
  // The PodTemplates first (the request names them), from one pod of each set as it is now;
  // sets merged by the merge policy share their first set's.
  std::vector<json> built;
  std::vector<int32_t> counts;
  for (const auto& [pod_key, count] : need.pod_sets) {
    const size_t slash = pod_key.find('/');
    auto got = client_->Get(fmt::format("/api/v1/namespaces/{}/pods/{}", pod_key.substr(0, slash),
                                        pod_key.substr(slash + 1)));
    if (!got.ok() || got->status != 200) {
      d.error = fmt::format(
          "reading pod {}: {}", pod_key,
          got.ok() ? fmt::format("HTTP {}", got->status) : std::string(got.status().message()));
      return d;
    }
    json pod = ParseJsonOrDiscarded(got->body);
    built.push_back(BuildPodTemplate("", pod, &node_policy_, need.interruptible));
    counts.push_back(count);
  }
  std::vector<std::pair<std::string, int32_t>> sets;
  std::vector<std::string> templates;
  for (const auto& [first, count] : MergePodSets(built, counts, options_.merge_policy)) {
    const std::string name = PodTemplateName(request, sets.size());
    json& t = built[first];
    t["metadata"]["name"] = name;
    auto made =
        client_->Post(fmt::format("/api/v1/namespaces/{}/podtemplates", need.ns), DumpJson(t));
    // 409: left by an earlier attempt that stopped half-way; it is the same template.
    if (!made.ok() || (!Ok(made->status) && made->status != 409)) {
      d.error = fmt::format("creating PodTemplate {}: {}", name,
                            made.ok() ? fmt::format("HTTP {}: {}", made->status, made->body)
                                      : std::string(made.status().message()));
      return d;
    }
    templates.push_back(name);
    sets.emplace_back(need.pod_sets[first].first, count);
  }
  const json body = BuildProvisioningRequest(request, need.ns, need.gang_key, options_, sets);
  auto r = client_->Post(fmt::format("/apis/autoscaling.x-k8s.io/v1/namespaces/{}/"
                                     "provisioningrequests",
                                     need.ns),
                         DumpJson(body));
  if (!r.ok()) {
    d.error = std::string(r.status().message());
    return d;
  }
  d.status = r->status;
  if (r->status == 404) return d;  // not served
  if (!Ok(r->status) && r->status != 409) {
    d.error = fmt::format("HTTP {}: {}", r->status, r->body);
    return d;
  }
  if (r->status == 409) return d;  // exists: its watch event brings it
  d.object = ParseJsonOrDiscarded(r->body);
  spdlog::info("tessera: ProvisioningRequest {}/{} ({}) created for {}", need.ns, request,
               options_.class_name, need.gang_key);
  // The templates now belong to the request: deleting it takes them (the garbage collector).
  const std::string uid = Str(At(d.object, "metadata"), "uid");
  json owner = {{"metadata",
                 {{"ownerReferences",
                   {{{"apiVersion", "autoscaling.x-k8s.io/v1"},
                     {"kind", "ProvisioningRequest"},
                     {"name", request},
                     {"uid", uid},
                     {"controller", true}}}}}}};
  for (const std::string& t : templates)
    (void)client_->Patch(fmt::format("/api/v1/namespaces/{}/podtemplates/{}", need.ns, t),
                         DumpJson(owner), PatchType::kMerge);
  return d;
}

Provisioner::Done Provisioner::DoDelete(const std::string& gang, const json& request) {
  Done d;
  d.create = false;
  d.gang = gang;
  d.request = Str(At(request, "metadata"), "name");
  const std::string ns = Str(At(request, "metadata"), "namespace");
  if (stop_) return d;
  auto r = client_->Delete(fmt::format(
      "/apis/autoscaling.x-k8s.io/v1/namespaces/{}/provisioningrequests/{}", ns, d.request));
  if (!r.ok() || (!Ok(r->status) && r->status != 404)) {
    d.error = r.ok() ? fmt::format("deleting: HTTP {}", r->status)
                     : "deleting: " + std::string(r.status().message());
    return d;
  }
  d.status = r->status;
  // Its PodTemplates too: the garbage collector would, but not at once (nor in a cluster
  // without one).
  const json& sets = At(At(request, "spec"), "podSets");
  if (sets.is_array())
    for (const json& s : sets) {
      const std::string t = Str(At(s, "podTemplateRef"), "name");
      if (!t.empty())
        (void)client_->Delete(fmt::format("/api/v1/namespaces/{}/podtemplates/{}", ns, t));
    }
  spdlog::info("tessera: ProvisioningRequest {}/{} for {} deleted", ns, d.request, gang);
  return d;
}

}  // namespace tessera::k8s
