// Flash attention on the CPU, for sequences past attention_geometry.hpp's bound (shorter ones take
// attention_matmul.cpp). The forward walks the keys in tiles of kBc for a tile of kBr query rows, keeping a
// running row max m, denominator l and unnormalized output (online softmax): extra memory is O(kBr * kBc + kBr *
// Ev) per thread and the [L, S] score matrix never exists. It saves the row logsumexp lse = m + log l. The
// backward recomputes each score tile from q, k and lse (p = exp(s - lse)) and accumulates dq, dk, dv tile by
// tile (FlashAttention-2's formulas, ds = p * (dp - rowsum(do * out))); its extra memory is O(L) per (batch, head)
// for rowsum(do * out) plus the tiles.
//
// The inner loops run over a contiguous row (a key tile's columns, or E / Ev) with no dependence between
// iterations, so GCC vectorizes them; the loops are compiled for AVX-512, AVX2+FMA and baseline x86-64 and picked
// at load time (as elementwise.cpp does). The forward is split over (batch, head, query tile), the backward over
// (batch, head): each task owns its rows of dq, dk, dv, so nothing is shared between threads.
#include "backends/cpu/attention.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <memory>
#include <limits>
#include <type_traits>
#include <vector>

#include "backends/cpu/attention_geometry.hpp"
#include "backends/cpu/parallel.hpp"
#include "backends/cpu/vec_math.hpp"

namespace ember::cpu {
namespace {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define EMBER_SDPA_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define EMBER_SDPA_CLONES
#endif

constexpr int64_t kBr = 64;  // query rows per tile
constexpr int64_t kBc = 64;  // keys per tile

// A thread's tiles, from the CPU allocator (so that its high-water mark, which the benchmark reads, counts them).
template <class T>
class Scratch {
 public:
  explicit Scratch(std::initializer_list<int64_t> sizes) {
    int64_t total = 0;
    for (int64_t n : sizes) total += n;
    buf_ = allocate(static_cast<std::size_t>(total) * sizeof(T));
    T* p = static_cast<T*>(buf_->ptr);
    for (int64_t n : sizes) {
      parts_.push_back(p);
      p += n;
    }
  }
  T* operator[](std::size_t i) const { return parts_[i]; }

 private:
  std::shared_ptr<Buffer> buf_;
  std::vector<T*> parts_;
};

template <class T>
inline T fexp(T x) {
  if constexpr (std::is_same_v<T, float>) return vm::exp(x);
  else return std::exp(x);
}

using sdpa_detail::Geometry;
using sdpa_detail::geometry;

// The helpers are inlined into the cloned loops below, so they are compiled for each clone's instruction set.

// kt[e * kBc + jj] = k[j0 + jj][e]: the key tile transposed, so a score row is an axpy over the tile's columns.
template <class T>
[[gnu::always_inline]] inline void transpose_tile(const T* __restrict k, int64_t nb, int64_t e_dim, T* __restrict kt) {
  for (int64_t jj = 0; jj < nb; ++jj)
    for (int64_t e = 0; e < e_dim; ++e) kt[e * kBc + jj] = k[jj * e_dim + e];
}

// s[ii * kBc + jj] = scale * q[i0 + ii] . k[j0 + jj] + bias, -inf where causal masks it.
template <class T>
[[gnu::always_inline]] inline void score_tile(const Geometry& g, const T* __restrict q, const T* __restrict kt, const T* bias_bh,
                                  int64_t i0, int64_t nr, int64_t j0, int64_t nb, T* __restrict s) {
  const T scale = static_cast<T>(g.scale);
  for (int64_t ii = 0; ii < nr; ++ii) {
    T* __restrict row = s + ii * kBc;
    const T* __restrict qi = q + (i0 + ii) * g.e;
    for (int64_t jj = 0; jj < nb; ++jj) row[jj] = 0;
    for (int64_t e = 0; e < g.e; ++e) {
      const T a = qi[e] * scale;
      const T* __restrict kte = kt + e * kBc;
      for (int64_t jj = 0; jj < nb; ++jj) row[jj] += a * kte[jj];
    }
    if (bias_bh) {
      const T* br = bias_bh + (i0 + ii) * g.bias_l + j0 * g.bias_s;
      for (int64_t jj = 0; jj < nb; ++jj) row[jj] += br[jj * g.bias_s];
    }
    if (g.causal)
      for (int64_t jj = std::max<int64_t>(0, i0 + ii + 1 - j0); jj < nb; ++jj)
        row[jj] = -std::numeric_limits<T>::infinity();
  }
}

// One (batch, head, query tile) of the forward.
template <class T>
EMBER_SDPA_CLONES void forward_tile(const Geometry& g, const T* __restrict q, const T* __restrict k,
                                    const T* __restrict v, const T* bias_bh, int64_t i0, int64_t nr, T* __restrict out,
                                    T* __restrict lse, T* __restrict s, T* __restrict kt, T* __restrict acc,
                                    T* __restrict m, T* __restrict l) {
  constexpr T kNegInf = -std::numeric_limits<T>::infinity();
  for (int64_t ii = 0; ii < nr; ++ii) m[ii] = kNegInf, l[ii] = 0;
  for (int64_t x = 0; x < nr * g.ev; ++x) acc[x] = 0;
  // Causal: keys past the tile's last row are masked for every row of it.
  const int64_t s_end = g.causal ? std::min(g.s, i0 + nr) : g.s;
  for (int64_t j0 = 0; j0 < s_end; j0 += kBc) {
    const int64_t nb = std::min(kBc, s_end - j0);
    transpose_tile(k + j0 * g.e, nb, g.e, kt);
    score_tile(g, q, kt, bias_bh, i0, nr, j0, nb, s);
    for (int64_t ii = 0; ii < nr; ++ii) {
      T* __restrict row = s + ii * kBc;
      T mx = kNegInf;
      for (int64_t jj = 0; jj < nb; ++jj) mx = std::max(mx, row[jj]);
      const T m_new = std::max(m[ii], mx);
      if (m_new == kNegInf) continue;  // every key so far masked: nothing to add
      const T alpha = fexp(m[ii] - m_new);  // 0 when m was -inf
      T sum = 0;
      for (int64_t jj = 0; jj < nb; ++jj) row[jj] = fexp(row[jj] - m_new);
      for (int64_t jj = 0; jj < nb; ++jj) sum += row[jj];
      l[ii] = l[ii] * alpha + sum;
      m[ii] = m_new;
      T* __restrict a = acc + ii * g.ev;
      for (int64_t x = 0; x < g.ev; ++x) a[x] *= alpha;
      for (int64_t jj = 0; jj < nb; ++jj) {
        const T p = row[jj];
        const T* __restrict vj = v + (j0 + jj) * g.ev;
        for (int64_t x = 0; x < g.ev; ++x) a[x] += p * vj[x];
      }
    }
  }
  for (int64_t ii = 0; ii < nr; ++ii) {
    const bool empty = l[ii] == 0;  // fully masked row: output 0, lse +inf (attention.hpp)
    const T inv = empty ? T(0) : T(1) / l[ii];
    for (int64_t x = 0; x < g.ev; ++x) out[(i0 + ii) * g.ev + x] = acc[ii * g.ev + x] * inv;
    lse[i0 + ii] = empty ? std::numeric_limits<T>::infinity() : m[ii] + std::log(l[ii]);
  }
}

// One (batch, head) of the backward. dq, dk, dv are zeroed here and accumulated tile by tile.
template <class T>
EMBER_SDPA_CLONES void backward_head(const Geometry& g, const T* __restrict q, const T* __restrict k,
                                     const T* __restrict v, const T* bias_bh, const T* __restrict out,
                                     const T* __restrict lse, const T* __restrict dout, T* __restrict dq,
                                     T* __restrict dk, T* __restrict dv, T* __restrict s, T* __restrict dp,
                                     T* __restrict kt, T* __restrict vt, T* __restrict di) {
  const T scale = static_cast<T>(g.scale);
  for (int64_t x = 0; x < g.l * g.e; ++x) dq[x] = 0;
  for (int64_t x = 0; x < g.s * g.e; ++x) dk[x] = 0;
  for (int64_t x = 0; x < g.s * g.ev; ++x) dv[x] = 0;
  for (int64_t i = 0; i < g.l; ++i) {
    T d = 0;
    for (int64_t x = 0; x < g.ev; ++x) d += dout[i * g.ev + x] * out[i * g.ev + x];
    di[i] = d;
  }
  for (int64_t j0 = 0; j0 < g.s; j0 += kBc) {
    const int64_t nb = std::min(kBc, g.s - j0);
    transpose_tile(k + j0 * g.e, nb, g.e, kt);
    transpose_tile(v + j0 * g.ev, nb, g.ev, vt);
    // Causal: rows before j0 see none of this tile.
    const int64_t i_first = g.causal ? (j0 / kBr) * kBr : 0;
    for (int64_t i0 = i_first; i0 < g.l; i0 += kBr) {
      const int64_t nr = std::min(kBr, g.l - i0);
      score_tile(g, q, kt, bias_bh, i0, nr, j0, nb, s);
      for (int64_t ii = 0; ii < nr; ++ii) {
        const int64_t i = i0 + ii;
        T* __restrict prow = s + ii * kBc;
        T* __restrict dprow = dp + ii * kBc;
        const T li = lse[i];
        for (int64_t jj = 0; jj < nb; ++jj) prow[jj] = fexp(prow[jj] - li);  // 0 for masked keys and rows
        for (int64_t jj = 0; jj < nb; ++jj) dprow[jj] = 0;
        const T* __restrict doi = dout + i * g.ev;
        for (int64_t x = 0; x < g.ev; ++x) {
          const T a = doi[x];
          const T* __restrict vtx = vt + x * kBc;
          for (int64_t jj = 0; jj < nb; ++jj) dprow[jj] += a * vtx[jj];
        }
        // dprow becomes ds * scale.
        for (int64_t jj = 0; jj < nb; ++jj) dprow[jj] = prow[jj] * (dprow[jj] - di[i]) * scale;
        T* __restrict dqi = dq + i * g.e;
        const T* __restrict qi = q + i * g.e;
        for (int64_t jj = 0; jj < nb; ++jj) {
          const T p = prow[jj], ds = dprow[jj];
          if (p == 0) continue;  // masked: contributes nothing
          T* __restrict dvj = dv + (j0 + jj) * g.ev;
          for (int64_t x = 0; x < g.ev; ++x) dvj[x] += p * doi[x];
          T* __restrict dkj = dk + (j0 + jj) * g.e;
          const T* __restrict kj = k + (j0 + jj) * g.e;
          for (int64_t x = 0; x < g.e; ++x) dkj[x] += ds * qi[x];
          for (int64_t x = 0; x < g.e; ++x) dqi[x] += ds * kj[x];
        }
      }
    }
  }
}

}  // namespace

template <class T>
SdpaForward<CpuTensor<T>> sdpa_forward_flash(const CpuTensor<T>& q, const CpuTensor<T>& k, const CpuTensor<T>& v,
                                             const CpuTensor<T>* bias, const SdpaOptions& o) {
  const Geometry g = geometry(q.shape, k.shape, v.shape, bias ? &bias->shape : nullptr, o);
  SdpaForward<CpuTensor<T>> r{CpuTensor<T>(Shape{g.b, g.h, g.l, g.ev}), CpuTensor<T>(Shape{g.b, g.h, g.l})};
  const int64_t q_tiles = (g.l + kBr - 1) / kBr;
  const int64_t tasks = g.b * g.h * q_tiles;
  const T *pq = q.data(), *pk = k.data(), *pv = v.data(), *pb = bias ? bias->data() : nullptr;
  T *po = r.out.data(), *pl = r.lse.data();
  // One task is ~kBr * S * (E + Ev) multiply-adds: worth a thread from a few tasks on.
  const int64_t work = kBr * g.s * (g.e + g.ev);
  parallel_for(tasks, std::max<int64_t>(1, kParallelThreshold / std::max<int64_t>(1, work)), [&](int64_t lo, int64_t hi) {
    const Scratch<T> t_({kBr * kBc, g.e * kBc, kBr * g.ev, kBr, kBr});
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t bh = t / q_tiles, i0 = (t % q_tiles) * kBr, bi = bh / g.h, hi_ = bh % g.h;
      const T* bias_bh = pb ? pb + bi * g.bias_b + hi_ * g.bias_h : nullptr;
      forward_tile<T>(g, pq + bh * g.l * g.e, pk + bh * g.s * g.e, pv + bh * g.s * g.ev, bias_bh, i0,
                      std::min(kBr, g.l - i0), po + bh * g.l * g.ev, pl + bh * g.l, t_[0], t_[1], t_[2], t_[3], t_[4]);
    }
  });
  return r;
}

template <class T>
SdpaGrads<CpuTensor<T>> sdpa_backward_flash(const CpuTensor<T>& q, const CpuTensor<T>& k, const CpuTensor<T>& v,
                                            const CpuTensor<T>* bias, const CpuTensor<T>& out,
                                            const CpuTensor<T>& lse, const CpuTensor<T>& dout,
                                            const SdpaOptions& o) {
  const Geometry g = geometry(q.shape, k.shape, v.shape, bias ? &bias->shape : nullptr, o);
  SdpaGrads<CpuTensor<T>> r{CpuTensor<T>(q.shape), CpuTensor<T>(k.shape), CpuTensor<T>(v.shape), std::nullopt};
  const T *pq = q.data(), *pk = k.data(), *pv = v.data(), *pb = bias ? bias->data() : nullptr;
  const T *po = out.data(), *pl = lse.data(), *pdo = dout.data();
  T *dq = r.q.data(), *dk = r.k.data(), *dv = r.v.data();
  const int64_t work = g.l * g.s * (2 * g.e + 2 * g.ev);
  parallel_for(g.b * g.h, std::max<int64_t>(1, kParallelThreshold / std::max<int64_t>(1, work)), [&](int64_t lo, int64_t hi) {
    const Scratch<T> t_({kBr * kBc, kBr * kBc, g.e * kBc, g.ev * kBc, g.l});
    for (int64_t bh = lo; bh < hi; ++bh) {
      const int64_t bi = bh / g.h, hi_ = bh % g.h;
      const T* bias_bh = pb ? pb + bi * g.bias_b + hi_ * g.bias_h : nullptr;
      backward_head<T>(g, pq + bh * g.l * g.e, pk + bh * g.s * g.e, pv + bh * g.s * g.ev, bias_bh,
                       po + bh * g.l * g.ev, pl + bh * g.l, pdo + bh * g.l * g.ev, dq + bh * g.l * g.e,
                       dk + bh * g.s * g.e, dv + bh * g.s * g.ev, t_[0], t_[1], t_[2], t_[3], t_[4]);
    }
  });
  return r;
}

// The path by the score matrix's size (attention_geometry.hpp).
template <class T>
SdpaForward<CpuTensor<T>> sdpa_forward(const CpuTensor<T>& q, const CpuTensor<T>& k, const CpuTensor<T>& v,
                                       const CpuTensor<T>* bias, const SdpaOptions& o) {
  if (sdpa_detail::uses_matmul_path(q.shape[2], k.shape[2])) return sdpa_forward_matmul(q, k, v, bias, o);
  return sdpa_forward_flash(q, k, v, bias, o);
}

template <class T>
SdpaGrads<CpuTensor<T>> sdpa_backward(const CpuTensor<T>& q, const CpuTensor<T>& k, const CpuTensor<T>& v,
                                      const CpuTensor<T>* bias, const CpuTensor<T>& out, const CpuTensor<T>& lse,
                                      const CpuTensor<T>& dout, const SdpaOptions& o) {
  if (sdpa_detail::uses_matmul_path(q.shape[2], k.shape[2]))
    return sdpa_backward_matmul(q, k, v, bias, out, lse, dout, o);
  return sdpa_backward_flash(q, k, v, bias, out, lse, dout, o);
}

template SdpaForward<CpuTensor<float>> sdpa_forward<float>(const CpuTensor<float>&, const CpuTensor<float>&,
                                                           const CpuTensor<float>&, const CpuTensor<float>*,
                                                           const SdpaOptions&);
template SdpaForward<CpuTensor<double>> sdpa_forward<double>(const CpuTensor<double>&, const CpuTensor<double>&,
                                                             const CpuTensor<double>&, const CpuTensor<double>*,
                                                             const SdpaOptions&);
template SdpaGrads<CpuTensor<float>> sdpa_backward<float>(const CpuTensor<float>&, const CpuTensor<float>&,
                                                          const CpuTensor<float>&, const CpuTensor<float>*,
                                                          const CpuTensor<float>&, const CpuTensor<float>&,
                                                          const CpuTensor<float>&, const SdpaOptions&);
template SdpaGrads<CpuTensor<double>> sdpa_backward<double>(const CpuTensor<double>&, const CpuTensor<double>&,
                                                            const CpuTensor<double>&, const CpuTensor<double>*,
                                                            const CpuTensor<double>&, const CpuTensor<double>&,
                                                            const CpuTensor<double>&, const SdpaOptions&);

template SdpaForward<CpuTensor<float>> sdpa_forward_flash<float>(const CpuTensor<float>&, const CpuTensor<float>&,
                                                           const CpuTensor<float>&, const CpuTensor<float>*,
                                                           const SdpaOptions&);
template SdpaForward<CpuTensor<double>> sdpa_forward_flash<double>(const CpuTensor<double>&, const CpuTensor<double>&,
                                                             const CpuTensor<double>&, const CpuTensor<double>*,
                                                             const SdpaOptions&);
template SdpaGrads<CpuTensor<float>> sdpa_backward_flash<float>(const CpuTensor<float>&, const CpuTensor<float>&,
                                                          const CpuTensor<float>&, const CpuTensor<float>*,
                                                          const CpuTensor<float>&, const CpuTensor<float>&,
                                                          const CpuTensor<float>&, const SdpaOptions&);
template SdpaGrads<CpuTensor<double>> sdpa_backward_flash<double>(const CpuTensor<double>&, const CpuTensor<double>&,
                                                            const CpuTensor<double>&, const CpuTensor<double>*,
                                                            const CpuTensor<double>&, const CpuTensor<double>&,
                                                            const CpuTensor<double>&, const SdpaOptions&);

}  // namespace ember::cpu
