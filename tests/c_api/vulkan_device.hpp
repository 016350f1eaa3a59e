#pragma once
// What every Vulkan C-API test needs besides the host stand-in (vulkan_host.hpp): an owning handle for the
// ember_device it adopts or opens, whether libember can run Vulkan here at all (and why not), the skip macros
// built on that, and an f32 tensor made on a given device. One copy, so that every test skips for the same reasons with the same words.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "ember.h"
#include "tests/c_api/capi_support.hpp"

namespace ember::capi_test {

struct DeviceFree {
  void operator()(ember_device* d) const { ember_device_free(d); }
};
using Device = std::unique_ptr<ember_device, DeviceFree>;

// Whether libember has the Vulkan backend and a device to run it on; when not, *why says which is missing.
inline bool vulkan_usable(std::string* why) {
  ember_backend_info info{};
  info.struct_size = sizeof info;
  if (ember_backend_query(EMBER_BACKEND_VULKAN, &info) != EMBER_OK) {
    *why = std::string("ember_backend_query failed: ") + ember_last_error();
    return false;
  }
  if (!info.compiled) *why = "libember was built without the Vulkan backend";
  else if (!info.usable) *why = "no Vulkan device here (install a driver, e.g. mesa's lavapipe)";
  return info.compiled && info.usable;
}

// An F32 tensor of `shape` holding v, on device d (NULL: the CPU); a failed call fails the test.
inline Tensor f32_on(const ember_device* d, const std::vector<float>& v, const std::vector<int64_t>& shape) {
  ember_tensor* t = nullptr;
  EXPECT_EQ(ember_tensor_from_data(d, EMBER_DTYPE_F32, v.data(), v.size() * sizeof(float), shape.data(), shape.size(),
                                   &t),
            EMBER_OK)
      << ember_last_error();
  return Tensor(t);
}

}  // namespace ember::capi_test

// Skips the running test when libember cannot run Vulkan here.
#define SKIP_WITHOUT_VULKAN_DEVICE()                                                                       \
  do {                                                                                                     \
    std::string why_;                                                                                      \
    if (!::ember::capi_test::vulkan_usable(&why_)) GTEST_SKIP() << why_;                                   \
  } while (0)

// Also skips when the host stand-in (a VulkanHost) could not create its device, e.g. for lack of a feature.
#define SKIP_WITHOUT_HOST(host)                                                                            \
  do {                                                                                                     \
    SKIP_WITHOUT_VULKAN_DEVICE();                                                                          \
    if (!(host).ok()) GTEST_SKIP() << "the host side cannot create its device: " << (host).why();          \
  } while (0)
