// Evaluations per second of DRA CEL selectors (dra/cel) on one device of NVIDIA's DRA driver:
// the DeviceClass selector of gpu.nvidia.com, a request's selector with a capacity quantity and
// a version, and a list-attribute macro. Figures in docs/dra-cel.md ("Speed").
//
// Usage: dra_cel_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include "dra/cel/selector.h"

namespace {

using tessera::dra::Capacity;
using tessera::dra::Device;
using tessera::dra::Scalar;
using tessera::dra::Version;
using tessera::dra::cel::Selector;

Device NvidiaGpu() {
  Device d;
  d.driver = "gpu.nvidia.com";
  d.attributes["gpu.nvidia.com/type"] = std::string("gpu");
  d.attributes["gpu.nvidia.com/productName"] = std::string("NVIDIA H100 80GB HBM3");
  d.attributes["gpu.nvidia.com/architecture"] = std::string("Hopper");
  d.attributes["gpu.nvidia.com/brand"] = std::string("Nvidia");
  d.attributes["gpu.nvidia.com/index"] = int64_t{3};
  d.attributes["gpu.nvidia.com/minor"] = int64_t{3};
  d.attributes["gpu.nvidia.com/uuid"] = std::string("GPU-4cf8db2d-06c0-7d70-1a51-e59b25b2c16c");
  d.attributes["gpu.nvidia.com/driverVersion"] = Version{"560.35.3"};
  d.attributes["gpu.nvidia.com/cudaComputeCapability"] = Version{"9.0.0"};
  d.attributes["gpu.nvidia.com/cudaDriverVersion"] = Version{"12.6.0"};
  d.attributes["gpu.nvidia.com/cliques"] = std::vector<Scalar>{std::string("a.1"), std::string("b.2")};
  d.attributes["resource.kubernetes.io/pcieRoot"] = std::string("pci0000:40");
  d.capacity["gpu.nvidia.com/memory"] = Capacity{81559LL * 1024 * 1024 * 1000, "81559Mi"};
  return d;
}

void Run(benchmark::State& state, const char* expr) {
  auto s = Selector::Compile(expr);
  if (!s.ok()) {
    state.SkipWithError(std::string(s.status().message()).c_str());
    return;
  }
  Device d = NvidiaGpu();
  for (auto _ : state) benchmark::DoNotOptimize(s->Evaluate(d));
  state.SetItemsProcessed(state.iterations());
}

void BM_ClassSelector(benchmark::State& state) {
  Run(state, "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'");
}
void BM_CapacityAndVersion(benchmark::State& state) {
  Run(state,
      "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0 && "
      "device.attributes['gpu.nvidia.com'].cudaComputeCapability.isGreaterThan(semver('8.0.0'))");
}
void BM_ListMacro(benchmark::State& state) {
  Run(state, "device.attributes['gpu.nvidia.com'].cliques.exists(c, c.startsWith('b.'))");
}
BENCHMARK(BM_ClassSelector);
BENCHMARK(BM_CapacityAndVersion);
BENCHMARK(BM_ListMacro);

}  // namespace

BENCHMARK_MAIN();
