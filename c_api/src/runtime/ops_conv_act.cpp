// conv2d_relu(x, w, bias, o) on runtime tensors (issue 19, h-ortconv): the ONNX importer's Conv + Relu as one
// backend call. Under no_grad, or when no operand requires grad, the inner backend's fused op runs
// (optional_ops.hpp float_conv2d_relu: on the CPU oneDNN applies the ReLU in the convolution's output pass) and
// nothing is recorded. When a gradient is wanted it is the recorded conv2d and ReLU, so fine-tuning an imported
// model gets the same gradients as with two nodes.
#include <fmt/format.h>

#include <optional>

#include "c_api/src/runtime/backend_ops.hpp"
#include "engine/backend/optional_ops.hpp"
#include "engine/tensor/checks.hpp"

namespace ember::capi {
namespace ops {

template <class B>
DynTensor conv2d_relu(const DynTensor& x, const DynTensor& w, const DynTensor* bias, const Conv2dOptions& o) {
  return visit_same<B, DynTensor>(x, w, "conv2d_relu", [&](const auto& xt, const auto& wt) -> DynTensor {
    const auto& xp = float_of(xt, "conv2d_relu: input");
    const auto& wp = float_of(wt, "conv2d_relu: weight");
    const Shape sx = tensor_shape(xt), sw = tensor_shape(wt);
    if (sx.rank() != 4 || sw.rank() != 4)
      throw ShapeError(fmt::format("conv2d_relu: input and weight must be rank 4, got {} and {}", sx.to_string(),
                                   sw.to_string()));
    const typename B::FloatPrimitive* bp = nullptr;
    Shape sb;
    if (bias) {
      const auto& bt = same_backend<B>(*bias, xt, "conv2d_relu");
      bp = &float_of(bt, "conv2d_relu: bias");
      sb = tensor_shape(bt);
      if (sb.rank() != 1) throw ShapeError(fmt::format("conv2d_relu: bias must be rank 1, got {}", sb.to_string()));
    }
    // The output shape is checked first, as conv2d does: zero-channel inputs make it unbounded by the input sizes.
    check_shape("conv2d_relu", checks::conv2d(sx, sw, bias ? &sb : nullptr, o));
    if constexpr (AutodiffBackend<B>) {
      using Inner = typename B::InnerBackend;
      const bool record = !autodiff::no_grad_flag() && (B::float_is_require_grad(xp) || B::float_is_require_grad(wp) ||
                                                         (bp && B::float_is_require_grad(*bp)));
      if (record) return wrap<B, Float>(B::float_unary(B::conv2d(xp, wp, bp, o), UnaryOp::Relu));
      const auto ib = bp ? std::optional(B::inner(*bp)) : std::nullopt;
      return wrap<B, Float>(B::from_inner(
          optional_ops::float_conv2d_relu<Inner>(B::inner(xp), B::inner(wp), ib ? &*ib : nullptr, o)));
    } else {
      return wrap<B, Float>(optional_ops::float_conv2d_relu<B>(xp, wp, bp, o));
    }
  });
}

}  // namespace ops

EMBER_RUNTIME_CONV_ACT_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
