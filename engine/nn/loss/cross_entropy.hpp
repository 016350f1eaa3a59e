#pragma once
// nll_loss and cross_entropy with PyTorch semantics (F.nll_loss / F.cross_entropy with class-index targets).
// nll_loss and label-smoothed cross_entropy are composed of tensor ops (log_softmax, gather, reductions); plain
// cross_entropy is the optional op float_cross_entropy (engine/backend/optional_ops.hpp: one pass per row where the
// backend has a kernel, one autodiff node either way), as PyTorch runs log_softmax and nll_loss as kernels.
#include <fmt/format.h>

#include "engine/backend/optional_ops.hpp"
#include "engine/nn/loss/reduction.hpp"

namespace ember::nn {

namespace detail {
template <Backend B>
void check_batch_size(const char* who, const Tensor<B, 2>& input, const Tensor<B, 1, Int>& targets) {
  if (targets.dim(0) != input.dim(0))
    throw ShapeError(fmt::format("{}: input {} and targets {} disagree on the batch size", who,
                                 input.shape().to_string(), targets.shape().to_string()));
}
// input[i, targets[i]] as [N, 1]. The gather range-checks the targets itself (every backend's gather does), so no
// separate host read of their min and max is made: on a GPU that was two more round trips per step, and none is
// possible in Vulkan host-record mode or a plan (there the gather's check is deferred, reported as "gather").
template <Backend B>
Tensor<B, 2> pick_targets(const char* who, const Tensor<B, 2>& input, const Tensor<B, 1, Int>& targets) {
  check_batch_size(who, input, targets);
  try {
    return input.gather(1, targets.template unsqueeze<2>(1));
  } catch (const IndexError& e) {
    throw IndexError(fmt::format("{}: target class out of range [0, {}) ({})", who, input.dim(1), e.what()));
  }
}
}  // namespace detail

// -log_probs[i, targets[i]], reduced. log_probs [N, C] (e.g. from log_softmax(1)), targets [N] class indices.
template <Backend B>
Tensor<B, 1> nll_loss(const Tensor<B, 2>& log_probs, const Tensor<B, 1, Int>& targets,
                      Reduction reduction = Reduction::Mean) {
  const auto picked = detail::pick_targets("nll_loss", log_probs, targets);  // [N, 1]
  return detail::reduce_loss(picked.neg(), reduction);
}

struct CrossEntropyOptions {
  // PyTorch's label_smoothing: the target distribution is (1 - s) one_hot + s / C, so the per-sample loss is
  // (1 - s) * -logp[target] + (s / C) * sum_c -logp[c].
  double label_smoothing = 0.0;
  Reduction reduction = Reduction::Mean;
};

// logits [N, C] (unnormalized), targets [N] class indices in [0, C).
template <Backend B>
Tensor<B, 1> cross_entropy(const Tensor<B, 2>& logits, const Tensor<B, 1, Int>& targets,
                           const CrossEntropyOptions& o = {}) {
  if (!(o.label_smoothing >= 0.0 && o.label_smoothing <= 1.0))
    throw ArgumentError(fmt::format("cross_entropy: label_smoothing must be in [0, 1], got {:f}", o.label_smoothing));
  if (o.label_smoothing == 0.0) {
    detail::check_batch_size("cross_entropy", logits, targets);  // the op checks the target range
    const auto r = optional_ops::float_cross_entropy<B>(logits.primitive(), targets.primitive());
    return detail::reduce_loss(Tensor<B, 1>(r.loss), o.reduction);
  }
  const auto logp = logits.log_softmax(1);
  const auto nll = detail::pick_targets("cross_entropy", logp, targets).neg();  // [N, 1]
  const double s = o.label_smoothing, c = static_cast<double>(logits.dim(1));
  const auto smooth = logp.sum_dim(1).neg();  // [N, 1]: sum_c -logp[c]
  return detail::reduce_loss(nll.mul_scalar(1.0 - s).add(smooth.mul_scalar(s / c)), o.reduction);
}

}  // namespace ember::nn
