// ONNX's loss operators (h-onnx-math, registered with the reductions): NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss (opset 12 on), composed from gather / where / reductions so the loss of an imported
// training graph differentiates into its scores.
#include "onnx/ops/math_util.hpp"

namespace ember::onnx_import {
namespace {

using math::Outs;

// The NLL of log-probabilities `logp` [N, C, d...] at integer `target` [N, d...], with optional class weights [C],
// ignore_index and reduction none / sum / mean (mean divides by the summed weights of the counted elements).
DynTensor nll(const OpContext& ctx, const DynTensor& logp, const DynTensor& target, const DynTensor* weight) {
  const Shape s = capi::shape(logp), ts = capi::shape(target);
  if (s.rank() < 2 || ts.rank() + 1 != s.rank() || ts[0] != s[0])
    ctx.fail(
        fmt::format("input {} and target {} do not match ([N, C, d...] and [N, d...])", s.to_string(), ts.to_string()));
  if (math::is_float(target)) ctx.fail("target must be an integer tensor");
  const std::string reduction = ctx.node.attr_string("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    ctx.fail(fmt::format("reduction '{}' is not none, sum or mean", reduction));

  // Ignored targets may lie outside [0, C) (ONNX's tests use -1 and C + 5): they gather class 0 and weigh 0.
  std::optional<DynTensor> keep;
  DynTensor t = target;
  if (ctx.node.has_attr("ignore_index")) {
    const auto ii = static_cast<double>(ctx.node.attr_int("ignore_index", 0));
    keep = capi::compare_scalar(target, CompareOp::Ne, ii);
    t = capi::where(*keep, target, math::scalar_like(target, 0.0));
  }
  std::vector<int64_t> idx_dims = ts.dims;
  idx_dims.insert(idx_dims.begin() + 1, 1);
  const DynTensor picked = capi::reshape(capi::gather(logp, 1, capi::reshape(t, idx_dims)), ts.dims);

  std::optional<DynTensor> w;  // per element; nullopt = all ones
  if (weight) w = capi::reshape(capi::index_select(*weight, 0, capi::reshape(t, {ts.num_elements()})), ts.dims);
  if (keep) {
    const DynTensor kept = capi::cast(*keep, capi::dtype(logp));
    w = w ? capi::binary(*w, kept, BinaryOp::Mul) : kept;
  }
  const DynTensor loss = capi::unary(w ? capi::binary(picked, *w, BinaryOp::Mul) : picked, UnaryOp::Neg);
  if (reduction == "none") return loss;
  const DynTensor sum = capi::reduce_all(loss, ReduceOp::Sum);
  if (reduction == "sum") return sum;
  if (!w) return capi::scalar(sum, ScalarOp::Div, static_cast<double>(ts.num_elements()));
  return capi::binary(sum, capi::reduce_all(*w, ReduceOp::Sum), BinaryOp::Div);
}

Outs nll_loss(OpContext& ctx) {
  return math::one(nll(ctx, ctx.input(0), ctx.input(1), ctx.has_input(2) ? &ctx.input(2) : nullptr));
}

// SoftmaxCrossEntropyLoss: the NLL of log_softmax over the class dim (1); the optional second output is that
// log-probability tensor.
Outs softmax_cross_entropy(OpContext& ctx) {
  const DynTensor& scores = ctx.input(0);
  if (capi::shape(scores).rank() < 2) ctx.fail("scores must be [N, C, d...]");
  const DynTensor logp = capi::softmax(scores, 1, true);
  Outs out = math::one(nll(ctx, logp, ctx.input(1), ctx.has_input(2) ? &ctx.input(2) : nullptr));
  if (ctx.num_outputs() > 1) out.emplace_back(logp);
  return out;
}

}  // namespace

namespace math {
void register_loss_ops(OpRegistry& r) {
  r.add("NegativeLogLikelihoodLoss", nll_loss, 12);
  r.add("SoftmaxCrossEntropyLoss", softmax_cross_entropy, 12);
}
}  // namespace math

}  // namespace ember::onnx_import
