// What `tessera get` and `tessera explain` print for API answers written by hand, and that an
// answer of another shape is an error, never a crash.
#include "k8s/api/get_format.h"

#include <httplib.h>

#include <thread>

#include "gtest/gtest.h"
#include "k8s/api/api_client.h"
#include "k8s/api/table.h"

namespace tessera::k8s {
namespace {

using nlohmann::json;

TEST(Table, ColumnsArePaddedToTheWidestCell) {
  Table t({"NAME", "GPUS", "REASON"});
  t.AddRow({"job-1", "16", "needs 8 more"});
  t.AddRow({"a", "4"});                   // padded with an empty cell
  t.AddRow({"b\nc", "1", "x", "extra"});  // control characters shown as spaces, extra dropped
  EXPECT_EQ(t.Render(),
            "NAME    GPUS   REASON\n"
            "job-1   16     needs 8 more\n"
            "a       4\n"
            "b c     1      x\n");
}

TEST(Table, WidthCountsCharactersNotBytes) {
  Table t({"NAME", "X"});
  t.AddRow({"équipe", "1"});
  EXPECT_EQ(t.Render(), "NAME     X\néquipe   1\n");
}

const double kNow = 1'800'000'000;  // 2027-01-15T08:00:00Z

TEST(GetFormat, Queues) {
  json q = json::parse(R"({"items": [
    {"name": "team-a", "cohort": "all", "strategy": "BestEffortFIFO",
     "resources": [{"flavor": "a100", "resource": "nvidia.com/gpu", "nominal": 16,
                    "borrowingLimit": null, "lendingLimit": null, "used": 20, "borrowed": 4},
                   {"flavor": "a100", "resource": "cpu", "nominal": 64, "borrowingLimit": null,
                    "lendingLimit": null, "used": 2.5, "borrowed": 0}],
     "pending": {"active": 3, "inadmissible": 1}, "pendingByReason": {"quota": 4},
     "admitted": 5, "weightedShare": 250,
     "reservation": {"workload": "ml/big", "expectedStart": "2027-01-15T08:10:00Z"}},
    {"name": "team-b", "cohort": null, "strategy": "StrictFIFO", "resources": [],
     "pending": {"active": 0, "inadmissible": 0}, "pendingByReason": {}, "admitted": 0,
     "weightedShare": null, "reservation": null}]})");
  absl::StatusOr<std::string> s = FormatQueues(q);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s,
            "NAME     COHORT   STRATEGY         PENDING   INADMISSIBLE   ADMITTED   "
            "GPUS USED/NOMINAL   BORROWED   RESERVED FOR\n"
            "team-a   all      BestEffortFIFO   3         1              5          "
            "a100:20/16          4          ml/big\n"
            "team-b   -        StrictFIFO       0         0              0          "
            "-                   0          -\n");
}

json Workload(const std::string& ns, const std::string& name, const std::string& state) {
  return {
      {"namespace", ns},
      {"name", name},
      {"localQueue", "lq"},
      {"clusterQueue", "team-a"},
      {"priority", 100},
      {"priorityClass", "high"},
      {"state", state},
      {"reason", state == "admitted" ? json(nullptr) : json("needs 8 nvidia.com/gpu")},
      {"created", "2027-01-15T07:48:00Z"},
      {"admittedAt", state == "admitted" ? json("2027-01-15T07:50:00Z") : json(nullptr)},
      {"waitSeconds", state == "admitted" ? 120 : 720},
      {"expectedStart", state == "admitted" ? json(nullptr) : json("2027-01-15T08:05:00Z")},
      {"gpus", 8},
      {"flavor", state == "admitted" ? json("a100") : json(nullptr)},
      {"pods",
       json::array({{{"name", name + "-0"},
                     {"node", state == "admitted" ? json("node-3") : json(nullptr)},
                     {"gpuIndices", state == "admitted" ? json({0, 1, 2, 3}) : json::array()}}})}};
}

TEST(GetFormat, WorkloadsLikeSqueueStart) {
  json w = {{"items", {Workload("ml", "train", "admitted"), Workload("ml", "eval", "pending")}}};
  absl::StatusOr<std::string> s = FormatWorkloads(w, true, kNow);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s,
            "NAMESPACE   NAME    OWNER   QUEUE    STATE      PRIORITY   GPUS   FLAVOR   WAIT   "
            "EXPECTED START   REASON\n"
            "ml          train   -       team-a   admitted   100        8      a100     2m     -"
            "                -\n"
            "ml          eval    -       team-a   pending    100        8      -        12m    in 5m"
            "            needs 8 nvidia.com/gpu\n");
  s = FormatWorkloads(w, false, kNow);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->rfind("NAME    OWNER   QUEUE", 0), 0u) << *s;
  EXPECT_EQ(*FormatWorkloads(json{{"items", json::array()}}, true, kNow), "No workloads found.\n");
}

TEST(GetFormat, NodesWithAGpuMap) {
  json n = json::parse(R"({"items": [{"name": "node-3", "flavor": "a100",
    "gpuModel": "NVIDIA-A100-SXM4-80GB", "gpus": 4, "unschedulable": true, "gpuSlots": [
      {"index": 0, "workload": "ml/train", "clusterQueue": "team-a", "utilization": null},
      {"index": 1, "workload": "ml/train", "clusterQueue": "team-a", "utilization": null},
      {"index": 2, "workload": null, "clusterQueue": null, "utilization": null},
      {"index": 3, "workload": "ml/x", "clusterQueue": "team-b", "utilization": 0.5}]}]})");
  absl::StatusOr<std::string> s = FormatNodes(n);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s,
            "NAME                FLAVOR   GPU MODEL               GPUS   USED   GPU MAP   "
            "WORKLOADS\n"
            "node-3 (cordoned)   a100     NVIDIA-A100-SXM4-80GB   4      3      ##.#      "
            "ml/train(2),ml/x(1)\n");
}

TEST(GetFormat, Explain) {
  json w = Workload("ml", "eval", "pending");
  w["explain"] = {
      {"reason", "needs 8 nvidia.com/gpu"},
      {"expectedStart", "2027-01-15T08:05:00Z"},
      {"wouldFitIf", {"8 more nvidia.com/gpu of flavor a100 free to ClusterQueue team-a"}}};
  absl::StatusOr<std::string> s = FormatExplain(w, kNow);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s,
            "Workload:       ml/eval\n"
            "State:          pending\n"
            "ClusterQueue:   team-a (LocalQueue lq)\n"
            "Priority:       100 (high)\n"
            "GPUs:           8\n"
            "Created:        2027-01-15T07:48:00Z\n"
            "Waiting:        12m\n"
            "Reason:         needs 8 nvidia.com/gpu\n"
            "Expected start: 2027-01-15T08:05:00Z (in 5m)\n"
            "Would fit if:\n"
            "  - 8 more nvidia.com/gpu of flavor a100 free to ClusterQueue team-a\n"
            "Pods:\n"
            "  POD      NODE   GPUS\n"
            "  eval-0   -      -\n");
}

TEST(GetFormat, AnswersOfAnotherShapeAreErrors) {
  for (const char* text : {R"({})", R"({"items": 3})", R"({"items": [{"name": 5}]})",
                           R"({"items": [{}]})", R"([1, 2])", R"("text")"}) {
    json j = json::parse(text);
    EXPECT_FALSE(FormatQueues(j).ok()) << text;
    EXPECT_FALSE(FormatWorkloads(j, true, kNow).ok()) << text;
    EXPECT_FALSE(FormatNodes(j).ok()) << text;
    EXPECT_FALSE(FormatExplain(j, kNow).ok()) << text;
  }
  absl::StatusOr<std::string> s = FormatNodes(json::parse(R"({"items": [{"name": "n"}]})"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("unexpected shape"), std::string::npos) << s.status();
}

TEST(GetFormat, ParseRfc3339) {
  EXPECT_EQ(ParseRfc3339("2027-01-15T08:00:00Z"), kNow);
  EXPECT_EQ(ParseRfc3339("soon"), -1);
}

// The client's errors: each a status of its own kind with the URL in its message.
TEST(ApiClient, ErrorsNameTheUrlAndTheCause) {
  httplib::Server server;
  server.Get("/garbage", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("<html>not json</html>", "text/html");
  });
  server.Get("/secret", [](const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("Authorization") != "Bearer t0k") {
      res.status = 401;
      res.set_content(R"({"error": "a bearer token is needed"})", "application/json");
      return;
    }
    res.set_content(R"({"ok": true})", "application/json");
  });
  server.Get("/missing", [](const httplib::Request&, httplib::Response& res) {
    res.status = 404;
    res.set_content(R"({"error": "no workload a/b"})", "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread t([&] { server.listen_after_bind(); });
  ApiClientOptions o;
  o.server = "http://127.0.0.1:" + std::to_string(port);
  const std::string url = o.server;

  absl::StatusOr<json> r = ApiGet(o, "/garbage");
  EXPECT_TRUE(absl::IsDataLoss(r.status())) << r.status();
  EXPECT_NE(r.status().message().find(url + "/garbage: the answer is not a JSON object"),
            std::string::npos)
      << r.status();
  r = ApiGet(o, "/secret");
  EXPECT_TRUE(absl::IsUnauthenticated(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("401 Unauthorized: a bearer token is needed"),
            std::string::npos)
      << r.status();
  o.token = "t0k";
  r = ApiGet(o, "/secret");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)["ok"], true);
  r = ApiGet(o, "/missing");
  EXPECT_TRUE(absl::IsNotFound(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("no workload a/b"), std::string::npos);
  server.stop();
  t.join();
  r = ApiGet(o, "/secret");  // nobody listens any more
  EXPECT_TRUE(absl::IsUnavailable(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("cannot reach tessera serve at " + url), std::string::npos)
      << r.status();
  for (const char* bad : {"127.0.0.1:10259", "https://x:1", "http://", "http://a b"}) {
    o.server = bad;
    EXPECT_TRUE(absl::IsInvalidArgument(ApiGet(o, "/x").status())) << bad;
  }
}

TEST(ApiClient, TokenFiles) {
  const std::string dir = ::testing::TempDir();
  auto write = [&](const std::string& name, const std::string& text) {
    std::string path = dir + "/" + name;
    FILE* f = std::fopen(path.c_str(), "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
    return path;
  };
  absl::StatusOr<std::string> t = ReadTokenFile("--token-file", write("ok", "  s3cret\n"));
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, "s3cret");
  EXPECT_FALSE(ReadTokenFile("--token-file", write("empty", "\n")).ok());
  EXPECT_FALSE(ReadTokenFile("--token-file", write("two", "a b\n")).ok());
  t = ReadTokenFile("--api-token-file", dir + "/absent");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("--api-token-file " + dir + "/absent: cannot read it"),
            std::string::npos)
      << t.status();
}

}  // namespace
}  // namespace tessera::k8s
