#pragma once
// Whether a backend's Int tensors are 64-bit here. They are everywhere except on a Vulkan device without
// shaderInt64 (op_suite_vulkan_no_int64), where Int is int32 on the device: values beyond int32 are refused on
// upload and arithmetic wraps at 32 bits (README, ember.h). Cases that check int64 range or 64-bit wrap-around
// skip there; tests/vulkan_floor_test.cpp checks the int32 rules instead.
#include <gtest/gtest.h>

#include <cstdint>

#include "engine/ember.hpp"

namespace ember::test {

// Probed once per backend: INT32_MAX + 1 stays positive only with 64-bit Ints.
template <class B>
bool ints_are_64bit() {
  static const bool wide =
      Tensor<B, 1, Int>::full({1}, 2147483647.0).add_scalar(1.0).into_data().template to_vec<int64_t>()[0] > 0;
  return wide;
}

}  // namespace ember::test

#define SKIP_UNLESS_INT64(B) \
  if (!::ember::test::ints_are_64bit<B>()) GTEST_SKIP() << "Int tensors are 32-bit on this device (no shaderInt64)"
