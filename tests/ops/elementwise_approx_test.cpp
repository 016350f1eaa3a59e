// Accuracy of the float math over dense ranges and on large tensors (which run the multithreaded and vectorized
// paths: CPU f32 tanh/sigmoid/erf/exp/gelu use the fast approximations in backends/cpu/vec_math.hpp). The
// reference is libm in long double, computed here; errors are measured in ulps of the backend's float element.
//
// Bounds (in ulps of the result, measured against the long double value rounded to the element type):
//   exp 2, sigmoid 4, tanh 8, erf 8, and every libm-backed op (log, log1p, sin, cos, pow) 2, sqrt and recip 1.
// GELU = 0.5 x (1 + erf(x / sqrt 2)) cancels for negative x, so an erf error of e ulp of 1 becomes an absolute error
// of 0.5 |x| e ulp(1); its bound is 10 in the unit ulp(y) + 0.5 |x| ulp(1) (the same for the tanh form).
// Where the exact result is subnormal in the element type, the absolute error may be up to the smallest normal
// (the f32 fast exp flushes those results to zero).
// Worst errors measured when these bounds were set, Cpu<float> over -20..20 in 1e-3 steps plus tiny values
// (AVX-512/FMA clone): exp 0.99, tanh 4.6, sigmoid 2.2, erf 4.3, gelu 5.6, gelu_tanh 4.6. The same functions over
// -20..20 in 1e-5 steps: FMA build exp 1.0, tanh 4.6, sigmoid 2.5, erf 5.6, gelu 6.3, gelu_tanh 4.7; baseline x86-64
// build (no FMA) exp 0.98, tanh 6.6, sigmoid 2.5, erf 7.1, gelu 7.5, gelu_tanh 6.0. Cpu<double> (libm) stays below
// 2 ulp everywhere.
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "engine/backend/optional_ops.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace elementwise_approx_cases {

using LD = long double;

template <class B>
using Elem = typename B::FloatElem;

// Spacing of E at |w| (the smaller one around a power of two), the smallest subnormal at zero.
template <class E>
double ulp_at(double w) {
  const E a = static_cast<E>(std::fabs(w));
  if (std::isinf(a)) return static_cast<double>(std::numeric_limits<E>::max()) * std::numeric_limits<E>::epsilon();
  if (a == E(0)) return static_cast<double>(std::numeric_limits<E>::denorm_min());
  const E up = std::nextafter(a, std::numeric_limits<E>::infinity()) - a;
  const E down = a - std::nextafter(a, E(0));
  return static_cast<double>(std::min(up, down));
}

struct Worst {
  double ulps = 0.0;
  double at = 0.0;
};

// Max over elements of |got - want| / (ulp(want) + slope * |x| * ulp(1)); fails an expectation where the error is
// above `bound` (or where NaN/Inf do not match). Subnormal expected results allow an absolute error of the smallest
// normal.
template <class E>
Worst check_ulps(const char* name, const std::vector<double>& xs, const std::vector<double>& got,
                 const std::vector<LD>& want, double bound, double slope = 0.0) {
  Worst w;
  int failures = 0;
  const double one_ulp = ulp_at<E>(0.75);  // spacing just below 1
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double wd = static_cast<double>(want[i]);
    const E wr = static_cast<E>(wd);  // the correctly rounded result (up to double rounding, harmless here)
    if (std::isnan(wd) || std::isinf(static_cast<double>(wr))) {
      const bool ok = std::isnan(wd) ? std::isnan(got[i]) : got[i] == static_cast<double>(wr);
      if (!ok && failures++ < 5) ADD_FAILURE() << name << "(" << xs[i] << ") = " << got[i] << ", expected " << wd;
      continue;
    }
    const double err = std::fabs(static_cast<double>(static_cast<LD>(got[i]) - want[i]));
    if (std::fabs(wd) < static_cast<double>(std::numeric_limits<E>::min()) && slope == 0.0) {
      if (!(err <= static_cast<double>(std::numeric_limits<E>::min())) && failures++ < 5)
        ADD_FAILURE() << name << "(" << xs[i] << ") = " << got[i] << ", expected (subnormal) " << wd;
      continue;
    }
    const double u = err / (ulp_at<E>(wd) + slope * std::fabs(xs[i]) * one_ulp);
    if (!(u <= bound) && failures++ < 5)
      ADD_FAILURE() << name << "(" << xs[i] << ") = " << got[i] << ", expected " << wd << ": " << u << " ulp > "
                    << bound;
    if (u > w.ulps || std::isnan(u)) w = {u, xs[i]};
  }
  EXPECT_EQ(failures, 0) << name << ": " << failures << " elements out of bounds";
  return w;
}

// -20..20 in 1e-3 steps, plus tiny magnitudes of both signs (all normal in f32).
std::vector<double> dense_inputs() {
  std::vector<double> xs;
  for (int i = -20000; i <= 20000; ++i) xs.push_back(i * 1e-3);
  for (double t : {1e-6, 1e-9, 1e-10, 1.1e-10, 1e-20, 1e-30, 1e-37, 1.2e-38, 1.17549435e-38, 3e-4, 4e-4, 5e-4}) {
    xs.push_back(t);
    xs.push_back(-t);
  }
  return xs;
}

LD gelu_ref(LD x) { return 0.5L * x * std::erfc(-x / std::sqrt(2.0L)); }
LD gelu_tanh_ref(LD x) {
  return 0.5L * x * (1.0L + std::tanh(std::sqrt(2.0L / 3.14159265358979323846264338327950288L) *
                                      (x + 0.044715L * x * x * x)));
}

struct UnaryRef {
  const char* name;
  UnaryOp op;
  std::function<LD(LD)> ref;
  double bound;
  double slope;  // non-zero for the GELU forms (see the header comment)
};

std::vector<UnaryRef> transcendental_refs() {
  return {
      {"exp", UnaryOp::Exp, [](LD x) { return std::exp(x); }, 2.0, 0.0},
      {"tanh", UnaryOp::Tanh, [](LD x) { return std::tanh(x); }, 8.0, 0.0},
      {"sigmoid", UnaryOp::Sigmoid, [](LD x) { return 1.0L / (1.0L + std::exp(-x)); }, 4.0, 0.0},
      {"erf", UnaryOp::Erf, [](LD x) { return std::erf(x); }, 8.0, 0.0},
      {"gelu", UnaryOp::Gelu, gelu_ref, 10.0, 0.5},
      {"gelu_tanh", UnaryOp::GeluTanh, gelu_tanh_ref, 10.0, 0.5},
  };
}

template <class B>
Tensor<B, 1> apply(const Tensor<B, 1>& x, UnaryOp op) {
  switch (op) {
    case UnaryOp::Exp: return x.exp();
    case UnaryOp::Log: return x.log();
    case UnaryOp::Log1p: return x.log1p();
    case UnaryOp::Sqrt: return x.sqrt();
    case UnaryOp::Sin: return x.sin();
    case UnaryOp::Cos: return x.cos();
    case UnaryOp::Tanh: return x.tanh();
    case UnaryOp::Sigmoid: return x.sigmoid();
    case UnaryOp::Erf: return x.erf();
    case UnaryOp::Recip: return x.recip();
    case UnaryOp::Gelu: return x.gelu();
    case UnaryOp::GeluTanh: return x.gelu(true);
    default: ADD_FAILURE() << "unexpected op"; return x;
  }
}

// Inputs as the backend stores them (rounded to E), so the reference sees exactly what the kernel saw.
template <class B>
std::pair<Tensor<B, 1>, std::vector<double>> stored(const std::vector<double>& xs) {
  auto t = make<B, 1>(xs, {static_cast<int64_t>(xs.size())});
  return {t, values(t)};
}

template <class B>
class ElementwiseApprox : public ::testing::Test {};
TYPED_TEST_SUITE(ElementwiseApprox, TestBackends, BackendNames);

TYPED_TEST(ElementwiseApprox, DenseRangeWithinUlpBounds) {
  using B = TypeParam;
  const auto [x, xs] = stored<B>(dense_inputs());
  for (const auto& r : transcendental_refs()) {
    const auto got = values(apply<B>(x, r.op));
    std::vector<LD> want(xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i) want[i] = r.ref(static_cast<LD>(xs[i]));
    const Worst w = check_ulps<Elem<B>>(r.name, xs, got, want, r.bound, r.slope);
    std::vector<double> wd(want.begin(), want.end());
    EXPECT_TRUE(close(got, wd, Tol<B>::loose)) << r.name;
    std::printf("[ worst    ] %s %-9s %.3g ulp at x = %.6g (bound %g)\n", BackendNames::GetName<B>(0).c_str(), r.name,
                w.ulps, w.at, r.bound);
  }
}

// Tiny inputs (including 1e-30 and 1e-37, far below where the polynomials are usually fitted) are within 1 ulp
// (erf 2) of the long double result: tanh(x) = x, erf(x) = 2x/sqrt(pi), sigmoid(x) = 1/2 + x/4, exp(x) = 1 + x.
TYPED_TEST(ElementwiseApprox, TinyInputsWithinOneUlp) {
  using B = TypeParam;
  const std::vector<double> tiny = {1e-6, -1e-6, 1e-12, -1e-12, 1e-30, -1e-30, 1e-37, 3e-8, 2e-4, -2e-4};
  const auto [x, xs] = stored<B>(tiny);
  struct Case {
    const char* name;
    Tensor<B, 1> y;
    std::function<LD(LD)> ref;
    double bound;
  };
  const std::vector<Case> cases = {
      {"tanh", x.tanh(), [](LD v) { return std::tanh(v); }, 1.0},
      {"erf", x.erf(), [](LD v) { return std::erf(v); }, 2.0},
      {"sigmoid", x.sigmoid(), [](LD v) { return 1.0L / (1.0L + std::exp(-v)); }, 1.0},
      {"exp", x.exp(), [](LD v) { return std::exp(v); }, 1.0},
  };
  for (const auto& c : cases) {
    std::vector<LD> want(xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i) want[i] = c.ref(static_cast<LD>(xs[i]));
    check_ulps<Elem<B>>(c.name, xs, values(c.y), want, c.bound);
  }
}

// GELU's backward step g * (Phi(x) + x phi(x)) (the backend's fused step where it has one: the CPU's AVX-512 kernel
// on such machines, else its vectorized formula; else autodiff's composed rule) over the dense range, g = 1 and
// g = -3 (the product's rounding). Phi(x) comes from erf as in the forward, so for negative x its erf error is an
// absolute one: the same slope as GELU's.
TYPED_TEST(ElementwiseApprox, GeluBackwardWithinUlpBounds) {
  using B = TypeParam;
  const auto [x, xs] = stored<B>(dense_inputs());
  const auto n = static_cast<int64_t>(xs.size());
  for (const double gv : {1.0, -3.0}) {
    const auto g = Tensor<B, 1>::full({n}, gv);
    const Tensor<B, 1> dx(optional_ops::float_unary_backward<B>(UnaryOp::Gelu, x.primitive(), x.gelu().primitive(),
                                                                g.primitive()));
    std::vector<LD> want(xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const LD v = static_cast<LD>(xs[i]);
      const LD pdf = std::exp(-0.5L * v * v) / std::sqrt(2.0L * 3.14159265358979323846264338327950288L);
      want[i] = static_cast<LD>(gv) * (0.5L * std::erfc(-v / std::sqrt(2.0L)) + v * pdf);
    }
    const Worst w = check_ulps<Elem<B>>("gelu backward", xs, values(dx), want, 10.0, 0.5 * std::fabs(gv));
    std::printf("[ worst    ] %s gelu backward, g = %g: %.3g ulp at x = %.6g (bound 10)\n",
                BackendNames::GetName<B>(0).c_str(), gv, w.ulps, w.at);
  }
}

// exp over the whole finite range of f32, its overflow and its underflow.
TYPED_TEST(ElementwiseApprox, ExpFullRangeOverflowAndUnderflow) {
  using B = TypeParam;
  std::vector<double> in;
  for (double v = -104.0; v <= 88.7; v += 0.01) in.push_back(v);
  const auto [x, xs] = stored<B>(in);
  std::vector<LD> want(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) want[i] = std::exp(static_cast<LD>(xs[i]));
  const Worst w = check_ulps<Elem<B>>("exp", xs, values(x.exp()), want, 2.0);
  std::printf("[ worst    ] %s exp -104..88.7: %.3g ulp at x = %.6g\n", BackendNames::GetName<B>(0).c_str(), w.ulps,
              w.at);
  const double big = std::is_same_v<Elem<B>, float> ? 89.0 : 710.0;
  const auto y = values(make<B, 1>({big, -big * 2, 1000.0, -1000.0}, {4}).exp());
  EXPECT_EQ(y[0], std::numeric_limits<double>::infinity());
  EXPECT_EQ(y[1], 0.0);
  EXPECT_EQ(y[2], std::numeric_limits<double>::infinity());
  EXPECT_EQ(y[3], 0.0);
}

// 300k elements: split across threads and run through the vector loops; every float unary op against libm.
// Inverse trigonometric and hyperbolic ops and atan2 over dense ranges of their domains (edges included: +-1 for
// asin/acos/atanh, 1 for acosh, up to 88 for sinh/cosh). Libm-backed on the CPU and CUDA (about 1 ulp); the Vulkan
// shaders' own formulas (shaders/math_trig.glsl) have their own bound: kTrigUlps (tests/support/test_backends.hpp).

TYPED_TEST(ElementwiseApprox, InverseTrigAndHyperbolicWithinUlpBounds) {
  using B = TypeParam;
  auto range = [](double lo, double hi, int n) {
    std::vector<double> v;
    for (int i = 0; i <= n; ++i) v.push_back(lo + (hi - lo) * i / n);
    for (double t : {1e-6, 1e-9, 1e-20, 1e-30})
      if (lo <= -t && t <= hi) v.insert(v.end(), {t, -t});
    return v;
  };
  struct Case {
    const char* name;
    std::vector<double> xs;
    std::function<Tensor<B, 1>(const Tensor<B, 1>&)> f;
    std::function<LD(LD)> ref;
  };
  const std::vector<Case> cases = {
      {"asin", range(-1, 1, 20000), [](const auto& t) { return t.asin(); }, [](LD v) { return std::asin(v); }},
      {"acos", range(-1, 1, 20000), [](const auto& t) { return t.acos(); }, [](LD v) { return std::acos(v); }},
      {"atan", range(-50, 50, 40000), [](const auto& t) { return t.atan(); }, [](LD v) { return std::atan(v); }},
      {"sinh", range(-88, 88, 40000), [](const auto& t) { return t.sinh(); }, [](LD v) { return std::sinh(v); }},
      {"cosh", range(-88, 88, 40000), [](const auto& t) { return t.cosh(); }, [](LD v) { return std::cosh(v); }},
      {"asinh", range(-1e4, 1e4, 40000), [](const auto& t) { return t.asinh(); },
       [](LD v) { return std::asinh(v); }},
      {"asinh_small", range(-3, 3, 30000), [](const auto& t) { return t.asinh(); },
       [](LD v) { return std::asinh(v); }},
      {"acosh", range(1, 20, 40000), [](const auto& t) { return t.acosh(); }, [](LD v) { return std::acosh(v); }},
      {"acosh_large", range(20, 1e5, 20000), [](const auto& t) { return t.acosh(); },
       [](LD v) { return std::acosh(v); }},
      {"atanh", range(-1, 1, 20000), [](const auto& t) { return t.atanh(); }, [](LD v) { return std::atanh(v); }},
  };
  for (const auto& c : cases) {
    const auto [x, xs] = stored<B>(c.xs);
    std::vector<LD> want(xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i) want[i] = c.ref(static_cast<LD>(xs[i]));
    const Worst w = check_ulps<Elem<B>>(c.name, xs, values(c.f(x)), want, kTrigUlps<B>);
    std::printf("[ worst    ] %s %-11s %.3g ulp at x = %.6g (bound %g)\n", BackendNames::GetName<B>(0).c_str(),
                c.name, w.ulps, w.at, kTrigUlps<B>);
  }
  // atan2 on a grid of both signs (every quadrant), against atan2l.
  std::vector<double> ys, xs2;
  for (int i = -60; i <= 60; ++i)
    for (int j = -60; j <= 60; ++j) {
      ys.push_back(i * 0.37);
      xs2.push_back(j * 0.53);
    }
  const auto [y, yv] = stored<B>(ys);
  const auto [xt, xv] = stored<B>(xs2);
  std::vector<LD> want(yv.size());
  for (std::size_t i = 0; i < yv.size(); ++i) want[i] = std::atan2(static_cast<LD>(yv[i]), static_cast<LD>(xv[i]));
  const Worst w = check_ulps<Elem<B>>("atan2", yv, values(y.atan2(xt)), want, kTrigUlps<B>);
  std::printf("[ worst    ] %s %-11s %.3g ulp at y = %.6g (bound %g)\n", BackendNames::GetName<B>(0).c_str(), "atan2",
              w.ulps, w.at, kTrigUlps<B>);
}

TYPED_TEST(ElementwiseApprox, LargeTensorsAllUnaryOps) {
  using B = TypeParam;
  using E = Elem<B>;
  const int64_t n = 300000;
  std::vector<double> in(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) in[i] = 12.0 * std::sin(0.37 * static_cast<double>(i)) + 1e-3 * (i % 7);
  const auto [x, xs] = stored<B>(in);
  auto refs = transcendental_refs();
  refs.push_back({"log", UnaryOp::Log, [](LD v) { return std::log(v); }, 2.0, 0.0});
  refs.push_back({"log1p", UnaryOp::Log1p, [](LD v) { return std::log1p(v); }, 2.0, 0.0});
  refs.push_back({"sqrt", UnaryOp::Sqrt, [](LD v) { return std::sqrt(v); }, 1.0, 0.0});
  refs.push_back({"sin", UnaryOp::Sin, [](LD v) { return std::sin(v); }, 2.0, 0.0});
  refs.push_back({"cos", UnaryOp::Cos, [](LD v) { return std::cos(v); }, 2.0, 0.0});
  refs.push_back({"recip", UnaryOp::Recip, [](LD v) { return 1.0L / v; }, 1.0, 0.0});
  for (const auto& r : refs) {
    const auto got = values(apply<B>(x, r.op));
    std::vector<LD> want(xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i) want[i] = r.ref(static_cast<LD>(xs[i]));
    check_ulps<E>(r.name, xs, got, want, r.bound, r.slope);
  }
  // Exact ops: the result is representable, so it must be bit-for-bit what E computes.
  struct Exact {
    const char* name;
    std::function<Tensor<B, 1>(const Tensor<B, 1>&)> f;
    std::function<E(E)> g;
  };
  const std::vector<Exact> exact = {
      {"neg", [](auto& t) { return t.neg(); }, [](E v) { return -v; }},
      {"abs", [](auto& t) { return t.abs(); }, [](E v) { return std::fabs(v); }},
      {"floor", [](auto& t) { return t.floor(); }, [](E v) { return std::floor(v); }},
      {"ceil", [](auto& t) { return t.ceil(); }, [](E v) { return std::ceil(v); }},
      {"round", [](auto& t) { return t.round(); }, [](E v) { return std::nearbyint(v); }},
      {"relu", [](auto& t) { return t.relu(); }, [](E v) { return v < 0 ? E(0) : v; }},
      {"sign", [](auto& t) { return t.sign(); }, [](E v) { return E((v > 0) - (v < 0)); }},
      {"add_scalar", [](auto& t) { return t.add_scalar(0.75); }, [](E v) { return v + E(0.75); }},
      {"mul_scalar", [](auto& t) { return t.mul_scalar(-3.0); }, [](E v) { return v * E(-3); }},
      {"rsub_scalar", [](auto& t) { return t.rsub_scalar(2.0); }, [](E v) { return E(2) - v; }},
      {"div_scalar", [](auto& t) { return t.div_scalar(3.0); }, [](E v) { return v / E(3); }},
      {"rdiv_scalar", [](auto& t) { return t.rdiv_scalar(3.0); }, [](E v) { return E(3) / v; }},
      {"pow_scalar(2)", [](auto& t) { return t.pow_scalar(2.0); }, [](E v) { return v * v; }},
      {"clamp", [](auto& t) { return t.clamp(-2.5, 4.0); }, [](E v) { return v < E(-2.5) ? E(-2.5) : (v > E(4) ? E(4) : v); }},
  };
  for (const auto& c : exact) {
    const auto got = values(c.f(x));
    int bad = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const double w = static_cast<double>(c.g(static_cast<E>(xs[i])));
      if (got[i] != w && bad++ < 3) ADD_FAILURE() << c.name << "(" << xs[i] << ") = " << got[i] << ", expected " << w;
    }
  }
}

// Large binary ops through the flat same-shape loop and the broadcast (strided) loops, split across threads.
TYPED_TEST(ElementwiseApprox, LargeBinaryOpsWithBroadcasting) {
  using B = TypeParam;
  using E = Elem<B>;
  const int64_t r = 600, c = 500;
  std::vector<double> av(r * c), rowv(c), colv(r);
  for (int64_t i = 0; i < r * c; ++i) av[i] = 3.0 * std::cos(0.011 * static_cast<double>(i)) + 0.01;
  for (int64_t j = 0; j < c; ++j) rowv[j] = 0.5 + 0.25 * static_cast<double>(j % 9);
  for (int64_t i = 0; i < r; ++i) colv[i] = -1.0 + 0.125 * static_cast<double>(i % 17);
  const auto a = make<B, 2>(av, {r, c});
  const auto row = make<B, 2>(rowv, {1, c});
  const auto col = make<B, 2>(colv, {r, 1});
  const auto A = values(a), R = values(row), C = values(col);
  auto at = [&](const std::vector<double>& v, int64_t i) { return static_cast<E>(v[i]); };
  auto check = [&](const char* name, const Tensor<B, 2>& t, auto&& f) {
    ASSERT_TRUE(t.shape() == (Shape{r, c})) << name;
    const auto got = values(t);
    int bad = 0;
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) {
        const double w = static_cast<double>(f(i, j));
        const double g = got[i * c + j];
        if (!(g == w || (std::isnan(g) && std::isnan(w))) && bad++ < 3)
          ADD_FAILURE() << name << " at (" << i << ", " << j << "): " << g << " != " << w;
      }
  };
  check("a + a", a.add(a), [&](int64_t i, int64_t j) { return at(A, i * c + j) + at(A, i * c + j); });
  check("a * row", a.mul(row), [&](int64_t i, int64_t j) { return at(A, i * c + j) * at(R, j); });
  check("row - a", row.sub(a), [&](int64_t i, int64_t j) { return at(R, j) - at(A, i * c + j); });
  check("a / col", a.div(col), [&](int64_t i, int64_t j) { return at(A, i * c + j) / at(C, i); });
  check("col + row", col.add(row), [&](int64_t i, int64_t j) { return at(C, i) + at(R, j); });
  check("a max col", a.maximum(col), [&](int64_t i, int64_t j) { return std::max(at(A, i * c + j), at(C, i)); });
  check("row min a", row.minimum(a), [&](int64_t i, int64_t j) { return std::min(at(R, j), at(A, i * c + j)); });
  // pow is libm on the CPU: within 2 ulp of the long double result (kPowUlps: the GPU shaders' bound).
  const auto p = values(a.abs().pow(row));
  std::vector<double> xs(static_cast<std::size_t>(r * c));
  std::vector<LD> want(xs.size());
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) {
      xs[i * c + j] = 0.0;  // no slope term
      want[i * c + j] = std::pow(std::fabs(static_cast<LD>(A[i * c + j])), static_cast<LD>(R[j]));
    }
  const Worst w = check_ulps<E>("pow", xs, p, want, kPowUlps<B>);
  std::printf("[ worst    ] %s pow %.3g ulp (bound %g)\n", BackendNames::GetName<B>(0).c_str(), w.ulps, kPowUlps<B>);
}

}  // namespace elementwise_approx_cases
}  // namespace ember::test
