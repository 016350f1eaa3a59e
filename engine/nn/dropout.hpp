#pragma once
// Dropout (PyTorch's nn.Dropout): in training, zeroes each element with probability `prob` and scales the
// survivors by 1 / (1 - prob) (inverted dropout, so eval needs no rescaling); identity in eval mode or when
// prob == 0; all zeros when prob == 1. The mask is a Bernoulli draw keyed by one draw of ember's global Rng
// (ember::seed): counter-based words (engine/tensor/philox.hpp) that the CPU computes in place and Vulkan and CUDA on
// the device (a backend without its own kernel draws them on the host), the same values everywhere, so a seed
// reproduces it on every backend. No params: backend-independent, so one Dropout serves every backend and
// rebind/valid carry it unchanged (valid() then switches its TrainingFlag to eval).
#include <fmt/format.h>

#include "engine/module/traversal.hpp"

namespace ember::nn {

struct Dropout {
  BOOST_HANA_DEFINE_STRUCT(Dropout, (double, prob), (TrainingFlag, mode));

  template <Backend B, std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    if (!mode.training || prob == 0.0) return x;
    if (prob >= 1.0) return x.mul_scalar(0.0);  // keeps the graph: the gradient is zero, not missing
    // The mask holds 0 or the scale, drawn so: one multiply forward and one backward instead of two each, with the
    // same bits as x * keep * scale on float and double elements (x * 1 is exact, and the scale is rounded to the
    // element type either way; an f16 mask holds it rounded to f16, a last-bit difference from the f32 scalar).
    const auto mask = Tensor<B, D>::random(x.dims(), Bernoulli{1.0 - prob, 1.0 / (1.0 - prob)}, x.device());
    return x.mul(mask);
  }
};

struct DropoutConfig {
  double prob = 0.5;
  Dropout init() const {
    if (!(prob >= 0.0 && prob <= 1.0))
      throw ArgumentError(fmt::format("DropoutConfig: prob must be in [0, 1], got {:f}", prob));
    Dropout d;
    d.prob = prob;
    d.mode.training = true;
    return d;
  }
};

}  // namespace ember::nn
