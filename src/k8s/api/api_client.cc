#include "k8s/api/api_client.h"

#include <httplib.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <regex>
#include <thread>

#include "absl/strings/match.h"
#include "fmt/format.h"
#include "model/bounded_json.h"
#include "model/bounded_read.h"

namespace tessera::k8s {
namespace {

// The first `n` characters of `s`, one line, for messages.
std::string Excerpt(const std::string& s, size_t n = 80) {
  std::string out = s.substr(0, n);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return s.size() > n ? out + "..." : out;
}

std::string ServerMessage(const std::string& body) {
  nlohmann::json j = ParseJsonOrDiscarded(body);
  if (j.is_object() && j.contains("error") && j["error"].is_string())
    return j["error"].get<std::string>();
  return Excerpt(body);
}

// Cuts `client`'s request at `deadline` from a thread of its own: httplib's timeouts are per
// read, so a server that sends a byte a second would hold a request for ever. stop() shuts the
// socket down under the request, which then fails at once.
class Watchdog {
 public:
  Watchdog(httplib::Client& client, std::chrono::steady_clock::time_point deadline)
      : thread_([this, &client, deadline] {
          std::unique_lock<std::mutex> l(mu_);
          if (!cv_.wait_until(l, deadline, [this] { return done_; })) {
            expired_ = true;
            client.stop();
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> l(mu_);
      done_ = true;
    }
    cv_.notify_one();
    thread_.join();
  }
  bool expired() {
    std::lock_guard<std::mutex> l(mu_);
    return expired_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;     // GUARDED_BY(mu_)
  bool expired_ = false;  // GUARDED_BY(mu_)
  std::thread thread_;    // last: started once the rest is constructed
};

// cpp-httplib says only "Connection" when a connection fails: one connect of our own, bounded by
// the timeout, says why ("Connection refused", "No route to host", a name that does not resolve).
std::string WhyNoConnection(const std::string& host, const std::string& port, double timeout_s) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (const int rc = getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0)
    return fmt::format("cannot resolve {}: {}", host, gai_strerror(rc));
  std::string why = "no address";
  for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    int err = connect(fd, a->ai_addr, a->ai_addrlen) == 0 ? 0 : errno;
    if (err == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      if (poll(&p, 1, static_cast<int>(timeout_s * 1000)) <= 0) {
        err = ETIMEDOUT;
      } else {
        socklen_t len = sizeof err;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
      }
    }
    close(fd);
    if (err == 0) {
      why = "it accepts connections now; try again";
      break;
    }
    why = std::strerror(err);
  }
  freeaddrinfo(res);
  return why;
}

// The whole cause of a failed request, in words (cpp-httplib names its errors in one word).
std::string Cause(httplib::Error e, int err, double timeout_s, const std::string& host,
                  const std::string& port) {
  const std::string sys = err != 0 ? fmt::format(" ({})", std::strerror(err)) : "";
  switch (e) {
    case httplib::Error::Connection:
      return "the connection failed (" + WhyNoConnection(host, port, timeout_s) +
             "): is tessera serve running there, and is this its metrics port (--server, env "
             "TESSERA_SERVER)?";
    case httplib::Error::ConnectionTimeout:
      return fmt::format("no connection within {} s", timeout_s);
    case httplib::Error::Read:
      return fmt::format(
          "the answer could not be read{}: the server closed the connection or sent nothing "
          "for {} s",
          sys, timeout_s);
    case httplib::Error::Write:
      return "the request could not be sent" + sys;
    case httplib::Error::Canceled:
      return "the request was cancelled" + sys;
    default:
      return fmt::format("the request failed: cpp-httplib error {} ({}){}",
                         httplib::to_string(e), static_cast<int>(e), sys);
  }
}

}  // namespace

absl::StatusOr<nlohmann::json> ApiGet(const ApiClientOptions& o, const std::string& path) {
  static const std::regex kUrl(R"(^http://([A-Za-z0-9.\-]+|\[[0-9A-Fa-f:]+\])(:([0-9]{1,5}))?/?$)");
  std::smatch m;
  if (!std::regex_match(o.server, m, kUrl))
    return absl::InvalidArgumentError(
        fmt::format("--server {}: expected http://HOST[:PORT] (serve's metrics port, e.g. "
                    "http://127.0.0.1:10259)",
                    o.server));
  const std::string base =
      o.server.back() == '/' ? o.server.substr(0, o.server.size() - 1) : o.server;
  const std::string url = base + path;
  std::string host = m[1].str();
  if (host.front() == '[') host = host.substr(1, host.size() - 2);
  const std::string port = m[3].matched ? m[3].str() : "80";
  httplib::Client client(base);
  const auto secs = static_cast<time_t>(o.timeout_s);
  const auto usecs = static_cast<time_t>((o.timeout_s - static_cast<double>(secs)) * 1e6);
  client.set_connection_timeout(secs, usecs);
  client.set_read_timeout(secs, usecs);
  httplib::Headers headers;
  if (!o.token.empty()) headers.emplace("Authorization", "Bearer " + o.token);
  // The answer is read into `body` up to the bound; a Content-Length beyond it is refused before
  // anything of the body is read (it was trusted: 4 GiB ended in bad_alloc).
  std::string body;
  bool too_long = false;
  const auto max_body = static_cast<uint64_t>(std::max<int64_t>(o.max_body_bytes, 0));
  auto on_headers = [&](const httplib::Response& r) {
    const std::string length = r.get_header_value("Content-Length");
    uint64_t n = 0;
    const auto [end, ec] = std::from_chars(length.data(), length.data() + length.size(), n);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && n > max_body)) {
      too_long = true;
      return false;
    }
    return true;
  };
  auto on_body = [&](const char* data, size_t n) {
    if (body.size() + n > max_body) {
      too_long = true;
      return false;
    }
    body.append(data, n);
    return true;
  };
  bool expired = false;
  int err = 0;  // errno of a failed request, for its cause
  httplib::Result res = [&] {
    Watchdog watchdog(client, std::chrono::steady_clock::now() +
                                  std::chrono::microseconds(static_cast<int64_t>(o.timeout_s * 1e6)));
    errno = 0;
    httplib::Result r = client.Get(path, headers, on_headers, on_body);
    err = errno;
    expired = watchdog.expired();
    return r;
  }();
  if (too_long)
    return absl::OutOfRangeError(fmt::format(
        "{}: the answer is longer than {} bytes, the limit for an answer of serve's API", url,
        max_body));
  if (expired)
    return absl::DeadlineExceededError(
        fmt::format("{}: no whole answer within {}s; the server is too slow, or is "
                    "not tessera serve",
                    url, o.timeout_s));
  if (!res)
    return absl::UnavailableError(fmt::format("cannot reach tessera serve at {}: {}", url,
                                              Cause(res.error(), err, o.timeout_s, host, port)));
  switch (res->status) {
    case 200:
      break;
    case 401:
      return absl::UnauthenticatedError(
          fmt::format("{}: 401 Unauthorized: {} (give serve's --api-token-file with --token-file)",
                      url, ServerMessage(body)));
    case 404:
      return absl::NotFoundError(fmt::format("{}: {}", url, ServerMessage(body)));
    case 503:
      return absl::UnavailableError(fmt::format("{}: 503: {}", url, ServerMessage(body)));
    default:
      return absl::UnknownError(
          fmt::format("{}: HTTP {}: {}", url, res->status, ServerMessage(body)));
  }
  // Bounded nesting: a 300,000-deep answer would crash `-o json`'s dump.
  absl::StatusOr<nlohmann::json> j = ParseJsonBounded(body, url);
  if (!j.ok() && absl::StrContains(j.status().message(), "nested deeper"))
    return absl::DataLossError(j.status().message());
  if (!j.ok() || !j->is_object())
    return absl::DataLossError(
        fmt::format("{}: the answer is not a JSON object (is this tessera "
                    "serve's metrics port?): {}",
                    url, Excerpt(body)));
  return *std::move(j);
}

absl::StatusOr<std::string> ReadTokenFile(const std::string& flag, const std::string& file) {
  absl::StatusOr<std::string> text = ReadFileBounded(file, kMaxTokenFileBytes, "a token file");
  if (!text.ok()) {
    if (absl::IsNotFound(text.status()))
      return absl::InvalidArgumentError(fmt::format("{} {}: cannot read it", flag, file));
    return absl::InvalidArgumentError(
        fmt::format("{} {}", flag, std::string(text.status().message())));
  }
  std::string token = std::move(*text);
  const char* space = " \t\r\n";
  token.erase(0, token.find_first_not_of(space));
  token.erase(token.find_last_not_of(space) + 1);
  if (token.empty() || token.size() > 4096 || token.find_first_of(space) != std::string::npos)
    return absl::InvalidArgumentError(fmt::format(
        "{} {}: expected one token (1 to 4096 characters without white space)", flag, file));
  return token;
}

}  // namespace tessera::k8s
