#pragma once
// The CPU as a device of the C ABI: exactly one, index 0, shared by libember's float32 and float64 runtimes.
#include <string>

#include "backends/cpu/cpu_backend.hpp"
#include "c_api/src/runtime/dyn.hpp"

namespace ember::capi {

template <class Inner>
struct DeviceGlue;

template <class T>
struct DeviceGlue<Cpu<T>> {
  using Device = typename Cpu<T>::Device;
  static int32_t count() { return 1; }
  static Device open(int32_t index) {
    if (index != 0) throw IndexError("device: cpu has one device (index 0), got " + std::to_string(index));
    return {};
  }
  static int32_t index_of(const Device&) { return 0; }
  static std::string name(const Device&, int32_t) { return "cpu"; }
};

}  // namespace ember::capi
