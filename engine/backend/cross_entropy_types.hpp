#pragma once
// The result type of the optional fused cross-entropy op (optional_ops.hpp, HasFusedCrossEntropy): shared by the
// backends' kernels, the composed default and Autodiff.

namespace ember {

// Per row i of logits x [N, C] with class index t_i: loss [N] = lse_i - x[i, t_i] (= -log_softmax(x)[i, t_i]) and
// lse [N] = log(sum_j exp(x[i, j])), kept for the backward: d loss_i / d x[i, j] = exp(x[i, j] - lse_i) - [j == t_i].
template <class FP>
struct CrossEntropyForward {
  FP loss;
  FP lse;
};

}  // namespace ember
