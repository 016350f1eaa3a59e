// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opsets 12..17), composed from gather / index_select /
// where / reductions so they run on every backend and differentiate (h-onnx-nn).
//
// loss[n, d...] = -input[n, target[n, d...], d...] * weight[target] (weight 1 without the input), 0 where target
// is ignore_index; reduction 'none' keeps that shape, 'sum' adds it up, 'mean' divides the sum by the sum of the
// weights that were applied (the count of non-ignored targets without weights), as ONNX defines both operators.
#include <fmt/format.h>

#include "onnx/ops/nn_common.hpp"

namespace ember::onnx_import::nn_ops {
namespace {

DynTensor nll(const OpContext& ctx, const DynTensor& logp, const DynTensor& target, const DynTensor* weight) {
  const std::vector<int64_t> xd = dims_of(logp), td = dims_of(target);
  if (xd.size() < 2) ctx.fail(fmt::format("input must be [N, C, ...], got rank {}", xd.size()));
  std::vector<int64_t> want(xd);
  want.erase(want.begin() + 1);
  if (td != want) ctx.fail("target must have the input's shape without its class dim");
  if (dtype_is_float(capi::dtype(target)) || capi::dtype(target) == DType::Bool) ctx.fail("target must be integer");
  const std::string reduction = ctx.node.attr_string("reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    ctx.fail(fmt::format("reduction '{}' is not none, sum or mean", reduction));

  // Ignored targets read class 0 (any valid index) and get weight 0.
  DynTensor safe = target;
  std::optional<DynTensor> keep;
  if (ctx.node.has_attr("ignore_index")) {
    const double ii = static_cast<double>(ctx.node.attr_int("ignore_index", 0));
    const DynTensor ignored = capi::compare_scalar(target, CompareOp::Eq, ii);
    safe = capi::where(ignored, capi::full(capi::device(target), capi::dtype(target), Shape(td), 0.0), target);
    keep = capi::cast(capi::logical_not(ignored), capi::dtype(logp));
  }
  std::vector<int64_t> unsq(td);
  unsq.insert(unsq.begin() + 1, 1);
  const DynTensor picked = capi::reshape(capi::gather(logp, 1, capi::reshape(safe, unsq)), td);
  std::optional<DynTensor> w;
  if (weight) w = capi::reshape(capi::index_select(*weight, 0, capi::reshape(safe, {-1})), td);
  if (keep) w = w ? capi::binary(*w, *keep, BinaryOp::Mul) : *keep;
  DynTensor loss = capi::unary(w ? capi::binary(picked, *w, BinaryOp::Mul) : picked, UnaryOp::Neg);
  if (reduction == "none") return loss;
  const DynTensor sum = capi::reduce_all(loss, ReduceOp::Sum);
  if (reduction == "sum") return sum;
  if (!w) return capi::reduce_all(loss, ReduceOp::Mean);
  return capi::binary(sum, capi::reduce_all(*w, ReduceOp::Sum), BinaryOp::Div);
}

Outputs nll_loss(OpContext& ctx) {
  return {nll(ctx, float_input(ctx, 0), ctx.input(1), ctx.has_input(2) ? &float_input(ctx, 2) : nullptr)};
}

// The loss of log_softmax(scores) over the class dim 1, and the log-probabilities as the optional second output.
Outputs softmax_cross_entropy(OpContext& ctx) {
  const DynTensor& scores = float_input(ctx, 0);
  if (rank_of(scores) < 2) ctx.fail(fmt::format("scores must be [N, C, ...], got rank {}", rank_of(scores)));
  const DynTensor logp = capi::softmax(scores, 1, true);
  Outputs out{nll(ctx, logp, ctx.input(1), ctx.has_input(2) ? &float_input(ctx, 2) : nullptr)};
  if (ctx.num_outputs() > 1 && !ctx.node.outputs[1].empty()) out.emplace_back(logp);
  return out;
}

}  // namespace

void register_loss(OpRegistry& r) {
  r.add("NegativeLogLikelihoodLoss", nll_loss, 12);
  r.add("SoftmaxCrossEntropyLoss", softmax_cross_entropy, 12);
}

}  // namespace ember::onnx_import::nn_ops
