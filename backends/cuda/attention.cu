// Flash attention on CUDA, no [L, S] score matrix:
//   forward      one block per (batch * head, tile of kRows query rows), one thread per query row. The block
//                stages a tile of keys and values in shared memory; each thread scores its row against the tile
//                and folds it into an online softmax (running max m, denominator l, its output row rescaled by
//                exp(m_old - m_new)); it writes the row logsumexp (+inf for a fully masked row, whose output is 0).
//   backward_q   one thread per query row: delta = rowsum(dout * out) (saved for backward_kv) and
//                dq = scale * sum_j p_ij (dp_ij - delta_i) k_j, p_ij = exp(s_ij - lse_i) recomputed.
//   backward_kv  one thread per key row: dv = sum_i p_ij dout_i, dk = scale * sum_i p_ij (dp_ij - delta_i) q_i.
// Every output row has one writer: no atomics, deterministic. Same formulas as backends/cpu/attention.cpp and
// backends/vulkan/shaders/attention.comp.
#include <algorithm>
#include <stdexcept>

#include "backends/cuda/attention.hpp"
#include "backends/cuda/runtime.cuh"

namespace ember::cuda {
namespace {

constexpr int kRows = 64;  // query rows (threads) per forward block
constexpr int kMaxTile = 32;  // keys per shared-memory tile

struct Geo {
  int64_t H, L, S, E, Ev;
  int64_t bias_b, bias_h, bias_l, bias_s;
  int has_bias, causal;
  float scale;
};

__device__ __forceinline__ float neg_inf() { return -__int_as_float(0x7f800000); }

__device__ __forceinline__ float bias_at(const float* bias, const Geo& g, int64_t bh, int64_t i, int64_t j) {
  if (!g.has_bias) return 0.0f;
  const int64_t b = bh / g.H, h = bh % g.H;
  return bias[b * g.bias_b + h * g.bias_h + i * g.bias_l + j * g.bias_s];
}

// scale * q_i . k_j + bias (the caller applies the causal mask), q_i and k_j in global memory.
__device__ float score(const float* __restrict__ q, const float* __restrict__ k, const float* bias, const Geo& g,
                       int64_t bh, int64_t i, int64_t j) {
  const float* qi = q + (bh * g.L + i) * g.E;
  const float* kj = k + (bh * g.S + j) * g.E;
  float d = 0.0f;
  for (int64_t e = 0; e < g.E; ++e) d += qi[e] * kj[e];
  return d * g.scale + bias_at(bias, g, bh, i, j);
}

__global__ void forward_kernel(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
                               const float* bias, float* __restrict__ out, float* __restrict__ lse, Geo g, int tile,
                               int64_t row_tiles) {
  extern __shared__ float smem[];
  float* ks = smem;               // [tile][E]
  float* vs = smem + tile * g.E;  // [tile][Ev]
  const int64_t bh = blockIdx.x / row_tiles, i0 = (blockIdx.x % row_tiles) * kRows;
  const int64_t i = i0 + threadIdx.x;
  const bool active = i < g.L;
  const float* qi = q + (bh * g.L + (active ? i : 0)) * g.E;
  float* oi = out + (bh * g.L + (active ? i : 0)) * g.Ev;
  if (active)
    for (int64_t x = 0; x < g.Ev; ++x) oi[x] = 0.0f;
  float m = neg_inf(), l = 0.0f;
  const int64_t last = (i0 + kRows < g.L ? i0 + kRows : g.L) - 1;  // the block's last row
  const int64_t s_end = g.causal ? (g.S < last + 1 ? g.S : last + 1) : g.S;
  float s[kMaxTile];
  for (int64_t j0 = 0; j0 < s_end; j0 += tile) {
    const int64_t nb = s_end - j0 < tile ? s_end - j0 : tile;
    __syncthreads();  // the previous tile is no longer read
    for (int64_t t = threadIdx.x; t < nb * g.E; t += blockDim.x) ks[t] = k[(bh * g.S + j0) * g.E + t];
    for (int64_t t = threadIdx.x; t < nb * g.Ev; t += blockDim.x) vs[t] = v[(bh * g.S + j0) * g.Ev + t];
    __syncthreads();
    if (!active) continue;
    float mx = neg_inf();
    for (int jj = 0; jj < nb; ++jj) {
      float d = 0.0f;
      for (int64_t e = 0; e < g.E; ++e) d += qi[e] * ks[jj * g.E + e];
      d = d * g.scale + bias_at(bias, g, bh, i, j0 + jj);
      if (g.causal && j0 + jj > i) d = neg_inf();
      s[jj] = d;
      mx = fmaxf(mx, d);
    }
    const float m_new = fmaxf(m, mx);
    if (m_new == neg_inf()) continue;  // every key so far masked
    const float alpha = expf(m - m_new);
    float sum = 0.0f;
    for (int jj = 0; jj < nb; ++jj) {
      s[jj] = expf(s[jj] - m_new);
      sum += s[jj];
    }
    l = l * alpha + sum;
    m = m_new;
    for (int64_t x = 0; x < g.Ev; ++x) {
      float a = oi[x] * alpha;
      for (int jj = 0; jj < nb; ++jj) a += s[jj] * vs[jj * g.Ev + x];
      oi[x] = a;
    }
  }
  if (!active) return;
  const float inv = l == 0.0f ? 0.0f : 1.0f / l;
  for (int64_t x = 0; x < g.Ev; ++x) oi[x] *= inv;
  lse[bh * g.L + i] = l == 0.0f ? -neg_inf() : m + logf(l);
}

__global__ void backward_q_kernel(const float* __restrict__ q, const float* __restrict__ k,
                                  const float* __restrict__ v, const float* bias, const float* __restrict__ out,
                                  const float* __restrict__ lse, const float* __restrict__ dout,
                                  float* __restrict__ dq, float* __restrict__ delta, Geo g, int64_t rows) {
  EMBER_CUDA_LOOP(r, rows) {
    const int64_t bh = r / g.L, i = r % g.L;
    const float* doi = dout + r * g.Ev;
    float d = 0.0f;
    for (int64_t x = 0; x < g.Ev; ++x) d += doi[x] * out[r * g.Ev + x];
    delta[r] = d;
    float* dqi = dq + r * g.E;
    for (int64_t e = 0; e < g.E; ++e) dqi[e] = 0.0f;
    const int64_t s_end = g.causal ? (g.S < i + 1 ? g.S : i + 1) : g.S;
    for (int64_t j = 0; j < s_end; ++j) {
      const float p = expf(score(q, k, bias, g, bh, i, j) - lse[r]);  // 0 for masked keys and rows
      if (p == 0.0f) continue;
      const float* vj = v + (bh * g.S + j) * g.Ev;
      float dp = 0.0f;
      for (int64_t x = 0; x < g.Ev; ++x) dp += doi[x] * vj[x];
      const float ds = p * (dp - d) * g.scale;
      const float* kj = k + (bh * g.S + j) * g.E;
      for (int64_t e = 0; e < g.E; ++e) dqi[e] += ds * kj[e];
    }
  }
}

__global__ void backward_kv_kernel(const float* __restrict__ q, const float* __restrict__ k,
                                   const float* __restrict__ v, const float* bias, const float* __restrict__ lse,
                                   const float* __restrict__ dout, const float* __restrict__ delta,
                                   float* __restrict__ dk, float* __restrict__ dv, Geo g, int64_t rows) {
  EMBER_CUDA_LOOP(c, rows) {
    const int64_t bh = c / g.S, j = c % g.S;
    float* dkj = dk + c * g.E;
    float* dvj = dv + c * g.Ev;
    for (int64_t e = 0; e < g.E; ++e) dkj[e] = 0.0f;
    for (int64_t x = 0; x < g.Ev; ++x) dvj[x] = 0.0f;
    const float* vj = v + c * g.Ev;
    for (int64_t i = g.causal ? j : 0; i < g.L; ++i) {
      const int64_t r = bh * g.L + i;
      const float p = expf(score(q, k, bias, g, bh, i, j) - lse[r]);
      if (p == 0.0f) continue;
      const float* doi = dout + r * g.Ev;
      float dp = 0.0f;
      for (int64_t x = 0; x < g.Ev; ++x) dp += doi[x] * vj[x];
      const float ds = p * (dp - delta[r]) * g.scale;
      const float* qi = q + r * g.E;
      for (int64_t x = 0; x < g.Ev; ++x) dvj[x] += p * doi[x];
      for (int64_t e = 0; e < g.E; ++e) dkj[e] += ds * qi[e];
    }
  }
}

Geo geometry(const CudaTensor<float>& q, const CudaTensor<float>& k, const CudaTensor<float>& v,
             const CudaTensor<float>* bias, const SdpaOptions& o) {
  Geo g{q.shape[1], q.shape[2], k.shape[2], q.shape[3], v.shape[3], 0, 0, 0, 0, bias ? 1 : 0,
        o.is_causal ? 1 : 0, static_cast<float>(o.scale)};
  if (bias) {
    const Shape& s = bias->shape;
    const int64_t st2 = s[3], st1 = s[2] * st2, st0 = s[1] * st1;
    g.bias_s = s[3] == 1 ? 0 : 1;
    g.bias_l = s[2] == 1 ? 0 : st2;
    g.bias_h = s[1] == 1 ? 0 : st1;
    g.bias_b = s[0] == 1 ? 0 : st0;
  }
  return g;
}

}  // namespace

SdpaForward<CudaTensor<float>> sdpa_forward(const CudaTensor<float>& q, const CudaTensor<float>& k,
                                            const CudaTensor<float>& v, const CudaTensor<float>* bias,
                                            const SdpaOptions& o) {
  const int dev = q.device();
  DeviceContext& ctx = context(dev);
  SdpaForward<CudaTensor<float>> r{CudaTensor<float>(Shape{q.shape[0], q.shape[1], q.shape[2], v.shape[3]}, dev),
                                   CudaTensor<float>(Shape{q.shape[0], q.shape[1], q.shape[2]}, dev)};
  const Geo g = geometry(q, k, v, bias, o);
  const int64_t bhs = q.shape[0] * q.shape[1], row_tiles = (g.L + kRows - 1) / kRows;
  if (bhs * row_tiles == 0) return r;
  // Keys per tile: as many as 48 KiB of shared memory holds (the default limit without opting in), up to kMaxTile.
  const int64_t per_key = (g.E + g.Ev) * static_cast<int64_t>(sizeof(float));
  const int tile = static_cast<int>(std::min<int64_t>(kMaxTile, (48 * 1024) / std::max<int64_t>(per_key, 1)));
  if (tile < 1) throw std::length_error("cuda scaled_dot_product_attention: head dims too large for shared memory");
  forward_kernel<<<static_cast<unsigned>(bhs * row_tiles), kRows, tile * per_key, ctx.stream>>>(
      q.data(), k.data(), v.data(), bias ? bias->data() : nullptr, r.out.data(), r.lse.data(), g, tile, row_tiles);
  check_launch("attention forward_kernel");
  return r;
}

SdpaGrads<CudaTensor<float>> sdpa_backward(const CudaTensor<float>& q, const CudaTensor<float>& k,
                                           const CudaTensor<float>& v, const CudaTensor<float>* bias,
                                           const CudaTensor<float>& out, const CudaTensor<float>& lse,
                                           const CudaTensor<float>& dout, const SdpaOptions& o) {
  const int dev = q.device();
  DeviceContext& ctx = context(dev);
  SdpaGrads<CudaTensor<float>> r{CudaTensor<float>(q.shape, dev), CudaTensor<float>(k.shape, dev),
                                 CudaTensor<float>(v.shape, dev), std::nullopt};
  CudaTensor<float> delta(lse.shape, dev);
  const Geo g = geometry(q, k, v, bias, o);
  const float* pb = bias ? bias->data() : nullptr;
  const int64_t q_rows = q.shape[0] * q.shape[1] * q.shape[2], k_rows = k.shape[0] * k.shape[1] * k.shape[2];
  if (q_rows > 0) {
    backward_q_kernel<<<grid_for(q_rows, ctx), kThreads, 0, ctx.stream>>>(
        q.data(), k.data(), v.data(), pb, out.data(), lse.data(), dout.data(), r.q.data(), delta.data(), g, q_rows);
    check_launch("attention backward_q_kernel");
  }
  if (k_rows > 0) {
    backward_kv_kernel<<<grid_for(k_rows, ctx), kThreads, 0, ctx.stream>>>(
        q.data(), k.data(), v.data(), pb, lse.data(), dout.data(), delta.data(), r.k.data(), r.v.data(), g, k_rows);
    check_launch("attention backward_kv_kernel");
  }
  return r;
}

}  // namespace ember::cuda
