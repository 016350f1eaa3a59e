#include "backends/cpu/blas_route.hpp"

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "backends/cpu/onednn.hpp"

extern "C" char* openblas_get_corename(void);

namespace ember::cpu::blas {
namespace {

const char* isa_name(Isa i) {
  switch (i) {
    case Isa::Sse: return "SSE";
    case Isa::Avx: return "AVX";
    case Isa::Avx2: return "AVX2";
    case Isa::Avx512: return "AVX-512";
    case Isa::Unknown: break;
  }
  return "unknown";
}

Sgemm initial_route() {
  if (const char* env = std::getenv("EMBER_SGEMM")) {
    if (std::strcmp(env, "openblas") == 0) return Sgemm::OpenBlas;
    if (std::strcmp(env, "onednn") == 0) return onednn::enabled() ? Sgemm::OneDnn : Sgemm::OpenBlas;
  }
  return automatic_route(kernel_isa(openblas_get_corename()), cpu_isa(), onednn::enabled());
}

std::atomic<Sgemm>& route() {
  static std::atomic<Sgemm> r{initial_route()};
  return r;
}

}  // namespace

Isa kernel_isa(std::string_view core) {
  // OpenBLAS 0.3.21's x86-64 DYNAMIC_ARCH core names (driver/others/dynamic.c, corename[]), by the widest vector
  // instructions their sgemm kernels use. SapphireRapids is 0.3.22's.
  static constexpr std::array<std::pair<std::string_view, Isa>, 26> kCores{{
      {"Katmai", Isa::Sse},        {"Coppermine", Isa::Sse},   {"Northwood", Isa::Sse},  {"Prescott", Isa::Sse},
      {"Banias", Isa::Sse},        {"Atom", Isa::Sse},         {"Core2", Isa::Sse},      {"Penryn", Isa::Sse},
      {"Dunnington", Isa::Sse},    {"Nehalem", Isa::Sse},      {"Athlon", Isa::Sse},     {"Opteron", Isa::Sse},
      {"Opteron_SSE3", Isa::Sse},  {"Barcelona", Isa::Sse},    {"Nano", Isa::Sse},       {"Bobcat", Isa::Sse},
      {"Sandybridge", Isa::Avx},   {"Bulldozer", Isa::Avx},    {"Piledriver", Isa::Avx}, {"Steamroller", Isa::Avx},
      {"Excavator", Isa::Avx},     {"Haswell", Isa::Avx2},     {"Zen", Isa::Avx2},       {"SkylakeX", Isa::Avx512},
      {"Cooperlake", Isa::Avx512}, {"SapphireRapids", Isa::Avx512},
  }};
  for (const auto& [name, isa] : kCores)
    if (name == core) return isa;
  return Isa::Unknown;
}

Isa cpu_isa() {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl"))
    return Isa::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::Avx2;
  if (__builtin_cpu_supports("avx")) return Isa::Avx;
  return Isa::Sse;
#else
  return Isa::Unknown;
#endif
}

Sgemm automatic_route(Isa kernels, Isa cpu, bool have_onednn) {
  const bool lags = kernels != Isa::Unknown && cpu != Isa::Unknown && kernels < cpu;
  return lags && have_onednn ? Sgemm::OneDnn : Sgemm::OpenBlas;
}

Sgemm sgemm_route() { return route().load(std::memory_order_relaxed); }

void set_sgemm_route(Sgemm r) {
  route().store(r == Sgemm::OneDnn && !onednn::enabled() ? Sgemm::OpenBlas : r, std::memory_order_relaxed);
}

std::string describe() {
  const char* core = openblas_get_corename();
  return fmt::format("OpenBLAS {} kernels ({}) on an {} CPU: f32 GEMMs on {}", core, isa_name(kernel_isa(core)),
                     isa_name(cpu_isa()), sgemm_route() == Sgemm::OneDnn ? "oneDNN" : "OpenBLAS");
}

}  // namespace ember::cpu::blas
