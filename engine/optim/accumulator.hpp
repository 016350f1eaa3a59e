#pragma once
// GradientsAccumulator<B>: combines the GradientsParams of several backward passes before one optimizer step
// (gradient accumulation over micro-batches).
//
//   Add    per param, gradients are summed (PyTorch's default .grad accumulation; divide the loss by the number
//          of micro-batches to get the mean)
//   Write  per param, the latest gradient replaces the earlier one; params absent from the latest pass keep theirs
#include <cstddef>

#include "engine/optim/grads.hpp"

namespace ember {

enum class AccumulateMode { Add, Write };

template <AutodiffBackend B>
class GradientsAccumulator {
 public:
  explicit GradientsAccumulator(AccumulateMode mode = AccumulateMode::Add) : mode_(mode) {}

  void accumulate(const GradientsParams<B>& grads) {
    for (const auto& [id, e] : grads.entries()) {
      auto prev = acc_.get(id);
      if (!prev || mode_ == AccumulateMode::Write) {
        acc_.put_flat(id, e.flat, e.shape);
        continue;
      }
      const Shape prev_shape = *acc_.shape(id);
      if (!(prev_shape == e.shape))
        throw ShapeError("GradientsAccumulator: param " + std::to_string(id.value) + " had a gradient of shape " +
                         prev_shape.to_string() + ", now " + e.shape.to_string());
      acc_.put_flat(id, prev->add(e.flat), e.shape);
    }
    ++count_;
  }

  // The accumulated gradients; the accumulator starts over empty.
  GradientsParams<B> take() {
    GradientsParams<B> out = std::move(acc_);
    acc_ = GradientsParams<B>();
    count_ = 0;
    return out;
  }

  // Backward passes accumulated since the last take().
  std::size_t count() const { return count_; }
  AccumulateMode mode() const { return mode_; }

 private:
  AccumulateMode mode_;
  GradientsParams<B> acc_;
  std::size_t count_ = 0;
};

}  // namespace ember
