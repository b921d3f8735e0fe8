// dcgm-exporter's exposition (dcgm.h) and its scraper (dcgm_scraper.h): the recorded fixture
// (tests/k8s/testdata/dcgm-exporter-a100.txt) read GPU by GPU; garbage, a huge body and missing
// labels; the scraper against a local HTTP server that serves the fixture, garbage, a body too
// large, or nothing at all.
#include "k8s/observe/dcgm.h"

#include <httplib.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "k8s/observe/dcgm_scraper.h"

namespace tessera::k8s {
namespace {

std::string Fixture() {
  const char* dir = std::getenv("TESSERA_SOURCE_DIR");
  std::ifstream in(std::string(dir ? dir : TESSERA_REPO_DIR) +
                   "/tests/k8s/testdata/dcgm-exporter-a100.txt");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(DcgmExposition, RecordedExpositionReadGpuByGpu) {
  const std::string body = Fixture();
  ASSERT_FALSE(body.empty());
  auto got = ParseDcgmExposition(body);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 4u);
  const GpuReading& g0 = (*got)[0];
  EXPECT_EQ(g0.hostname, "gpu-node-1");
  EXPECT_EQ(g0.gpu, 0);
  EXPECT_EQ(g0.uuid, "GPU-5f2b8c1e-3d4a-4b7e-9c1d-2a6f8e0b1c3d");
  EXPECT_EQ(g0.model, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(g0.ns, "team-a");
  EXPECT_EQ(g0.pod, "train-0");
  EXPECT_EQ(g0.container, "trainer");
  EXPECT_DOUBLE_EQ(*g0.gpu_util, 0.03);
  EXPECT_DOUBLE_EQ(*g0.engine_active, 0.021);
  EXPECT_DOUBLE_EQ(*g0.utilization(), 0.021);  // the engine activity wins
  EXPECT_DOUBLE_EQ(*g0.fb_used_mib, 1523);
  EXPECT_DOUBLE_EQ(*g0.fb_free_mib, 79627);
  EXPECT_EQ(g0.xid, 0);
  // GPU 2: empty pod labels; GPU 3: none at all. Both read, neither mapped.
  EXPECT_EQ((*got)[2].pod, "");
  EXPECT_EQ((*got)[2].gpu, 2);
  EXPECT_DOUBLE_EQ(*(*got)[2].utilization(), 0.934);
  EXPECT_EQ((*got)[3].ns, "");
  EXPECT_DOUBLE_EQ(*(*got)[3].utilization(), 0);
}

TEST(DcgmExposition, TheLastXidOfEachGpu) {
  auto got = ParseDcgmExposition(
      "# TYPE DCGM_FI_DEV_XID_ERRORS gauge\n"
      "DCGM_FI_DEV_XID_ERRORS{gpu=\"0\",Hostname=\"n\"} 0\n"
      "DCGM_FI_DEV_XID_ERRORS{gpu=\"1\",Hostname=\"n\"} 79\n"
      "DCGM_FI_DEV_XID_ERRORS{gpu=\"2\",Hostname=\"n\"} 1e300\n"
      "DCGM_FI_DEV_XID_ERRORS{gpu=\"3\",Hostname=\"n\"} -4\n");
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 4u);
  EXPECT_EQ((*got)[0].xid, 0);
  EXPECT_EQ((*got)[1].xid, 79);
  EXPECT_FALSE((*got)[2].xid);  // no XID is that large
  EXPECT_FALSE((*got)[3].xid);
  EXPECT_FALSE((*got)[1].utilization());
}

TEST(DcgmExposition, GpuUtilAloneIsAPercentAndValuesAreClamped) {
  auto got = ParseDcgmExposition(
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",Hostname=\"n\"} 45\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",Hostname=\"n\"} 250 1700000000000\n"
      "DCGM_FI_DEV_GPU_UTIL{gpu=\"2\",Hostname=\"n\"} NaN\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"3\",Hostname=\"n\",} -0.5\n");
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 4u);
  EXPECT_DOUBLE_EQ(*(*got)[0].utilization(), 0.45);
  EXPECT_DOUBLE_EQ(*(*got)[1].utilization(), 1);
  EXPECT_FALSE((*got)[2].utilization().has_value());  // NaN: not measured, not 0
  EXPECT_DOUBLE_EQ(*(*got)[3].utilization(), 0);
}

TEST(DcgmExposition, MissingLabelsAreReadAsAbsent) {
  auto got =
      ParseDcgmExposition("DCGM_FI_DEV_GPU_UTIL 12\nDCGM_FI_DEV_FB_USED{UUID=\"GPU-x\"} 3\n");
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ((*got)[0].gpu, -1);
  EXPECT_EQ((*got)[0].hostname, "");
  EXPECT_EQ((*got)[1].uuid, "GPU-x");
  EXPECT_FALSE((*got)[1].utilization().has_value());
}

TEST(DcgmExposition, GarbageIsAnErrorNamingTheLine) {
  struct Case {
    const char* body;
    const char* error;
  };
  for (const Case& c : std::vector<Case>{
           {"<html><body>502 Bad Gateway</body></html>\n", "line 1: expected a metric name"},
           {"# ok\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} fast\n",
            "line 2: DCGM_FI_DEV_GPU_UTIL: expected a number"},
           {"DCGM_FI_DEV_GPU_UTIL{gpu=\"0} 1\n", "line 1: label gpu: unterminated value"},
           {"DCGM_FI_DEV_GPU_UTIL{gpu=0} 1\n", "line 1: label gpu: expected a quoted value"},
           {"DCGM_FI_DEV_GPU_UTIL{gpu=\"x\"} 1\n", "label gpu=\"x\" is not a device index"},
           {"DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 1 2 3\n", "unexpected text after the value"},
           {"\x01\x02\x03", "line 1"},
       }) {
    auto got = ParseDcgmExposition(c.body);
    ASSERT_FALSE(got.ok()) << c.body;
    EXPECT_NE(got.status().message().find(c.error), std::string::npos) << got.status();
  }
}

TEST(DcgmExposition, TooManyLinesOrGpusAreRefused) {
  std::string body;
  for (int i = 0; i < 100; ++i) body += "# comment\n";
  auto got = ParseDcgmExposition(body, {.max_lines = 50, .max_gpus = 10});
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("more than 50 lines"), std::string::npos);
  body.clear();
  for (int i = 0; i < 20; ++i)
    body += "DCGM_FI_DEV_GPU_UTIL{gpu=\"" + std::to_string(i) + "\"} 1\n";
  got = ParseDcgmExposition(body, {.max_lines = 1000, .max_gpus = 10});
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("more than 10 GPUs"), std::string::npos);
}

TEST(DcgmUrl, ParsedOrRefusedWithTheUrl) {
  auto u = ParseHttpUrl("http://10.0.0.7:9400/metrics");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "10.0.0.7");
  EXPECT_EQ(u->port, 9400);
  EXPECT_EQ(u->path, "/metrics");
  u = ParseHttpUrl("http://dcgm-exporter.gpu-operator");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->port, 80);
  EXPECT_EQ(u->path, "/metrics");
  for (const char* bad : {"https://x:9400", "x:9400", "http://:9400", "http://x:99999/metrics"}) {
    auto r = ParseHttpUrl(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find(bad), std::string::npos) << r.status();
  }
}

// A local exporter whose answer the test sets.
class FakeExporter {
 public:
  FakeExporter() {
    server_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      std::lock_guard<std::mutex> l(mu_);
      res.status = status_;
      res.set_content(body_, "text/plain; version=0.0.4");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~FakeExporter() {
    server_.stop();
    thread_.join();
  }
  void Serve(std::string body, int status = 200) {
    std::lock_guard<std::mutex> l(mu_);
    body_ = std::move(body);
    status_ = status;
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/metrics"; }

 private:
  httplib::Server server_;
  std::mutex mu_;
  std::string body_;
  int status_ = 200;
  int port_ = 0;
  std::thread thread_;
};

TEST(DcgmScraper, KeepsGoodReadingsThroughGarbageATooLargeBodyAndAnExporterThatIsDown) {
  FakeExporter exporter;
  exporter.Serve(Fixture());
  Metrics metrics;
  DcgmScraperOptions o;
  o.urls = {exporter.url(), "http://127.0.0.1:1/metrics"};  // the second: nobody listens
  o.timeout_s = 2;
  o.max_body_bytes = 64 << 10;
  o.stale_after_s = 3600;
  DcgmScraper scraper(o, &metrics);
  scraper.ScrapeAll();
  EXPECT_EQ(scraper.Readings().size(), 4u);
  EXPECT_EQ(metrics.Value("tessera_dcgm_scrapes_total", {"success"}), 1);
  EXPECT_EQ(metrics.Value("tessera_dcgm_scrapes_total", {"error"}), 1);

  exporter.Serve("<html>oops</html>");
  scraper.ScrapeAll();
  EXPECT_EQ(scraper.Readings().size(), 4u);   // the last good ones, until stale
  exporter.Serve(std::string(1 << 20, 'x'));  // 1 MiB, over the 64 KiB limit
  scraper.ScrapeAll();
  exporter.Serve("", 503);
  scraper.ScrapeAll();
  EXPECT_EQ(metrics.Value("tessera_dcgm_scrapes_total", {"success"}), 1);
  EXPECT_EQ(metrics.Value("tessera_dcgm_scrapes_total", {"error"}), 7);
  EXPECT_EQ(scraper.Readings().size(), 4u);
  exporter.Serve(Fixture());
  scraper.ScrapeAll();
  EXPECT_EQ(metrics.Value("tessera_dcgm_scrapes_total", {"success"}), 2);
}

// An exporter that drips its body a byte at a time, every `every` ms, for as long as it lives.
class DrippingExporter {
 public:
  explicit DrippingExporter(int every_ms) {
    server_.Get("/metrics", [this, every_ms](const httplib::Request&, httplib::Response& res) {
      asked_ = true;
      res.set_chunked_content_provider(
          "text/plain", [this, every_ms](size_t, httplib::DataSink& sink) {
            std::this_thread::sleep_for(std::chrono::milliseconds(every_ms));
            return !done_ && sink.write("#", 1);
          });
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~DrippingExporter() {
    done_ = true;
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/metrics"; }
  bool asked() const { return asked_; }

 private:
  httplib::Server server_;
  std::atomic<bool> asked_{false}, done_{false};
  int port_ = 0;
  std::thread thread_;
};

// Each chunk comes within the read timeout: the scrape is cut off when the whole has taken
// twice the timeout, and counted as an error.
TEST(DcgmScraper, ABodyThatDripsIsCutOff) {
  DrippingExporter exporter(50);
  Metrics metrics;
  DcgmScraperOptions o;
  o.urls = {exporter.url()};
  o.timeout_s = 0.3;  // each read comes within 50 ms; the whole never ends
  DcgmScraper scraper(o, &metrics);
  scraper.ScrapeAll();
  EXPECT_EQ(metrics.Value("tessera_dcgm_scrapes_total", {"error"}), 1);
  EXPECT_TRUE(scraper.Readings().empty());
}

// A scrape in flight when the scraper stops is cut off at its next chunk and counted as
// nothing: not the exporter's error (before, "the body took longer than ..." and an error,
// which a test reading the counters after Stop saw now and then).
TEST(DcgmScraper, AScrapeCutOffByStopIsNoError) {
  DrippingExporter exporter(20);
  Metrics metrics;
  DcgmScraperOptions o;
  o.urls = {exporter.url()};
  o.timeout_s = 30;  // the whole body may take a minute: only Stop ends this scrape
  DcgmScraper scraper(o, &metrics);
  scraper.Start();
  while (!exporter.asked()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(60));  // a few chunks in
  scraper.Stop();
  EXPECT_EQ(metrics.Value("tessera_dcgm_scrapes_total", {"error"}), 0);
  EXPECT_EQ(metrics.Value("tessera_dcgm_scrapes_total", {"success"}), 0);
}

TEST(DcgmScraper, StaleReadingsAreDropped) {
  FakeExporter exporter;
  exporter.Serve(Fixture());
  DcgmScraperOptions o;
  o.urls = {exporter.url()};
  o.stale_after_s = 0.001;
  DcgmScraper scraper(o, nullptr);
  scraper.ScrapeAll();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(scraper.Readings().empty());
}

}  // namespace
}  // namespace tessera::k8s
