#pragma once
// The result types of the optional fused LayerNorm op (optional_ops.hpp, HasFusedLayerNorm): shared by the backends'
// kernels, the composed default and Autodiff.

namespace ember {

// y = (x - mean) * rstd * gamma + beta over x's last dim, with mean and rstd = 1 / sqrt(var + eps) (biased variance)
// of each row kept for the backward, both shaped like x with its last dim 1.
template <class FP>
struct LayerNormForward {
  FP out;
  FP mean;
  FP rstd;
};

// Gradients of x (x's shape), gamma and beta ([d]).
template <class FP>
struct LayerNormGrads {
  FP x, gamma, beta;
};

}  // namespace ember
