#pragma once
// Cross entropy composed from a backend's required primitives: optional_ops::float_cross_entropy's default
// (optional_ops.hpp) for backends without a one-pass kernel, and the reference the CPU kernel is tested against
// (tests/optional_cross_entropy_test.cpp).
#include <string>

#include "engine/backend/backend.hpp"
#include "engine/backend/cross_entropy_types.hpp"
#include "engine/tensor/error.hpp"

namespace ember::optional_ops::composed {

// log_softmax's composition (x - max, minus the log of the exps' sum) gathered at the targets and negated: the bits
// nn::cross_entropy had before the op existed.
template <Backend B>
CrossEntropyForward<typename B::FloatPrimitive> float_cross_entropy(const typename B::FloatPrimitive& x,
                                                                    const typename B::IntPrimitive& t) {
  const Shape s = B::template shape<Float>(x);
  const int64_t n = s[0], classes = s[1];
  const auto m = B::float_reduce(x, ReduceOp::Max, 1);  // [N, 1]
  const auto shifted = B::float_binary(x, m, BinaryOp::Sub);
  const auto ls = B::float_unary(B::float_reduce(B::float_unary(shifted, UnaryOp::Exp), ReduceOp::Sum, 1), UnaryOp::Log);
  // The gather checks the targets' range itself (every backend's gather range-checks its indices), so there is no
  // separate host read of the targets' min and max: on a GPU that was two more round trips per step, and none at
  // all is possible in Vulkan host-record mode or a plan (where the gather's check is deferred and names "gather").
  const auto picked = [&] {
    try {
      return B::template gather<Float>(1, shifted, B::template reshape<Int>(t, Shape{n, 1}));
    } catch (const IndexError& e) {
      throw IndexError("cross_entropy: target class out of range [0, " + std::to_string(classes) + ") (" + e.what() +
                       ")");
    }
  }();
  return {B::template reshape<Float>(B::float_binary(ls, picked, BinaryOp::Sub), Shape{n}),
          B::template reshape<Float>(B::float_binary(m, ls, BinaryOp::Add), Shape{n})};
}

template <Backend B>
typename B::FloatPrimitive float_cross_entropy_backward(const typename B::FloatPrimitive& x,
                                                        const typename B::IntPrimitive& t,
                                                        const typename B::FloatPrimitive& lse,
                                                        const typename B::FloatPrimitive& g) {
  const Shape s = B::template shape<Float>(x);
  const Shape col{s[0], 1};
  const auto dev = B::template device<Float>(x);
  const auto softmax = B::float_unary(B::float_binary(x, B::template reshape<Float>(lse, col), BinaryOp::Sub), UnaryOp::Exp);
  // softmax - one_hot(t) as softmax - 1 where the class is the target: a comparison with the class ids, not a
  // scatter, so no second index check (the forward's gather checked t; on a GPU each check was a host round trip),
  // and elementwise, so Fusion fuses it. The bits are those of the subtraction of a 0 / 1 one-hot.
  const auto is_target = B::int_compare(B::template reshape<Int>(t, col),
                                        B::template reshape<Int>(B::int_arange(0, s[1], dev), Shape{1, s[1]}),
                                        CompareOp::Eq);
  const auto d = B::template where<Float>(is_target, B::float_scalar(softmax, ScalarOp::Sub, 1.0), softmax);
  return B::float_binary(d, B::template reshape<Float>(g, col), BinaryOp::Mul);
}

}  // namespace ember::optional_ops::composed
