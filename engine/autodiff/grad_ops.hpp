#pragma once
// Small helpers the backward steps share, written against the inner backend B (backward steps are not recorded).
#include <cmath>

#include "engine/backend/backend.hpp"

namespace ember::autodiff {

template <class B>
struct G {
  using FP = typename B::FloatPrimitive;
  static Shape shape(const FP& x) { return B::template shape<Float>(x); }
  static FP mul(const FP& a, const FP& b) { return B::float_binary(a, b, BinaryOp::Mul); }
  static FP div(const FP& a, const FP& b) { return B::float_binary(a, b, BinaryOp::Div); }
  static FP add(const FP& a, const FP& b) { return B::float_binary(a, b, BinaryOp::Add); }
  static FP sub(const FP& a, const FP& b) { return B::float_binary(a, b, BinaryOp::Sub); }
  static FP neg(const FP& a) { return B::float_unary(a, UnaryOp::Neg); }
  static FP scale(const FP& a, double s) { return B::float_scalar(a, ScalarOp::Mul, s); }
  static FP unary(const FP& a, UnaryOp op) { return B::float_unary(a, op); }
  static FP zeros_like(const FP& a) { return B::template full<Float>(shape(a), 0.0, B::template device<Float>(a)); }
  static FP zeros(const Shape& s, const FP& like) { return B::template full<Float>(s, 0.0, B::template device<Float>(like)); }
  static FP mask_to_float(const typename B::BoolPrimitive& m) { return B::template cast<Bool, Float>(m); }

  // Sums a broadcast gradient back to `target` (the input's shape): over leading extra dims and over dims where
  // the input had size 1.
  static FP sum_to(FP g, const Shape& target) {
    Shape gs = shape(g);
    if (gs == target) return g;
    const std::size_t extra = gs.rank() - target.rank();
    for (std::size_t i = 0; i < gs.rank(); ++i) {
      const bool broadcast = i < extra || (target[i - extra] == 1 && gs[i] != 1);
      if (broadcast) g = B::float_reduce(g, ReduceOp::Sum, i);
    }
    return B::template reshape<Float>(g, target);
  }
  // Expands a keepdim-reduced gradient back to `target`.
  static FP expand_to(const FP& g, const Shape& target) {
    if (shape(g) == target) return g;
    return B::template expand<Float>(g, target);
  }
};

}  // namespace ember::autodiff
