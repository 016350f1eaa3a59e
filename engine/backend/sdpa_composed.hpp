#pragma once
// Scaled-dot-product attention composed from tensor ops: the [B, H, L, S] score matrix is materialized. It is the
// optional op's default (optional_ops.hpp) for backends without a fused kernel, and, on Tensor<Autodiff<...>>,
// the reference every fused kernel is tested against (each op differentiable, the bias included).
// Fully masked rows give 0 (torch 1.13 gives NaN): their row max is -inf, shifted by 0 instead, every exp is then
// 0 and the zero denominator is replaced by 1.
#include <array>
#include <limits>

#include "engine/backend/sdpa_types.hpp"
#include "engine/tensor/tensor.hpp"

namespace ember::sdpa {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// q @ k^T * scale + bias, -inf above the diagonal when causal.
template <Backend B>
Tensor<B, 4> masked_scores(const Tensor<B, 4>& q, const Tensor<B, 4>& k, const Tensor<B, 4>* bias,
                           const SdpaOptions& o) {
  const int64_t L = q.dim(2), S = k.dim(2);
  auto scores = q.matmul(k.swap_dims(2, 3)).mul_scalar(o.scale);
  if (bias) scores = scores.add(*bias);
  if (o.is_causal) {
    const auto dev = q.device();
    const auto rows = Tensor<B, 1, Int>::arange(0, L, dev).reshape(std::array<int64_t, 2>{L, 1});
    const auto cols = Tensor<B, 1, Int>::arange(0, S, dev).reshape(std::array<int64_t, 2>{1, S});
    scores = scores.mask_fill(cols.gt(rows).reshape(std::array<int64_t, 4>{1, 1, L, S}), -kInf);
  }
  return scores;
}

// The row softmax p and the row logsumexp [B, H, L, 1] (+inf for a fully masked row).
template <Backend B>
struct RowSoftmax {
  Tensor<B, 4> p, lse;
};
template <Backend B>
RowSoftmax<B> row_softmax(const Tensor<B, 4>& scores) {
  auto row_max = scores.max_dim(3).detach();
  row_max = row_max.mask_fill(row_max.isinf(), 0.0);
  const auto e = scores.sub(row_max).exp();
  const auto denom = e.sum_dim(3);
  const auto empty = denom.eq(0.0);
  return {e.div(denom.mask_fill(empty, 1.0)), row_max.add(denom.log()).mask_fill(empty, kInf)};
}

template <Backend B>
Tensor<B, 4> forward(const Tensor<B, 4>& q, const Tensor<B, 4>& k, const Tensor<B, 4>& v, const Tensor<B, 4>* bias,
                     const SdpaOptions& o) {
  return row_softmax(masked_scores(q, k, bias, o)).p.matmul(v);
}

// The backward from the saved output and logsumexp (FlashAttention's formulas, here on whole matrices):
//   p = exp(s - lse), dv = p^T do, dp = do v^T, ds = p * (dp - rowsum(do * out)),
//   dq = ds k * scale, dk = ds^T q * scale, dbias = ds summed over the bias's broadcast dims.
template <Backend B>
SdpaGrads<typename B::FloatPrimitive> backward(const Tensor<B, 4>& q, const Tensor<B, 4>& k, const Tensor<B, 4>& v,
                                               const Tensor<B, 4>* bias, const Tensor<B, 4>& out,
                                               const Tensor<B, 4>& lse, const Tensor<B, 4>& dout,
                                               const SdpaOptions& o, bool want_bias_grad) {
  const auto p = masked_scores(q, k, bias, o).sub(lse).exp();
  const auto dv = p.swap_dims(2, 3).matmul(dout);
  const auto dp = dout.matmul(v.swap_dims(2, 3));
  const auto ds = p.mul(dp.sub(dout.mul(out).sum_dim(3)));
  SdpaGrads<typename B::FloatPrimitive> g{ds.matmul(k).mul_scalar(o.scale).primitive(),
                                          ds.swap_dims(2, 3).matmul(q).mul_scalar(o.scale).primitive(),
                                          dv.primitive(), std::nullopt};
  if (bias && want_bias_grad) {
    auto db = ds;
    for (int64_t d = 0; d < 4; ++d)
      if (bias->dim(d) == 1 && ds.dim(d) != 1) db = db.sum_dim(d);
    g.bias = db.primitive();
  }
  return g;
}

}  // namespace ember::sdpa
