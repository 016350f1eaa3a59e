#pragma once
// Batch slices over Ember's pool, each running oneDNN on ONE OpenMP thread (onednn_conv.cpp, onednn_conv_im2col.cpp).
// Letting oneDNN's OpenMP team do the threading measured 0.07x (14x slower) on 2 threads of this shared 2-core
// VM at load ~13: OpenMP workers spin in barriers while their partner is descheduled. Ember's pool waits on
// condition variables instead, and the slices need no barrier until the end.
#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "backends/cpu/parallel.hpp"

namespace ember::cpu::onednn {

// Calls fn(lo, hi) over [0, n) in min(threads, n) contiguous slices, one per pool thread.
template <class F>
void over_batch(int64_t n, F&& fn) {
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(num_threads(), n));
  parallel_for(n, (n + parts - 1) / parts, [&](int64_t lo, int64_t hi) {
    // Per thread (OpenMP's setting is thread-local), and given back: other OpenMP code in the process (LibTorch
    // in bench/peers) keeps its own thread count.
    const int before = omp_get_max_threads();
    omp_set_num_threads(1);
    fn(lo, hi);
    omp_set_num_threads(before);
  });
}

}  // namespace ember::cpu::onednn
