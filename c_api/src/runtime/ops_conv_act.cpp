// conv2d_relu(x, w, bias, o) and conv2d_relu_max_pool(x, w, bias, o, pool) on runtime tensors (issue 19,
// h-ortconv): the ONNX importer's Conv + Relu (+ MaxPool) as one backend call. Under no_grad, or when no operand
// requires grad, the inner backend's fused op runs (optional_ops.hpp float_conv2d_relu / float_conv2d_relu_max_pool:
// on the CPU oneDNN applies the ReLU in the convolution's output pass and pools its blocked output) and nothing is
// recorded. When a gradient is wanted they are the recorded conv2d, ReLU and max_pool2d, so fine-tuning an imported
// model gets the same gradients as with separate nodes.
#include <fmt/format.h>

#include <optional>
#include <vector>

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

// The problems whose shape checks this thread passed last. An inference runs the same few convolutions again and
// again, and checks::conv2d formats its message's shapes before it checks anything (two strings and a format per
// call, ~3 % of the batch-1 digits CNN's inference); a problem that passed once passes again.
struct CheckedProblem {
  Shape x, w, bias;
  bool has_bias = false;
  Conv2dOptions o;
  bool has_pool = false;
  Pool2dOptions pool;
};
constexpr std::size_t kCheckedProblems = 16;

bool same_options(const Conv2dOptions& a, const Conv2dOptions& b) {
  return a.stride == b.stride && a.padding == b.padding && a.dilation == b.dilation && a.groups == b.groups;
}
bool same_pool(const Pool2dOptions& a, const Pool2dOptions& b) {
  return a.kernel == b.kernel && a.stride == b.stride && a.padding == b.padding && a.dilation == b.dilation &&
         a.count_include_pad == b.count_include_pad;
}

std::vector<CheckedProblem>& checked_problems() {
  thread_local std::vector<CheckedProblem> problems;
  return problems;
}

bool passed_before(const Shape& sx, const Shape& sw, const Shape* sb, const Conv2dOptions& o,
                   const Pool2dOptions* pool) {
  for (const CheckedProblem& c : checked_problems())
    if (c.x == sx && c.w == sw && c.has_bias == (sb != nullptr) && (!sb || c.bias == *sb) && same_options(c.o, o) &&
        c.has_pool == (pool != nullptr) && (!pool || same_pool(c.pool, *pool)))
      return true;
  return false;
}

void remember_passed(const Shape& sx, const Shape& sw, const Shape* sb, const Conv2dOptions& o,
                     const Pool2dOptions* pool) {
  std::vector<CheckedProblem>& problems = checked_problems();
  if (problems.size() >= kCheckedProblems) problems.erase(problems.begin());  // the oldest
  problems.push_back({sx, sw, sb ? *sb : Shape{}, sb != nullptr, o, pool != nullptr, pool ? *pool : Pool2dOptions{}});
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
    if (!passed_before(sx, sw, bias ? &sb : nullptr, o, pool)) {
      const Shape conv_out = checks::conv2d(sx, sw, bias ? &sb : nullptr, o);
      check_shape(op, conv_out);
      if (pool) check_shape(op, checks::pool2d(op, conv_out, *pool));
      remember_passed(sx, sw, bias ? &sb : nullptr, o, pool);
    }
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
