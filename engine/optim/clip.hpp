#pragma once
// Global gradient clipping over all the gradients of a step, with torch.nn.utils.clip_grad_norm_ /
// clip_grad_value_ semantics.
#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/optim/grads.hpp"

namespace ember {

// The norm of all gradients taken together (as if concatenated into one vector); norm_type may be infinity.
template <AutodiffBackend B>
double grad_norm(const GradientsParams<B>& grads, double norm_type = 2.0) {
  if (!(norm_type > 0)) throw ArgumentError("grad_norm: norm_type must be positive, got " + std::to_string(norm_type));
  const bool inf = std::isinf(norm_type);
  double acc = 0.0;
  for (const auto& [id, e] : grads.entries()) {
    if (e.flat.numel() == 0) continue;
    const auto a = e.flat.abs();
    if (inf) {
      acc = std::max(acc, a.max().item());
    } else {
      // Per-tensor sum on the backend (one host transfer per param), the cross-param sum in double.
      acc += (norm_type == 2.0 ? a.mul(a) : norm_type == 1.0 ? a : a.pow_scalar(norm_type)).sum().item();
    }
  }
  if (inf) return acc;
  return norm_type == 2.0 ? std::sqrt(acc) : norm_type == 1.0 ? acc : std::pow(acc, 1.0 / norm_type);
}

// Scales every gradient by max_norm / (total + 1e-6) when that is below 1 (PyTorch clamps the coefficient at 1,
// so gradients under the limit are left alone); returns the total norm before clipping. A non-finite total is
// returned as is and propagates into the gradients, like PyTorch with error_if_nonfinite=False.
template <AutodiffBackend B>
double clip_grad_norm(GradientsParams<B>& grads, double max_norm, double norm_type = 2.0) {
  if (max_norm < 0) throw ArgumentError("clip_grad_norm: max_norm must be >= 0, got " + std::to_string(max_norm));
  const double total = grad_norm(grads, norm_type);
  const double coef = max_norm / (total + 1e-6);
  if (coef < 1.0 || std::isnan(coef)) grads.transform([&](const auto& g) { return g.mul_scalar(coef); });
  return total;
}

// Clamps every gradient element into [-clip, clip].
template <AutodiffBackend B>
void clip_grad_value(GradientsParams<B>& grads, double clip) {
  if (clip < 0) throw ArgumentError("clip_grad_value: clip must be >= 0, got " + std::to_string(clip));
  grads.transform([&](const auto& g) { return g.clamp(-clip, clip); });
}

}  // namespace ember
