// Scaled-dot-product attention for short sequences on the CPU: each (batch, head) is a few whole-head GEMMs on
// OpenBLAS around one [l, s] score matrix held in a thread's scratch (attention_geometry.hpp says when this path is
// taken). At sequence 64 / head dim 32 the flash kernel (attention.cpp) spends most of its time in per-row online
// softmax bookkeeping and 64-wide axpys that load and store their accumulator every step; here the products run in
// BLAS's register-blocked kernels and the softmax is one pass per row.
//
//   forward:  S = scale q k^T (+ bias; keys a causal row cannot see are skipped, not set to -inf),
//             lse = logsumexp rows, P = exp(S - lse), out = P v
//   backward: P recomputed from lse, dv = P^T dout, dP = dout v^T, ds = P (dP - rowsum(dout * out)) scale,
//             dq = ds k, dk = ds^T q        (FlashAttention-2's formulas, on whole heads)
// Same results as the flash path up to rounding: the same exp, the same masking (a fully masked row gives output
// 0, lse +inf and no gradient).
//
// A head is read and written through row strides (HeadView), so the same kernels serve q, k, v as [B, H, L, E]
// tensors and as the column blocks of one qkv Linear's output [N, T, 3 H E] (sdpa_packed_*: no head permutes).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <type_traits>

#include "backends/cpu/allocator.hpp"
#include "backends/cpu/attention.hpp"
#include "backends/cpu/attention_geometry.hpp"
#include "backends/cpu/kernels.hpp"
#include "backends/cpu/parallel.hpp"
#include "backends/cpu/vec_math.hpp"

namespace ember::cpu {
namespace {

using sdpa_detail::Geometry;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define EMBER_SDPA_MM_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define EMBER_SDPA_MM_CLONES
#endif

template <class T>
inline T fexp(T x) {
  if constexpr (std::is_same_v<T, float>) return vm::exp(x);
  else return std::exp(x);
}

// One head's operands: row i of q at q + i * ldq, and so on; lse and di are contiguous.
template <class T>
struct HeadView {
  const T *q, *k, *v;
  int64_t ldq, ldk, ldv;
  const T* bias;  // null, or the bias of this (batch, head) with g's strides
};

// Causal attention splits a head's rows in two blocks: rows [0, r) see only keys [0, r), so their products stop
// there, a quarter of each GEMM's work (P is zero past a row's visible keys; the products are those of the full
// matrices minus zero terms). Without causal masking one block holds every row and key.
struct RowBlock {
  int64_t r0, r1;  // rows [r0, r1)
  int64_t keys;    // keys [0, keys) visible to some row of the block
};
inline int64_t row_blocks(const Geometry& g, RowBlock (&b)[2]) {
  if (!g.causal) {
    b[0] = {0, g.l, g.s};
    return 1;
  }
  const int64_t r = g.l / 2;
  b[0] = {0, r, std::min(g.s, r)};
  b[1] = {r, g.l, std::min(g.s, g.l)};
  return 2;
}

// The scores of one head: s[i * g.s + j] = scale q_i . k_j + bias, for the keys of row i's block (entries past them
// are left as they are). Causal masking (key j > row i) is left to the readers, which stop at visible(g, i).
template <class T>
void scores(const Geometry& g, const HeadView<T>& h, T* s) {
  RowBlock blocks[2];
  const int64_t nb = row_blocks(g, blocks);
  for (int64_t b = 0; b < nb; ++b) {
    const RowBlock& rb = blocks[b];
    gemm<T>(false, true, rb.r1 - rb.r0, rb.keys, g.e, static_cast<T>(g.scale), h.q + rb.r0 * h.ldq, h.ldq, h.k,
            h.ldk, T(0), s + rb.r0 * g.s, g.s);
  }
  if (!h.bias) return;
  for (int64_t i = 0; i < g.l; ++i) {
    T* row = s + i * g.s;
    const T* br = h.bias + i * g.bias_l;
    const int64_t n = g.causal ? std::min(g.s, i + 1) : g.s;  // the keys row i sees (visible() below)
    for (int64_t j = 0; j < n; ++j) row[j] += br[j * g.bias_s];
  }
}

// The keys row i can see: causal masks those after it. Only these are exponentiated: exp of a masked -inf is
// computed from the clamped argument, whose product with 2^-126 is subnormal, and every subnormal result costs a
// microcode assist (~150 cycles) before the select turns it into 0; half of a causal matrix is masked.
inline int64_t visible(const Geometry& g, int64_t i) { return g.causal ? std::min(g.s, i + 1) : g.s; }

// Sum of n values in kLanes independent partial sums, so that GCC vectorizes it (a single accumulator is a serial
// chain: floating-point addition is not reassociated without -ffast-math).
constexpr int64_t kLanes = 16;
template <class T>
[[gnu::always_inline]] inline T lane_sum(const T* __restrict x, int64_t n) {
  T part[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t t = 0; t < kLanes; ++t) part[t] += x[j + t];
  T sum = 0;
  for (; j < n; ++j) sum += x[j];
  for (int64_t t = 0; t < kLanes; ++t) sum += part[t];
  return sum;
}
template <class T>
[[gnu::always_inline]] inline T lane_max(const T* __restrict x, int64_t n) {
  T part[kLanes];
  for (int64_t t = 0; t < kLanes; ++t) part[t] = -std::numeric_limits<T>::infinity();
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int64_t t = 0; t < kLanes; ++t) part[t] = part[t] > x[j + t] ? part[t] : x[j + t];
  T mx = -std::numeric_limits<T>::infinity();
  for (; j < n; ++j) mx = mx > x[j] ? mx : x[j];
  for (int64_t t = 0; t < kLanes; ++t) mx = mx > part[t] ? mx : part[t];
  return mx;
}

// Rows of s become P = exp(s - lse) in place; lse is +inf for a fully masked row (whose P is then 0).
template <class T>
EMBER_SDPA_MM_CLONES void softmax_rows(const Geometry& g, T* __restrict s, T* __restrict lse) {
  constexpr T kInf = std::numeric_limits<T>::infinity();
  for (int64_t i = 0; i < g.l; ++i) {
    T* __restrict row = s + i * g.s;
    const int64_t n = visible(g, i);
    for (int64_t j = n; j < g.s; ++j) row[j] = 0;
    const T mx = lane_max(row, n);
    if (mx == -kInf) {
      for (int64_t j = 0; j < n; ++j) row[j] = 0;
      lse[i] = kInf;
      continue;
    }
    for (int64_t j = 0; j < n; ++j) row[j] = fexp(row[j] - mx);
    const T sum = lane_sum(row, n);
    const T inv = T(1) / sum;
    for (int64_t j = 0; j < n; ++j) row[j] *= inv;
    lse[i] = mx + std::log(sum);
  }
}

// P = exp(s - lse) from the saved logsumexp, then ds = P (dP - di) scale into dp; p keeps P.
template <class T>
EMBER_SDPA_MM_CLONES void score_grads(const Geometry& g, const T* __restrict lse, const T* __restrict di,
                                      T* __restrict p, T* __restrict dp) {
  const T scale = static_cast<T>(g.scale);
  for (int64_t i = 0; i < g.l; ++i) {
    T* __restrict prow = p + i * g.s;
    T* __restrict dprow = dp + i * g.s;
    const int64_t n = lse[i] == std::numeric_limits<T>::infinity() ? 0 : visible(g, i);
    const T li = lse[i], d = di[i];
    for (int64_t j = 0; j < n; ++j) prow[j] = fexp(prow[j] - li);  // 0 for keys masked by the bias
    for (int64_t j = 0; j < n; ++j) dprow[j] = prow[j] * (dprow[j] - d) * scale;
    for (int64_t j = n; j < g.s; ++j) prow[j] = 0, dprow[j] = 0;
  }
}

template <class T>
std::shared_ptr<Buffer> scratch(int64_t n) {
  return allocate(static_cast<std::size_t>(n) * sizeof(T));
}

// One head forward: out (row stride ldo) and lse [l]; s is an [l, s] scratch.
template <class T>
void forward_head(const Geometry& g, const HeadView<T>& h, T* out, int64_t ldo, T* lse, T* s) {
  scores<T>(g, h, s);
  softmax_rows<T>(g, s, lse);
  RowBlock blocks[2];
  const int64_t nb = row_blocks(g, blocks);
  for (int64_t b = 0; b < nb; ++b) {
    const RowBlock& rb = blocks[b];
    gemm<T>(false, false, rb.r1 - rb.r0, g.ev, rb.keys, T(1), s + rb.r0 * g.s, g.s, h.v, h.ldv, T(0),
            out + rb.r0 * ldo, ldo);
  }
}

// One head backward from out, lse and dout (out and dout with row stride ldo); dq, dk, dv with the strides of q, k,
// v. p and dp are [l, s] scratches, di [l].
template <class T>
void backward_head(const Geometry& g, const HeadView<T>& h, const T* out, const T* dout, int64_t ldo, const T* lse,
                   T* dq, T* dk, T* dv, T* p, T* dp, T* di) {
  for (int64_t i = 0; i < g.l; ++i) {
    T d = 0;
    for (int64_t x = 0; x < g.ev; ++x) d += dout[i * ldo + x] * out[i * ldo + x];
    di[i] = d;
  }
  RowBlock blocks[2];
  const int64_t nb = row_blocks(g, blocks);
  scores<T>(g, h, p);
  for (int64_t b = 0; b < nb; ++b) {
    const RowBlock& rb = blocks[b];
    gemm<T>(false, true, rb.r1 - rb.r0, rb.keys, g.ev, T(1), dout + rb.r0 * ldo, ldo, h.v, h.ldv, T(0),
            dp + rb.r0 * g.s, g.s);
  }
  score_grads<T>(g, lse, di, p, dp);  // zero past each row's visible keys
  for (int64_t b = 0; b < nb; ++b) {
    const RowBlock& rb = blocks[b];
    gemm<T>(false, false, rb.r1 - rb.r0, g.e, rb.keys, T(1), dp + rb.r0 * g.s, g.s, h.k, h.ldk, T(0),
            dq + rb.r0 * h.ldq, h.ldq);
  }
  // dv and dk by key blocks: keys [k0, k1) are seen by rows [r0, l) only (causal: row i sees keys <= i), and keys
  // no row sees (causal with s > l) get zero gradients.
  int64_t k0 = 0;
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t k1 = blocks[b].keys, r0 = blocks[b].r0;
    if (k1 <= k0) continue;
    const T* pb = p + r0 * g.s + k0;
    const T* dpb = dp + r0 * g.s + k0;
    gemm<T>(true, false, k1 - k0, g.ev, g.l - r0, T(1), pb, g.s, dout + r0 * ldo, ldo, T(0), dv + k0 * h.ldv, h.ldv);
    gemm<T>(true, false, k1 - k0, g.e, g.l - r0, T(1), dpb, g.s, h.q + r0 * h.ldq, h.ldq, T(0), dk + k0 * h.ldk,
            h.ldk);
    k0 = k1;
  }
  for (int64_t j = k0; j < g.s; ++j) {
    std::fill(dv + j * h.ldv, dv + j * h.ldv + g.ev, T(0));
    std::fill(dk + j * h.ldk, dk + j * h.ldk + g.e, T(0));
  }
}

// Heads per thread: one head is ~l * s * (e + ev) multiply-adds forward, about twice that backward.
inline int64_t heads_grain(const Geometry& g, int64_t factor) {
  return std::max<int64_t>(1, kParallelThreshold / std::max<int64_t>(1, factor * g.l * g.s * (g.e + g.ev)));
}

}  // namespace

template <class T>
SdpaForward<CpuTensor<T>> sdpa_forward_matmul(const CpuTensor<T>& q, const CpuTensor<T>& k, const CpuTensor<T>& v,
                                              const CpuTensor<T>* bias, const SdpaOptions& o) {
  const Geometry g = sdpa_detail::geometry(q.shape, k.shape, v.shape, bias ? &bias->shape : nullptr, o);
  SdpaForward<CpuTensor<T>> r{CpuTensor<T>(Shape{g.b, g.h, g.l, g.ev}), CpuTensor<T>(Shape{g.b, g.h, g.l})};
  const T *pq = q.data(), *pk = k.data(), *pv = v.data(), *pb = bias ? bias->data() : nullptr;
  T *po = r.out.data(), *pl = r.lse.data();
  parallel_for(g.b * g.h, heads_grain(g, 1), [&](int64_t lo, int64_t hi) {
    const auto buf = scratch<T>(g.l * g.s);
    for (int64_t bh = lo; bh < hi; ++bh) {
      const HeadView<T> h{pq + bh * g.l * g.e, pk + bh * g.s * g.e, pv + bh * g.s * g.ev, g.e, g.e, g.ev,
                          pb ? pb + (bh / g.h) * g.bias_b + (bh % g.h) * g.bias_h : nullptr};
      forward_head<T>(g, h, po + bh * g.l * g.ev, g.ev, pl + bh * g.l, static_cast<T*>(buf->ptr));
    }
  });
  return r;
}

template <class T>
SdpaGrads<CpuTensor<T>> sdpa_backward_matmul(const CpuTensor<T>& q, const CpuTensor<T>& k, const CpuTensor<T>& v,
                                             const CpuTensor<T>* bias, const CpuTensor<T>& out,
                                             const CpuTensor<T>& lse, const CpuTensor<T>& dout,
                                             const SdpaOptions& o) {
  const Geometry g = sdpa_detail::geometry(q.shape, k.shape, v.shape, bias ? &bias->shape : nullptr, o);
  SdpaGrads<CpuTensor<T>> r{CpuTensor<T>(q.shape), CpuTensor<T>(k.shape), CpuTensor<T>(v.shape), std::nullopt};
  const T *pq = q.data(), *pk = k.data(), *pv = v.data(), *pb = bias ? bias->data() : nullptr;
  const T *po = out.data(), *pl = lse.data(), *pdo = dout.data();
  T *dq = r.q.data(), *dk = r.k.data(), *dv = r.v.data();
  parallel_for(g.b * g.h, heads_grain(g, 2), [&](int64_t lo, int64_t hi) {
    const auto buf = scratch<T>(2 * g.l * g.s + g.l);
    T* p = static_cast<T*>(buf->ptr);
    for (int64_t bh = lo; bh < hi; ++bh) {
      const HeadView<T> h{pq + bh * g.l * g.e, pk + bh * g.s * g.e, pv + bh * g.s * g.ev, g.e, g.e, g.ev,
                          pb ? pb + (bh / g.h) * g.bias_b + (bh % g.h) * g.bias_h : nullptr};
      backward_head<T>(g, h, po + bh * g.l * g.ev, pdo + bh * g.l * g.ev, g.ev, pl + bh * g.l, dq + bh * g.l * g.e,
                       dk + bh * g.s * g.e, dv + bh * g.s * g.ev, p, p + g.l * g.s, p + 2 * g.l * g.s);
    }
  });
  return r;
}

// qkv [N, T, 3 d] with d = heads * E: head h of q at columns h * E, of k at d + h * E, of v at 2 d + h * E.
namespace {
Geometry packed_geometry(const Shape& qkv, int64_t heads, const SdpaOptions& o) {
  const int64_t n = qkv[0], t = qkv[1], e = qkv[2] / 3 / heads;
  return sdpa_detail::geometry(Shape{n, heads, t, e}, Shape{n, heads, t, e}, Shape{n, heads, t, e}, nullptr, o);
}
}  // namespace

template <class T>
SdpaForward<CpuTensor<T>> sdpa_packed_forward(const CpuTensor<T>& qkv, int64_t heads, const SdpaOptions& o) {
  const Geometry g = packed_geometry(qkv.shape, heads, o);
  const int64_t d = heads * g.e, t = g.l;
  SdpaForward<CpuTensor<T>> r{CpuTensor<T>(Shape{g.b, t, d}), CpuTensor<T>(Shape{g.b, heads, t})};
  const T* px = qkv.data();
  T *po = r.out.data(), *pl = r.lse.data();
  parallel_for(g.b * heads, heads_grain(g, 1), [&](int64_t lo, int64_t hi) {
    const auto buf = scratch<T>(g.l * g.s);
    for (int64_t bh = lo; bh < hi; ++bh) {
      const T* q = px + (bh / heads) * t * 3 * d + (bh % heads) * g.e;
      const HeadView<T> h{q, q + d, q + 2 * d, 3 * d, 3 * d, 3 * d, nullptr};
      forward_head<T>(g, h, po + (bh / heads) * t * d + (bh % heads) * g.e, d, pl + bh * t, static_cast<T*>(buf->ptr));
    }
  });
  return r;
}

template <class T>
CpuTensor<T> sdpa_packed_backward(const CpuTensor<T>& qkv, const CpuTensor<T>& out, const CpuTensor<T>& lse,
                                  const CpuTensor<T>& dout, int64_t heads, const SdpaOptions& o) {
  const Geometry g = packed_geometry(qkv.shape, heads, o);
  const int64_t d = heads * g.e, t = g.l;
  CpuTensor<T> dqkv(qkv.shape);
  const T *px = qkv.data(), *po = out.data(), *pl = lse.data(), *pdo = dout.data();
  T* dx = dqkv.data();
  parallel_for(g.b * heads, heads_grain(g, 2), [&](int64_t lo, int64_t hi) {
    const auto buf = scratch<T>(2 * g.l * g.s + g.l);
    T* p = static_cast<T*>(buf->ptr);
    for (int64_t bh = lo; bh < hi; ++bh) {
      const int64_t in_off = (bh / heads) * t * 3 * d + (bh % heads) * g.e;
      const int64_t out_off = (bh / heads) * t * d + (bh % heads) * g.e;
      const T* q = px + in_off;
      const HeadView<T> h{q, q + d, q + 2 * d, 3 * d, 3 * d, 3 * d, nullptr};
      T* dq = dx + in_off;
      backward_head<T>(g, h, po + out_off, pdo + out_off, d, pl + bh * t, dq, dq + d, dq + 2 * d, p,
                       p + g.l * g.s, p + 2 * g.l * g.s);
    }
  });
  return dqkv;
}

template SdpaForward<CpuTensor<float>> sdpa_forward_matmul<float>(const CpuTensor<float>&, const CpuTensor<float>&,
                                                                  const CpuTensor<float>&, const CpuTensor<float>*,
                                                                  const SdpaOptions&);
template SdpaForward<CpuTensor<double>> sdpa_forward_matmul<double>(const CpuTensor<double>&,
                                                                    const CpuTensor<double>&,
                                                                    const CpuTensor<double>&,
                                                                    const CpuTensor<double>*, const SdpaOptions&);
template SdpaGrads<CpuTensor<float>> sdpa_backward_matmul<float>(const CpuTensor<float>&, const CpuTensor<float>&,
                                                                 const CpuTensor<float>&, const CpuTensor<float>*,
                                                                 const CpuTensor<float>&, const CpuTensor<float>&,
                                                                 const CpuTensor<float>&, const SdpaOptions&);
template SdpaGrads<CpuTensor<double>> sdpa_backward_matmul<double>(const CpuTensor<double>&,
                                                                   const CpuTensor<double>&,
                                                                   const CpuTensor<double>&,
                                                                   const CpuTensor<double>*,
                                                                   const CpuTensor<double>&,
                                                                   const CpuTensor<double>&,
                                                                   const CpuTensor<double>&, const SdpaOptions&);

template SdpaForward<CpuTensor<float>> sdpa_packed_forward<float>(const CpuTensor<float>&, int64_t,
                                                                  const SdpaOptions&);
template SdpaForward<CpuTensor<double>> sdpa_packed_forward<double>(const CpuTensor<double>&, int64_t,
                                                                    const SdpaOptions&);
template CpuTensor<float> sdpa_packed_backward<float>(const CpuTensor<float>&, const CpuTensor<float>&,
                                                      const CpuTensor<float>&, const CpuTensor<float>&, int64_t,
                                                      const SdpaOptions&);
template CpuTensor<double> sdpa_packed_backward<double>(const CpuTensor<double>&, const CpuTensor<double>&,
                                                        const CpuTensor<double>&, const CpuTensor<double>&, int64_t,
                                                        const SdpaOptions&);

}  // namespace ember::cpu
