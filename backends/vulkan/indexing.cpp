// Indexing ops: gather, scatter_add, index_select and index_select_add (select_assign), matching
// backends/cpu/layout.cpp. Index values come from user data, so like the CPU they are range-checked before any work
// and a bad one raises IndexError naming the op and the first bad value; in Ember's eager mode that check needs one
// read-back of a device-side flag (shaders/check_indices.comp). Where the stream must not block (host-record mode,
// or no flush policy of Ember's, or a plan's capture: checks_deferred) the flag is left in host-visible memory for
// ember_vulkan_poll_errors instead, and the op runs on indices clamped into range, so a bad index never makes a
// shader address outside its buffer (the op's result is then unspecified; the poll reports the error). The accumulating ops give each output line to one invocation
// (shaders/scatter_add.comp, index_select_add.comp): deterministic, no atomics, the CPU's summation order. For
// Bool, "add" is OR, as on the CPU.
#include <string>

#include "backends/vulkan/check_sink.hpp"
#include "backends/vulkan/launch.hpp"

namespace ember::vk {
namespace {

EMBER_SHADER_WORDS(kGatherW32)
#include "gather_w32.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kGatherW32)
#include "gather_w32_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kGatherW32)
EMBER_SHADER_WORDS(kGatherW64)
#include "gather_w64.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kGatherW64)
#include "gather_w64_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kGatherW64)
EMBER_SHADER_WORDS(kIndexSelectW32)
#include "index_select_w32.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kIndexSelectW32)
#include "index_select_w32_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kIndexSelectW32)
EMBER_SHADER_WORDS(kIndexSelectW64)
#include "index_select_w64.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kIndexSelectW64)
#include "index_select_w64_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kIndexSelectW64)
EMBER_SHADER_WORDS(kScatterAddF32)
#include "scatter_add_f32.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kScatterAddF32)
#include "scatter_add_f32_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kScatterAddF32)
EMBER_SHADER_WORDS(kScatterAddI64)
#include "scatter_add_i64.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kScatterAddI64)
#include "scatter_add_i64_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kScatterAddI64)
EMBER_SHADER_WORDS(kScatterAddU32)
#include "scatter_add_u32.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kScatterAddU32)
#include "scatter_add_u32_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kScatterAddU32)
EMBER_SHADER_WORDS(kIndexSelectAddF32)
#include "index_select_add_f32.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kIndexSelectAddF32)
#include "index_select_add_f32_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kIndexSelectAddF32)
EMBER_SHADER_WORDS(kIndexSelectAddI64)
#include "index_select_add_i64.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kIndexSelectAddI64)
#include "index_select_add_i64_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kIndexSelectAddI64)
EMBER_SHADER_WORDS(kIndexSelectAddU32)
#include "index_select_add_u32.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kIndexSelectAddU32)
#include "index_select_add_u32_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kIndexSelectAddU32)
EMBER_SHADER_WORDS(kCheckIndicesFind)
#include "check_indices_find.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kCheckIndicesFind)
#include "check_indices_find_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kCheckIndicesFind)
EMBER_SHADER_WORDS(kCheckIndicesReport)
#include "check_indices_report.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kCheckIndicesReport)
#include "check_indices_report_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kCheckIndicesReport)

template <class T>
const Shader& scatter_add_shader() {
  if constexpr (std::is_same_v<T, float>) return kScatterAddF32;
  else if constexpr (std::is_same_v<T, int64_t>) return kScatterAddI64;
  else return kScatterAddU32;
}
template <class T>
const Shader& index_select_add_shader() {
  if constexpr (std::is_same_v<T, float>) return kIndexSelectAddF32;
  else if constexpr (std::is_same_v<T, int64_t>) return kIndexSelectAddI64;
  else return kIndexSelectAddU32;
}

template <class T>
VulkanTensor<T> copy_of(const VulkanTensor<T>& x) {
  auto y = empty<T>(x.ctx, x.shape);
  if (x.numel() == 0) return y;
  std::lock_guard lock(x.ctx->mutex());
  x.ctx->stream().copy(x.alloc, 0, y.alloc, 0, x.bytes());
  return y;
}

// The indices an op may use: `indices` itself once every value is known to be in [0, size) (eager mode: throws
// IndexError, the CPU's message, otherwise; one host round trip), or, where checks are deferred, a clamped copy
// while the verdict goes to ember_vulkan_poll_errors. The shaders leave n - (first bad position) and the first bad
// value in a two-element int64 flag.
Index checked_indices(const char* op, const Index& indices, std::size_t dim, int64_t size) {
  struct Push {
    uint32_t n, pad;
    int64_t size;
  } p{static_cast<uint32_t>(indices.numel()), 0, size};
  Context& ctx = *indices.ctx;
  std::unique_lock lock(ctx.mutex());
  if (checks_deferred(ctx.stream())) {
    // No index addresses an empty dim: known without the device.
    if (size == 0)
      throw IndexError(std::string(op) + ": index out of range for dim " + std::to_string(dim) + " of size 0");
    const VulkanTensor<int64_t> flag{indices.ctx, ctx.stream().new_check_flag(), Shape{2}};
    launch(ctx, kCheckIndicesFind, {in(indices), out(flag)}, p, indices.numel());
    launch(ctx, kCheckIndicesReport, {in(indices), out(flag)}, p, 1);
    ctx.stream().defer_check({flag.alloc, CheckKind::IndexRange, op, dim, size});
    lock.unlock();
    return scalar(scalar(indices, ScalarOp::ClampMin, 0.0), ScalarOp::ClampMax, static_cast<double>(size - 1));
  }
  lock.unlock();
  auto flag = full<int64_t>(indices.ctx, Shape{2}, 0.0);
  launch(ctx, kCheckIndicesFind, {in(indices), out(flag)}, p, indices.numel());
  launch(ctx, kCheckIndicesReport, {in(indices), out(flag)}, p, 1);
  const TensorData verdict = into_data(flag, DType::I64);
  if (verdict.get<int64_t>(0) != 0) {
    throw IndexError(std::string(op) + ": index " + std::to_string(verdict.get<int64_t>(1)) +
                     " out of range for dim " + std::to_string(dim) + " of size " + std::to_string(size));
  }
  return indices;
}

// The index space of gather / scatter_add: the indices' shape (row-major), each position addressing x through x's
// strides with the `dim` coordinate replaced by the index value. Unit dims other than dim are dropped and
// neighbours that are also contiguous in x are merged, so the shaders' 8 dims cover ordinary tensors.
struct AlongDim {
  std::vector<uint32_t> shape, xstride;
  uint32_t dim = 0;
};
AlongDim along_dim(const Shape& x, const Shape& idx, std::size_t dim, const char* op) {
  const auto st = x.strides();
  AlongDim s;
  bool last_is_dim = false;
  for (std::size_t d = 0; d < idx.rank(); ++d) {
    if (d != dim && idx.dims[d] == 1) continue;
    const bool merge = d != dim && !s.shape.empty() && !last_is_dim &&
                       int64_t{s.xstride.back()} == st[d] * idx.dims[d];
    if (merge) {
      s.shape.back() *= static_cast<uint32_t>(idx.dims[d]);
      s.xstride.back() = static_cast<uint32_t>(st[d]);
    } else {
      if (d == dim) s.dim = static_cast<uint32_t>(s.shape.size());
      s.shape.push_back(static_cast<uint32_t>(idx.dims[d]));
      s.xstride.push_back(static_cast<uint32_t>(st[d]));
    }
    last_is_dim = d == dim;
  }
  if (s.shape.size() > kMaxDims)
    throw ShapeError(std::string("vulkan ") + op + ": more than 8 dims remain after merging (" +
                     std::to_string(s.shape.size()) + ")");
  return s;
}

struct AlongDimPush {
  uint32_t n, rank, dim, inner;
  uint32_t shape[kMaxDims];
  uint32_t xstride[kMaxDims];
};
AlongDimPush along_dim_push(const AlongDim& s, uint32_t n) {
  AlongDimPush p{};
  p.n = n;
  p.rank = static_cast<uint32_t>(s.shape.size());
  p.dim = s.dim;
  p.inner = 1;
  for (std::size_t d = 0; d < s.shape.size(); ++d) {
    p.shape[d] = s.shape[d];
    p.xstride[d] = s.xstride[d];
    if (d > s.dim) p.inner *= s.shape[d];
  }
  return p;
}

// x viewed as [outer, size, inner] around dim (index_select and index_select_add).
struct RowsPush {
  uint32_t n, m, size, inner;
};
RowsPush rows_push(const Shape& x, std::size_t dim, int64_t n, int64_t m) {
  int64_t inner = 1;
  for (std::size_t d = dim + 1; d < x.rank(); ++d) inner *= x.dims[d];
  return {static_cast<uint32_t>(n), static_cast<uint32_t>(m), static_cast<uint32_t>(x.dims[dim]),
          static_cast<uint32_t>(inner)};
}

}  // namespace

template <class T>
VulkanTensor<T> gather(std::size_t dim, const VulkanTensor<T>& x, const Index& indices) {
  auto y = empty<T>(x.ctx, indices.shape);
  if (y.numel() == 0) return y;
  const Index idx = checked_indices("gather", indices, dim, x.shape[dim]);
  const auto p = along_dim_push(along_dim(x.shape, indices.shape, dim, "gather"), static_cast<uint32_t>(y.numel()));
  const Shader& shader = vk::element_bytes<T>(*x.ctx) == 8 ? kGatherW64 : kGatherW32;
  launch(*x.ctx, shader, {in(x), in(idx), out(y)}, p, y.numel());
  return y;
}

template <class T>
VulkanTensor<T> scatter_add(std::size_t dim, const VulkanTensor<T>& x, const Index& indices,
                            const VulkanTensor<T>& values) {
  auto y = copy_of(x);
  if (indices.numel() == 0) return y;
  const Index idx = checked_indices("scatter_add", indices, dim, x.shape[dim]);
  auto p = along_dim_push(along_dim(x.shape, indices.shape, dim, "scatter_add"), 0);
  p.n = static_cast<uint32_t>(indices.numel() / indices.shape[dim]);  // lines: outer * inner
  launch(*x.ctx, scatter_add_shader<T>(), {in(idx), in(values), out(y)}, p, p.n);
  return y;
}

template <class T>
VulkanTensor<T> index_select(const VulkanTensor<T>& x, std::size_t dim, const Index& indices) {
  Shape shape = x.shape;
  shape.dims[dim] = indices.numel();
  auto y = empty<T>(x.ctx, shape);
  if (y.numel() == 0) return y;
  const Index idx = checked_indices("index_select", indices, dim, x.shape[dim]);
  const auto p = rows_push(x.shape, dim, y.numel(), indices.numel());
  const Shader& shader = vk::element_bytes<T>(*x.ctx) == 8 ? kIndexSelectW64 : kIndexSelectW32;
  launch(*x.ctx, shader, {in(x), in(idx), out(y)}, p, y.numel());
  return y;
}

template <class T>
VulkanTensor<T> index_select_add(const VulkanTensor<T>& x, std::size_t dim, const Index& indices,
                                 const VulkanTensor<T>& values) {
  auto y = copy_of(x);
  if (values.numel() == 0) return y;
  // "select_assign": the user-facing name (Tensor::select_assign).
  const Index idx = checked_indices("select_assign", indices, dim, x.shape[dim]);
  const int64_t lines = values.numel() / indices.numel();  // outer * inner
  const auto p = rows_push(x.shape, dim, lines, indices.numel());
  launch(*x.ctx, index_select_add_shader<T>(), {in(idx), in(values), out(y)}, p, lines);
  return y;
}

#define EMBER_INSTANTIATE(T)                                                                                    \
  template VulkanTensor<T> gather<T>(std::size_t, const VulkanTensor<T>&, const Index&);                        \
  template VulkanTensor<T> scatter_add<T>(std::size_t, const VulkanTensor<T>&, const Index&,                    \
                                          const VulkanTensor<T>&);                                              \
  template VulkanTensor<T> index_select<T>(const VulkanTensor<T>&, std::size_t, const Index&);                  \
  template VulkanTensor<T> index_select_add<T>(const VulkanTensor<T>&, std::size_t, const Index&,               \
                                               const VulkanTensor<T>&);
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(int64_t)
EMBER_INSTANTIATE(uint32_t)
#undef EMBER_INSTANTIATE

}  // namespace ember::vk
