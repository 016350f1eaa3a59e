// scaled_dot_product_attention on runtime tensors (issue 13): the typed engine function
// (engine/nn/functional/scaled_dot_product_attention.hpp) once the ranks and the backend are checked, so the C ABI
// gets its validation, fused kernels and gradients.
#include <cmath>
#include <optional>

#include "c_api/src/runtime/backend_ops.hpp"
#include "engine/nn/functional/scaled_dot_product_attention.hpp"

namespace ember::capi {
namespace {

template <class B>
Tensor<B, 4> rank4(const BackendTensor<B>& t, const char* what) {
  const auto& p = float_of(t, std::string("scaled_dot_product_attention: ") + what);
  const Shape s = tensor_shape(t);
  if (s.rank() != 4)
    throw ShapeError(std::string("scaled_dot_product_attention: ") + what + " must be rank 4 [B, H, L, E], got " +
                     s.to_string());
  return typed<B, 4>(p);
}

}  // namespace

namespace ops {

template <class B>
DynTensor scaled_dot_product_attention(const DynTensor& q, const DynTensor& k, const DynTensor& v,
                                       const DynTensor* bias, bool is_causal, double scale) {
  return visit_same<B, DynTensor>(q, k, "scaled_dot_product_attention", [&](const auto& qt, const auto& kt) {
    const auto& vt = same_backend<B>(v, qt, "scaled_dot_product_attention");
    std::optional<Tensor<B, 4>> b;
    if (bias) b = rank4(same_backend<B>(*bias, qt, "scaled_dot_product_attention"), "attn_mask");
    const std::optional<double> s = std::isnan(scale) ? std::nullopt : std::optional<double>(scale);
    return wrap<B, Float>(
        nn::scaled_dot_product_attention(rank4(qt, "query"), rank4(kt, "key"), rank4(vt, "value"), b, is_causal, s)
            .primitive());
  });
}

}  // namespace ops

EMBER_RUNTIME_ATTENTION_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
