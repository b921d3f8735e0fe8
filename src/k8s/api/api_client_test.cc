// `tessera get`/`explain`'s client against hostile servers (issue 31): an answer that claims
// 4 GiB, one longer than the bound, one nested 300,000 deep, one sent a byte at a time for ever,
// and a token file without end. Each is an error naming the URL (or the file), never a bad_alloc,
// a crash or a hang.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "k8s/api/api_client.h"

namespace tessera::k8s {
namespace {

// A server on 127.0.0.1 that answers one connection with `answer`, `pace` apart a byte at a time
// when `pace` is set (for at most `lasting`), then closes. Not HTTP-aware: it says what a
// hostile server would say, whatever was asked.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::string answer, std::chrono::milliseconds pace = {},
                          std::chrono::seconds lasting = std::chrono::seconds(30))
      : answer_(std::move(answer)), pace_(pace), lasting_(lasting) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), len), 0);
    EXPECT_EQ(::listen(fd_, 4), 0);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ScriptedServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  void Serve() {
    const int c = ::accept(fd_, nullptr, nullptr);
    if (c < 0) return;
    char request[4096];
    (void)::recv(c, request, sizeof request, 0);
    const auto end = std::chrono::steady_clock::now() + lasting_;
    if (pace_.count() == 0) {
      (void)::send(c, answer_.data(), answer_.size(), MSG_NOSIGNAL);
    } else {
      // The answer, then white space, a byte every `pace`: never a whole answer.
      for (size_t i = 0; !stop_ && std::chrono::steady_clock::now() < end; ++i) {
        const char b = i < answer_.size() ? answer_[i] : ' ';
        if (::send(c, &b, 1, MSG_NOSIGNAL) != 1) break;
        std::this_thread::sleep_for(pace_);
      }
    }
    ::close(c);
  }

  const std::string answer_;
  const std::chrono::milliseconds pace_;
  const std::chrono::seconds lasting_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

std::string Http200(const std::string& body, const std::string& length = "") {
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
         (length.empty() ? std::to_string(body.size()) : length) + "\r\nConnection: close\r\n\r\n" +
         body;
}

TEST(ApiClientHostile, AContentLengthOf4GiBIsRefusedFromTheHeader) {
  ScriptedServer server(Http200("{}", "4294967296"));
  ApiClientOptions o;
  o.server = server.url();
  absl::StatusOr<nlohmann::json> r = ApiGet(o, "/api/v1/queues");
  ASSERT_TRUE(absl::IsOutOfRange(r.status())) << r.status();
  EXPECT_EQ(r.status().message(),
            server.url() + "/api/v1/queues: the answer is longer than 67108864 bytes, the limit "
                           "for an answer of serve's API");
}

TEST(ApiClientHostile, AnAnswerLongerThanTheBoundIsCutWhereItPasses) {
  // No Content-Length: read until the server closes, and stopped at the bound.
  const std::string body = "[" + std::string(100'000, ' ') + "]";
  ScriptedServer server("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + body);
  ApiClientOptions o;
  o.server = server.url();
  o.max_body_bytes = 50'000;
  absl::StatusOr<nlohmann::json> r = ApiGet(o, "/api/v1/queues");
  ASSERT_TRUE(absl::IsOutOfRange(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("longer than 50000 bytes"), std::string::npos);
}

TEST(ApiClientHostile, DeepNestingIsRefused) {
  const std::string body =
      R"({"workloads":)" + std::string(300'000, '[') + std::string(300'000, ']') + "}";
  ScriptedServer server(Http200(body));
  ApiClientOptions o;
  o.server = server.url();
  absl::StatusOr<nlohmann::json> r = ApiGet(o, "/api/v1/workloads");
  ASSERT_TRUE(absl::IsDataLoss(r.status())) << r.status();
  EXPECT_EQ(r.status().message(),
            server.url() + "/api/v1/workloads: JSON nested deeper than 512 levels");
}

// A byte every 50 ms: each read is well within the read timeout, so only a deadline on the
// whole request ends it (it ran for as long as the server went on: here 30 s, then an error
// that did not say why).
TEST(ApiClientHostile, AServerThatSendsAByteAtATimeMeetsTheDeadline) {
  ScriptedServer server("HTTP/1.1 200 OK\r\nX-Slow: ", std::chrono::milliseconds(50));
  ApiClientOptions o;
  o.server = server.url();
  o.timeout_s = 1;
  absl::StatusOr<nlohmann::json> r = ApiGet(o, "/api/v1/queues");
  ASSERT_TRUE(absl::IsDeadlineExceeded(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("no whole answer within 1s"), std::string::npos)
      << r.status();
}

TEST(ApiClientHostile, ATokenFileWithoutEndIsRefusedAtTheBound) {
  absl::StatusOr<std::string> t = ReadTokenFile("--token-file", "/dev/zero");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            "--token-file /dev/zero: larger than 65536 bytes, the limit for a token file");
}

}  // namespace
}  // namespace tessera::k8s
