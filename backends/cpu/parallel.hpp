#pragma once
// A small persistent thread pool for large elementwise and reduction work. Small work runs inline on the calling
// thread: a fork/join costs ~1 µs here and occasionally stalls for milliseconds, which would dominate tiny ops.
#include <cstdint>
#include <functional>

namespace ember::cpu {

// Threads used for large work (default: hardware concurrency, or env EMBER_NUM_THREADS).
int num_threads();
void set_num_threads(int n);

// Below this many elements an op runs on one thread.
inline constexpr int64_t kParallelThreshold = 1 << 17;

// parallel_for's split over the pool (parallel.cpp).
void parallel_for_split(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// Calls fn(begin, end) over [0, n) split into contiguous chunks; inline when n <= grain or one thread is set. The
// inline case of small work is decided here, before fn becomes a std::function: wrapping a lambda that captures
// more than two pointers allocates, a tenth of a tiny op's cost.
template <class F>
void parallel_for(int64_t n, int64_t grain, F&& fn) {
  if (n <= 0) return;
  if (n <= grain) {
    fn(int64_t{0}, n);
    return;
  }
  parallel_for_split(n, grain, fn);
}

}  // namespace ember::cpu
