#pragma once
// How the conformance runner compares an output with ONNX's expected one, like ONNX's backend tests: same shape;
// float values within rtol 1e-3 / atol 1e-7 (NaN matches NaN, infinities must match); integers and bools exact.
// The output is converted to the expected dtype first (the runtime stores ints and floats in the backend's own
// element types).
#include <fmt/format.h>

#include <cmath>
#include <string>

#include "engine/tensor/tensor_data.hpp"

namespace ember::onnx_import::conformance {

inline constexpr double kRtol = 1e-3;
inline constexpr double kAtol = 1e-7;

// Empty when `got` matches `want`; otherwise what differs. `shape_error` is set when shapes (not values) differ.
inline std::string compare_output(const TensorData& got_any, const TensorData& want, bool& shape_error) {
  shape_error = false;
  if (got_any.shape != want.shape) {
    shape_error = true;
    return fmt::format("shape {} expected, got {}", want.shape.to_string(), got_any.shape.to_string());
  }
  const TensorData got = got_any.convert(want.dtype);
  const std::size_t n = want.num_elements();
  if (dtype_is_float(want.dtype)) {
    for (std::size_t i = 0; i < n; ++i) {
      const double g = got.get<double>(i), w = want.get<double>(i);
      if (std::isnan(w) && std::isnan(g)) continue;
      // An infinity must match exactly (inf - -inf is within rtol * inf); NaN against a number fails below.
      const bool ok = std::isinf(w) || std::isinf(g) ? g == w : std::abs(g - w) <= kAtol + kRtol * std::abs(w);
      if (!ok)
        return fmt::format("element {} of {}: {} expected, got {} (rtol {}, atol {})", i, n, w, g, kRtol, kAtol);
    }
    return {};
  }
  for (std::size_t i = 0; i < n; ++i) {
    const int64_t g = got.get<int64_t>(i), w = want.get<int64_t>(i);
    if (g != w) return fmt::format("element {} of {}: {} expected, got {}", i, n, w, g);
  }
  return {};
}

}  // namespace ember::onnx_import::conformance
