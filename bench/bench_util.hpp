#pragma once
// Shared helpers for the benchmark files: the backends under test and seeded random inputs.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>

#include "backends/cpu/cpu_backend.hpp"
#include "engine/ember.hpp"

namespace ember::bench {

using F32 = Cpu<float>;
using AdF32 = Autodiff<Cpu<float>>;

// Uniform(-1, 1) values from a fixed seed, so every run measures the same data.
template <class B, std::size_t D>
Tensor<B, D> uniform(std::array<int64_t, D> shape, uint64_t seed = 1) {
  Rng rng(seed);
  return Tensor<B, D>::random(shape, Uniform{-1.0, 1.0}, rng);
}

// Keeps a result alive and opaque to the optimizer.
template <class B, std::size_t D, class K>
void keep(const Tensor<B, D, K>& t) {
  benchmark::DoNotOptimize(&t.primitive());
  benchmark::ClobberMemory();
}

}  // namespace ember::bench
