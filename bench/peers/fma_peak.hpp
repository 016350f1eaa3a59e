#pragma once
// FMA-peak microbenchmark (fma_peak.cpp): lanes 8 = AVX2 + FMA (256-bit), 16 = AVX-512F.
#include <benchmark/benchmark.h>

namespace ember::peers {

bool fma_width_supported(int lanes);
void fma_peak(benchmark::State& state, int lanes);

}  // namespace ember::peers
