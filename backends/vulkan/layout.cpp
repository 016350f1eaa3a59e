// Layout ops: all of them are one strided copy (shaders/copy_strided.comp) with different strides and offsets.
// reshape shares storage; whole-tensor copies use vkCmdCopyBuffer.
#include "backends/vulkan/strided.hpp"

#include <cstring>

namespace ember::vk {
namespace {

EMBER_SHADER_WORDS(kCopyW32)
#include "copy_w32.spv.inc"
;
EMBER_SHADER_DEF(kCopyW32)
EMBER_SHADER_WORDS(kCopyW64)
#include "copy_w64.spv.inc"
;
EMBER_SHADER_DEF(kCopyW64)

struct CopyPush {
  uint32_t n, rank;
  int32_t in_off, out_off;
  uint32_t shape[kMaxDims];
  int32_t istride[kMaxDims];
  int32_t ostride[kMaxDims];
};

template <class T>
VulkanTensor<T> copy_of(const VulkanTensor<T>& x) {
  auto y = empty<T>(x.ctx, x.shape);
  std::lock_guard lock(x.ctx->mutex());
  x.ctx->stream().copy(x.alloc, 0, y.alloc, 0, x.bytes());
  return y;
}

}  // namespace

template <class T>
void copy_strided(const VulkanTensor<T>& src, int64_t src_off, const std::vector<int64_t>& istride,
                  const VulkanTensor<T>& dst, int64_t dst_off, const std::vector<int64_t>& ostride,
                  const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  if (n == 0) return;
  check_elements(n, "copy");
  const auto s = merge_dims<2>(shape, {istride, ostride}, "copy");
  CopyPush p{};
  p.n = static_cast<uint32_t>(n);
  p.rank = static_cast<uint32_t>(s.dims.size());
  p.in_off = static_cast<int32_t>(src_off);
  p.out_off = static_cast<int32_t>(dst_off);
  for (std::size_t d = 0; d < s.dims.size(); ++d) {
    p.shape[d] = static_cast<uint32_t>(s.dims[d]);
    p.istride[d] = static_cast<int32_t>(s.strides[0][d]);
    p.ostride[d] = static_cast<int32_t>(s.strides[1][d]);
  }
  const Shader& shader = element_bytes<T>(*dst.ctx) == 8 ? kCopyW64 : kCopyW32;
  // dst may already hold data (slice_assign, cat): it is read-modify-written, so mark it written.
  launch(*dst.ctx, shader, {in(src), out(dst)}, p, static_cast<uint64_t>(n));
}

template <class T>
VulkanTensor<T> reshape(const VulkanTensor<T>& x, const Shape& shape) {
  return {x.ctx, x.alloc, shape};
}

// A strided view of x, materialized contiguous.
template <class T>
VulkanTensor<T> copy_view(const VulkanTensor<T>& x, const StridedView& v) {
  auto y = empty<T>(x.ctx, v.shape);
  copy_strided(x, v.offset, v.strides, y, 0, v.shape.strides(), v.shape.dims);
  return y;
}

template <class T>
VulkanTensor<T> permute(const VulkanTensor<T>& x, const std::vector<std::size_t>& axes) {
  const StridedView v = permuted_view(x.shape, axes);
  if (permute_keeps_memory_order(x.shape, axes)) return {x.ctx, x.alloc, v.shape};
  return copy_view(x, v);
}

template <class T>
VulkanTensor<T> expand(const VulkanTensor<T>& x, const Shape& shape) {
  if (shape.num_elements() == x.numel()) return {x.ctx, x.alloc, shape};  // only unit/leading dims added
  return copy_view(x, expanded_view(x.shape, shape));
}

template <class T>
VulkanTensor<T> slice(const VulkanTensor<T>& x, const std::vector<Range>& ranges) {
  const StridedView v = sliced_view(x.shape, ranges);
  if (v.shape == x.shape) return x;
  return copy_view(x, v);
}

template <class T>
VulkanTensor<T> slice_assign(const VulkanTensor<T>& x, const std::vector<Range>& ranges, const VulkanTensor<T>& v) {
  auto y = copy_of(x);
  const StridedView region = sliced_view(x.shape, ranges);
  copy_strided(v, 0, v.shape.strides(), y, region.offset, region.strides, v.shape.dims);
  return y;
}

template <class T>
VulkanTensor<T> cat(const std::vector<VulkanTensor<T>>& xs, std::size_t dim) {
  Shape shape = xs.front().shape;
  shape.dims[dim] = 0;
  for (const auto& x : xs) shape.dims[dim] += x.shape.dims[dim];
  auto y = empty<T>(xs.front().ctx, shape);
  const auto ost = shape.strides();
  int64_t at = 0;
  for (const auto& x : xs) {
    copy_strided(x, 0, x.shape.strides(), y, at * ost[dim], ost, x.shape.dims);
    at += x.shape.dims[dim];
  }
  return y;
}

template <class T>
VulkanTensor<T> flip(const VulkanTensor<T>& x, const std::vector<std::size_t>& dims) {
  const StridedView v = flipped_view(x.shape, dims);
  if (v.offset == 0 || x.numel() == 0) return x;  // only dims of size <= 1 flipped: nothing moves
  return copy_view(x, v);
}

#define EMBER_INSTANTIATE(T)                                                                                     \
  template void copy_strided<T>(const VulkanTensor<T>&, int64_t, const std::vector<int64_t>&,                    \
                                const VulkanTensor<T>&, int64_t, const std::vector<int64_t>&,                    \
                                const std::vector<int64_t>&);                                                    \
  template VulkanTensor<T> reshape<T>(const VulkanTensor<T>&, const Shape&);                                     \
  template VulkanTensor<T> permute<T>(const VulkanTensor<T>&, const std::vector<std::size_t>&);                  \
  template VulkanTensor<T> expand<T>(const VulkanTensor<T>&, const Shape&);                                      \
  template VulkanTensor<T> slice<T>(const VulkanTensor<T>&, const std::vector<Range>&);                          \
  template VulkanTensor<T> slice_assign<T>(const VulkanTensor<T>&, const std::vector<Range>&, const VulkanTensor<T>&); \
  template VulkanTensor<T> cat<T>(const std::vector<VulkanTensor<T>>&, std::size_t);                             \
  template VulkanTensor<T> flip<T>(const VulkanTensor<T>&, const std::vector<std::size_t>&);
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(int64_t)
EMBER_INSTANTIATE(uint32_t)
#undef EMBER_INSTANTIATE

}  // namespace ember::vk
