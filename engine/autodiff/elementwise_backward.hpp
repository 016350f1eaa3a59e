#pragma once
// Backward steps of the elementwise families: unary, scalar and binary ops. x: input, y: output, g: output grad.
#include <cmath>
#include <optional>
#include <utility>

#include "engine/autodiff/grad_ops.hpp"
#include "engine/tensor/error.hpp"

namespace ember::autodiff {

template <class B>
typename B::FloatPrimitive unary_backward(UnaryOp op, const typename B::FloatPrimitive& x,
                                          const typename B::FloatPrimitive& y, const typename B::FloatPrimitive& g) {
  using H = G<B>;
  switch (op) {
    case UnaryOp::Neg: return H::neg(g);
    case UnaryOp::Abs: return H::mul(g, H::unary(x, UnaryOp::Sign));
    case UnaryOp::Exp: return H::mul(g, y);
    case UnaryOp::Log: return H::div(g, x);
    case UnaryOp::Log1p: return H::div(g, B::float_scalar(x, ScalarOp::Add, 1.0));
    case UnaryOp::Sqrt: return H::div(g, H::scale(y, 2.0));
    case UnaryOp::Sin: return H::mul(g, H::unary(x, UnaryOp::Cos));
    case UnaryOp::Cos: return H::neg(H::mul(g, H::unary(x, UnaryOp::Sin)));
    case UnaryOp::Tanh:  // 1 - y^2
      return H::mul(g, B::float_scalar(H::mul(y, y), ScalarOp::RSub, 1.0));
    case UnaryOp::Sigmoid:  // y (1 - y)
      return H::mul(g, H::mul(y, B::float_scalar(y, ScalarOp::RSub, 1.0)));
    case UnaryOp::Erf: {  // 2/sqrt(pi) exp(-x^2)
      auto e = H::unary(H::neg(H::mul(x, x)), UnaryOp::Exp);
      return H::mul(g, H::scale(e, 2.0 / std::sqrt(M_PI)));
    }
    case UnaryOp::Recip: return H::neg(H::mul(g, H::mul(y, y)));  // -1/x^2 = -y^2
    case UnaryOp::Sign:
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Round: return H::zeros_like(g);  // piecewise constant
    case UnaryOp::Relu: return H::mul(g, H::mask_to_float(B::float_compare_scalar(x, CompareOp::Gt, 0.0)));
    case UnaryOp::Gelu: {  // Phi(x) + x phi(x)
      auto cdf = H::scale(B::float_scalar(H::unary(H::scale(x, M_SQRT1_2), UnaryOp::Erf), ScalarOp::Add, 1.0), 0.5);
      auto pdf = H::scale(H::unary(H::scale(H::mul(x, x), -0.5), UnaryOp::Exp), 1.0 / std::sqrt(2.0 * M_PI));
      return H::mul(g, H::add(cdf, H::mul(x, pdf)));
    }
    case UnaryOp::GeluTanh: {  // 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2), t = tanh(c (x + a x^3))
      const double c = std::sqrt(2.0 / M_PI), a = 0.044715;
      auto x2 = H::mul(x, x);
      auto inner = H::scale(H::add(x, H::scale(H::mul(x2, x), a)), c);
      auto t = H::unary(inner, UnaryOp::Tanh);
      auto left = H::scale(B::float_scalar(t, ScalarOp::Add, 1.0), 0.5);
      auto sech2 = B::float_scalar(H::mul(t, t), ScalarOp::RSub, 1.0);
      auto dinner = B::float_scalar(H::scale(x2, 3.0 * a), ScalarOp::Add, 1.0);
      auto right = H::scale(H::mul(H::mul(x, sech2), dinner), 0.5 * c);
      return H::mul(g, H::add(left, right));
    }
    case UnaryOp::Asin:  // 1 / sqrt(1 - x^2)
      return H::div(g, H::unary(B::float_scalar(H::mul(x, x), ScalarOp::RSub, 1.0), UnaryOp::Sqrt));
    case UnaryOp::Acos:  // -1 / sqrt(1 - x^2)
      return H::neg(H::div(g, H::unary(B::float_scalar(H::mul(x, x), ScalarOp::RSub, 1.0), UnaryOp::Sqrt)));
    case UnaryOp::Atan: return H::div(g, B::float_scalar(H::mul(x, x), ScalarOp::Add, 1.0));  // 1 / (1 + x^2)
    case UnaryOp::Sinh: return H::mul(g, H::unary(x, UnaryOp::Cosh));
    case UnaryOp::Cosh: return H::mul(g, H::unary(x, UnaryOp::Sinh));
    case UnaryOp::Asinh:  // 1 / sqrt(x^2 + 1)
      return H::div(g, H::unary(B::float_scalar(H::mul(x, x), ScalarOp::Add, 1.0), UnaryOp::Sqrt));
    case UnaryOp::Acosh:  // 1 / sqrt(x^2 - 1)
      return H::div(g, H::unary(B::float_scalar(H::mul(x, x), ScalarOp::Sub, 1.0), UnaryOp::Sqrt));
    case UnaryOp::Atanh: return H::div(g, B::float_scalar(H::mul(x, x), ScalarOp::RSub, 1.0));  // 1 / (1 - x^2)
  }
  throw ArgumentError("autodiff: unknown unary op");
}

template <class B>
typename B::FloatPrimitive scalar_backward(ScalarOp op, double s, const typename B::FloatPrimitive& x,
                                           const typename B::FloatPrimitive& y, const typename B::FloatPrimitive& g) {
  using H = G<B>;
  switch (op) {
    case ScalarOp::Add:
    case ScalarOp::Sub: return g;
    case ScalarOp::Mul: return H::scale(g, s);
    case ScalarOp::Div: return H::scale(g, 1.0 / s);
    case ScalarOp::RSub: return H::neg(g);
    case ScalarOp::RDiv: return H::neg(H::div(H::mul(g, y), x));  // d(s/x) = -s/x^2 = -y/x
    case ScalarOp::Pow:
      if (s == 0.0) return H::zeros_like(g);
      return H::mul(g, H::scale(B::float_scalar(x, ScalarOp::Pow, s - 1.0), s));
    // Like torch.clamp: the gradient passes where the bound is not active (ties included).
    case ScalarOp::ClampMin: return H::mul(g, H::mask_to_float(B::float_compare_scalar(x, CompareOp::Ge, s)));
    case ScalarOp::ClampMax: return H::mul(g, H::mask_to_float(B::float_compare_scalar(x, CompareOp::Le, s)));
    case ScalarOp::Remainder: return g;  // x - floor(x / s) * s: the floor is piecewise constant (PyTorch too)
  }
  throw ArgumentError("autodiff: unknown scalar op");
}

// Gradients for a and b, already summed back to their (pre-broadcast) shapes; only those asked for are computed.
template <class B>
std::pair<std::optional<typename B::FloatPrimitive>, std::optional<typename B::FloatPrimitive>> binary_backward(
    BinaryOp op, const typename B::FloatPrimitive& a, const typename B::FloatPrimitive& b,
    const typename B::FloatPrimitive& y, const typename B::FloatPrimitive& g, bool need_a, bool need_b) {
  using H = G<B>;
  using FP = typename B::FloatPrimitive;
  std::optional<FP> ga, gb;
  switch (op) {
    case BinaryOp::Add:
      if (need_a) ga = g;
      if (need_b) gb = g;
      break;
    case BinaryOp::Sub:
      if (need_a) ga = g;
      if (need_b) gb = H::neg(g);
      break;
    case BinaryOp::Mul:
      if (need_a) ga = H::mul(g, b);
      if (need_b) gb = H::mul(g, a);
      break;
    case BinaryOp::Div:
      if (need_a) ga = H::div(g, b);
      if (need_b) gb = H::neg(H::div(H::mul(g, y), b));  // -a/b^2 = -y/b
      break;
    case BinaryOp::Pow:
      if (need_a) ga = H::mul(g, H::mul(b, B::float_binary(a, B::float_scalar(b, ScalarOp::Sub, 1.0), BinaryOp::Pow)));
      if (need_b) gb = H::mul(g, H::mul(y, H::unary(a, UnaryOp::Log)));
      break;
    case BinaryOp::Max:
    case BinaryOp::Min: {
      // The larger (smaller) input takes the gradient; ties split it evenly, like torch.maximum.
      const CompareOp wins = op == BinaryOp::Max ? CompareOp::Gt : CompareOp::Lt;
      auto share = [&](const FP& p, const FP& q) {
        auto w = H::mask_to_float(B::float_compare(p, q, wins));
        auto tie = H::scale(H::mask_to_float(B::float_compare(p, q, CompareOp::Eq)), 0.5);
        return H::mul(g, H::add(w, tie));
      };
      if (need_a) ga = share(a, b);
      if (need_b) gb = share(b, a);
      break;
    }
    case BinaryOp::Atan2: {  // d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2)
      auto g_over_r2 = H::div(g, H::add(H::mul(a, a), H::mul(b, b)));
      if (need_a) ga = H::mul(g_over_r2, b);
      if (need_b) gb = H::neg(H::mul(g_over_r2, a));
      break;
    }
    case BinaryOp::Remainder:  // a - floor(a / b) * b: d/da = 1, d/db = -floor(a / b), as PyTorch defines them
      if (need_a) ga = g;
      if (need_b) gb = H::neg(H::mul(g, H::unary(H::div(a, b), UnaryOp::Floor)));
      break;
  }
  if (ga) ga = H::sum_to(*ga, H::shape(a));
  if (gb) gb = H::sum_to(*gb, H::shape(b));
  return {ga, gb};
}

}  // namespace ember::autodiff
