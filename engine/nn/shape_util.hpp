#pragma once
// Small shape helpers shared by the layers.
#include <array>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "engine/tensor/error.hpp"

namespace ember::nn::detail {

// [1, ..., 1, n, 1, ..., 1] of rank D with n at `pos`: reshapes a per-feature vector so it broadcasts against an
// input whose feature dim is `pos`.
template <std::size_t D>
std::array<int64_t, D> one_hot_shape(int64_t n, std::size_t pos) {
  std::array<int64_t, D> s;
  s.fill(1);
  s[pos] = n;
  return s;
}

inline void require_positive(const char* who, const char* what, int64_t v) {
  if (v <= 0) throw ArgumentError(fmt::format("{}: {} must be positive, got {}", who, what, v));
}

}  // namespace ember::nn::detail
