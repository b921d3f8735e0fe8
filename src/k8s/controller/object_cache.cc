#include "k8s/controller/object_cache.h"

#include "config/loader.h"
#include "fmt/format.h"
#include "k8s/controller/json_fields.h"
#include "k8s/controller/node_policy.h"
#include "k8s/controller/workload_api.h"
#include "model/json_text.h"
#include "model/limits.h"
#include "spdlog/spdlog.h"

namespace tessera::k8s {
namespace {

using T = WatchEvent::Type;

bool SameNode(const Node& a, bool a_ready, const Node& b, bool b_ready) {
  if (a_ready != b_ready || a.unschedulable != b.unschedulable || a.labels != b.labels ||
      !(a.allocatable == b.allocatable) || a.taints.size() != b.taints.size() ||
      a.gpu_memory_mib != b.gpu_memory_mib || a.gpu_replicas != b.gpu_replicas ||
      a.mig_dynamic != b.mig_dynamic || a.gpus.size() != b.gpus.size() ||
      a.unhealthy_gpus != b.unhealthy_gpus)
    return false;
  for (size_t i = 0; i < a.gpus.size(); ++i)
    if (a.gpus[i].nvlink != b.gpus[i].nvlink || a.gpus[i].numa != b.gpus[i].numa ||
        a.gpus[i].pcie != b.gpus[i].pcie)
      return false;
  for (size_t i = 0; i < a.taints.size(); ++i)
    if (a.taints[i].key != b.taints[i].key || a.taints[i].value != b.taints[i].value ||
        a.taints[i].effect != b.taints[i].effect)
      return false;
  return true;
}

// metadata.name, "" when absent or not a string (never throws on a malformed object).
std::string NameOf(const json& o) {
  const std::string key = ObjectKey(o);
  return key.substr(key.find('/') + 1);
}

// Forgets the refused objects of one kind ("PodGroup:"): a relist says them again.
void ClearRefused(GangSources& gangs, const std::string& prefix) {
  auto it = gangs.refused.lower_bound(prefix);
  while (it != gangs.refused.end() && it->first.compare(0, prefix.size(), prefix) == 0)
    it = gangs.refused.erase(it);
}

// metadata.annotations, its string values.
std::map<std::string, std::string> AnnotationsOf(const json& obj) {
  std::map<std::string, std::string> out;
  const json* md = obj.is_object() && obj.contains("metadata") ? &obj["metadata"] : nullptr;
  if (!md || !md->is_object() || !md->contains("annotations")) return out;
  const json& a = (*md)["annotations"];
  if (!a.is_object()) return out;
  for (auto it = a.begin(); it != a.end(); ++it)
    if (it.value().is_string()) out[it.key()] = it.value().get<std::string>();
  return out;
}

std::string UidOf(const json& obj) {
  if (!obj.is_object() || !obj.contains("metadata") || !obj["metadata"].is_object()) return "";
  const json& md = obj["metadata"];
  return md.contains("uid") && md["uid"].is_string() ? md["uid"].get<std::string>() : "";
}

// What an Event names the object by; `key` is "ns/name" ("/name" when cluster-scoped).
ObjectRef RefOf(const char* api_version, const char* kind, const std::string& key,
                std::string uid) {
  const size_t slash = key.find('/');
  return {api_version, kind, key.substr(0, slash), key.substr(slash + 1), std::move(uid)};
}

// Calls fn(object, deleted) for each object of the event.
template <typename Fn>
void Each(const WatchEvent& ev, Fn&& fn) {
  if (ev.type == T::kReplace) {
    for (const auto& o : ev.objects) fn(o, false);
  } else {
    fn(ev.object, ev.type == T::kDeleted);
  }
}

}  // namespace

void ObjectCache::UpsertNode(const json& o, Changes& changes) {
  bool ready = true;
  std::vector<std::string> problems;
  auto n = ParseNode(o, &ready, &problems);
  if (!n.ok()) {
    spdlog::warn("node {}: {}", ObjectKey(o), std::string(n.status().message()));
    return;
  }
  auto it = nodes_.find(n->name);
  // A heartbeat that changes nothing Tessera reads does not rebuild the engine.
  if (it != nodes_.end() && SameNode(it->second.first, it->second.second, *n, ready)) return;
  for (const auto& p : problems) spdlog::warn("node {}: {}", n->name, p);
  const std::string name = n->name;
  nodes_[name] = {std::move(*n), ready};
  changes.rebuild = true;
}

void ObjectCache::ApplyNamespaces(const WatchEvent& ev, Changes& changes) {
  bool changed = ev.type == T::kReplace;
  if (ev.type == T::kReplace) namespaces_.clear();
  Each(ev, [&](const json& o, bool del) {
    std::string name = NameOf(o);
    Labels labels;
    const json& md = o.contains("metadata") ? o["metadata"] : json::object();
    if (md.is_object() && md.contains("labels") && md["labels"].is_object())
      for (auto it = md["labels"].begin(); it != md["labels"].end(); ++it)
        if (it.value().is_string()) labels[it.key()] = it.value().get<std::string>();
    labels["kubernetes.io/metadata.name"] = name;
    if (del) {
      changed = namespaces_.erase(name) > 0 || changed;
    } else if (namespaces_[name] != labels) {
      namespaces_[name] = labels;
      changed = true;
    }
  });
  // Only queue selection depends on namespace labels.
  auto cqs = queue_objects_.find("clusterqueues");
  if (changed && cqs != queue_objects_.end() && !cqs->second.empty()) changes.rebuild = true;
}

ObjectCache::Changes ObjectCache::Apply(const WatchEvent& ev) {
  Changes changes;
  const std::string& r = ev.resource;
  if (r == "nodes") {
    if (ev.type == T::kReplace) {
      nodes_.clear();
      for (const auto& o : ev.objects) UpsertNode(o, changes);
      changes.rebuild = true;
    } else if (ev.type == T::kDeleted) {
      nodes_.erase(NameOf(ev.object));
      changes.rebuild = true;
    } else {
      UpsertNode(ev.object, changes);
    }
  } else if (r == "podgroups") {
    if (ev.type == T::kReplace) {
      gangs_.podgroups.clear();
      ClearRefused(gangs_, "PodGroup:");
    }
    std::set<std::string> seen;
    Each(ev, [&](const json& o, bool del) {
      auto key = ObjectKey(o);
      seen.insert("PodGroup:" + key);
      ReadOwnerMark(RefOf("scheduling.x-k8s.io/v1alpha1", "PodGroup", key, UidOf(o)),
                    "PodGroup:" + key, o, del);
      if (del) {
        gangs_.podgroups.erase(key);
        gangs_.refused.erase("PodGroup:" + key);
      } else if (auto g = ParsePodGroup(o); g.ok()) {
        gangs_.podgroups[key] = *g;
        gangs_.refused.erase("PodGroup:" + key);
      } else {
        // Not used, as if absent: its pods wait for a PodGroup they can use, and say so.
        spdlog::warn("PodGroup {}: {}; the object is not used", key,
                     std::string(g.status().message()));
        gangs_.podgroups.erase(key);
        gangs_.refused["PodGroup:" + key] = std::string(g.status().message());
      }
      changes.sized_groups.push_back("PodGroup:" + key);
    });
    if (ev.type == T::kReplace) ForgetOwnersNotSeen("PodGroup:", seen);
  } else if (r == "volcanopodgroups") {
    if (ev.type == T::kReplace) {
      gangs_.volcano_groups.clear();
      ClearRefused(gangs_, "Volcano:");
      gangs_.volcano_served = ev.served;
      changes.volcano_relisted = true;
    }
    std::set<std::string> seen;
    Each(ev, [&](const json& o, bool del) {
      auto key = ObjectKey(o);
      seen.insert("Volcano:" + key);
      ReadOwnerMark(RefOf("scheduling.volcano.sh/v1beta1", "PodGroup", key, UidOf(o)),
                    "Volcano:" + key, o, del);
      if (del) {
        gangs_.volcano_groups.erase(key);
        gangs_.refused.erase("Volcano:" + key);
      } else if (auto g = ParseVolcanoPodGroup(o); g.ok()) {
        gangs_.volcano_groups[key] = *g;
        gangs_.refused.erase("Volcano:" + key);
      } else {
        spdlog::warn("Volcano PodGroup {}: {}; the object is not used", key,
                     std::string(g.status().message()));
        gangs_.volcano_groups.erase(key);
        gangs_.refused["Volcano:" + key] = std::string(g.status().message());
      }
      changes.sized_groups.push_back("Volcano:" + key);
    });
    if (ev.type == T::kReplace) ForgetOwnersNotSeen("Volcano:", seen);
  } else if (const OwnerKind* kind = OwnerKindOfResource(r)) {
    ApplyOwners(*kind, ev, changes);
  } else if (r == "jobs") {
    if (ev.type == T::kReplace) {
      gangs_.jobs.clear();
      ClearRefused(gangs_, "Job:");
    }
    std::set<std::string> seen;
    Each(ev, [&](const json& o, bool del) {
      auto key = ObjectKey(o);
      seen.insert("Job:" + key);
      ReadOwnerMark(RefOf("batch/v1", "Job", key, UidOf(o)), "Job:" + key, o, del);
      if (del) {
        gangs_.jobs.erase(key);
        gangs_.refused.erase("Job:" + key);
      } else if (auto j = ParseJob(o); j.ok()) {
        gangs_.jobs[key] = *j;
        gangs_.refused.erase("Job:" + key);
      } else {
        spdlog::warn("Job {}: {}; the object is not used", key, std::string(j.status().message()));
        gangs_.jobs.erase(key);
        gangs_.refused["Job:" + key] = std::string(j.status().message());
      }
      changes.sized_groups.push_back("Job:" + key);
    });
    if (ev.type == T::kReplace) ForgetOwnersNotSeen("Job:", seen);
  } else if (r == "priorityclasses") {
    if (ev.type == T::kReplace) {
      priority_classes_.clear();
      priority_class_annotations_.clear();
    }
    Each(ev, [&](const json& o, bool del) {
      auto pc = ParsePriorityClass(o);
      if (!pc.ok()) {
        spdlog::warn("PriorityClass {}: {}; the object is not used", NameOf(o),
                     std::string(pc.status().message()));
        return;
      }
      if (del) {
        priority_classes_.erase(pc->name);
        priority_class_annotations_.erase(pc->name);
        uids_.erase("priorityclasses /" + pc->name);
      } else {
        priority_classes_[pc->name] = *pc;
        priority_class_annotations_[pc->name] = AnnotationsOf(o);
        uids_["priorityclasses /" + pc->name] = UidOf(o);
      }
    });
    changes.rebuild = true;
  } else if (r == "namespaces") {
    ApplyNamespaces(ev, changes);
  } else if (r == "workloadpodgroups") {
    ApplyWorkloadPodGroups(ev, changes);
  } else if (DraObjects::IsDraResource(r)) {
    // Every change counts, status too: a claim's allocation takes its devices.
    changes.rebuild = dra_.Apply(ev);
  } else {
    auto& store = queue_objects_[r];
    if (ev.type == T::kReplace) {
      store.clear();
      if (r == "localqueues") local_queue_status_.clear();
    }
    // A change of status alone (serve's own status writes) leaves the Model as it is.
    bool changed = ev.type == T::kReplace;
    Each(ev, [&](const json& o, bool del) {
      auto key = ObjectKey(o);
      if (r == "localqueues") {
        if (del) {
          local_queue_status_.erase(key);
        } else {
          local_queue_status_[key] = o.contains("status") ? o["status"] : json();
        }
      }
      if (del) {
        changed = store.erase(key) > 0 || changed;
        uids_.erase(r + " " + key);
        return;
      }
      uids_[r + " " + key] = UidOf(o);
      json stripped = json_fields::StripForLoader(o);
      auto it = store.find(key);
      if (it != store.end() && it->second == stripped) return;
      store[key] = std::move(stripped);
      changed = true;
    });
    if (r == "localqueues") {
      gangs_.local_queues.clear();
      for (const auto& [key, obj] : store) gangs_.local_queues.insert(key);
    }
    changes.rebuild = changes.rebuild || changed;
  }
  return changes;
}

void ObjectCache::ApplyWorkloadPodGroups(const WatchEvent& ev, Changes& changes) {
  const std::string prefix = std::string(kWorkloadPodGroupKind) + ":";
  if (ev.type == T::kReplace) {
    gangs_.workload_podgroups.clear();
    ClearRefused(gangs_, prefix);
    gangs_.workload_api_served = ev.served;
    changes.workload_podgroups_relisted = true;
  }
  std::set<std::string> seen;
  Each(ev, [&](const json& o, bool del) {
    const std::string key = ObjectKey(o), group_key = prefix + key;
    seen.insert(group_key);
    ReadOwnerMark(RefOf("scheduling.k8s.io/v1beta1", "PodGroup", key, UidOf(o)), group_key, o, del);
    if (del) {
      gangs_.workload_podgroups.erase(key);
      gangs_.refused.erase(group_key);
    } else if (auto g = ParseWorkloadPodGroup(o); g.ok()) {
      gangs_.workload_podgroups[key] = *g;
      gangs_.refused.erase(group_key);
    } else {
      // Not used, as if absent: its pods wait for a PodGroup they can use, and say so.
      spdlog::warn("PodGroup (scheduling.k8s.io) {}: {}; the object is not used", key,
                   std::string(g.status().message()));
      gangs_.workload_podgroups.erase(key);
      gangs_.refused[group_key] = std::string(g.status().message());
    }
    changes.sized_groups.push_back(group_key);
  });
  if (ev.type == T::kReplace) ForgetOwnersNotSeen(prefix, seen);
}

const json& ObjectCache::LocalQueueStatus(const std::string& key) const {
  static const json kNone;
  auto it = local_queue_status_.find(key);
  return it == local_queue_status_.end() ? kNone : it->second;
}

Model ObjectCache::Snapshot(std::vector<std::string>* node_names) {
  Model m;
  node_names->clear();
  m.nodes.reserve(nodes_.size());
  int64_t slots = 0;  // GPU device slots so far, within kMaxClusterGpuSlots
  std::set<std::string> over;
  for (const auto& [name, nr] : nodes_) {
    // Beyond the engine's limit a node is left out (said once), as one bad Node is: the
    // engine's slot offsets are 32-bit, and the cluster keeps being scheduled.
    if (slots + nr.first.allocatable[kGpu] > kMaxClusterGpuSlots) {
      over.insert(name);
      if (!over_limit_.count(name))
        spdlog::warn(
            "node {}: left out: with its {} GPUs the cluster would have more than {} "
            "GPU device slots",
            name, nr.first.allocatable[kGpu], kMaxClusterGpuSlots);
      continue;
    }
    slots += nr.first.allocatable[kGpu];
    node_names->push_back(name);
    m.nodes.push_back(nr.first);
    if (!nr.second) m.nodes.back().unschedulable = true;  // NotReady: keep what runs there
    // Being removed by an autoscaler (node_policy.h): likewise.
    if (BeingRemoved(m.nodes.back())) m.nodes.back().unschedulable = true;
  }
  LoadResult lr;
  for (const char* r : kQueueResources) {
    auto qit = queue_objects_.find(r);
    if (qit == queue_objects_.end()) continue;
    for (const auto& [key, obj] : qit->second)
      LoadManifestText(DumpJson(obj), fmt::format("{} {}", r, key[0] == '/' ? key.substr(1) : key),
                       lr);
  }
  // Each problem is logged once, not at every rebuild.
  std::set<std::string> diags;
  for (const auto& d : lr.diagnostics) {
    if (d.severity == Diagnostic::Severity::kNotice) continue;
    std::string text = d.ToString();
    if (!logged_diagnostics_.count(text)) spdlog::warn("queue objects: {}", text);
    diags.insert(std::move(text));
  }
  logged_diagnostics_ = std::move(diags);
  m.flavors = std::move(lr.model.flavors);
  m.topologies = std::move(lr.model.topologies);
  m.cluster_queues = std::move(lr.model.cluster_queues);
  m.cohorts = std::move(lr.model.cohorts);
  m.local_queues = std::move(lr.model.local_queues);
  m.workload_priority_classes = std::move(lr.model.workload_priority_classes);
  m.config = lr.model.config;
  m.dra = dra_.Load();
  for (const auto& [name, pc] : priority_classes_) m.priority_classes.push_back(pc);
  m.namespace_labels = namespaces_;
  over_limit_ = std::move(over);
  ReadInterruptibleMarks();
  return m;
}

void ObjectCache::ReadInterruptibleMarks() {
  InterruptibleMarks marks;
  marks.owners = std::move(marks_.owners);  // kept up to date by the events
  std::set<std::string> said;
  auto read = [&](const ObjectRef& ref, const std::map<std::string, std::string>& annotations,
                  std::map<std::string, bool>& into, const std::string& key) {
    std::string problem;
    if (std::optional<bool> v = ReadInterruptible(annotations, &problem)) {
      into[key] = *v;
    } else if (!problem.empty()) {
      problem += "; the value is ignored";
      std::string text = fmt::format("{} {}: {}", ref.kind, key, problem);
      if (!logged_marks_.count(text)) {
        spdlog::warn("{}", text);
        mark_problems_.emplace_back(ref, std::move(problem));
      }
      said.insert(std::move(text));
    }
  };
  for (const auto& [name, annotations] : priority_class_annotations_)
    read(RefOf("scheduling.k8s.io/v1", "PriorityClass", "/" + name,
               uids_["priorityclasses /" + name]),
         annotations, marks.priority_classes, name);
  struct Kind {
    const char* resource;
    const char* kind;
    std::map<std::string, bool> InterruptibleMarks::*marks;
  };
  const Kind kinds[] = {{"workloadpriorityclasses", "WorkloadPriorityClass",
                         &InterruptibleMarks::workload_priority_classes},
                        {"localqueues", "LocalQueue", &InterruptibleMarks::local_queues},
                        {"clusterqueues", "ClusterQueue", &InterruptibleMarks::cluster_queues}};
  for (const auto& [resource, kind, field] : kinds) {
    auto it = queue_objects_.find(resource);
    if (it == queue_objects_.end()) continue;
    for (const auto& [key, obj] : it->second) {
      // Cluster-scoped objects' keys are "/name"; LocalQueues' "ns/name", as the marks'.
      const std::string k = key[0] == '/' ? key.substr(1) : key;
      read(RefOf("tessera.dev/v1alpha1", kind, key, uids_[fmt::format("{} {}", resource, key)]),
           AnnotationsOf(obj), marks.*field, k);
    }
  }
  marks_ = std::move(marks);
  logged_marks_ = std::move(said);
}

void ObjectCache::ReadOwnerMark(const ObjectRef& ref, const std::string& group_key, const json& o,
                                bool del) {
  marks_.owners.erase(group_key);
  std::string problem;
  if (!del)
    if (std::optional<bool> v = ReadInterruptible(AnnotationsOf(o), &problem))
      marks_.owners[group_key] = *v;
  if (problem.empty()) {
    owner_said_.erase(group_key);
    return;
  }
  problem += "; the value is ignored";
  std::string& said = owner_said_[group_key];
  if (said == problem) return;  // said while it lasts
  said = problem;
  spdlog::warn("{} {}/{}: {}", ref.kind, ref.ns, ref.name, problem);
  mark_problems_.emplace_back(ref, std::move(problem));
}

void ObjectCache::ApplyOwners(const OwnerKind& kind, const WatchEvent& ev, Changes& changes) {
  const std::string prefix = kind.kind + ":";
  // Forgets what object `okey` made: its gangs must be sized again.
  auto forget = [&](const std::string& okey) {
    auto it = owner_objects_.find(okey);
    if (it == owner_objects_.end()) return;
    for (const std::string& gk : it->second) {
      gangs_.owner_gangs.erase(gk);
      changes.sized_groups.push_back(gk);
    }
    owner_objects_.erase(it);
  };
  if (ev.type == T::kReplace) {
    for (auto it = owner_objects_.lower_bound(prefix);
         it != owner_objects_.end() && it->first.compare(0, prefix.size(), prefix) == 0;)
      forget((it++)->first);
    ClearRefused(gangs_, prefix);
    if (ev.served) {
      gangs_.owner_kinds_served.insert(kind.kind);
    } else {
      gangs_.owner_kinds_served.erase(kind.kind);
    }
  }
  std::set<std::string> seen;
  Each(ev, [&](const json& o, bool del) {
    const std::string key = ObjectKey(o);
    const std::string okey = prefix + key;
    const size_t slash = key.find('/');
    ObjectRef ref{json_fields::Str(o, "apiVersion"), kind.kind, key.substr(0, slash),
                  key.substr(slash + 1), UidOf(o)};
    if (auto it = owner_objects_.find(okey); del && it != owner_objects_.end())
      for (const std::string& gk : it->second) ReadOwnerMark(ref, gk, o, true);
    forget(okey);
    gangs_.refused.erase(okey);
    changes.sized_groups.push_back(okey);  // its pods may wait for it under this key
    if (del) return;
    auto read = ReadOwnerObject(kind, o);
    if (!read.ok()) {
      // Not used, as if absent: its pods wait and show why.
      spdlog::warn("{} {}: {}; the object is not used", kind.kind, key,
                   std::string(read.status().message()));
      gangs_.refused[okey] = std::string(read.status().message());
      return;
    }
    std::vector<std::string>& made = owner_objects_[okey];
    for (OwnerGang& g : *read) {
      const std::string gk = prefix + g.ns + "/" + g.name;
      seen.insert(gk);
      ReadOwnerMark(ref, gk, o, false);
      made.push_back(gk);
      changes.sized_groups.push_back(gk);
      gangs_.owner_gangs[gk] = std::move(g);
    }
  });
  if (ev.type == T::kReplace) ForgetOwnersNotSeen(prefix, seen);
}

void ObjectCache::ForgetOwnersNotSeen(const std::string& prefix,
                                      const std::set<std::string>& seen) {
  auto prune = [&](auto& m) {
    for (auto it = m.lower_bound(prefix);
         it != m.end() && it->first.compare(0, prefix.size(), prefix) == 0;)
      it = seen.count(it->first) ? std::next(it) : m.erase(it);
  };
  prune(owner_said_);
  prune(marks_.owners);
}

std::vector<std::pair<ObjectRef, std::string>> ObjectCache::TakeMarkProblems() {
  std::vector<std::pair<ObjectRef, std::string>> out;
  out.swap(mark_problems_);
  return out;
}

}  // namespace tessera::k8s
