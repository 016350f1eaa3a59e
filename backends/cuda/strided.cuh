#pragma once
// Strided reads over a contiguous output: the output's linear index is decomposed into coordinates and mapped to
// an element offset in each of N inputs through per-input strides (0 for broadcast dims, negative for flips).
// Dims that are contiguous for every input are merged on the host first, so same-layout operands become rank 1
// and most copies need one or two divisions per element.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cuda/cuda_api.hpp"
#include "engine/backend/strided_view.hpp"
#include "engine/tensor/shape.hpp"

namespace ember::cuda {

constexpr int kMaxDims = 10;

template <int N>
struct StridedMap {
  int rank = 0;
  int64_t dims[kMaxDims];
  int64_t strides[N][kMaxDims];

  // Element offsets of output element i in every input.
  __device__ __forceinline__ void offsets(int64_t i, int64_t (&off)[N]) const {
#pragma unroll
    for (int t = 0; t < N; ++t) off[t] = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t n = dims[d];
      const int64_t c = i % n;
      i /= n;
#pragma unroll
      for (int t = 0; t < N; ++t) off[t] += c * strides[t][d];
    }
  }
};

// Builds the map for output `shape` and the inputs' strides (one per dim of shape), merged by
// merge_contiguous_dims.
template <int N>
StridedMap<N> make_strided_map(const Shape& shape, const std::vector<int64_t> (&strides)[N]) {
  StridedMap<N> m;
  std::array<std::vector<int64_t>, N> per_input;
  for (int t = 0; t < N; ++t) per_input[static_cast<std::size_t>(t)] = strides[t];
  const MergedDims<N> merged = merge_contiguous_dims<N>(shape.dims, per_input);
  const std::vector<int64_t>& dims = merged.dims;
  const auto& st = merged.strides;
  if (dims.size() > static_cast<std::size_t>(kMaxDims))
    throw CudaError("cuda: strided access over " + std::to_string(dims.size()) + " non-mergeable dims (shape " +
                    shape.to_string() + ") exceeds the backend's limit of " + std::to_string(kMaxDims));
  m.rank = static_cast<int>(dims.size());
  for (int d = 0; d < m.rank; ++d) {
    m.dims[d] = dims[static_cast<std::size_t>(d)];
    for (int t = 0; t < N; ++t) m.strides[t][d] = st[static_cast<std::size_t>(t)][static_cast<std::size_t>(d)];
  }
  return m;
}

}  // namespace ember::cuda
