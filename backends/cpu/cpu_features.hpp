#pragma once
// Whether the CPU running this process has AVX-512F (with the OS saving its registers): what the CPU backend's
// hand-written AVX-512 kernels ask before they run (max_pool_vec.cpp, gelu_avx512.cpp, fused_jit.cpp), so they are
// built without -march flags and the library still runs on any x86-64. False where they are not built.
namespace ember::cpu {

inline bool cpu_has_avx512f() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
#else
  return false;
#endif
}

}  // namespace ember::cpu
