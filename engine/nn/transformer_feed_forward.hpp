#pragma once
// What TransformerEncoderLayer and TransformerDecoderLayer share: the activation between linear1 and linear2
// (PyTorch's "relu" / "gelu", GELU exact, as F.gelu) and the residual blocks' bookkeeping.
#include <string>

#include <fmt/format.h>

#include "engine/tensor/tensor.hpp"

namespace ember::nn {

// Values are ember.h's ember_transformer_activation.
enum class TransformerActivation : int32_t { Relu = 0, Gelu = 1 };

inline TransformerActivation transformer_activation_from_name(const std::string& name) {
  if (name == "relu") return TransformerActivation::Relu;
  if (name == "gelu") return TransformerActivation::Gelu;
  throw ArgumentError(fmt::format("transformer activation should be relu/gelu, not {}", name));
}

namespace detail {
template <Backend B, std::size_t D>
Tensor<B, D> transformer_activation(TransformerActivation a, const Tensor<B, D>& x) {
  return a == TransformerActivation::Gelu ? x.gelu(false) : x.relu();
}
inline void check_transformer_config(const char* who, int64_t d_model, int64_t nhead, int64_t dim_feedforward,
                                     double dropout, double eps) {
  if (d_model <= 0 || nhead <= 0 || dim_feedforward <= 0)
    throw ArgumentError(fmt::format("{}: d_model, nhead and dim_feedforward must be positive, got {}, {}, {}", who,
                                    d_model, nhead, dim_feedforward));
  if (!(dropout >= 0.0 && dropout <= 1.0))
    throw ArgumentError(fmt::format("{}: dropout must be in [0, 1], got {:f}", who, dropout));
  if (!(eps >= 0.0)) throw ArgumentError(fmt::format("{}: layer_norm_eps must be >= 0", who));
  // Bounded before the weights' element counts (d_model * dim_feedforward, 3 * d_model) can overflow.
  constexpr int64_t kMaxDim = int64_t{1} << 24;
  if (d_model > kMaxDim || dim_feedforward > kMaxDim)
    throw ArgumentError(fmt::format("{}: d_model {} and dim_feedforward {} must be at most {}", who, d_model,
                                    dim_feedforward, kMaxDim));
}
}  // namespace detail

}  // namespace ember::nn
