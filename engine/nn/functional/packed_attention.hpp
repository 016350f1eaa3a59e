#pragma once
// Scaled-dot-product attention on the output of one qkv projection, without splitting it into heads first:
//   qkv [N, T, 3 d] (d = num_heads * E) holds q, k, v as the column blocks [0, d), [d, 2d), [2d, 3d), head h at
//   columns h * E of each -- what Linear(d, 3 d) writes, as GPT-style models use it -- and the result is
//   [N, T, d] with the heads merged the same way (ready for the output projection).
// It equals splitting q, k, v into [N, H, T, E] heads, scaled_dot_product_attention(q, k, v, none, is_causal,
// scale) and merging the heads back (the composed default of optional_ops.hpp does exactly that); a backend with
// the optional op (HasPackedSdpa, the CPU for short sequences) reads and writes the heads in place instead, which
// saves the eight permute copies a layer's forward and backward make and the concatenation of the three gradients.
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "engine/backend/optional_ops.hpp"
#include "engine/tensor/tensor.hpp"

namespace ember::nn {

template <Backend B>
Tensor<B, 3> packed_scaled_dot_product_attention(const Tensor<B, 3>& qkv, int64_t num_heads, bool is_causal = false,
                                                 std::optional<double> scale = std::nullopt) {
  const auto s = qkv.shape();
  if (num_heads < 1 || s[2] % (3 * num_heads) != 0)
    throw ShapeError(fmt::format("packed_scaled_dot_product_attention: qkv {} must be [N, T, 3 * d] with d a multiple "
                                 "of the {} heads",
                                 s.to_string(), num_heads));
  const int64_t e = s[2] / 3 / num_heads;
  const SdpaOptions o{is_causal, scale ? *scale : 1.0 / std::sqrt(static_cast<double>(e))};
  return Tensor<B, 3>(optional_ops::float_sdpa_packed<B>(qkv.primitive(), num_heads, o).out);
}

}  // namespace ember::nn
