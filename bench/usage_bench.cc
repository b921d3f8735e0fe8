// What serve's utilization and accounting cost it (issue 16): reading one dcgm-exporter
// exposition (the recorded fixture, a node of four A100s), and the accounting store's work per
// status period with 1,000 running workloads: their first rows, a period without a checkpoint,
// a checkpoint (every open row rewritten), 100 runs ending. One run each, wall-clock; figures
// and the command in bench/README.md ("Utilization and accounting in serve").
//
// Usage: usage_bench tests/k8s/testdata/dcgm-exporter-a100.txt [DIR]
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "accounting/live_recorder.h"
#include "k8s/observe/dcgm.h"

namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tessera;
  if (argc < 2) {
    std::fprintf(stderr, "usage: usage_bench EXPOSITION [DIR]\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string body = ss.str();
  constexpr int kParses = 100;
  size_t gpus = 0;
  auto t0 = Clock::now();
  for (int r = 0; r < kParses; ++r) {
    auto got = k8s::ParseDcgmExposition(body);
    if (!got.ok()) {
      std::fprintf(stderr, "%s\n", std::string(got.status().message()).c_str());
      return 1;
    }
    gpus += got->size();
  }
  auto t1 = Clock::now();
  std::printf("parse one exposition (%zu bytes, %zu GPUs): %.1f us\n", body.size(), gpus / kParses,
              1000 * Ms(t0, t1) / kParses);

  const std::filesystem::path dir = argc > 2 ? argv[2] : std::filesystem::temp_directory_path();
  const std::string path = (dir / "usage_bench.db").string();
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  auto store = accounting::AccountingStore::Open(path);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", std::string(store.status().message()).c_str());
    return 1;
  }
  accounting::LiveRecorder rec(store->get(), /*checkpoint_s=*/10);
  if (!rec.Resume().ok()) return 1;
  std::vector<accounting::LiveRun> runs(1000);
  for (size_t i = 0; i < runs.size(); ++i) {
    runs[i].record.ns = "team";
    runs[i].record.name = "job-" + std::to_string(i);
    runs[i].record.run_key = "Job:team/" + runs[i].record.name;
    runs[i].record.gpus = 8;
    runs[i].record.labels = R"({"team":"alpha"})";
    runs[i].start = 1e9;
    runs[i].dollars_per_hour = 16;
    runs[i].utilization = 0.5;
  }
  const double t = 1e9;
  auto a = Clock::now();
  bool ok = rec.Observe(runs, t + 1).ok();  // 1,000 new rows
  auto b = Clock::now();
  ok = ok && rec.Observe(runs, t + 2).ok();  // no checkpoint due
  auto c = Clock::now();
  ok = ok && rec.Observe(runs, t + 12).ok();  // a checkpoint: 1,000 rows rewritten
  auto d = Clock::now();
  runs.resize(900);
  ok = ok && rec.Observe(runs, t + 13).ok();  // 100 runs end
  auto e = Clock::now();
  if (!ok) return 1;
  std::printf(
      "1000 running workloads: first rows %.1f ms, a period without checkpoint %.2f ms, a "
      "checkpoint %.1f ms, 100 ending %.1f ms\n",
      Ms(a, b), Ms(b, c), Ms(c, d), Ms(d, e));
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
  return 0;
}
