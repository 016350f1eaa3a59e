// Bernoulli masks (dropout's) on the CPU, computed in place from their counter-based words (engine/tensor/philox.hpp,
// random.hpp's bernoulli_threshold and fill_bernoulli, AVX2 registers where the CPU has them): the host's values,
// without the host's buffer and its copy into a tensor, split over the pool in whole groups of blocks (a mask's value
// at a position does not depend on which thread computes it).
#include <algorithm>

#include "backends/cpu/kernels.hpp"
#include "backends/cpu/parallel.hpp"
#include "engine/tensor/random.hpp"

namespace ember::cpu {

template <class T>
CpuTensor<T> bernoulli(const Shape& shape, uint64_t key, uint64_t threshold, T hit) {
  constexpr int64_t kChunk = 64;  // elements per unit of the split: whole groups of Philox blocks
  CpuTensor<T> y(shape);
  const int64_t n = y.numel();
  T* out = y.data();
  parallel_for((n + kChunk - 1) / kChunk, std::max<int64_t>(1, kParallelThreshold / (4 * kChunk)),
               [&](int64_t b, int64_t e) {
                 const int64_t lo = b * kChunk, hi = std::min(n, e * kChunk);
                 fill_bernoulli<T>(out + lo, static_cast<uint64_t>(lo), static_cast<std::size_t>(hi - lo), key,
                                   threshold, hit, T(0));
               });
  return y;
}

template CpuTensor<float> bernoulli<float>(const Shape&, uint64_t, uint64_t, float);
template CpuTensor<double> bernoulli<double>(const Shape&, uint64_t, uint64_t, double);

}  // namespace ember::cpu
