// ember_peer_bench: every workload of workloads.hpp through Ember and through LibTorch in ONE process, registered as
// "<workload>/ember" and "<workload>/torch", plus the machine's FMA peak ("fma_peak/avx2", "fma_peak/avx512").
// bench/compare.py --peers runs it with random interleaving of the repetitions, so the two sides alternate and a
// shared machine's load hits both alike, once per thread count, and judges the ratios.
//   ember_peer_bench [--threads=N] [Google Benchmark flags...]
// --threads sets Ember's pool (and OpenBLAS, oneDNN's OpenMP) and torch::set_num_threads to the same N (default 1).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/blas_route.hpp"
#include "backends/cpu/parallel.hpp"
#include "bench/peers/fma_peak.hpp"
#include "bench/peers/workloads.hpp"

namespace ember::peers {
void set_torch_threads(int n);  // torch_workloads.cpp
}

int main(int argc, char** argv) {
  int threads = 1;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && std::strncmp(argv[i], "--threads=", 10) == 0) {
      if (std::atoi(argv[i] + 10) > 0) threads = std::atoi(argv[i] + 10);
      continue;
    }
    args.push_back(argv[i]);
  }
  ember::cpu::set_num_threads(threads);
  ember::peers::set_torch_threads(threads);
  benchmark::AddCustomContext("threads", std::to_string(threads));
  // Which library runs Ember's f32 GEMMs on this machine (and which kernels OpenBLAS, LibTorch's BLAS too, picked).
  benchmark::AddCustomContext("sgemm", ember::cpu::blas::describe());

  using ember::peers::Workload;
  for (auto [side, list] : {std::pair{"ember", ember::peers::ember_workloads()},
                            std::pair{"torch", ember::peers::torch_workloads()}}) {
    for (const Workload& w : list)
      benchmark::RegisterBenchmark((w.name + "/" + side).c_str(), w.run)->Unit(benchmark::kMillisecond)->UseRealTime();
  }
  for (int lanes : {8, 16}) {
    if (!ember::peers::fma_width_supported(lanes)) continue;
    benchmark::RegisterBenchmark(lanes == 16 ? "fma_peak/avx512" : "fma_peak/avx2",
                                 [lanes](benchmark::State& s) { ember::peers::fma_peak(s, lanes); })
        ->Threads(threads)
        ->UseRealTime();
  }

  int n = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
