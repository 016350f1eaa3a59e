#pragma once
// Strided index spaces for the copy and broadcast kernels. A kernel walks `shape` in row-major order and each
// operand is addressed as offset + sum(idx_d * stride_d). Before dispatch, unit dims are dropped and neighbouring
// dims that are contiguous in every operand are merged, so any ordinary tensor fits the shaders' 8 dims.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/vulkan/launch.hpp"

namespace ember::vk {

template <std::size_t N>
struct StridedSpace {
  std::vector<int64_t> shape;
  std::array<std::vector<int64_t>, N> strides;
};

template <std::size_t N>
StridedSpace<N> merge_dims(const std::vector<int64_t>& shape, const std::array<std::vector<int64_t>, N>& strides,
                           const char* op) {
  StridedSpace<N> s;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    const bool mergeable = !s.shape.empty() && [&] {
      for (std::size_t k = 0; k < N; ++k)
        if (s.strides[k].back() != strides[k][d] * shape[d]) return false;
      return true;
    }();
    if (mergeable) {
      s.shape.back() *= shape[d];
      for (std::size_t k = 0; k < N; ++k) s.strides[k].back() = strides[k][d];
    } else {
      s.shape.push_back(shape[d]);
      for (std::size_t k = 0; k < N; ++k) s.strides[k].push_back(strides[k][d]);
    }
  }
  if (s.shape.size() > kMaxDims)
    throw ShapeError(std::string("vulkan ") + op + ": more than 8 dims remain after merging contiguous dims (" +
                     std::to_string(s.shape.size()) + ")");
  return s;
}

// Raw strided copy between two allocations: dst[dst_off + sum idx*ostride] = src[src_off + sum idx*istride],
// elements of sizeof(T) bytes (layout.cpp).
template <class T>
void copy_strided(const VulkanTensor<T>& src, int64_t src_off, const std::vector<int64_t>& istride,
                  const VulkanTensor<T>& dst, int64_t dst_off, const std::vector<int64_t>& ostride,
                  const std::vector<int64_t>& shape);

}  // namespace ember::vk
