#include "k8s/controller/status_writer.h"

#include <chrono>
#include <ctime>
#include <map>
#include <set>

#include "fmt/format.h"
#include "k8s/client/proto.h"
#include "k8s/controller/fair_sharing_status.h"
#include "k8s/controller/object_cache.h"
#include "model/json_text.h"

namespace tessera::k8s {
StatusWriter::StatusWriter(KubeClient* client, const ControllerOptions& options,
                           const std::atomic<bool>& stop)
    : client_(client),
      protobuf_(options.protobuf),
      stop_(stop),
      status_pool_(std::make_unique<TaskPool>(options.status_workers)),
      // Events have writers of their own: a burst of Scheduled Events (one per bound pod) must
      // not hold up the PodScheduled conditions and status writes that users and the autoscaler
      // read.
      event_pool_(std::make_unique<TaskPool>(options.event_workers)) {
  EventRecorderOptions eo;
  eo.component = options.scheduler_name;
  eo.instance = options.instance;
  eo.protobuf = options.protobuf;
  events_ = std::make_unique<EventRecorder>(
      client, [this](std::function<void()> f) { event_pool_->Post(std::move(f)); }, eo);
}

StatusWriter::~StatusWriter() {
  // The pools go first: their queued writes use the recorder.
  status_pool_.reset();
  event_pool_.reset();
}

void StatusWriter::Event(const PodInfo& p, const char* type, const char* reason,
                         const std::string& message) {
  ObjectRef ref;
  ref.ns = p.ns;
  ref.name = p.name;
  ref.uid = p.uid;
  events_->Record(ref, type, reason, message);
}

void StatusWriter::Event(const ObjectRef& ref, const char* type, const char* reason,
                         const std::string& message) {
  events_->Record(ref, type, reason, message);
}

void StatusWriter::Unschedulable(const PodInfo& p, const std::string& reason, bool changed,
                                 const char* condition_reason) {
  Event(p, "Warning", "FailedScheduling", reason);
  if (!changed || (p.scheduled_condition == reason && p.scheduled_reason == condition_reason))
    return;
  json patch = {{"status",
                 {{"conditions",
                   {{{"type", "PodScheduled"},
                     {"status", "False"},
                     {"reason", condition_reason},
                     {"message", reason},
                     {"lastTransitionTime", WallRfc3339()}}}}}}};
  Send(fmt::format("/api/v1/namespaces/{}/pods/{}/status", p.ns, p.name), DumpJson(patch),
       Kind::kPodCondition);
}

void StatusWriter::Write(const std::string& path, const json& status) {
  std::string body = DumpJson(json{{"status", status}});
  auto& last = written_[path];
  if (last == body) return;
  last = body;
  Send(path, std::move(body), Kind::kStatus);
}

void StatusWriter::Send(const std::string& path, std::string body, Kind kind) {
  {
    std::lock_guard<std::mutex> lock(outbox_mu_);
    auto [it, idle] = outbox_.try_emplace(path);
    it->second.body = std::move(body);
    it->second.kind = kind;
    it->second.waiting = true;
    if (!idle) return;  // the worker that owns it sends this body next
  }
  status_pool_->Post([this, path] { SendLatest(path); });
}

void StatusWriter::SendLatest(const std::string& path) {
  for (;;) {
    std::string body;
    Kind kind;
    {
      std::lock_guard<std::mutex> lock(outbox_mu_);
      auto it = outbox_.find(path);
      if (it == outbox_.end()) return;
      if (!it->second.waiting || stop_) {
        outbox_.erase(it);
        return;
      }
      body = std::move(it->second.body);
      kind = it->second.kind;
      it->second.waiting = false;
    }
    Patch(path, body, kind);
  }
}

void StatusWriter::Patch(const std::string& path, const std::string& body, Kind kind) {
  if (kind == Kind::kPodCondition) {
    // The answer is the whole pod: protobuf costs the server less to encode.
    (void)client_->Patch(path, body, PatchType::kStrategicMerge,
                         protobuf_ ? proto::kAccept : "application/json");
    return;
  }
  auto r = client_->Patch(path, body, PatchType::kMerge);
  if (r.ok() && r->status == 404 && path.size() > 7) {
    // A CRD without the status subresource: the status lives in the main resource.
    (void)client_->Patch(path.substr(0, path.size() - 7), body, PatchType::kMerge);
  }
}

void StatusWriter::PodGroupStatus(const PodGroupInfo& pg, int32_t scheduled, int32_t members) {
  std::string phase = scheduled >= pg.min_member ? "Scheduled"
                      : members >= pg.min_member ? "Pending"
                                                 : "PreScheduling";
  if (scheduled > 0 && scheduled < pg.min_member) phase = "Scheduling";
  Write(fmt::format("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{}/podgroups/{}/status", pg.ns,
                    pg.name),
        json{{"phase", phase}, {"scheduled", scheduled}});
}

void StatusWriter::ClusterQueueStatuses(const Scheduler& engine,
                                        const std::vector<int64_t>& pending,
                                        const std::vector<int64_t>& admitted) {
  const Model& m = engine.model();
  for (size_t c = 0; c < m.cluster_queues.size(); ++c) {
    const ClusterQueue& cq = m.cluster_queues[c];
    json usage = json::array();
    std::set<std::string> flavors_seen;
    for (const auto& rg : cq.resource_groups) {
      for (const auto& fq : rg.flavors) {
        if (!flavors_seen.insert(fq.flavor).second) continue;
        int32_t f = -1;
        for (size_t i = 0; i < m.flavors.size(); ++i)
          if (m.flavors[i].name == fq.flavor) f = static_cast<int32_t>(i);
        json res = json::array();
        if (f >= 0) {
          Resources u = engine.ClusterQueueUsage(static_cast<int32_t>(c), f);
          for (ResourceId r : rg.covered)
            res.push_back({{"name", ResourceName(r)}, {"total", FormatQuantity(r, u[r])}});
        }
        usage.push_back({{"name", fq.flavor}, {"resources", res}});
      }
    }
    Write(fmt::format("{}/clusterqueues/{}/status", kQueueGroup, cq.name),
          json{{"pendingWorkloads", pending[c]},
               {"reservingWorkloads", admitted[c]},
               {"admittedWorkloads", admitted[c]},
               {"flavorsReservation", usage},
               {"flavorsUsage", usage}});
  }
}

void StatusWriter::LocalQueueStatuses(const Scheduler& engine,
                                      std::chrono::system_clock::time_point wall_start) {
  const Model& m = engine.model();
  if (!m.config.admission_fair_sharing.enabled) return;
  std::map<std::string, int32_t> cq_index;
  for (size_t c = 0; c < m.cluster_queues.size(); ++c)
    cq_index[m.cluster_queues[c].name] = static_cast<int32_t>(c);
  for (size_t i = 0; i < m.local_queues.size(); ++i) {
    const LocalQueue& lq = m.local_queues[i];
    auto cq = cq_index.find(lq.cluster_queue);
    if (cq == cq_index.end() || !m.cluster_queues[cq->second].usage_based_admission) continue;
    json fs = FairSharingStatus(engine.local_queue_usage(static_cast<int32_t>(i)), wall_start);
    if (fs.is_null()) continue;
    Write(fmt::format("{}/namespaces/{}/localqueues/{}/status", kQueueGroup, lq.ns, lq.name),
          json{{"fairSharing", fs}});
  }
}

void StatusWriter::FlushEvents() { events_->Flush(); }

void StatusWriter::StopEvents() { events_->Stop(); }

EventRecorderStats StatusWriter::event_stats() const { return events_->stats(); }

size_t StatusWriter::queued() const { return status_pool_ ? status_pool_->queued() : 0; }

}  // namespace tessera::k8s
