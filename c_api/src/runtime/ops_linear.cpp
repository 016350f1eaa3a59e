// linear(x, w, bias, trans_w, relu) on runtime tensors (issues 15/19, h-ortmlp): the ONNX importer's Gemm (and
// Gemm + Relu) as one backend call. Under no_grad, or when no operand requires grad, Autodiff runs the inner
// backend's fused op (optional_ops.hpp float_linear_act: the CPU reads PyTorch's [N, K] weight in place and applies
// bias and ReLU in the GEMM's output pass) and records nothing. When a gradient is wanted it composes recorded ops
// (the weight's permute, its linear, ReLU), so fine-tuning an imported model gets the same gradients as before.
#include <fmt/format.h>

#include "c_api/src/runtime/backend_ops.hpp"
#include "engine/backend/optional_ops.hpp"

namespace ember::capi {
namespace ops {

template <class B>
DynTensor linear(const DynTensor& x, const DynTensor& w, const DynTensor* bias, bool trans_w, bool relu) {
  return visit_same<B, DynTensor>(x, w, "linear", [&](const auto& xt, const auto& wt) -> DynTensor {
    const auto& xp = float_of(xt, "linear: input");
    const auto& wp = float_of(wt, "linear: weight");
    const Shape sx = tensor_shape(xt), sw = tensor_shape(wt);
    if (sx.rank() != 2 || sw.rank() != 2)
      throw ShapeError(fmt::format("linear: input and weight must be rank 2, got {} and {}", sx.to_string(),
                                   sw.to_string()));
    const int64_t k = trans_w ? sw[1] : sw[0], n = trans_w ? sw[0] : sw[1];
    if (sx[1] != k)
      throw ShapeError(fmt::format("linear: input {} and {}weight {} do not multiply", sx.to_string(),
                                   trans_w ? "transposed " : "", sw.to_string()));
    const typename B::FloatPrimitive* bp = nullptr;
    if (bias) {
      const auto& bt = same_backend<B>(*bias, xt, "linear");
      bp = &float_of(bt, "linear: bias");
      if (!(tensor_shape(bt) == Shape{n}))
        throw ShapeError(fmt::format("linear: bias must be [{}], got {}", n, tensor_shape(bt).to_string()));
    }
    // Autodiff<B> runs B's fused op when nothing is recorded and composes recorded ops otherwise.
    return wrap<B, Float>(optional_ops::float_linear_act<B>(
        xp, wp, bp, trans_w, relu ? LinearActivation::Relu : LinearActivation::None));
  });
}

}  // namespace ops

EMBER_RUNTIME_LINEAR_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
