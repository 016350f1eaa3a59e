#pragma once
// CUDA devices of the C ABI: the CUDA runtime's device numbers. Without a usable GPU the backend reports 0
// devices and opening one is UNSUPPORTED with the runtime's reason.
#include <fmt/format.h>

#include <string>

#include "backends/cuda/cuda_backend.hpp"
#include "c_api/src/runtime/dyn.hpp"

namespace ember::capi {

template <class Inner>
struct DeviceGlue;

template <>
struct DeviceGlue<Cuda> {
  using Device = Cuda::Device;
  static int32_t count() { return cuda::device_count(); }
  static Device open(int32_t index) {
    const int32_t n = count();
    if (n == 0) throw UnsupportedError(fmt::format("cuda: {}", cuda::unavailable_reason()));
    if (index < 0 || index >= n)
      throw IndexError(fmt::format("device: cuda has {} device(s) (index 0..{}), got {}", n, n - 1, index));
    return Device{index};
  }
  static int32_t index_of(const Device& d) { return d.index; }
  static std::string name(const Device&, int32_t index) { return fmt::format("cuda:{}", index); }
};

}  // namespace ember::capi
