#pragma once
// Shared by every test in the op suite: the backends every case runs on, tolerances per element type, and
// comparisons against reference values (normalized squared error, with NaN/Inf positions required to match).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "engine/ember.hpp"
#if defined(EMBER_TEST_BACKEND_VULKAN)
#include "backends/vulkan/vulkan_backend.hpp"
#elif defined(EMBER_TEST_BACKEND_CUDA)
#include "backends/cuda/cuda_backend.hpp"
#endif

namespace ember::test {

// Every op-suite case runs on each of these. New backends are added here (and only here). The suite's sources are
// compiled once per backend family (tests/meson.build): op_suite for the CPU, op_suite_vulkan and op_suite_cuda
// with EMBER_TEST_BACKEND_* defined, so a GPU backend's binary can skip as a whole when no device exists.
#if defined(EMBER_TEST_BACKEND_VULKAN)
using TestBackends = ::testing::Types<Vulkan, Autodiff<Vulkan>>;
#elif defined(EMBER_TEST_BACKEND_CUDA)
using TestBackends = ::testing::Types<Cuda, Autodiff<Cuda>>;
#else
using TestBackends = ::testing::Types<Cpu<float>, Cpu<double>, Autodiff<Cpu<float>>>;
#endif

// A readable name per backend in test output (TYPED_TEST_SUITE(..., BackendNames)).
struct BackendNames {
  template <class B>
  static std::string GetName(int) {
    if constexpr (std::is_same_v<B, Cpu<float>>) return "CpuF32";
    else if constexpr (std::is_same_v<B, Cpu<double>>) return "CpuF64";
    else if constexpr (std::is_same_v<B, Autodiff<Cpu<float>>>) return "AutodiffCpuF32";
#if defined(EMBER_TEST_BACKEND_VULKAN)
    else if constexpr (std::is_same_v<B, Vulkan>) return "Vulkan";
    else if constexpr (std::is_same_v<B, Autodiff<Vulkan>>) return "AutodiffVulkan";
#elif defined(EMBER_TEST_BACKEND_CUDA)
    else if constexpr (std::is_same_v<B, Cuda>) return "Cuda";
    else if constexpr (std::is_same_v<B, Autodiff<Cuda>>) return "AutodiffCuda";
#endif
    else return "Other";
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

// Bound on pow's error in ulp (tests/ops/elementwise_approx_test.cpp): libm's 2 on the CPU. The Vulkan shaders have
// no libm: 2^(y log2|x|) with the exponent's integer part split exactly (shaders/math.glsl) measures up to 2.22 ulp
// over the test's range, so 3 there.
template <class B>
constexpr double kPowUlps = 2.0;
#if defined(EMBER_TEST_BACKEND_VULKAN)
template <>
constexpr double kPowUlps<Vulkan> = 3.0;
template <>
constexpr double kPowUlps<Autodiff<Vulkan>> = 3.0;
#endif

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
