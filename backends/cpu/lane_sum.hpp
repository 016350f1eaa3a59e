#pragma once
// Row reductions that GCC vectorizes: it does not reorder a float sum (or a max, because of NaN) by itself, so these
// keep 16 interleaved partial results, which it turns into vector operations, combined at the end. Used by the
// fused row kernels (layer_norm.cpp, cross_entropy.cpp) inside their target_clones functions.
#include <cstdint>

namespace ember::cpu {

// sum of f(j) for j in [0, d).
template <class T, class F>
[[gnu::always_inline]] inline T lane_sum(int64_t d, F&& f) {
  constexpr int64_t kLanes = 16;
  T acc[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= d; j += kLanes)
    for (int64_t u = 0; u < kLanes; ++u) acc[u] += f(j + u);
  T s = 0;
  for (; j < d; ++j) s += f(j);
  for (int64_t u = 0; u < kLanes; ++u) s += acc[u];
  return s;
}

// max of x[0..d), d >= 1. A NaN may or may not win; a row holding one gives NaN through the callers' exp sums anyway.
template <class T>
[[gnu::always_inline]] inline T lane_max(const T* x, int64_t d) {
  constexpr int64_t kLanes = 16;
  T m = x[0];
  int64_t j = 0;
  if (d >= kLanes) {
    T acc[kLanes];
    for (int64_t u = 0; u < kLanes; ++u) acc[u] = x[u];
    for (j = kLanes; j + kLanes <= d; j += kLanes)
      for (int64_t u = 0; u < kLanes; ++u) acc[u] = x[j + u] > acc[u] ? x[j + u] : acc[u];
    for (int64_t u = 0; u < kLanes; ++u) m = acc[u] > m ? acc[u] : m;
  }
  for (; j < d; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

}  // namespace ember::cpu
