// The event recorder against a scripted events endpoint (cpp-httplib): repeated occurrences are
// one Event with a count, the per-object rate limit holds writes back without losing counts, and
// an Event that expired on the server is created again.
#include "k8s/client/event_recorder.h"

#include <httplib.h>

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "k8s/client/http_testing.h"
#include "k8s/client/proto.h"
#include "nlohmann/json.hpp"

namespace tessera::k8s {
namespace {

using json = nlohmann::json;

// Holds Events by name, as the API server's events collection of namespace "d" would.
class EventsServer {
 public:
  EventsServer() {
    server_.Post("/api/v1/namespaces/d/events",
                 [this](const httplib::Request& req, httplib::Response& res) {
                   std::lock_guard<std::mutex> l(mu_);
                   json ev = json::parse(req.body);
                   const std::string name = ev["metadata"]["name"];
                   ++posts_;
                   accepts_.push_back(req.get_header_value("Accept"));
                   if (events_.count(name)) {
                     res.status = 409;
                     return;
                   }
                   events_[name] = ev;
                   res.status = 201;
                   res.set_content(ev.dump(), "application/json");
                 });
    server_.Patch(R"(/api/v1/namespaces/d/events/([^/]+))",
                  [this](const httplib::Request& req, httplib::Response& res) {
                    std::lock_guard<std::mutex> l(mu_);
                    ++patches_;
                    accepts_.push_back(req.get_header_value("Accept"));
                    auto it = events_.find(req.matches[1]);
                    if (it == events_.end()) {
                      res.status = 404;
                      return;
                    }
                    it->second.merge_patch(json::parse(req.body));
                    res.set_content(it->second.dump(), "application/json");
                  });
    serving_ = std::make_unique<testing::Serving>(server_);
  }
  KubeClient& client() { return serving_->client(); }
  std::vector<json> Events() {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<json> out;
    for (const auto& [k, v] : events_) out.push_back(v);
    return out;
  }
  void Expire() {
    std::lock_guard<std::mutex> l(mu_);
    events_.clear();
  }
  int posts() {
    std::lock_guard<std::mutex> l(mu_);
    return posts_;
  }
  int patches() {
    std::lock_guard<std::mutex> l(mu_);
    return patches_;
  }
  // The Accept header of each write, in order.
  std::vector<std::string> accepts() {
    std::lock_guard<std::mutex> l(mu_);
    return accepts_;
  }

 private:
  httplib::Server server_;
  std::mutex mu_;
  std::map<std::string, json> events_;
  int posts_ = 0, patches_ = 0;
  std::vector<std::string> accepts_;
  std::unique_ptr<testing::Serving> serving_;  // last: stops before what its handlers use
};

class EventRecorderTest : public ::testing::Test {
 protected:
  // Writes run inline, so that each Record's effect is on the server when it returns; time is
  // ours to move.
  std::unique_ptr<EventRecorder> Recorder(double burst = 25, double refill_per_s = 1.0 / 300) {
    EventRecorderOptions o;
    o.component = "tessera";
    o.burst = burst;
    o.refill_per_s = refill_per_s;
    return std::make_unique<EventRecorder>(
        client_, [](std::function<void()> f) { f(); }, o, [this] { return now_; },
        [this] { return fmt::format("2026-01-01T00:00:{:02d}Z", static_cast<int>(now_) % 60); });
  }

  // Writes wait in queued_ until RunQueued(), as behind a slow server.
  std::unique_ptr<EventRecorder> QueuingRecorder(EventRecorderOptions o) {
    return std::make_unique<EventRecorder>(
        client_, [this](std::function<void()> f) { queued_.push_back(std::move(f)); }, o);
  }
  void RunQueued() {
    auto q = std::move(queued_);
    queued_.clear();
    for (auto& f : q) f();
  }

  ObjectRef Pod(const std::string& name) {
    // Built whole rather than assigned field by field: GCC 12 at -O3 reports a false
    // -Wrestrict on `r.ns = "d"` after inlining.
    return ObjectRef{.ns = "d", .name = name, .uid = "uid-" + name};
  }

  EventsServer server_;
  KubeClient* const client_ = &server_.client();
  double now_ = 0;
  std::vector<std::function<void()>> queued_;
};

TEST_F(EventRecorderTest, RepeatedOccurrencesAreOneEventWithACount) {
  auto rec = Recorder();
  for (int i = 0; i < 4; ++i) {
    now_ = i;
    rec->Record(Pod("p"), "Warning", "FailedScheduling", "no room");
  }
  auto events = server_.Events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["count"], 4);
  EXPECT_EQ(events[0]["firstTimestamp"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(events[0]["lastTimestamp"], "2026-01-01T00:00:03Z");
  EXPECT_EQ(events[0]["involvedObject"]["uid"], "uid-p");
  EXPECT_EQ(events[0]["reason"], "FailedScheduling");
  EXPECT_EQ(server_.posts(), 1);
  EXPECT_EQ(server_.patches(), 3);
  EXPECT_EQ(rec->stats().created, 1);
  EXPECT_EQ(rec->stats().patched, 3);
}

TEST_F(EventRecorderTest, AnotherMessageOrObjectIsAnotherEvent) {
  auto rec = Recorder();
  rec->Record(Pod("p"), "Warning", "FailedScheduling", "no room");
  rec->Record(Pod("p"), "Warning", "FailedScheduling", "quota");
  rec->Record(Pod("q"), "Warning", "FailedScheduling", "no room");
  rec->Record(Pod("p"), "Warning", "FailedScheduling", "no room");
  auto events = server_.Events();
  ASSERT_EQ(events.size(), 3u);
  int counts = 0;
  for (const auto& e : events) counts += e["count"].get<int>();
  EXPECT_EQ(counts, 4);
}

TEST_F(EventRecorderTest, RateLimitHoldsWritesBackAndKeepsTheCount) {
  auto rec = Recorder(/*burst=*/2, /*refill_per_s=*/0.01);
  for (int i = 0; i < 6; ++i) rec->Record(Pod("p"), "Warning", "FailedScheduling", "no room");
  auto events = server_.Events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["count"], 2);  // the burst: a POST and one PATCH
  EXPECT_EQ(rec->stats().held, 4);
  rec->Flush();  // no token yet
  EXPECT_EQ(server_.Events()[0]["count"], 2);
  now_ = 100;  // one token
  rec->Flush();
  EXPECT_EQ(server_.Events()[0]["count"], 6);  // every occurrence, in one PATCH
  EXPECT_EQ(server_.posts() + server_.patches(), 3);
  // Another object has its own bucket.
  rec->Record(Pod("q"), "Warning", "FailedScheduling", "no room");
  EXPECT_EQ(server_.Events().size(), 2u);
}

TEST_F(EventRecorderTest, AnEventThatExpiredIsCreatedAgain) {
  auto rec = Recorder();
  rec->Record(Pod("p"), "Normal", "Preempted", "by x");
  server_.Expire();
  rec->Record(Pod("p"), "Normal", "Preempted", "by x");
  auto events = server_.Events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["count"], 2);
  EXPECT_EQ(rec->stats().created, 2);
}

TEST_F(EventRecorderTest, ForgetsTheLeastRecentlyUsedBeyondItsCache) {
  EventRecorderOptions o;
  o.cache_size = 2;
  EventRecorder rec(
      client_, [](std::function<void()> f) { f(); }, o);
  rec.Record(Pod("a"), "Normal", "Scheduled", "x");
  rec.Record(Pod("b"), "Normal", "Scheduled", "x");
  rec.Record(Pod("c"), "Normal", "Scheduled", "x");  // forgets a
  rec.Record(Pod("a"), "Normal", "Scheduled", "x");  // a new Event for a
  EXPECT_EQ(server_.Events().size(), 4u);
  rec.Record(Pod("a"), "Normal", "Scheduled", "x");
  EXPECT_EQ(server_.Events().size(), 4u);
  EXPECT_EQ(rec.stats().patched, 1);
}

TEST_F(EventRecorderTest, ForgetsEventsWhoseWritesAreStillQueued) {
  // Thousands of Scheduled Events queued behind a slow server: the cache stays bounded, every
  // queued write still happens, and an Event forgotten meanwhile is created anew.
  EventRecorderOptions o;
  o.cache_size = 2;
  auto rec = QueuingRecorder(o);
  for (int i = 0; i < 10; ++i) rec->Record(Pod(fmt::format("p{}", i)), "Normal", "Scheduled", "x");
  EXPECT_EQ(queued_.size(), 10u);
  RunQueued();
  EXPECT_EQ(server_.Events().size(), 10u);
  EXPECT_EQ(rec->stats().created, 10);
  rec->Record(Pod("p0"), "Normal", "Scheduled", "x");  // forgotten: a new Event
  rec->Record(Pod("p9"), "Normal", "Scheduled", "x");  // still cached: its count goes up
  RunQueued();
  EXPECT_EQ(server_.Events().size(), 11u);
  EXPECT_EQ(rec->stats().patched, 1);
}

TEST_F(EventRecorderTest, AtMostMaxQueuedWritesWaitAndTheRestAreWrittenLater) {
  // A burst of binds faster than the server takes Events: the queue stays bounded, and what did
  // not fit is written by later Flushes, every occurrence once.
  EventRecorderOptions o;
  o.max_queued = 2;
  auto rec = QueuingRecorder(o);
  for (int i = 0; i < 5; ++i) rec->Record(Pod(fmt::format("p{}", i)), "Normal", "Scheduled", "x");
  EXPECT_EQ(queued_.size(), 2u);
  EXPECT_EQ(rec->stats().queued, 2);
  EXPECT_EQ(rec->stats().held, 3);
  rec->Flush();  // no room yet
  EXPECT_EQ(queued_.size(), 2u);
  RunQueued();
  EXPECT_EQ(rec->stats().queued, 0);
  EXPECT_EQ(rec->stats().written, 2);
  for (int round = 0; round < 2; ++round) {
    rec->Flush();
    EXPECT_LE(queued_.size(), 2u);
    RunQueued();
  }
  EXPECT_EQ(server_.Events().size(), 5u);
  EventRecorderStats st = rec->stats();
  EXPECT_EQ(st.recorded, 5);
  EXPECT_EQ(st.written, 5);
  EXPECT_EQ(st.dropped, 0);
  EXPECT_EQ(st.queued, 0);
  EXPECT_EQ(st.created, 5);
}

TEST_F(EventRecorderTest, OccurrencesForgottenBeforeTheirWriteAreCountedAsDropped) {
  EventRecorderOptions o;
  o.max_queued = 1;
  o.cache_size = 2;
  auto rec = QueuingRecorder(o);
  rec->Record(Pod("p0"), "Normal", "Scheduled", "x");  // queued
  rec->Record(Pod("p1"), "Normal", "Scheduled", "x");  // waits in its Event
  rec->Record(Pod("p2"), "Normal", "Scheduled", "x");  // waits; p0 forgotten, its write goes on
  EXPECT_EQ(rec->stats().dropped, 0);
  rec->Record(Pod("p3"), "Normal", "Scheduled", "x");  // waits; p1 forgotten unwritten
  EXPECT_EQ(rec->stats().dropped, 1);
  for (int round = 0; round < 3; ++round) {
    RunQueued();
    rec->Flush();
  }
  std::set<std::string> names;
  for (const auto& e : server_.Events()) names.insert(e["involvedObject"]["name"]);
  EXPECT_EQ(names, (std::set<std::string>{"p0", "p2", "p3"}));
  EventRecorderStats st = rec->stats();
  EXPECT_EQ(st.recorded, 4);
  EXPECT_EQ(st.written, 3);
  EXPECT_EQ(st.dropped, 1);
  EXPECT_EQ(st.queued, 0);
}

TEST_F(EventRecorderTest, WritesQueuedWhenStoppedAreCountedAsDropped) {
  auto rec = QueuingRecorder(EventRecorderOptions{});
  rec->Record(Pod("p0"), "Normal", "Scheduled", "x");
  rec->Record(Pod("p0"), "Normal", "Scheduled", "x");  // coalesced into the queued write
  rec->Stop();
  RunQueued();
  EXPECT_EQ(server_.posts(), 0);
  EventRecorderStats st = rec->stats();
  EXPECT_EQ(st.recorded, 2);
  EXPECT_EQ(st.dropped, 2);
  EXPECT_EQ(st.queued, 0);
}

TEST_F(EventRecorderTest, AsksForProtobufAnswersOnlyWhenTold) {
  // The created or patched Event that comes back is not read: with `protobuf` the server may
  // encode it for less.
  for (bool protobuf : {false, true}) {
    EventRecorderOptions o;
    o.protobuf = protobuf;
    EventRecorder rec(
        client_, [](std::function<void()> f) { f(); }, o);
    const std::string pod = protobuf ? "pb" : "js";
    rec.Record(Pod(pod), "Normal", "Scheduled", "x");  // POST
    rec.Record(Pod(pod), "Normal", "Scheduled", "x");  // PATCH
  }
  EXPECT_EQ(server_.accepts(),
            (std::vector<std::string>{"application/json", "application/json",
                                      std::string(proto::kAccept), std::string(proto::kAccept)}));
}

TEST_F(EventRecorderTest, NothingIsWrittenOnceStopped) {
  auto rec = Recorder();
  rec->Stop();
  rec->Record(Pod("p"), "Normal", "Scheduled", "x");
  rec->Flush();
  EXPECT_EQ(server_.posts(), 0);
}

}  // namespace
}  // namespace tessera::k8s
