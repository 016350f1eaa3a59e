#pragma once
// Backward steps of reductions. Keepdim reductions make these uniform: the output grad broadcasts over the
// reduced dim.
#include <optional>

#include "engine/autodiff/grad_ops.hpp"

namespace ember::autodiff {

// dim == nullopt: reduction over all elements (y and g have shape [1]).
template <class B>
typename B::FloatPrimitive reduce_backward(ReduceOp op, std::optional<std::size_t> dim,
                                           const typename B::FloatPrimitive& x, const typename B::FloatPrimitive& y,
                                           const typename B::FloatPrimitive& g) {
  using H = G<B>;
  using FP = typename B::FloatPrimitive;
  const Shape xs = H::shape(x);
  // Bring y and g to a shape that broadcasts against x.
  Shape kept = xs;
  if (dim) kept[*dim] = 1;
  else for (auto& d : kept.dims) d = 1;
  const FP gk = B::template reshape<Float>(g, kept);
  const FP yk = B::template reshape<Float>(y, kept);
  const double n = dim ? static_cast<double>(xs[*dim]) : static_cast<double>(xs.num_elements());
  auto reduce = [&](const FP& t, ReduceOp r) {
    return dim ? B::float_reduce(t, r, *dim) : B::template reshape<Float>(B::float_reduce_all(t, r), kept);
  };
  switch (op) {
    case ReduceOp::Sum: return H::expand_to(gk, xs);
    case ReduceOp::Mean: return H::expand_to(H::scale(gk, 1.0 / n), xs);
    case ReduceOp::Max:
    case ReduceOp::Min: {
      // Every element equal to the extreme shares the gradient evenly (torch.amax semantics).
      auto hit = H::mask_to_float(B::float_compare(x, B::template expand<Float>(yk, xs), CompareOp::Eq));
      auto count = reduce(hit, ReduceOp::Sum);
      return H::mul(hit, H::expand_to(H::div(gk, count), xs));
    }
    case ReduceOp::Prod: {
      // d prod / d x_i = product of the others. With no zero that is y / x_i; with exactly one zero only the zero
      // gets the product of the rest; with two or more zeros everything is 0.
      auto zero = B::float_compare_scalar(x, CompareOp::Eq, 0.0);
      auto zeros = reduce(H::mask_to_float(zero), ReduceOp::Sum);
      auto others = reduce(B::template mask_fill<Float>(x, zero, 1.0), ReduceOp::Prod);
      auto no_zero = B::float_compare_scalar(zeros, CompareOp::Eq, 0.0);
      auto one_zero = B::float_compare_scalar(zeros, CompareOp::Eq, 1.0);
      auto safe_x = B::template mask_fill<Float>(x, zero, 1.0);
      auto general = H::div(B::template expand<Float>(yk, xs), safe_x);
      auto at_zero = B::template where<Float>(zero, B::template expand<Float>(others, xs), H::zeros(xs, x));
      auto d = B::template where<Float>(B::template expand<Bool>(no_zero, xs), general,
                                        B::template where<Float>(B::template expand<Bool>(one_zero, xs), at_zero,
                                                                 H::zeros(xs, x)));
      return H::mul(d, H::expand_to(gk, xs));
    }
  }
  return g;
}

}  // namespace ember::autodiff
