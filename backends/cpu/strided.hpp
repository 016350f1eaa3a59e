#pragma once
// N-d iteration over a broadcast output shape with per-input strides. Dims that are contiguous for every input
// are merged first (merge_contiguous_dims), so same-shape inputs become one flat loop and the callback sees long
// inner runs.
#include <array>
#include <cstdint>
#include <vector>

#include "backends/cpu/parallel.hpp"
#include "engine/backend/strided_view.hpp"
#include "engine/tensor/shape.hpp"

namespace ember::cpu {

// Calls inner(offsets, out_offset, len, inner_strides) for runs of the last (merged) dim. offsets[i] is the
// element offset of input i; the output is contiguous. Parallel over runs (or within a single long run).
template <std::size_t N, class F>
void for_each_strided(const Shape& out, const std::array<std::vector<int64_t>, N>& strides, F&& inner) {
  const int64_t numel = out.num_elements();
  if (numel == 0) return;
  const MergedDims<N> merged = merge_contiguous_dims<N>(out.dims, strides);
  const std::vector<int64_t>& d2 = merged.dims;
  const std::array<std::vector<int64_t>, N>& s2 = merged.strides;
  const std::size_t r = d2.size();
  const int64_t len = d2[r - 1];
  std::array<int64_t, N> inner_st;
  for (std::size_t i = 0; i < N; ++i) inner_st[i] = s2[i][r - 1];
  if (r == 1) {
    const int64_t grain = kParallelThreshold;
    parallel_for(len, grain, [&](int64_t b, int64_t e) {
      std::array<int64_t, N> off;
      for (std::size_t i = 0; i < N; ++i) off[i] = b * inner_st[i];
      inner(off, b, e - b, inner_st);
    });
    return;
  }
  const int64_t rows = numel / len;
  const int64_t grain = std::max<int64_t>(1, kParallelThreshold / len);
  parallel_for(rows, grain, [&](int64_t b, int64_t e) {
    // Decompose row index b into counters over dims [0, r-1).
    std::vector<int64_t> idx(r - 1, 0);
    int64_t rem = b;
    for (std::size_t k = r - 1; k-- > 0;) {
      idx[k] = rem % d2[k];
      rem /= d2[k];
    }
    std::array<int64_t, N> off{};
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t k = 0; k + 1 < r; ++k) off[i] += idx[k] * s2[i][k];
    for (int64_t row = b; row < e; ++row) {
      inner(off, row * len, len, inner_st);
      for (std::size_t k = r - 1; k-- > 0;) {  // increment the counters
        ++idx[k];
        for (std::size_t i = 0; i < N; ++i) off[i] += s2[i][k];
        if (idx[k] < d2[k]) break;
        for (std::size_t i = 0; i < N; ++i) off[i] -= s2[i][k] * d2[k];
        idx[k] = 0;
      }
    }
  });
}

}  // namespace ember::cpu
