// engine_bench: Dynamic Resource Allocation against the device-plugin path (docs/dra.md).
// BM_DraBacklog: a backlog of the seeded workload mix on nodes of 8 GPUs, one cycle. Without
// DRA (arg 2 = 0) pods ask for nvidia.com/gpu; with DRA (1) each pod also claims its GPUs from a
// ResourceClaimTemplate of 1, 2, 4 or 8 devices of a class mapped to nvidia.com/gpu (Kueue's
// deviceClassMappings), and every node publishes 8 devices in a ResourceSlice: quota and node
// counts are those of the device-plugin path, and the allocator picks the devices.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "engine_bench_util.h"

namespace tessera::bench {
namespace {

void AddDra(Model& m) {
  m.dra.classes["gpu.example.com"] = dra::DeviceClass{"gpu.example.com", {}, "bench"};
  for (const Node& n : m.nodes) {
    dra::NodeDevices& nd = m.dra.nodes[n.name];
    for (int g = 0; g < kGpusPerNode; ++g) {
      dra::NodeDevice d;
      d.device.driver = "gpu.example.com";
      d.device.pool = n.name;
      d.device.name = fmt::format("gpu-{}", g);
      d.device.attributes["gpu.example.com/index"] = int64_t{g};
      nd.devices.push_back(std::move(d));
    }
  }
  for (int k : {1, 2, 4, 8}) {
    dra::Claim t;
    t.ns = "default";
    t.name = fmt::format("gpus-{}", k);
    dra::DeviceRequest r;
    r.name = "gpus";
    dra::ExactRequest e;
    e.name = "gpus";
    e.device_class = "gpu.example.com";
    e.count = k;
    r.alternatives.push_back(e);
    t.spec.requests.push_back(r);
    m.dra.templates.push_back(t);
  }
}

int32_t TemplateOf(int64_t gpus) { return gpus <= 1 ? 0 : gpus <= 2 ? 1 : gpus <= 4 ? 2 : 3; }

void BM_DraBacklog(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int workloads = static_cast<int>(state.range(1));
  const bool with_dra = state.range(2) != 0;
  int64_t admitted = 0, claims = 0;
  double cycle_s = 0, cpu_s = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Model m = MakeClusterModel(nodes, /*preemption=*/false);
    if (with_dra) AddDra(m);
    auto s = CreateOrDie(std::move(m));
    WorkloadMix mix(kSeed);
    for (int i = 0; i < workloads; ++i) {
      Workload w = mix.Next();
      if (with_dra)
        for (PodSet& ps : w.pod_sets) {
          dra::PodClaim pc;
          pc.name = "gpus";
          pc.template_name = "gpus";
          pc.template_ = TemplateOf(ps.requests[kGpu]);
          ps.claims.push_back(pc);
        }
      SubmitNew(*s, std::move(w), 1e-3 * i);
    }
    state.ResumeTiming();
    const auto start = Clock::now();
    const double cpu0 = ThreadCpuSeconds();
    std::vector<Decision> decisions = s->RunCycle(workloads * 1e-3);
    cpu_s += ThreadCpuSeconds() - cpu0;
    cycle_s += SecondsSince(start);
    for (const Decision& d : decisions) {
      if (d.type != Decision::Type::kAdmit) continue;
      ++admitted;
      claims += static_cast<int64_t>(d.pods.size());
    }
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["admitted"] = static_cast<double>(admitted) / n;
  state.counters["cycle_s"] = cycle_s / n;
  state.counters["cpu_s"] = cpu_s / n;
  state.counters["admits_per_s"] = admitted / cycle_s;
  if (with_dra && claims > 0) state.counters["us_per_claim"] = cycle_s * 1e6 / claims;
}

}  // namespace

BENCHMARK(BM_DraBacklog)
    ->ArgNames({"nodes", "workloads", "dra"})
    ->Args({1000, 100000, 0})
    ->Args({1000, 100000, 1})
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

}  // namespace tessera::bench
