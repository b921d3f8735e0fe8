// Informers against a server that sends garbage (issue 15): truncated, garbled or mistyped
// watch events, an endless line, frames of impossible lengths. None may crash the informer or
// make it allocate beyond a bound; what it cannot read makes it relist, after a back-off, so
// that its cache is right again and the server is not hammered.
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "k8s/client/http_testing.h"
#include "k8s/client/informer.h"
#include "k8s/client/proto_testing.h"

namespace tessera::k8s {
namespace {

bool WaitFor(const std::function<bool()>& cond, int ms = 10000) {
  for (int waited = 0; waited < ms; waited += 25) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return cond();
}

// Lists pod "a"; the first watch sends `first_watch` (with `content_type`), later watches
// idle. Counts lists and watches, and what the informer delivered.
class GarbageServer {
 public:
  GarbageServer(std::string first_watch, std::string content_type)
      : first_watch_(std::move(first_watch)), content_type_(std::move(content_type)) {
    server_.Get("/api/v1/pods", [this](const httplib::Request& req, httplib::Response& res) {
      std::unique_lock<std::mutex> l(mu_);
      if (!req.has_param("watch")) {
        ++lists_;
        res.set_content(
            R"({"metadata":{"resourceVersion":"10"},"items":[{"metadata":{"name":"a","namespace":"d","resourceVersion":"10"}}]})",
            "application/json");
        return;
      }
      if (++watches_ > 1) {
        l.unlock();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        res.set_content("", "application/json");
        return;
      }
      const std::string body = first_watch_;
      res.set_chunked_content_provider(content_type_, [body](size_t, httplib::DataSink& sink) {
        // Cut at arbitrary points, as a network would.
        for (size_t at = 0; at < body.size(); at += 7)
          if (!sink.write(body.data() + at, std::min<size_t>(7, body.size() - at))) return false;
        sink.done();
        return true;
      });
    });
    serving_ = std::make_unique<testing::Serving>(server_);
  }
  KubeClient& client() { return serving_->client(); }
  int lists() {
    std::lock_guard<std::mutex> l(mu_);
    return lists_;
  }

 private:
  httplib::Server server_;
  std::mutex mu_;
  int lists_ = 0, watches_ = 0;
  const std::string first_watch_, content_type_;
  std::unique_ptr<testing::Serving> serving_;  // last: stops before what its handlers use
};

struct Seen {
  std::mutex mu;
  std::vector<std::string> events;
  void Add(const WatchEvent& ev) {
    std::lock_guard<std::mutex> l(mu);
    if (ev.type == WatchEvent::Type::kReplace)
      events.push_back(fmt::format("replace:{}", ev.objects.size()));
    else
      events.push_back("event:" + ev.object["metadata"].value("name", "?"));
  }
  std::vector<std::string> Get() {
    std::lock_guard<std::mutex> l(mu);
    return events;
  }
};

constexpr const char* kAddedB =
    R"({"type":"ADDED","object":{"metadata":{"name":"b","namespace":"d","resourceVersion":"11"}}})";

// Each garbled message, after a good event: the informer relists (its second list) after the
// back-off, counts an error, never delivers what came after the garbage in that stream, and
// keeps running.
TEST(GarbageWatch, EveryGarbledJsonEventMakesTheInformerRelist) {
  const std::vector<std::string> garbage = {
      R"({"type":"ADDED","object":{"metadata":{"na)",                      // truncated
      "\x01\x02\xff\xfe not json at all",                                  // binary
      R"(["ADDED"])",                                                      // not an object
      R"({"type":"ADDED"})",                                               // no object
      R"({"type":7,"object":{}})",                                         // type not a string
      R"({"type":"SHRUG","object":{"metadata":{"name":"x"}}})",            // unknown type
      R"({"type":"ERROR","object":{"code":"410"}})",                       // code not a number
      R"({"type":"ERROR","object":{"kind":"Status","code":500}})",         // a server error
      R"({"type":"ADDED","object":{"metadata":{"resourceVersion":12}}})",  // rv not a string
  };
  for (const std::string& bad : garbage) {
    SCOPED_TRACE(bad);
    GarbageServer server(std::string(kAddedB) + "\n" + bad + "\n" +
                             R"({"type":"ADDED","object":{"metadata":{"name":"after"}}})" + "\n",
                         "application/json");
    Seen seen;
    Informer informer(&server.client(), "pods", "/api/v1/pods",
                      [&](WatchEvent ev) { seen.Add(ev); });
    informer.Start();
    // The relist's answer handed on, not only asked for (the server counts the request before
    // the informer has read the answer: waiting on that alone raced under load).
    EXPECT_TRUE(WaitFor([&] { return server.lists() >= 2 && seen.Get().size() >= 3; }))
        << "no relist";
    informer.Stop();
    const auto events = seen.Get();
    ASSERT_GE(events.size(), 3u);
    EXPECT_EQ(events[0], "replace:1");
    EXPECT_EQ(events[1], "event:b");
    EXPECT_EQ(events[2], "replace:1");  // not "event:after": the stream was left
    EXPECT_GE(informer.stats().errors.load(), 1);
  }
}

// A watch ERROR event whose Status nests 300,000 arrays (a broken server or a proxy): it crashed
// serve (SIGSEGV: the dump of the Status for the log recursed once per level). Now it is an
// undecodable event like the others: an error counted, and a relist.
TEST(GarbageWatch, ADeeplyNestedEventMakesTheInformerRelist) {
  const std::string deep = std::string(300'000, '[') + std::string(300'000, ']');
  GarbageServer server(std::string(kAddedB) + "\n" +
                           R"({"type":"ERROR","object":{"kind":"Status","details":)" + deep +
                           "}}\n" + R"({"type":"ADDED","object":{"metadata":{"name":"after"}}})" +
                           "\n",
                       "application/json");
  Seen seen;
  Informer informer(&server.client(), "pods", "/api/v1/pods", [&](WatchEvent ev) { seen.Add(ev); });
  informer.Start();
  EXPECT_TRUE(WaitFor([&] { return server.lists() >= 2 && seen.Get().size() >= 3; })) << "no relist";
  informer.Stop();
  const auto events = seen.Get();
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events[1], "event:b");
  EXPECT_EQ(events[2], "replace:1");
  EXPECT_GE(informer.stats().errors.load(), 1);
}

// A line that never ends: the informer stops reading at the bound (64 MiB) instead of reading
// the server's 1 GiB, and relists.
TEST(GarbageWatch, AnEndlessLineIsCutAtTheBound) {
  httplib::Server server;
  std::atomic<int> lists{0}, watches{0};
  std::atomic<int64_t> sent{0};
  server.Get("/api/v1/pods", [&](const httplib::Request& req, httplib::Response& res) {
    if (!req.has_param("watch")) {
      ++lists;
      res.set_content(R"({"metadata":{"resourceVersion":"10"},"items":[]})", "application/json");
      return;
    }
    if (++watches > 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      res.set_content("", "application/json");
      return;
    }
    res.set_chunked_content_provider("application/json", [&](size_t, httplib::DataSink& sink) {
      const std::string chunk(1 << 20, 'x');
      for (int i = 0; i < 1024; ++i) {
        if (!sink.write(chunk.data(), chunk.size())) return false;
        sent += static_cast<int64_t>(chunk.size());
      }
      sink.done();
      return true;
    });
  });
  testing::Serving serving(server);
  Informer informer(&serving.client(), "pods", "/api/v1/pods", [](WatchEvent) {});
  informer.Start();
  EXPECT_TRUE(WaitFor([&] { return lists.load() >= 2; }, 60000)) << "no relist";
  informer.Stop();
  EXPECT_LT(sent.load(), int64_t{256} << 20) << "the client read on past the bound";
  EXPECT_GE(informer.stats().errors.load(), 1);
}

// Protobuf frames: a length beyond the bound, a frame that is not an event, and random bytes.
TEST(GarbageWatch, BadProtobufFramesMakeTheInformerRelist) {
  using proto::testing::Envelope;
  using proto::testing::Pb;
  using proto::testing::WatchFrame;
  const std::string good =
      WatchFrame("ADDED", Envelope("Pod", Pb().Msg(1, Pb().Bytes(1, "b").Bytes(3, "d"))));
  const std::vector<std::string> garbage = {
      std::string("\xff\xff\xff\xff", 4) + "rest",                              // 4 GiB frame
      std::string("\x00\x00\x00\x05", 4) + "hello",                             // not a watch event
      std::string("\x00\x00\x00\x08", 4) + "\x0a\x7f\x01\x02\x03\x04\x05\x06",  // bad length
  };
  for (const std::string& bad : garbage) {
    GarbageServer server(good + bad + good, "application/vnd.kubernetes.protobuf;stream=watch");
    Seen seen;
    Informer informer(
        &server.client(), "pods", "/api/v1/pods", [&](WatchEvent ev) { seen.Add(ev); },
        /*optional=*/false, /*protobuf=*/true);
    informer.Start();
    // The relist's answer handed on, not only asked for (the server counts the request before
    // the informer has read the answer: waiting on that alone raced under load).
    EXPECT_TRUE(WaitFor([&] { return server.lists() >= 2 && seen.Get().size() >= 3; }))
        << "no relist";
    informer.Stop();
    const auto events = seen.Get();
    ASSERT_GE(events.size(), 3u);
    EXPECT_EQ(events[1], "event:b");
    EXPECT_EQ(events[2], "replace:1");
    EXPECT_GE(informer.stats().errors.load(), 1);
  }
}

}  // namespace
}  // namespace tessera::k8s
