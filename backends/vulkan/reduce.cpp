// Reductions over one dim (kept with size 1) or over all elements, and argmax/argmin (shaders/reduce.comp).
// Semantics follow backends/cpu/reduce.cpp: NaN is sticky for max/min and is the extreme for argmax/argmin, ties
// take the first index, Int sums/products wrap, Int mean truncates toward zero (0 over an empty dim), Float mean
// over an empty dim is NaN, sum/prod of nothing are 0/1. Empty max/min/arg dims are refused by the tensor layer.
//
// A reduction views x as [outer, r, inner] (ReduceView, r = len). Each pass is one dispatch whose workgroups tile
// that view (see the shader); when r is long compared with the work available, a pass reduces chunks of r into
// [outer, splits, inner] partials and another pass reduces those, so a reduce_all over millions of elements keeps
// every workgroup busy and float sums are combined pairwise rather than in one long serial chain.
#include <algorithm>
#include <bit>
#include <optional>
#include <type_traits>

#include "backends/vulkan/launch.hpp"
#include "engine/backend/reduce_geometry.hpp"

namespace ember::vk {
namespace {

EMBER_SHADER_WORDS(kReduceF32)
#include "reduce_f32.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kReduceF32)
#include "reduce_f32_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kReduceF32)
EMBER_SHADER_WORDS(kReduceI64)
#include "reduce_i64.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kReduceI64)
#include "reduce_i64_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kReduceI64)
EMBER_SHADER_WORDS(kArgReduceF32)
#include "arg_reduce_f32.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kArgReduceF32)
#include "arg_reduce_f32_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kArgReduceF32)
EMBER_SHADER_WORDS(kArgReduceI64)
#include "arg_reduce_i64.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kArgReduceI64)
#include "arg_reduce_i64_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kArgReduceI64)

struct ReducePush {
  uint32_t outer, r, inner, splits, chunk, op, mean_div, flags;
};
constexpr uint32_t kFlagHasIndex = 1;  // arg passes after the first read the indices found so far

// Workgroups that keep a large GPU busy; a pass with fewer splits r until it has about this many.
constexpr int64_t kTargetGroups = 512;
// Rows one lane accumulates serially in a pass: splitting below kMin rows is not worth another pass; above kMax
// rows f32 sums would drift (the rest of the combination is a pairwise tree).
constexpr int64_t kMinRowsPerLane = 16;
constexpr int64_t kMaxRowsPerLane = 64;
// Lanes along inner: 32 adjacent elements are one 128-byte transaction for f32.
constexpr int64_t kMaxInnerLanes = 32;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t pow2_at_least(int64_t n) {
  return static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(n, 1))));
}

// The kernel shape of one pass over view v.
struct Pass {
  int64_t tx = 1, ty = 1;  // lanes along inner and along r (powers of two, tx * ty divides the workgroup)
  int64_t splits = 1, chunk = 1;
  uint32_t groups = 1;
};

Pass plan_pass(const Context& ctx, const ReduceView& v) {
  Pass p;
  p.tx = v.inner == 1 ? 1 : std::min(pow2_at_least(v.inner), kMaxInnerLanes);
  p.ty = std::min<int64_t>(kWorkgroup / p.tx, pow2_at_least(v.len));
  const int64_t tiles_per_group = kWorkgroup / (p.tx * p.ty);
  const int64_t columns = v.outer * ceil_div(v.inner, p.tx);
  const int64_t rows_per_lane = ceil_div(v.len, p.ty);
  if (rows_per_lane > kMinRowsPerLane) {
    const int64_t groups = ceil_div(columns, tiles_per_group);
    const int64_t for_occupancy = groups < kTargetGroups ? ceil_div(kTargetGroups, groups) : 1;
    const int64_t for_accuracy = ceil_div(rows_per_lane, kMaxRowsPerLane);
    p.splits = std::min(std::max(for_occupancy, for_accuracy), ceil_div(rows_per_lane, kMinRowsPerLane));
  }
  p.chunk = std::max<int64_t>(ceil_div(v.len, p.splits), 1);  // len == 0: one empty split
  p.splits = std::max<int64_t>(ceil_div(v.len, p.chunk), 1);
  p.groups = groups_for(ctx, static_cast<uint64_t>(columns * p.splits), static_cast<uint32_t>(tiles_per_group));
  return p;
}

ReducePush push_for(const ReduceView& v, const Pass& pass, uint32_t op, int64_t mean_div, uint32_t flags) {
  return {static_cast<uint32_t>(v.outer),       static_cast<uint32_t>(v.len),
          static_cast<uint32_t>(v.inner),       static_cast<uint32_t>(pass.splits),
          static_cast<uint32_t>(pass.chunk),    op,
          static_cast<uint32_t>(mean_div),      flags};
}

std::array<uint32_t, Pipelines::kMaxSpec> spec_for(const Pass& pass) {
  return {kWorkgroup, static_cast<uint32_t>(pass.tx), static_cast<uint32_t>(pass.ty), 0};
}

// Reduces view v of x into a tensor of out_shape (outer * inner elements), pass after pass until one split is left.
template <class T>
VulkanTensor<T> reduce_in_passes(const VulkanTensor<T>& x, ReduceView v, ReduceOp op, const Shape& out_shape) {
  check_elements(x.numel(), "reduce");
  if (v.outer * v.inner == 0) return empty<T>(x.ctx, out_shape);
  const Shader& shader = std::is_same_v<T, float> ? kReduceF32 : kReduceI64;
  const int64_t mean_div = v.len;
  VulkanTensor<T> cur = x;
  for (;;) {
    const Pass pass = plan_pass(*x.ctx, v);
    const bool last = pass.splits == 1;
    auto y = empty<T>(x.ctx, last ? out_shape : Shape{v.outer, pass.splits, v.inner});
    // Partial passes of a mean sum; only the last one divides, by the original length.
    const ReduceOp pass_op = (!last && op == ReduceOp::Mean) ? ReduceOp::Sum : op;
    launch_grid(*x.ctx, shader, {in(cur), out(y)}, push_for(v, pass, static_cast<uint32_t>(pass_op), mean_div, 0),
                {pass.groups, 1, 1}, spec_for(pass));
    if (last) return y;
    cur = std::move(y);
    v.len = pass.splits;
  }
}

}  // namespace

template <class T>
VulkanTensor<T> reduce(const VulkanTensor<T>& x, ReduceOp op, std::size_t dim) {
  return reduce_in_passes(x, reduce_view(x.shape, dim), op, reduced_shape(x.shape, dim));
}

template <class T>
VulkanTensor<T> reduce_all(const VulkanTensor<T>& x, ReduceOp op) {
  return reduce_in_passes(x, reduce_all_view(x.shape), op, Shape{1});
}

template <class T>
Index arg_reduce(const VulkanTensor<T>& x, ArgReduceOp op, std::size_t dim) {
  check_elements(x.numel(), "arg_reduce");
  const Shape os = reduced_shape(x.shape, dim);
  ReduceView v = reduce_view(x.shape, dim);
  if (v.outer * v.inner == 0) return empty<int64_t>(x.ctx, os);
  const Shader& shader = std::is_same_v<T, float> ? kArgReduceF32 : kArgReduceI64;
  const auto code = static_cast<uint32_t>(op);
  // Each pass yields the winning values and their indices along the original dim; later passes carry both.
  VulkanTensor<T> vals = x;
  std::optional<Index> idx;
  for (;;) {
    const Pass pass = plan_pass(*x.ctx, v);
    const bool last = pass.splits == 1;
    const Shape ps = last ? os : Shape{v.outer, pass.splits, v.inner};
    auto y = empty<T>(x.ctx, ps);
    auto yi = empty<int64_t>(x.ctx, ps);
    if (idx)
      launch_grid(*x.ctx, shader, {in(vals), out(y), out(yi), in(*idx)}, push_for(v, pass, code, 0, kFlagHasIndex),
                  {pass.groups, 1, 1}, spec_for(pass));
    else
      launch_grid(*x.ctx, shader, {in(vals), out(y), out(yi)}, push_for(v, pass, code, 0, 0), {pass.groups, 1, 1},
                  spec_for(pass));
    if (last) return yi;
    vals = std::move(y);
    idx = std::move(yi);
    v.len = pass.splits;
  }
}

#define EMBER_INSTANTIATE(T)                                                        \
  template VulkanTensor<T> reduce<T>(const VulkanTensor<T>&, ReduceOp, std::size_t); \
  template VulkanTensor<T> reduce_all<T>(const VulkanTensor<T>&, ReduceOp);          \
  template Index arg_reduce<T>(const VulkanTensor<T>&, ArgReduceOp, std::size_t);
EMBER_INSTANTIATE(float)
EMBER_INSTANTIATE(int64_t)
#undef EMBER_INSTANTIATE

}  // namespace ember::vk
