#pragma once
// Strided views of a contiguous row-major tensor: the layout ops (permute, expand, slice, flip) read x at
// offset + sum(idx_d * strides_d) over an output shape, and every backend's strided kernels first merge the dims
// that step contiguously in all operands so common cases become one long run. Shared by the CPU, CUDA and Vulkan
// layout and broadcast kernels.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/backend/ops.hpp"
#include "engine/tensor/shape.hpp"

namespace ember {

// Element strides may be 0 (a broadcast dim) or negative (a flipped dim); offset is where index 0 lies.
struct StridedView {
  Shape shape;
  std::vector<int64_t> strides;
  int64_t offset = 0;
};

// x with its dims reordered: output dim i is x's dim axes[i].
inline StridedView permuted_view(const Shape& x, const std::vector<std::size_t>& axes) {
  StridedView v;
  const auto st = x.strides();
  for (std::size_t a : axes) {
    v.shape.dims.push_back(x[a]);
    v.strides.push_back(st[a]);
  }
  return v;
}

// Whether permuting by `axes` leaves the memory order unchanged (the dims of size > 1 keep their relative order),
// so the result can share x's storage under the new shape.
inline bool permute_keeps_memory_order(const Shape& x, const std::vector<std::size_t>& axes) {
  bool seen = false;
  std::size_t last = 0;
  for (std::size_t a : axes) {
    if (x[a] == 1) continue;
    if (seen && a < last) return false;
    last = a;
    seen = true;
  }
  return true;
}

// x read as the broadcast shape `to` (x's dims aligned at the trailing dim, size-1 or missing dims repeated).
inline StridedView expanded_view(const Shape& x, const Shape& to) { return {to, broadcast_strides(x, to), 0}; }

// The region ranges[d] = [start, end) of each dim of x; dims past ranges.size() are taken whole.
inline StridedView sliced_view(const Shape& x, const std::vector<Range>& ranges) {
  StridedView v{Shape{}, x.strides(), 0};
  for (std::size_t d = 0; d < x.rank(); ++d) {
    if (d < ranges.size()) {
      v.shape.dims.push_back(ranges[d].end - ranges[d].start);
      v.offset += ranges[d].start * v.strides[d];
    } else {
      v.shape.dims.push_back(x[d]);
    }
  }
  return v;
}

// x with `dims` reversed: start at the last element along each and walk backwards. Dims of size 0 or 1 are left
// alone, so for a non-empty x the view moves nothing exactly when its offset is 0.
inline StridedView flipped_view(const Shape& x, const std::vector<std::size_t>& dims) {
  StridedView v{x, x.strides(), 0};
  for (std::size_t d : dims) {
    if (x[d] <= 1) continue;
    v.offset += (x[d] - 1) * v.strides[d];
    v.strides[d] = -v.strides[d];
  }
  return v;
}

// An index space over N operands after merge_contiguous_dims: at least one dim.
template <std::size_t N>
struct MergedDims {
  std::vector<int64_t> dims;
  std::array<std::vector<int64_t>, N> strides;
};

// Drops unit dims and merges each dim into the one before it where every operand steps across the pair as across
// one dim (outer stride == inner stride * inner size). Walking the result in row-major order visits the same
// offsets as walking `dims`; an index space left with no dim (a single element) becomes one dim of size 1.
template <std::size_t N>
MergedDims<N> merge_contiguous_dims(const std::vector<int64_t>& dims, const std::array<std::vector<int64_t>, N>& strides) {
  MergedDims<N> m;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] == 1) continue;
    bool merge = !m.dims.empty();
    for (std::size_t i = 0; i < N && merge; ++i) merge = m.strides[i].back() == strides[i][d] * dims[d];
    if (merge) {
      m.dims.back() *= dims[d];
      for (std::size_t i = 0; i < N; ++i) m.strides[i].back() = strides[i][d];
    } else {
      m.dims.push_back(dims[d]);
      for (std::size_t i = 0; i < N; ++i) m.strides[i].push_back(strides[i][d]);
    }
  }
  if (m.dims.empty()) {
    m.dims.push_back(1);
    for (std::size_t i = 0; i < N; ++i) m.strides[i].push_back(0);
  }
  return m;
}

// The element offset of row-major linear index i over `dims` under `strides`.
inline int64_t strided_offset(int64_t i, const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  int64_t off = 0;
  for (std::size_t d = dims.size(); d-- > 0;) {
    off += (i % dims[d]) * strides[d];
    i /= dims[d];
  }
  return off;
}

}  // namespace ember
