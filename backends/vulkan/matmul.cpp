// Matrix multiply: the tiled GEMM dispatcher (gemm.hpp, shaders/gemm.comp) and matmul on top of it, with NumPy
// broadcasting over the leading (batch) dims and transposed operands read in place.
#include "backends/vulkan/gemm.hpp"

#include <algorithm>
#include <vector>

#include "backends/vulkan/strided.hpp"

namespace ember::vk {
namespace {

EMBER_SHADER_WORDS(kGemm)
#include "gemm.spv.inc"
;
EMBER_SHADER_DEF(kGemm)

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
  if (g.m <= 64 || g.n <= 64 || big_tiles < 256) return {4, 16};
  return {8, 8};
}

uint32_t u32(int64_t v) { return static_cast<uint32_t>(v); }

}  // namespace

void gemm(Context& ctx, const Gemm& g) {
  const int64_t batches = g.batch[0].count * g.batch[1].count;
  if (g.m == 0 || g.n == 0 || batches == 0) return;
  const TileConfig t = pick_tiles(g);
  const int64_t tile = 16 * t.r;
  const uint32_t flags = (g.a.trans ? 1u : 0u) | (g.b.trans ? 2u : 0u);
  const std::array<uint32_t, Pipelines::kMaxSpec> spec{kGemmThreads, t.r, t.bk, flags};

  // Split the grid where it exceeds the per-dim workgroup limits: rows (y), columns (x), batches (z).
  const int64_t rows_step = kMaxGroups * tile, cols_step = kMaxGroups * tile;
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
          const std::array<uint32_t, 3> groups{u32((cols + tile - 1) / tile), u32((rows + tile - 1) / tile),
                                               u32(outer * inner)};
          launch_grid(ctx, kGemm, {{g.a.alloc, false}, {g.b.alloc, false}, {g.c.alloc, true}}, push, groups, spec);
        }
      }
    }
  }
}

FloatT matmul(const FloatT& a, const FloatT& b, bool trans_a, bool trans_b) {
  const std::size_t r = a.shape.rank();
  const int64_t m = a.shape[r - (trans_a ? 1 : 2)], k = a.shape[r - (trans_a ? 2 : 1)];
  const int64_t n = b.shape[r - (trans_b ? 2 : 1)];
  const Shape a_batch(std::vector<int64_t>(a.shape.dims.begin(), a.shape.dims.end() - 2));
  const Shape b_batch(std::vector<int64_t>(b.shape.dims.begin(), b.shape.dims.end() - 2));
  const Shape batch = broadcast_shapes("matmul", a_batch, b_batch);
  Shape out_shape = batch;
  out_shape.dims.push_back(m);
  out_shape.dims.push_back(n);
  auto out = empty<float>(a.ctx, out_shape);
  const int64_t nb = batch.num_elements();
  if (nb == 0 || m == 0 || n == 0) return out;

  Gemm g;
  g.m = m, g.n = n, g.k = k;
  g.a = {a.alloc, 0, trans_a ? m : k, trans_a};
  g.b = {b.alloc, 0, trans_b ? k : n, trans_b};
  g.c = {out.alloc, 0, n, false};

  // b shared by every batch (rank 2 included): a's batch folds into the rows of one GEMM (a's rows are only
  // contiguous across batches when a is not transposed).
  if (b_batch.num_elements() == 1 && (!trans_a || nb == 1)) {
    g.m = nb * m;
    gemm(*a.ctx, g);
    return out;
  }

  // Batch dims as strided index space (stride 0 = broadcast), merged where contiguous in all three operands. The
  // last two merged dims are the shader's batch levels; any further ones are walked here.
  std::vector<int64_t> sa = broadcast_strides(a_batch, batch), sb = broadcast_strides(b_batch, batch);
  std::vector<int64_t> sc(batch.rank());
  int64_t c_step = m * n;
  for (std::size_t d = batch.rank(); d-- > 0;) {
    sa[d] *= m * k, sb[d] *= k * n, sc[d] = c_step;
    c_step *= batch[d];
  }
  const auto s = merge_dims<3>(batch.dims, {sa, sb, sc}, "matmul");
  const std::size_t levels = std::min<std::size_t>(2, s.shape.size()), host_dims = s.shape.size() - levels;
  for (std::size_t l = 0; l < levels; ++l) {
    const std::size_t d = host_dims + l;
    g.batch[2 - levels + l] = {s.shape[d], {s.strides[0][d], s.strides[1][d], s.strides[2][d]}};
  }
  int64_t host_count = 1;
  for (std::size_t d = 0; d < host_dims; ++d) host_count *= s.shape[d];
  for (int64_t i = 0; i < host_count; ++i) {
    int64_t rem = i;
    g.a.offset = g.b.offset = g.c.offset = 0;
    for (std::size_t d = host_dims; d-- > 0;) {
      const int64_t idx = rem % s.shape[d];
      rem /= s.shape[d];
      g.a.offset += idx * s.strides[0][d], g.b.offset += idx * s.strides[1][d], g.c.offset += idx * s.strides[2][d];
    }
    gemm(*a.ctx, g);
  }
  return out;
}

}  // namespace ember::vk
