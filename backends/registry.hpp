#pragma once
// The C++ types of the backends compiled into this build, derived from backends/backend_list.hpp. Include it only
// where the backends are linked (typed C++ programs, tests, benches, a backend's own plugin): it pulls in every
// compiled backend's header. Code that only names or loads backends (the C ABI core, the CLI) uses
// backend_list.hpp alone.
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "backends/backend_list.hpp"
#include "backends/cpu/cpu_backend.hpp"
#if EMBER_HAS_VULKAN
#include "backends/vulkan/context.hpp"
#include "backends/vulkan/vulkan_backend.hpp"
#endif
#if EMBER_HAS_CUDA
#include "backends/cuda/cuda_api.hpp"
#include "backends/cuda/cuda_backend.hpp"
#endif

namespace ember {

template <class... Ts>
struct TypeList {};

// Per compiled backend: Default is what the C ABI and the CLI run on (under Autodiff), Variants every element
// configuration the typed test suites cover (the CPU in f32 and f64); available() whether this machine can run it
// (why not, in words), synchronize() waits for the default device's queued work (benchmarks time with it), and
// max_tensor_bytes() the largest tensor the default device takes.
template <BackendId id>
struct BackendEntry;
template <>
struct BackendEntry<BackendId::Cpu> {
  static constexpr BackendId id = BackendId::Cpu;
  using Default = Cpu<float>;
  using Variants = TypeList<Cpu<float>, Cpu<double>>;
  static bool available(std::string* = nullptr) { return true; }
  static void synchronize() {}  // CPU ops return finished
  static int64_t max_tensor_bytes() { return int64_t{1} << 40; }
};
#if EMBER_HAS_VULKAN
template <>
struct BackendEntry<BackendId::Vulkan> {
  static constexpr BackendId id = BackendId::Vulkan;
  using Default = Vulkan;
  using Variants = TypeList<Vulkan>;
  static bool available(std::string* why = nullptr) { return vk::available(why); }
  static void synchronize() { vk::default_context()->synchronize(); }
  static int64_t max_tensor_bytes() {
    return static_cast<int64_t>(vk::default_context()->info().max_storage_buffer_range);
  }
};
#endif
#if EMBER_HAS_CUDA
template <>
struct BackendEntry<BackendId::Cuda> {
  static constexpr BackendId id = BackendId::Cuda;
  using Default = Cuda;
  using Variants = TypeList<Cuda>;
  static bool available(std::string* why = nullptr) {
    if (cuda::device_count() > 0) return true;
    if (why) *why = cuda::unavailable_reason();
    return false;
  }
  static void synchronize() { cuda::synchronize(0); }
  static int64_t max_tensor_bytes() { return int64_t{1} << 40; }
};
#endif

// Calls f(std::type_identity<BackendEntry<id>>{}) for each compiled backend, in list order.
template <class F>
constexpr void for_each_compiled_backend(F&& f) {
#define EMBER_X(T, n, id, builtin)                                       \
  if constexpr (EMBER_HAS_BACKEND_##T) f(std::type_identity<BackendEntry<BackendId::T>>{});
  EMBER_BACKEND_LIST(EMBER_X)
#undef EMBER_X
}

template <class B, class... Ts>
constexpr bool in_type_list(TypeList<Ts...>) {
  return (std::is_same_v<B, Ts> || ...);
}

// The backend whose Default or one of its Variants (Cpu<double>) is B; its BackendInfo from the list.
template <class B>
constexpr BackendInfo backend_info_of() {
  std::optional<BackendInfo> found;
  for_each_compiled_backend([&](auto e) {
    using E = typename decltype(e)::type;
    if constexpr (std::is_same_v<typename E::Default, B> || in_type_list<B>(typename E::Variants{}))
      found = backend_info(E::id);
  });
  return *found;
}

}  // namespace ember
