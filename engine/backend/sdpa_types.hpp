#pragma once
// The argument and result types of the optional scaled-dot-product-attention op (optional_ops.hpp,
// HasFusedSdpa): shared by the backends' kernels, the composed default and Autodiff.
#include <optional>

namespace ember {

struct SdpaOptions {
  bool is_causal = false;  // key j > query i masked (top-left aligned)
  double scale = 1.0;      // multiplies q @ k^T before the bias is added
};

// out [B, H, L, Ev] and the per-row logsumexp of the masked, scaled scores, lse [B, H, L], which is all the
// backward needs to recompute the probabilities tile by tile (p = exp(s - lse)). A fully masked row stores +inf,
// so that the backward's exp(s - lse) is 0 there without a special case (its output row is 0).
template <class FP>
struct SdpaForward {
  FP out;
  FP lse;
};

// Gradients of q, k, v, and of the bias when it was asked for (the fused kernels never compute it: a bias that
// requires grad takes the composed backward, whose [B, H, L, S] gradient has the bias's size anyway).
template <class FP>
struct SdpaGrads {
  FP q, k, v;
  std::optional<FP> bias;
};

}  // namespace ember
