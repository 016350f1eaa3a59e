// Matrix multiply: the tiled GEMM dispatcher (gemm.hpp, shaders/gemm.comp) and matmul on top of it, with NumPy
// broadcasting over the leading (batch) dims and transposed operands read in place.
#include "backends/vulkan/gemm.hpp"

#include <algorithm>
#include <vector>

#include "backends/vulkan/strided.hpp"
#include "engine/backend/matmul_geometry.hpp"

namespace ember::vk {
namespace {

EMBER_SHADER_WORDS(kGemm)
#include "gemm.spv.inc"
;
EMBER_SHADER_DEF(kGemm)
// f16 slabs and products (gemm.comp HALF), on contexts with f16 variants enabled (Context::float16()).
EMBER_SHADER_WORDS(kGemmF16)
#include "gemm_f16.spv.inc"
;
EMBER_SHADER_DEF(kGemmF16)
// B read as f16 (gemm.comp B16): a plan's f16 copy of a weight, on contexts with f16 storage (float16_storage()).
EMBER_SHADER_WORDS(kGemmB16)
#include "gemm_b16.spv.inc"
;
EMBER_SHADER_DEF(kGemmB16)
EMBER_SHADER_WORDS(kGemmF16B16)
#include "gemm_f16_b16.spv.inc"
;
EMBER_SHADER_DEF(kGemmF16B16)
// A read as f16 (gemm.comp A16): conv2d's weights are the left operand.
EMBER_SHADER_WORDS(kGemmA16)
#include "gemm_a16.spv.inc"
;
EMBER_SHADER_DEF(kGemmA16)
EMBER_SHADER_WORDS(kGemmF16A16)
#include "gemm_f16_a16.spv.inc"
;
EMBER_SHADER_DEF(kGemmF16A16)

// Few rows (gemm_skinny.comp): RM rows x 64 columns per workgroup instead of 64 x 64 tiles.
EMBER_SHADER_WORDS(kGemmSkinny)
#include "gemm_skinny.spv.inc"
;
EMBER_SHADER_DEF(kGemmSkinny)

// Mirrors the push constant block of gemm.comp (std430: 4-byte scalars and uint arrays).
struct GemmPush {
  uint32_t m, n, k;
  uint32_t lda, ldb, ldc;
  uint32_t a_off, b_off, c_off;
  float alpha, beta;
  uint32_t batch_inner;
  uint32_t a_stride[2], b_stride[2], c_stride[2];
};

constexpr uint32_t kGemmThreads = 256;  // gemm.comp's 16x16 invocation grid
// Workgroup counts per dim that every Vulkan device supports (maxComputeWorkGroupCount >= 65535).
constexpr int64_t kMaxGroups = 65535;

// Micro-tile side R (tile 16R x 16R) and K-slab depth. 128x128 tiles (R = 8) reuse each loaded element twice as
// often as 64x64 ones, but leave most of a large GPU idle when there are only a few of them: small problems take
// 64x64 tiles to get more workgroups in flight.
struct TileConfig {
  uint32_t r, bk;
};
TileConfig pick_tiles(const Gemm& g) {
  const int64_t big_tiles = ((g.m + 127) / 128) * ((g.n + 127) / 128) * g.batch[0].count * g.batch[1].count;
  // A slab no deeper than K needs (4 at the least): a weight gradient at batch 4 (K = 4) would otherwise multiply
  // 12 of every 16 k of zeros. Fewer zero terms change no value (they add +0), at most the sign of a zero result.
  const uint32_t bk = g.k <= 4 ? 4u : g.k <= 8 ? 8u : 16u;
  if (g.m <= 64 || g.n <= 64 || big_tiles < 256) return {4, bk};
  return {8, std::min(bk, 8u)};
}

// Rows per workgroup of gemm_skinny.comp for this product (0: the tiled shader). A product of at most 8 rows in f32
// takes it: gemm.comp's 64 x 64 tile would multiply 56 or more rows of zeros (on lavapipe, 4 x 256 @ 256 x 256:
// 1.7-2.5 ms against 6.0-6.6 tiled; at 16 rows the two are even). Both sum each element's products in ascending k
// with the same slab depth (pick_tiles' for m <= 64), so the choice never changes a bit.
uint32_t skinny_rows(const Gemm& g, const Shader* shader) {
  if (shader != &kGemm || g.m > 8) return 0;
  uint32_t rm = 1;
  while (rm < g.m) rm *= 2;
  return rm;
}
constexpr uint32_t kSkinnyThreads = 64;  // gemm_skinny.comp's columns per workgroup

uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

// While a plan captures on a context with f16 storage: the plan's f16 copy of `operand` when it is a weight.
std::shared_ptr<Allocation> f16_weights(Context& ctx, const std::shared_ptr<Allocation>& operand) {
  if (!ctx.float16_storage()) return nullptr;
  std::lock_guard lock(ctx.mutex());
  CaptureSink* sink = ctx.stream().capture();
  return sink ? sink->f16_copy(operand) : nullptr;
}

// The GEMM variant: f16 or f32 arithmetic, and which operand (if any) is read from an f16 weight copy. One operand
// at most: B when it is a weight (linear layers), else A (conv2d).
struct Variant {
  const Shader* shader;
  std::shared_ptr<Allocation> a, b;
};
Variant choose_variant(Context& ctx, const Gemm& g) {
  const bool half = ctx.float16();
  if (auto b16 = f16_weights(ctx, g.b.alloc)) return {half ? &kGemmF16B16 : &kGemmB16, g.a.alloc, std::move(b16)};
  if (auto a16 = f16_weights(ctx, g.a.alloc)) return {half ? &kGemmF16A16 : &kGemmA16, std::move(a16), g.b.alloc};
  return {half ? &kGemmF16 : &kGemm, g.a.alloc, g.b.alloc};
}

}  // namespace

void gemm(Context& ctx, const Gemm& g) {
  const int64_t batches = g.batch[0].count * g.batch[1].count;
  if (g.m == 0 || g.n == 0 || batches == 0) return;
  const TileConfig t = pick_tiles(g);
  const uint32_t flags = (g.a.trans ? 1u : 0u) | (g.b.trans ? 2u : 0u);
  const Variant v = choose_variant(ctx, g);
  const uint32_t rm = skinny_rows(g, v.shader);
  const Shader& shader = rm ? kGemmSkinny : *v.shader;
  const int64_t tile_rows = rm ? rm : 16 * t.r, tile_cols = rm ? kSkinnyThreads : 16 * t.r;
  const std::array<uint32_t, Pipelines::kMaxSpec> spec =
      rm ? std::array<uint32_t, Pipelines::kMaxSpec>{kSkinnyThreads, rm, t.bk, flags}
         : std::array<uint32_t, Pipelines::kMaxSpec>{kGemmThreads, t.r, t.bk, flags};

  // Split the grid where it exceeds the per-dim workgroup limits: rows (y), columns (x), batches (z).
  const int64_t rows_step = kMaxGroups * tile_rows, cols_step = kMaxGroups * tile_cols;
  const int64_t inner_step = std::min(g.batch[1].count, kMaxGroups);
  const int64_t outer_step = std::max<int64_t>(1, kMaxGroups / inner_step);
  for (int64_t r0 = 0; r0 < g.m; r0 += rows_step) {
    const int64_t rows = std::min(rows_step, g.m - r0);
    for (int64_t c0 = 0; c0 < g.n; c0 += cols_step) {
      const int64_t cols = std::min(cols_step, g.n - c0);
      for (int64_t o0 = 0; o0 < g.batch[0].count; o0 += outer_step) {
        const int64_t outer = std::min(outer_step, g.batch[0].count - o0);
        for (int64_t i0 = 0; i0 < g.batch[1].count; i0 += inner_step) {
          const int64_t inner = std::min(inner_step, g.batch[1].count - i0);
          auto base = [&](int p) { return o0 * g.batch[0].stride[p] + i0 * g.batch[1].stride[p]; };
          GemmPush push{};
          push.m = u32(rows), push.n = u32(cols), push.k = u32(g.k);
          push.lda = u32(g.a.ld), push.ldb = u32(g.b.ld), push.ldc = u32(g.c.ld);
          push.a_off = u32(g.a.offset + base(0) + (g.a.trans ? r0 : r0 * g.a.ld));
          push.b_off = u32(g.b.offset + base(1) + (g.b.trans ? c0 * g.b.ld : c0));
          push.c_off = u32(g.c.offset + base(2) + r0 * g.c.ld + c0);
          push.alpha = g.alpha, push.beta = g.beta;
          push.batch_inner = u32(inner);
          for (int lvl = 0; lvl < 2; ++lvl) {
            push.a_stride[lvl] = u32(g.batch[lvl].stride[0]);
            push.b_stride[lvl] = u32(g.batch[lvl].stride[1]);
            push.c_stride[lvl] = u32(g.batch[lvl].stride[2]);
          }
          const std::array<uint32_t, 3> groups{u32((cols + tile_cols - 1) / tile_cols),
                                               u32((rows + tile_rows - 1) / tile_rows), u32(outer * inner)};
          launch_grid(ctx, shader, {{v.a, false}, {v.b, false}, {g.c.alloc, true}}, push, groups, spec);
        }
      }
    }
  }
}

FloatT matmul(const FloatT& a, const FloatT& b, bool trans_a, bool trans_b) {
  const MatmulGeometry mg = matmul_geometry(a.shape, b.shape, trans_a, trans_b);
  auto out = empty<float>(a.ctx, mg.out_shape());
  if (mg.empty()) return out;

  Gemm g;
  g.m = mg.m, g.n = mg.n, g.k = mg.k;
  g.a = {a.alloc, 0, mg.lda, trans_a};
  g.b = {b.alloc, 0, mg.ldb, trans_b};
  g.c = {out.alloc, 0, mg.n, false};

  if (mg.batch_folds_into_rows(trans_a)) {
    g.m = mg.batches() * mg.m;
    gemm(*a.ctx, g);
    return out;
  }

  // Batch dims as strided index space (stride 0 = broadcast), merged where contiguous in all three operands. The
  // last two merged dims are the shader's batch levels; any further ones are walked here.
  const auto s = merge_contiguous_dims<3>(mg.batch.dims, {mg.a_strides, mg.b_strides, mg.c_strides});
  const std::size_t levels = std::min<std::size_t>(2, s.dims.size()), host_dims = s.dims.size() - levels;
  for (std::size_t l = 0; l < levels; ++l) {
    const std::size_t d = host_dims + l;
    g.batch[2 - levels + l] = {s.dims[d], {s.strides[0][d], s.strides[1][d], s.strides[2][d]}};
  }
  const std::vector<int64_t> host_shape(s.dims.begin(), s.dims.begin() + static_cast<std::ptrdiff_t>(host_dims));
  int64_t host_count = 1;
  for (int64_t d : host_shape) host_count *= d;
  for (int64_t i = 0; i < host_count; ++i) {
    g.a.offset = strided_offset(i, host_shape, s.strides[0]);
    g.b.offset = strided_offset(i, host_shape, s.strides[1]);
    g.c.offset = strided_offset(i, host_shape, s.strides[2]);
    gemm(*a.ctx, g);
  }
  return out;
}

}  // namespace ember::vk
