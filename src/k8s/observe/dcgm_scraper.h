// DcgmScraper: polls NVIDIA dcgm-exporters (`tessera serve --dcgm-url`, repeatable) on a thread
// of its own and keeps the newest readings of each (dcgm.h), for the scheduling loop to join to
// workloads (utilization.h) when it writes its statuses.
//
// Nothing here can hold the loop up or bring serve down: a request has a connection and a read
// timeout, and the whole body must come within twice the timeout; a body larger than
// `max_body_bytes` is cut off and refused, an exporter that is down
// or serves garbage is a logged warning (once per change of its state, not per scrape) and
// tessera_dcgm_scrapes_total{result="error"}; its last good readings are used until they are
// older than `stale_after_s`, then dropped (a GPU without a reading has no utilization, which is
// not the same as 0).
//
// Thread-safety: Start/Stop from one thread; Readings() is thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "k8s/observe/dcgm.h"
#include "k8s/observe/metrics.h"

namespace tessera::k8s {

struct DcgmScraperOptions {
  std::vector<std::string> urls;  // http://host:port/path (default path /metrics)
  double interval_s = 15;         // between scrapes of one exporter (its own update period)
  double timeout_s = 5;  // connect, and each read, of one scrape; the whole body: twice this
  size_t max_body_bytes = 8 << 20;
  double stale_after_s = 0;  // 0: three intervals
  DcgmLimits limits;
};

// "http://host[:port][/path]" -> its parts; an error naming the URL for anything else (https
// among them: dcgm-exporter serves plain HTTP unless given a web config).
struct HttpUrl {
  std::string host;
  int port = 80;
  std::string path = "/metrics";
};
[[nodiscard]] absl::StatusOr<HttpUrl> ParseHttpUrl(const std::string& url);

class DcgmScraper {
 public:
  // REQUIRES: every URL parses (ParseHttpUrl); `metrics` outlives the scraper.
  DcgmScraper(DcgmScraperOptions options, Metrics* metrics);
  ~DcgmScraper();  // Stop()s
  DcgmScraper(const DcgmScraper&) = delete;
  DcgmScraper& operator=(const DcgmScraper&) = delete;

  void Start();
  // Returns within about timeout_s (a scrape in flight stops at its next chunk or read timeout).
  void Stop();

  // The readings of every exporter whose last good scrape is not stale.
  std::vector<GpuReading> Readings() const;
  // Scrapes each exporter once, now, on the calling thread (tests, and Start's first round).
  void ScrapeAll();

 private:
  struct Exporter {
    std::string url;
    HttpUrl parsed;
    std::vector<GpuReading> readings;               // GUARDED_BY(mu_)
    std::chrono::steady_clock::time_point ok_at{};  // GUARDED_BY(mu_); of the last good scrape
    bool has_ok = false;                            // GUARDED_BY(mu_)
    std::string last_error;  // scraper thread only: the state last logged ("" when good)
  };
  // One scrape of `e`: the readings, or what went wrong.
  absl::StatusOr<std::vector<GpuReading>> Fetch(const Exporter& e) const;
  void Loop();

  const DcgmScraperOptions options_;
  Metrics* const metrics_;
  std::vector<std::unique_ptr<Exporter>> exporters_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // GUARDED_BY(mu_)
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace tessera::k8s
