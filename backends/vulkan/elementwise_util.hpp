#pragma once
// Broadcasting dispatch shared by binary arithmetic, comparisons and Bool logic (shaders/binary.comp variants).
#include "backends/vulkan/strided.hpp"

namespace ember::vk {

struct BroadcastPush {
  uint32_t n, rank, op, pad;
  uint32_t shape[kMaxDims];
  uint32_t astride[kMaxDims];
  uint32_t bstride[kMaxDims];
};

// out = a (op) b with NumPy broadcasting; Out is the output element (T, or uint32_t for comparisons).
template <class T, class Out>
VulkanTensor<Out> broadcast_op(const Shader& shader, const VulkanTensor<T>& a, const VulkanTensor<T>& b, uint32_t op,
                               const char* name) {
  const Shape shape = a.shape == b.shape ? a.shape : broadcast_shapes(name, a.shape, b.shape);
  auto y = empty<Out>(a.ctx, shape);
  const int64_t n = shape.num_elements();
  if (n == 0) return y;
  const auto s = merge_dims<2>(shape.dims, {broadcast_strides(a.shape, shape), broadcast_strides(b.shape, shape)},
                               name);
  BroadcastPush p{};
  p.n = static_cast<uint32_t>(n);
  p.rank = static_cast<uint32_t>(s.dims.size());
  p.op = op;
  for (std::size_t d = 0; d < s.dims.size(); ++d) {
    p.shape[d] = static_cast<uint32_t>(s.dims[d]);
    p.astride[d] = static_cast<uint32_t>(s.strides[0][d]);
    p.bstride[d] = static_cast<uint32_t>(s.strides[1][d]);
  }
  launch(*a.ctx, shader, {in(a), in(b), out(y)}, p, static_cast<uint64_t>(n), {op, 0, 0});
  return y;
}

}  // namespace ember::vk
