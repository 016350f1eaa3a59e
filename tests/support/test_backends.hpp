#pragma once
// Shared by every test in the op suite: the backends every case runs on, tolerances per element type, and
// comparisons against reference values (normalized squared error, with NaN/Inf positions required to match).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "engine/ember.hpp"
#if EMBER_HAS_VULKAN
#include "backends/vulkan/context.hpp"
#endif

// The backend this op-suite binary covers: a name of backends/backend_list.hpp, set per binary by tests/meson.build
// (op_suite: the CPU; op_suite_vulkan, op_suite_cuda: that backend, so a GPU binary can skip as a whole when no
// device exists).
#ifndef EMBER_TEST_BACKEND_NAME
#define EMBER_TEST_BACKEND_NAME "cpu"
#endif

namespace ember::test {

inline constexpr BackendId kTestBackend = backend_by_name(EMBER_TEST_BACKEND_NAME).value().id;
using TestEntry = BackendEntry<kTestBackend>;

template <class Variants>
struct WithAutodiffOfDefault;
template <class... Bs>
struct WithAutodiffOfDefault<TypeList<Bs...>> {
  using type = ::testing::Types<Bs..., Autodiff<typename TestEntry::Default>>;
};

// Every op-suite case runs on each of these: the backend's element variants (registry.hpp) and its default under
// Autodiff. A new backend gets the suite from its BackendEntry alone. op_suite_fusion (EMBER_TEST_FUSION) runs the
// default under Fusion instead, plain and under Autodiff (issue 14, engine/fusion/).
#if defined(EMBER_TEST_FUSION)
using TestBackends = ::testing::Types<Fusion<typename TestEntry::Default>, Autodiff<Fusion<typename TestEntry::Default>>>;
#else
using TestBackends = typename WithAutodiffOfDefault<typename TestEntry::Variants>::type;
#endif

template <class B>
struct IsAutodiff : std::false_type {};
template <class B>
struct IsAutodiff<Autodiff<B>> : std::true_type {};
template <class B>
struct IsFusion : std::false_type {};
template <class B>
struct IsFusion<Fusion<B>> : std::true_type {};
template <class B>
struct IsFusion<Autodiff<B>> : IsFusion<B> {};

// A readable name per backend in test output (TYPED_TEST_SUITE(..., BackendNames)): "Cpu", "CpuF64",
// "AutodiffVulkan", ... from the list's name and the float element (gtest names allow letters and digits only).
struct BackendNames {
  template <class B>
  static std::string GetName(int) {
    using Plain = std::conditional_t<IsAutodiff<B>::value, typename TestEntry::Default, B>;
    std::string name(backend_info(kTestBackend)->name);
    name[0] = static_cast<char>(name[0] - 'a' + 'A');
    if (IsFusion<B>::value) name = "Fusion" + name;
    if (IsAutodiff<B>::value) name = "Autodiff" + name;
    if (std::is_same_v<typename Plain::FloatElem, double>) name += "F64";
    else if (kTestBackend == BackendId::Cpu) name += "F32";
    return name;
  }
};

// Relative tolerance by float element: the normalized error sqrt(sum (a-e)^2 / sum e^2) must stay below it.
// `loose` is for transcendental ops implemented with fast approximations.
template <class B>
struct Tol {
  static constexpr bool f64 = std::is_same_v<typename B::FloatElem, double>;
  static constexpr double exact = f64 ? 1e-12 : 1e-6;
  static constexpr double loose = f64 ? 1e-10 : 2e-5;
};

// Whether B's GEMM-backed ops (matmul, linear, conv1d / conv2d and their backward passes) run an f16 variant in
// this process: Vulkan on a context with f16 variants enabled (EMBER_VULKAN_FLOAT16=1 on a device with
// shaderFloat16, meson test op_suite_vulkan_f16). Asked of the context the ops run on, so a tolerance is loosened
// only when that variant really runs on this device, never for a whole binary.
template <class B>
struct PlainOf {
  using type = B;
};
template <class B>
struct PlainOf<Autodiff<B>> : PlainOf<B> {};
template <class B>
struct PlainOf<Fusion<B>> : PlainOf<B> {};
template <class B>
bool gemm_f16() {
#if EMBER_HAS_VULKAN
  if constexpr (std::is_same_v<typename PlainOf<B>::type, Vulkan>) return vk::default_context()->float16();
#endif
  return false;
}

// Normalized error bound of a GEMM-backed result under the f16 variant (gemm.comp HALF): both inputs and each
// product are rounded to f16 (unit roundoff u = 2^-11) and summed in f32, so each output is off by at most
// 3u * sum|a_i b_i|, its normalized error 3u times the cancellation ratio sum|a_i b_i| / |sum a_i b_i| (the f32
// summation adds ~K * 2^-24, negligible). Measured on lavapipe over the op suite's GEMM-backed gradient cases
// (inputs not representable in f16): 2.35e-4 .. 1.14e-3 (2.3u, conv2d with groups and dilation, backward). 8u =
// 3.9e-3 is 3.4x the worst; one dropped product per K slab of 8 is off by > 1e-1.
inline constexpr double kF16GemmTol = 8.0 / 2048.0;
// The tolerance of a GEMM-backed comparison: `f32_tol` unless B runs the f16 GEMM here, then f16's bound. Cases
// whose inputs and products are exact in f16 (multiples of 1/16 in matmul_test.cpp) keep their f32 tolerance:
// the f16 variant must reproduce them exactly too.
template <class B>
double gemm_tol(double f32_tol) {
  return gemm_f16<B>() ? std::max(f32_tol, kF16GemmTol) : f32_tol;
}

// Error bounds in ulp of pow and the inverse trig / hyperbolic ops (tests/ops/elementwise_approx_test.cpp, which
// prints the worst case per backend). The CPU and CUDA call libm: measured on the CPU (glibc), pow 0.50 ulp (f32 and
// f64: correctly rounded), trig 1.47 (f32) / 1.54 (f64) ulp; bounds 1 and 2, the smallest whole ulp counts above
// them. Autodiff<B> computes with B, so it has B's bounds.
template <class B>
struct UlpBounds {
  static constexpr double pow = 1.0;
  static constexpr double trig = 2.0;  // asin acos atan sinh cosh asinh acosh atanh atan2
};
template <class B>
struct UlpBounds<Autodiff<B>> : UlpBounds<B> {};
template <class B>
struct UlpBounds<Fusion<B>> : UlpBounds<B> {};
#if EMBER_HAS_VULKAN
// The Vulkan shaders have no libm. pow: 2^(y log2|x|) with the exponent's integer part split exactly
// (shaders/math.glsl) measures up to 2.22 ulp over the test's range (lavapipe). trig: the shaders' own formulas
// (shaders/math_trig.glsl) measure up to 2.64 ulp (atan2). Bounds 3 and 4: ~1.4x, room for a GPU whose exp2/log2
// are less exact than lavapipe's.
template <>
struct UlpBounds<Vulkan> {
  static constexpr double pow = 3.0;
  static constexpr double trig = 4.0;
};
#endif
template <class B>
constexpr double kPowUlps = UlpBounds<B>::pow;
template <class B>
constexpr double kTrigUlps = UlpBounds<B>::trig;

inline std::string fmt_vec(const std::vector<double>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size() && i < 32; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() > 32 ? ", ...]" : "]");
}

// Compares values with NaN/Inf rules: NaN where expected NaN, same-signed infinity where expected infinity; the
// finite rest within normalized squared error `tol`.
inline ::testing::AssertionResult close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << "size " << got.size() << " != expected " << want.size();
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]) || std::isinf(want[i])) {
      const bool ok = std::isnan(want[i]) ? std::isnan(got[i]) : got[i] == want[i];
      if (!ok)
        return ::testing::AssertionFailure() << "element " << i << ": got " << got[i] << ", expected " << want[i];
      continue;
    }
    if (!std::isfinite(got[i]))
      return ::testing::AssertionFailure() << "element " << i << ": got " << got[i] << ", expected " << want[i];
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  const double err = std::sqrt(num / std::max(den, 1e-300));
  if (num == 0.0 || err <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "normalized error " << err << " > " << tol << "\n  got      "
                                       << fmt_vec(got) << "\n  expected " << fmt_vec(want);
}

template <class B, std::size_t D, class K>
std::vector<double> values(const Tensor<B, D, K>& t) {
  return t.into_data().template to_vec<double>();
}

// Asserts shape and values of a tensor.
template <class B, std::size_t D, class K>
::testing::AssertionResult matches(const Tensor<B, D, K>& t, const Shape& shape, const std::vector<double>& want,
                                   double tol) {
  if (!(t.shape() == shape))
    return ::testing::AssertionFailure() << "shape " << t.shape().to_string() << " != expected " << shape.to_string();
  return close(values(t), want, tol);
}

// A checked-in reference array (tests/reference/*.hpp) as a vector.
template <std::size_t N>
std::vector<double> V(const double (&a)[N]) {
  return {a, a + N};
}
template <std::size_t N>
std::vector<int64_t> VI(const int64_t (&a)[N]) {
  return {a, a + N};
}

template <class B, std::size_t D>
Tensor<B, D> make(const std::vector<double>& v, std::array<int64_t, D> shape) {
  return Tensor<B, D>::from_values(v, shape);
}
template <class B, std::size_t D>
Tensor<B, D, Int> make_int(const std::vector<int64_t>& v, std::array<int64_t, D> shape) {
  return Tensor<B, D, Int>::from_values(v, shape);
}
template <class B, std::size_t D>
Tensor<B, D, Bool> make_bool(const std::vector<bool>& v, std::array<int64_t, D> shape) {
  return Tensor<B, D, Bool>::from_values(v, shape);
}

}  // namespace ember::test
