#pragma once
// Strided index spaces for the copy and broadcast kernels. A kernel walks `shape` in row-major order and each
// operand is addressed as offset + sum(idx_d * stride_d). Before dispatch, unit dims are dropped and neighbouring
// dims that are contiguous in every operand are merged, so any ordinary tensor fits the shaders' 8 dims.
#include <array>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "backends/vulkan/launch.hpp"
#include "engine/backend/strided_view.hpp"

namespace ember::vk {

// merge_contiguous_dims (engine/backend/strided_view.hpp), refused when more dims remain than the shaders take.
template <std::size_t N>
MergedDims<N> merge_dims(const std::vector<int64_t>& shape, const std::array<std::vector<int64_t>, N>& strides,
                         const char* op) {
  MergedDims<N> m = merge_contiguous_dims<N>(shape, strides);
  if (m.dims.size() > kMaxDims)
    throw ShapeError(fmt::format("vulkan {}: more than {} dims remain after merging contiguous dims ({})", op,
                                 kMaxDims, m.dims.size()));
  return m;
}

// Raw strided copy between two allocations: dst[dst_off + sum idx*ostride] = src[src_off + sum idx*istride],
// elements of element_bytes<T> bytes (layout.cpp).
template <class T>
void copy_strided(const VulkanTensor<T>& src, int64_t src_off, const std::vector<int64_t>& istride,
                  const VulkanTensor<T>& dst, int64_t dst_off, const std::vector<int64_t>& ostride,
                  const std::vector<int64_t>& shape);

}  // namespace ember::vk
