#pragma once
// Scaled dot-product attention (torch.nn.functional.scaled_dot_product_attention's semantics, without dropout):
//   out = softmax(q @ k^T * scale + attn_bias [+ causal mask]) @ v
// on q [B, H, L, E], k [B, H, S, E], v [B, H, S, Ev] -> out [B, H, L, Ev].
//   attn_bias  optional float tensor broadcastable to [B, H, L, S], added to the scores. A boolean mask is the
//              caller's to convert (-inf where a position must not be attended, 0 elsewhere).
//   is_causal  query i attends to keys j <= i (top-left aligned, like torch: with S != L row i still sees 0..i).
//   scale      defaults to 1 / sqrt(E).
// Fully masked rows (every score -inf) give zeros, not torch's NaN: a padded query row must not poison a batch
// (its output and every gradient through it are 0). This is what the fused kernels compute too.
// The backends' fused, tiled kernels (flash attention: no [L, S] score matrix) run where a backend has them
// (optional_ops.hpp HasFusedSdpa); elsewhere the composed path of engine/backend/sdpa_composed.hpp.
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include <fmt/format.h>

#include "engine/backend/optional_ops.hpp"
#include "engine/backend/sdpa_composed.hpp"
#include "engine/tensor/tensor.hpp"

namespace ember::nn {

namespace detail {

template <Backend B>
void check_sdpa_shapes(const Tensor<B, 4>& q, const Tensor<B, 4>& k, const Tensor<B, 4>& v,
                       const std::optional<Tensor<B, 4>>& attn_bias) {
  const auto qs = q.shape(), ks = k.shape(), vs = v.shape();
  if (qs[0] != ks[0] || qs[0] != vs[0] || qs[1] != ks[1] || qs[1] != vs[1] || qs[3] != ks[3] || ks[2] != vs[2])
    throw ShapeError(fmt::format(
        "scaled_dot_product_attention: q {}, k {}, v {} must be [B, H, L, E], [B, H, S, E], [B, H, S, Ev]",
        qs.to_string(), ks.to_string(), vs.to_string()));
  if (attn_bias) {
    const auto bs = attn_bias->shape();
    const int64_t full[4] = {qs[0], qs[1], qs[2], ks[2]};
    for (std::size_t d = 0; d < 4; ++d)
      if (bs[d] != 1 && bs[d] != full[d])
        throw ShapeError(fmt::format("scaled_dot_product_attention: attn_bias {} does not broadcast to [{}, {}, {}, {}]",
                                     bs.to_string(), full[0], full[1], full[2], full[3]));
  }
}

// The composed path with every op recorded on its own (Autodiff differentiates each, the bias included): the
// reference the fused kernels are tested and benchmarked against.
template <Backend B>
Tensor<B, 4> sdpa_naive(const Tensor<B, 4>& q, const Tensor<B, 4>& k, const Tensor<B, 4>& v,
                        const std::type_identity_t<std::optional<Tensor<B, 4>>>& attn_bias, bool is_causal,
                        double scale) {
  return sdpa::forward(q, k, v, attn_bias ? &*attn_bias : nullptr, SdpaOptions{is_causal, scale});
}

}  // namespace detail

// attn_bias is a non-deduced context, so a plain Tensor converts to the optional.
template <Backend B>
Tensor<B, 4> scaled_dot_product_attention(const Tensor<B, 4>& q, const Tensor<B, 4>& k, const Tensor<B, 4>& v,
                                          const std::type_identity_t<std::optional<Tensor<B, 4>>>& attn_bias = std::nullopt,
                                          bool is_causal = false, std::optional<double> scale = std::nullopt) {
  detail::check_sdpa_shapes(q, k, v, attn_bias);
  const double s = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(q.dim(3)));
  // The optional op: the backend's fused kernel where it has one (Autodiff records it as one node), the composed
  // default otherwise.
  const SdpaOptions o{is_causal, s};
  using FP = typename B::FloatPrimitive;
  const FP* bias = attn_bias ? &attn_bias->primitive() : nullptr;
  return Tensor<B, 4>(optional_ops::float_sdpa<B>(q.primitive(), k.primitive(), v.primitive(), bias, o).out);
}

}  // namespace ember::nn
