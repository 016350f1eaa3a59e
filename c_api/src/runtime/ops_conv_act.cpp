// conv2d_relu(x, w, bias, o) and conv2d_relu_max_pool(x, w, bias, o, pool) on runtime tensors (issue 19,
// h-ortconv): the ONNX importer's Conv + Relu (+ MaxPool) as one backend call. Under no_grad, or when no operand
// requires grad, the inner backend's fused op runs (optional_ops.hpp float_conv2d_relu / float_conv2d_relu_max_pool:
// on the CPU oneDNN applies the ReLU in the convolution's output pass and pools its blocked output) and nothing is
// recorded. When a gradient is wanted they are the recorded conv2d, ReLU and max_pool2d, so fine-tuning an imported
// model gets the same gradients as with separate nodes.
#include <fmt/format.h>

#include <optional>

#include "c_api/src/runtime/backend_ops.hpp"
#include "engine/backend/optional_ops.hpp"
#include "engine/tensor/checks.hpp"

namespace ember::capi {
namespace {

// float_of with its message built only when it throws: these ops run once per layer of an inference, where
// formatting the message on every call showed in the batch-1 profile.
template <class T>
const auto& float_operand(const T& t, const char* op, const char* what) {
  if (t.kind() != Kind::Float) return float_of(t, fmt::format("{}: {}", op, what));
  return std::get<0>(t.prim);
}

// Checks conv2d's operands as ops_nn.cpp's conv2d does, then runs fused(x, w, bias) on the inner backend when
// nothing is recorded, or recorded(x, w, bias) on B.
template <class B, class Fused, class Recorded>
DynTensor conv_with(const char* op, const DynTensor& x, const DynTensor& w, const DynTensor* bias,
                    const Conv2dOptions& o, const Pool2dOptions* pool, Fused&& fused, Recorded&& recorded) {
  return visit_same<B, DynTensor>(x, w, op, [&](const auto& xt, const auto& wt) -> DynTensor {
    const auto& xp = float_operand(xt, op, "input");
    const auto& wp = float_operand(wt, op, "weight");
    const Shape sx = tensor_shape(xt), sw = tensor_shape(wt);
    if (sx.rank() != 4 || sw.rank() != 4)
      throw ShapeError(fmt::format("{}: input and weight must be rank 4, got {} and {}", op, sx.to_string(),
                                   sw.to_string()));
    const typename B::FloatPrimitive* bp = nullptr;
    Shape sb;
    if (bias) {
      const auto& bt = same_backend<B>(*bias, xt, op);
      bp = &float_operand(bt, op, "bias");
      sb = tensor_shape(bt);
      if (sb.rank() != 1) throw ShapeError(fmt::format("{}: bias must be rank 1, got {}", op, sb.to_string()));
    }
    // The output shape is checked first, as conv2d does: zero-channel inputs make it unbounded by the input sizes.
    const Shape conv_out = checks::conv2d(sx, sw, bias ? &sb : nullptr, o);
    check_shape(op, conv_out);
    if (pool) check_shape(op, checks::pool2d(op, conv_out, *pool));
    if constexpr (AutodiffBackend<B>) {
      const bool record = !autodiff::no_grad_flag() && (B::float_is_require_grad(xp) || B::float_is_require_grad(wp) ||
                                                         (bp && B::float_is_require_grad(*bp)));
      if (record) return wrap<B, Float>(recorded(xp, wp, bp));
      const auto ib = bp ? std::optional(B::inner(*bp)) : std::nullopt;
      return wrap<B, Float>(B::from_inner(fused(B::inner(xp), B::inner(wp), ib ? &*ib : nullptr)));
    } else {
      return wrap<B, Float>(recorded(xp, wp, bp));
    }
  });
}

template <class B>
using Inner = typename B::InnerBackend;

}  // namespace

namespace ops {

template <class B>
DynTensor conv2d_relu(const DynTensor& x, const DynTensor& w, const DynTensor* bias, const Conv2dOptions& o) {
  return conv_with<B>(
      "conv2d_relu", x, w, bias, o, nullptr,
      [&](const auto& xi, const auto& wi, const auto* bi) {
        return optional_ops::float_conv2d_relu<Inner<B>>(xi, wi, bi, o);
      },
      [&](const auto& xp, const auto& wp, const auto* bp) {
        return B::float_unary(B::conv2d(xp, wp, bp, o), UnaryOp::Relu);
      });
}

template <class B>
DynTensor conv2d_relu_max_pool(const DynTensor& x, const DynTensor& w, const DynTensor* bias, const Conv2dOptions& o,
                               const Pool2dOptions& pool) {
  return conv_with<B>(
      "conv2d_relu_max_pool", x, w, bias, o, &pool,
      [&](const auto& xi, const auto& wi, const auto* bi) {
        return optional_ops::float_conv2d_relu_max_pool<Inner<B>>(xi, wi, bi, o, pool);
      },
      [&](const auto& xp, const auto& wp, const auto* bp) {
        return B::max_pool2d(B::float_unary(B::conv2d(xp, wp, bp, o), UnaryOp::Relu), pool).output;
      });
}

}  // namespace ops

EMBER_RUNTIME_CONV_ACT_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
