#pragma once
// The one list of Ember's backends. Everything that enumerates backends derives from it: the C ABI's runtime
// dispatch and ember_backend_query / ember_backend_list, `ember train --backend`, the Python binding's device
// names, the typed test suites (tests/support/test_backends.hpp) and the benches.
//
// This header is data only (no backend headers, no GPU libraries): the C ABI and the CLI include it to name and
// load backends they may not link. backends/registry.hpp adds the C++ types of the backends compiled in.
//
// Adding a backend: one X(...) row here (ids are ember.h's ember_backend values, append-only), a
// BackendEntry specialization in backends/registry.hpp, and, for a plugin, its shared object
// (CONTRIBUTING.md: "Adding a backend").
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

// Two questions per backend, two macro families:
//  * EMBER_HAS_<NAME> (set by ember_<name>_dep in meson): the backend is linked into this build unit's target, so
//    its C++ type may be used here (backends/registry.hpp).
//  * EMBER_BUILT_<NAME>: the backend is built in this configuration, linked here or as a plugin beside (kBackends'
//    `compiled`). meson sets it for every unit of libember and of the ember executable alike, so kBackends has one
//    definition in each of them; elsewhere it defaults to EMBER_HAS_<NAME>.
#ifndef EMBER_HAS_VULKAN
#define EMBER_HAS_VULKAN 0
#endif
#ifndef EMBER_HAS_CUDA
#define EMBER_HAS_CUDA 0
#endif
#define EMBER_HAS_CPU 1
#ifndef EMBER_BUILT_VULKAN
#define EMBER_BUILT_VULKAN EMBER_HAS_VULKAN
#endif
#ifndef EMBER_BUILT_CUDA
#define EMBER_BUILT_CUDA EMBER_HAS_CUDA
#endif
#define EMBER_BUILT_CPU 1
// The X-macro pastes the enumerator name; these map it to the flags.
#define EMBER_HAS_BACKEND_Cpu EMBER_HAS_CPU
#define EMBER_HAS_BACKEND_Vulkan EMBER_HAS_VULKAN
#define EMBER_HAS_BACKEND_Cuda EMBER_HAS_CUDA
#define EMBER_BUILT_BACKEND_Cpu EMBER_BUILT_CPU
#define EMBER_BUILT_BACKEND_Vulkan EMBER_BUILT_VULKAN
#define EMBER_BUILT_BACKEND_Cuda EMBER_BUILT_CUDA

// X(Type, name, id, builtin): Type is the enumerator, name the lower-case name users type (--backend, Python's
// device="..."), id ember.h's value, builtin whether libember and the CLI link it (else it is a plugin loaded on
// first use from libember-<name>.so).
#define EMBER_BACKEND_LIST(X) \
  X(Cpu, cpu, 0, true)        \
  X(Vulkan, vulkan, 1, false) \
  X(Cuda, cuda, 2, false)

namespace ember {

enum class BackendId : int32_t {
#define EMBER_X(T, n, id, builtin) T = id,
  EMBER_BACKEND_LIST(EMBER_X)
#undef EMBER_X
};

struct BackendInfo {
  BackendId id;
  std::string_view name;  // "cpu", "vulkan", "cuda"
  bool builtin;           // linked in; otherwise loaded from a plugin
  bool compiled;          // built in this configuration (its plugin exists or it is linked in)
};

inline constexpr std::array kBackends = {
#define EMBER_X(T, n, id, builtin) BackendInfo{BackendId::T, #n, builtin, EMBER_BUILT_BACKEND_##T != 0},
    EMBER_BACKEND_LIST(EMBER_X)
#undef EMBER_X
};

constexpr std::optional<BackendInfo> backend_info(BackendId id) {
  for (const auto& b : kBackends)
    if (b.id == id) return b;
  return std::nullopt;
}
constexpr std::optional<BackendInfo> backend_by_name(std::string_view name) {
  for (const auto& b : kBackends)
    if (b.name == name) return b;
  return std::nullopt;
}

}  // namespace ember
