// argsort and cumsum along one dim (issue 13; shaders/sort.comp, shaders/cumsum.comp). Both view x as
// [outer, len, inner] and give each line to one workgroup. argsort matches the CPU's stable sort exactly (the
// shader's order is total: NaN largest, ties by position); lines longer than the shared-memory variant holds sort
// in a scratch buffer.
#include <algorithm>
#include <bit>

#include "backends/vulkan/launch.hpp"
#include "engine/backend/reduce_geometry.hpp"

namespace ember::vk {
namespace {

EMBER_SHADER_WORDS(kArgsortShared)
#include "argsort_shared.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kArgsortShared)
#include "argsort_shared_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kArgsortShared)
EMBER_SHADER_WORDS(kArgsortGlobal)
#include "argsort_global.spv.inc"
;
EMBER_SHADER_WORDS_NO_INT64(kArgsortGlobal)
#include "argsort_global_no_int64.spv.inc"
;
EMBER_SHADER_DEF_INT(kArgsortGlobal)
EMBER_SHADER_WORDS(kCumsum)
#include "cumsum_f32.spv.inc"
;
EMBER_SHADER_DEF(kCumsum)

// Lines the shared-memory variant sorts (sort.comp's SHARED_N).
constexpr int64_t kSharedSortLen = 1024;

struct SortPush {
  uint32_t outer, len, inner, npad, descending;
};
struct ScanPush {
  uint32_t outer, len, inner;
};

uint32_t line_groups(const Context& ctx, int64_t lines) {
  return static_cast<uint32_t>(
      std::min<int64_t>(lines, std::min<uint32_t>(ctx.info().max_workgroup_count_x, 65535u)));
}

}  // namespace

Index argsort(const FloatT& x, std::size_t dim, bool descending) {
  check_elements(x.numel(), "argsort");
  auto y = empty<int64_t>(x.ctx, x.shape);
  const ReduceView v = reduce_view(x.shape, dim);
  if (x.numel() == 0) return y;
  const auto npad = static_cast<uint32_t>(std::bit_ceil(static_cast<uint64_t>(v.len)));
  const SortPush push{static_cast<uint32_t>(v.outer), static_cast<uint32_t>(v.len), static_cast<uint32_t>(v.inner),
                      npad, descending ? 1u : 0u};
  const std::array<uint32_t, Pipelines::kMaxSpec> spec{kWorkgroup, 0, 0, 0};
  const uint32_t groups = line_groups(*x.ctx, v.outputs());
  if (v.len <= kSharedSortLen) {
    launch_grid(*x.ctx, kArgsortShared, {in(x), out(y)}, push, {groups, 1, 1}, spec);
  } else {
    // One scratch region of len keys and positions per line (lines run one per workgroup).
    auto keys = empty<float>(x.ctx, Shape{v.outputs() * v.len});
    auto pos = empty<uint32_t>(x.ctx, Shape{v.outputs() * v.len});
    launch_grid(*x.ctx, kArgsortGlobal, {in(x), out(y), out(keys), out(pos)}, push, {groups, 1, 1}, spec);
  }
  return y;
}

FloatT cumsum(const FloatT& x, std::size_t dim) {
  check_elements(x.numel(), "cumsum");
  auto y = empty<float>(x.ctx, x.shape);
  const ReduceView v = reduce_view(x.shape, dim);
  if (x.numel() == 0) return y;
  const ScanPush push{static_cast<uint32_t>(v.outer), static_cast<uint32_t>(v.len), static_cast<uint32_t>(v.inner)};
  launch_grid(*x.ctx, kCumsum, {in(x), out(y)}, push, {line_groups(*x.ctx, v.outputs()), 1, 1},
              {kWorkgroup, 0, 0, 0});
  return y;
}

}  // namespace ember::vk
