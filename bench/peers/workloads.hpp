#pragma once
// The workloads that bench/peers measures twice: once through Ember's typed engine (ember_workloads.cpp) and once
// through LibTorch's C++ API (torch_workloads.cpp). Both sides list the same names with the same shapes and data
// sizes; main.cpp registers every name as "<name>/ember" and "<name>/torch" so that Google Benchmark's random
// interleaving alternates the two inside one process, and compare.py --peers judges their ratio.
#include <benchmark/benchmark.h>

#include <functional>
#include <string>
#include <vector>

namespace ember::peers {

struct Workload {
  std::string name;
  std::function<void(benchmark::State&)> run;
};

// Shapes shared by both sides, so that a change on one side cannot silently measure something else.
struct ConvShape {
  const char* name;
  int64_t cin, cout, hw;
};
inline constexpr int64_t kConvBatch = 32;
inline constexpr ConvShape kConvShapes[] = {{"3x32@32", 3, 32, 32}, {"32x64@16", 32, 64, 16}, {"64x128@8", 64, 128, 8}};
inline constexpr int64_t kGemmSizes[] = {256, 512, 1024, 2048};
inline constexpr int64_t kElementwiseN = int64_t{1} << 24;  // 16M
inline constexpr int64_t kSumDimN = 4096;
// Pooling: 2x2 windows, stride 2, over [32, 64, 32, 32].
inline constexpr int64_t kPoolShape[] = {32, 64, 32, 32};
// The digits workloads: 1437 training samples of 64 features, 10 classes, batch 64.
inline constexpr int64_t kDigitsTrain = 1437, kDigitsBatch = 64, kInferBatch = 256;

// FLOPs of one digits MLP (64-256-256-10) training epoch: forward matmuls 2*(64*256 + 256*256 + 256*10) per sample,
// backward twice that (grad input and grad weight), times 1437 samples. Elementwise work, softmax and Adam are left
// out, so the GFLOP/s computed from it is a lower bound of what the machine does.
inline constexpr double kMlpEpochFlops = 3.0 * 2.0 * (64 * 256 + 256 * 256 + 256 * 10) * kDigitsTrain;

std::vector<Workload> ember_workloads();
std::vector<Workload> torch_workloads();

// Sets the benchmark's counters that compare.py reads (FLOP/s when flops > 0).
inline void set_flops(benchmark::State& state, double flops) {
  if (flops > 0) state.counters["FLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
}

inline double conv_flops(const ConvShape& s) {
  return 2.0 * kConvBatch * s.cout * s.hw * s.hw * s.cin * 9;
}

}  // namespace ember::peers
