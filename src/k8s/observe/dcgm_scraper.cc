#include "k8s/observe/dcgm_scraper.h"

#include <httplib.h>

#include <cmath>
#include <cstdlib>

#include "fmt/format.h"
#include "spdlog/spdlog.h"

namespace tessera::k8s {

absl::StatusOr<HttpUrl> ParseHttpUrl(const std::string& url) {
  constexpr std::string_view kScheme = "http://";
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(fmt::format("--dcgm-url \"{}\": {}", url, why));
  };
  if (url.rfind("https://", 0) == 0)
    return bad("https is not supported (dcgm-exporter serves plain HTTP by default)");
  if (url.rfind(kScheme, 0) != 0) return bad("expected http://HOST[:PORT][/PATH]");
  std::string rest = url.substr(kScheme.size());
  HttpUrl out;
  const size_t slash = rest.find('/');
  if (slash != std::string::npos) {
    out.path = rest.substr(slash);
    rest = rest.substr(0, slash);
  }
  const size_t colon = rest.rfind(':');
  if (colon != std::string::npos && rest.find(']', colon) == std::string::npos) {
    const std::string port = rest.substr(colon + 1);
    char* end = nullptr;
    const long p = std::strtol(port.c_str(), &end, 10);
    if (port.empty() || *end != '\0' || p < 1 || p > 65535) return bad("the port is not 1-65535");
    out.port = static_cast<int>(p);
    rest = rest.substr(0, colon);
  }
  if (rest.size() > 2 && rest.front() == '[' && rest.back() == ']')
    rest = rest.substr(1, rest.size() - 2);
  if (rest.empty()) return bad("no host");
  out.host = rest;
  return out;
}

DcgmScraper::DcgmScraper(DcgmScraperOptions options, Metrics* metrics)
    : options_(std::move(options)), metrics_(metrics) {
  for (const std::string& url : options_.urls) {
    auto e = std::make_unique<Exporter>();
    e->url = url;
    if (auto parsed = ParseHttpUrl(url); parsed.ok()) e->parsed = *parsed;
    exporters_.push_back(std::move(e));
  }
}

DcgmScraper::~DcgmScraper() { Stop(); }

void DcgmScraper::Start() {
  if (thread_.joinable() || exporters_.empty()) return;
  thread_ = std::thread([this] { Loop(); });
}

void DcgmScraper::Stop() {
  stopping_ = true;  // a scrape in flight stops at its next chunk
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void DcgmScraper::Loop() {
  const auto interval =
      std::chrono::milliseconds(static_cast<int64_t>(std::max(0.05, options_.interval_s) * 1000));
  while (true) {
    ScrapeAll();
    std::unique_lock<std::mutex> l(mu_);
    if (cv_.wait_for(l, interval, [this] { return stop_; })) return;
  }
}

absl::StatusOr<std::vector<GpuReading>> DcgmScraper::Fetch(const Exporter& e) const {
  if (e.parsed.host.empty()) return absl::InvalidArgumentError("not an http:// URL");
  httplib::Client client(e.parsed.host, e.parsed.port);
  const double t = std::max(0.05, options_.timeout_s);
  const auto sec = static_cast<time_t>(t);
  const auto usec = static_cast<time_t>((t - static_cast<double>(sec)) * 1e6);
  client.set_connection_timeout(sec, usec);
  client.set_read_timeout(sec, usec);
  client.set_write_timeout(sec, usec);
  std::string body;
  int status = 0;
  bool too_big = false, too_slow = false, stopped = false;
  // A read timeout bounds each read, not the whole: an exporter that drips a byte at a time
  // would hold the scraper (and serve's shutdown) for as long as it likes.
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(2 * t * 1000));
  auto result = client.Get(
      e.parsed.path, httplib::Headers{{"Accept", "text/plain"}},
      [&](const httplib::Response& r) {
        status = r.status;
        return status == 200;
      },
      [&](const char* data, size_t n) {
        if (body.size() + n > options_.max_body_bytes) {
          too_big = true;
          return false;
        }
        if (stopping_) {
          stopped = true;
          return false;
        }
        if (std::chrono::steady_clock::now() > deadline) {
          too_slow = true;
          return false;
        }
        body.append(data, n);
        return true;
      });
  // Cut off by Stop: no answer to count, neither a success nor the exporter's error.
  if (stopped) return absl::CancelledError("stopped");
  if (too_big)
    return absl::ResourceExhaustedError(
        fmt::format("the body is larger than {} bytes; refused", options_.max_body_bytes));
  if (too_slow)
    return absl::DeadlineExceededError(
        fmt::format("the body took longer than {:g} s; cut off", 2 * t));
  if (status != 0 && status != 200) return absl::UnavailableError(fmt::format("HTTP {}", status));
  if (!result)
    return absl::UnavailableError(
        fmt::format("no answer ({})", httplib::to_string(result.error())));
  return ParseDcgmExposition(body, options_.limits);
}

void DcgmScraper::ScrapeAll() {
  for (auto& e : exporters_) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stop_) return;
    }
    absl::StatusOr<std::vector<GpuReading>> got = Fetch(*e);
    if (absl::IsCancelled(got.status())) return;  // Stop cut it off
    if (metrics_) metrics_->Add("tessera_dcgm_scrapes_total", {got.ok() ? "success" : "error"});
    if (!got.ok()) {
      const std::string error(got.status().message());
      if (error != e->last_error)
        spdlog::warn("tessera: dcgm-exporter {}: {}; its last readings are kept until stale",
                     e->url, error);
      e->last_error = error;
      continue;
    }
    if (!e->last_error.empty())
      spdlog::info("tessera: dcgm-exporter {}: scraped again ({} GPUs)", e->url, got->size());
    e->last_error.clear();
    std::lock_guard<std::mutex> l(mu_);
    e->readings = std::move(*got);
    e->ok_at = std::chrono::steady_clock::now();
    e->has_ok = true;
  }
}

std::vector<GpuReading> DcgmScraper::Readings() const {
  const double stale =
      options_.stale_after_s > 0 ? options_.stale_after_s : 3 * options_.interval_s;
  const auto now = std::chrono::steady_clock::now();
  std::vector<GpuReading> out;
  std::lock_guard<std::mutex> l(mu_);
  for (const auto& e : exporters_) {
    if (!e->has_ok || std::chrono::duration<double>(now - e->ok_at).count() > stale) continue;
    out.insert(out.end(), e->readings.begin(), e->readings.end());
  }
  return out;
}

}  // namespace tessera::k8s
