// The informer against a scripted HTTP server (cpp-httplib): relist on 410 Gone, bookmarks,
// re-watch from the last resourceVersion, back-off while the server answers errors.
#include "k8s/client/informer.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "k8s/client/http_testing.h"
#include "k8s/client/proto.h"
#include "k8s/client/proto_testing.h"

namespace tessera::k8s {
namespace {

using testing::WaitFor;

class FakeServer {
 public:
  FakeServer() {
    server_.Get("/api/v1/pods", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> l(mu_);
      if (!req.has_param("watch")) {
        ++lists_;
        list_rvs_.push_back(
            req.has_param("resourceVersion") ? req.get_param_value("resourceVersion") : "none");
        res.set_content(
            fmt::format(
                R"({{"metadata":{{"resourceVersion":"{}"}},"items":[{{"metadata":{{"name":"a","namespace":"d","resourceVersion":"{}"}}}}]}})",
                list_rv_, list_rv_),
            "application/json");
        return;
      }
      watch_rvs_.push_back(req.get_param_value("resourceVersion"));
      ++watches_;
      std::string body;
      if (watches_ == 1) {
        // An event, a bookmark, then the server ends the watch (timeout): re-watch from rv 12.
        body +=
            R"({"type":"ADDED","object":{"metadata":{"name":"b","namespace":"d","resourceVersion":"11"}}})"
            "\n";
        body += R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"12"}}})"
                "\n";
      } else if (watches_ == 2) {
        // rv 12 was compacted away: relist.
        body += R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})"
                "\n";
        list_rv_ = 20;
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      res.set_content(body, "application/json");
    });
    serving_ = std::make_unique<testing::Serving>(server_);
  }
  KubeClient& client() { return serving_->client(); }
  int lists() {
    std::lock_guard<std::mutex> l(mu_);
    return lists_;
  }
  std::vector<std::string> watch_rvs() {
    std::lock_guard<std::mutex> l(mu_);
    return watch_rvs_;
  }
  std::vector<std::string> list_rvs() {
    std::lock_guard<std::mutex> l(mu_);
    return list_rvs_;
  }

 private:
  httplib::Server server_;
  std::mutex mu_;
  int lists_ = 0, watches_ = 0, list_rv_ = 10;
  std::vector<std::string> watch_rvs_, list_rvs_;
  std::unique_ptr<testing::Serving> serving_;  // last: stops before what its handlers use
};

TEST(Informer, RewatchesFromBookmarksAndRelistsOnGone) {
  FakeServer server;
  KubeClient& client = server.client();
  std::mutex mu;
  std::vector<std::string> seen;
  Informer informer(&client, "pods", "/api/v1/pods", [&](WatchEvent ev) {
    std::lock_guard<std::mutex> l(mu);
    if (ev.type == WatchEvent::Type::kReplace) {
      seen.push_back(fmt::format("replace:{}", ev.objects.size()));
    } else {
      seen.push_back("added:" + ev.object["metadata"].value("name", ""));
    }
  });
  informer.Start();
  ASSERT_TRUE(WaitFor([&] { return server.lists() >= 2 && server.watch_rvs().size() >= 3; }));
  informer.Stop();
  auto rvs = server.watch_rvs();
  EXPECT_EQ(rvs[0], "10");  // from the list
  EXPECT_EQ(rvs[1], "12");  // from the bookmark
  EXPECT_EQ(rvs[2], "20");  // from the relist after 410
  // The first list is served from the API server's watch cache; the relist after 410 reads
  // etcd, so as never to go back in time.
  auto lists = server.list_rvs();
  EXPECT_EQ(lists[0], "0");
  EXPECT_EQ(lists[1], "none");
  std::lock_guard<std::mutex> l(mu);
  ASSERT_GE(seen.size(), 3u);
  EXPECT_EQ(seen[0], "replace:1");
  EXPECT_EQ(seen[1], "added:b");
  EXPECT_EQ(seen[2], "replace:1");
  EXPECT_GE(informer.stats().gone.load(), 1);
  EXPECT_EQ(informer.stats().bookmarks.load(), 1);
}

TEST(Informer, OptionalKindThatIsNotServedCountsAsEmpty) {
  httplib::Server server;
  testing::Serving serving(server);
  KubeClient& client = serving.client();
  std::atomic<int> replaces{0};
  std::atomic<bool> served{true};
  Informer informer(
      &client, "podgroups", "/apis/x/v1/podgroups",
      [&](WatchEvent ev) {
        replaces += ev.type == WatchEvent::Type::kReplace;
        served = ev.served;
      },
      true);
  informer.Start();
  EXPECT_TRUE(WaitFor([&] { return informer.synced(); }));
  informer.Stop();
  EXPECT_EQ(replaces.load(), 1);
  EXPECT_FALSE(served.load());
}

// A kind served in other versions on other servers (the Workload API's PodGroups): the informer
// lists and watches the first of its paths the server serves.
TEST(Informer, OptionalKindIsListedAndWatchedInTheFirstVersionServed) {
  httplib::Server server;
  std::mutex mu;
  std::vector<std::string> watched;
  server.Get("/apis/s/v1alpha2/podgroups", [&](const httplib::Request& req, httplib::Response& res) {
    if (req.has_param("watch")) {
      std::lock_guard<std::mutex> l(mu);
      watched.push_back(req.path);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      res.set_content("", "application/json");
      return;
    }
    res.set_content(
        R"({"metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"g","namespace":"d"}}]})",
        "application/json");
  });
  testing::Serving serving(server);
  std::atomic<int> objects{-1};
  std::atomic<bool> served{false};
  Informer informer(
      &serving.client(), "workloadpodgroups", "/apis/s/v1beta1/podgroups",
      [&](WatchEvent ev) {
        if (ev.type != WatchEvent::Type::kReplace) return;
        objects = static_cast<int>(ev.objects.size());
        served = ev.served;
      },
      true);
  informer.SetAlternatePaths({"/apis/s/v1alpha3/podgroups", "/apis/s/v1alpha2/podgroups"});
  informer.Start();
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> l(mu);
    return !watched.empty();
  }));
  informer.Stop();
  EXPECT_EQ(objects.load(), 1);
  EXPECT_TRUE(served.load());
  EXPECT_TRUE(informer.healthy());
  EXPECT_EQ(informer.stats().errors.load(), 0);  // the versions not served are no error
  std::lock_guard<std::mutex> l(mu);
  EXPECT_EQ(watched[0], "/apis/s/v1alpha2/podgroups");
}

// A paged list whose continue token expired (410) starts over and hands over every object; it
// used to end there and hand over an empty list, as if every object had been deleted.
TEST(Informer, AListWhoseContinueTokenExpiredStartsOver) {
  httplib::Server server;
  std::atomic<int> continued{0};
  server.Get("/api/v1/pods", [&](const httplib::Request& req, httplib::Response& res) {
    if (req.has_param("watch")) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      res.set_content("", "application/json");
      return;
    }
    if (!req.has_param("continue")) {
      res.set_content(
          R"({"metadata":{"resourceVersion":"7","continue":"c1"},"items":[{"metadata":{"name":"a","namespace":"d"}}]})",
          "application/json");
    } else if (++continued == 1) {
      res.status = 410;
      res.set_content(R"({"kind":"Status","code":410,"reason":"Expired"})", "application/json");
    } else {
      res.set_content(
          R"({"metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"b","namespace":"d"}}]})",
          "application/json");
    }
  });
  testing::Serving serving(server);
  std::mutex mu;
  std::vector<std::string> names;
  Informer informer(&serving.client(), "pods", "/api/v1/pods", [&](WatchEvent ev) {
    std::lock_guard<std::mutex> l(mu);
    if (ev.type != WatchEvent::Type::kReplace || !names.empty()) return;
    names.push_back(fmt::format("{} objects", ev.objects.size()));
    for (const auto& o : ev.objects) names.push_back(o["metadata"].value("name", ""));
  });
  informer.Start();
  ASSERT_TRUE(WaitFor([&] { return informer.synced(); }));
  informer.Stop();
  std::lock_guard<std::mutex> l(mu);
  EXPECT_EQ(names, (std::vector<std::string>{"2 objects", "a", "b"}));
}

// The same informer over protobuf: a PodList, then a watch stream of length-prefixed frames that
// arrive cut at arbitrary points (3-byte chunks); a frame that cannot be decoded makes it relist.
TEST(Informer, ReadsProtobufListsAndFramedWatchesAndRelistsOnABadFrame) {
  using proto::testing::Envelope;
  using proto::testing::Pb;
  using proto::testing::WatchFrame;
  auto pod = [](const char* name, const char* rv) {
    return Pb().Msg(1, Pb().Bytes(1, name).Bytes(3, "d").Bytes(6, rv));
  };
  httplib::Server server;
  std::mutex mu;
  int lists = 0, watches = 0;
  std::vector<std::string> accepts;
  server.Get("/api/v1/pods", [&](const httplib::Request& req, httplib::Response& res) {
    std::lock_guard<std::mutex> l(mu);
    accepts.push_back(req.get_header_value("Accept"));
    if (!req.has_param("watch")) {
      ++lists;
      res.set_content(Envelope("PodList", Pb().Msg(1, Pb().Bytes(2, "10")).Msg(2, pod("a", "10"))),
                      "application/vnd.kubernetes.protobuf");
      return;
    }
    ++watches;
    std::string body;
    if (watches == 1) {
      body = WatchFrame("ADDED", Envelope("Pod", pod("b", "11"))) +
             WatchFrame("BOOKMARK", Envelope("Pod", Pb().Msg(1, Pb().Bytes(6, "12"))));
    } else if (watches == 2) {
      body = WatchFrame("MODIFIED", "not an object");
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    res.set_chunked_content_provider("application/vnd.kubernetes.protobuf;stream=watch",
                                     [body](size_t, httplib::DataSink& sink) {
                                       for (size_t at = 0; at < body.size(); at += 3)
                                         sink.write(body.data() + at,
                                                    std::min<size_t>(3, body.size() - at));
                                       sink.done();
                                       return true;
                                     });
  });
  testing::Serving serving(server);
  KubeClient& client = serving.client();
  std::vector<std::string> seen;
  Informer informer(
      &client, "pods", "/api/v1/pods",
      [&](WatchEvent ev) {
        std::lock_guard<std::mutex> l(mu);
        if (ev.type == WatchEvent::Type::kReplace) {
          seen.push_back(fmt::format("replace:{}", ev.objects.size()));
        } else {
          seen.push_back("added:" + ev.object["metadata"].value("name", "") + "@" +
                         ev.object["metadata"].value("resourceVersion", ""));
        }
      },
      /*optional=*/false, /*protobuf=*/true);
  informer.Start();
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard<std::mutex> l(mu);
    return lists >= 2 && watches >= 3;
  }));
  informer.Stop();
  std::lock_guard<std::mutex> l(mu);
  ASSERT_GE(seen.size(), 3u);
  EXPECT_EQ(seen[0], "replace:1");
  EXPECT_EQ(seen[1], "added:b@11");
  EXPECT_EQ(seen[2], "replace:1");  // the relist after the frame it could not read
  EXPECT_EQ(informer.stats().bookmarks.load(), 1);
  EXPECT_GE(informer.stats().errors.load(), 1);
  EXPECT_GE(informer.stats().protobuf_messages.load(), 4);
  EXPECT_EQ(accepts.at(0), std::string(proto::kAccept));
}

}  // namespace
}  // namespace tessera::k8s
