#pragma once
// Batch slices over Ember's pool, each running oneDNN on ONE OpenMP thread, and the per-slice partial sums of a
// backward (onednn_conv.cpp, onednn_conv_im2col.cpp).
// Letting oneDNN's OpenMP team do the threading measured 0.07x (14x slower) on 2 threads of this shared 2-core
// VM at load ~13: OpenMP workers spin in barriers while their partner is descheduled. Ember's pool waits on
// condition variables instead, and the slices need no barrier until the end.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "backends/cpu/allocator.hpp"
#include "backends/cpu/parallel.hpp"
#include "engine/backend/conv_geometry.hpp"
#include "engine/backend/ops.hpp"

namespace ember::cpu::onednn {

// One batch slice's grad weight and grad bias (written) by oneDNN's backward-weights primitive on this thread,
// through the slice's cached plan (onednn_conv.cpp); false when oneDNN cannot run the problem.
bool weights_backward_slice(const Conv2dGeometry& g, const Conv2dOptions& o, const float* x, const float* grad,
                            float* gw, float* gb);

// How many slices over_batch makes of n images at most.
inline int64_t batch_slices(int64_t n) { return std::max<int64_t>(1, std::min<int64_t>(num_threads(), n)); }

// Runs fn() with oneDNN on this thread alone. Per thread (OpenMP's setting is thread-local), and given back, also
// when fn throws: other OpenMP code in the process (LibTorch in bench/peers) keeps its own thread count.
template <class F>
void on_one_omp_thread(F&& fn) {
  struct Restore {
    int before = omp_get_max_threads();
    ~Restore() { omp_set_num_threads(before); }
  } restore;
  omp_set_num_threads(1);
  fn();
}

// Calls fn(lo, hi) over [0, n) in at most batch_slices(n) contiguous slices, one per pool thread.
template <class F>
void over_batch(int64_t n, F&& fn) {
  const int64_t parts = batch_slices(n);
  parallel_for(n, (n + parts - 1) / parts, [&](int64_t lo, int64_t hi) { on_one_omp_thread([&] { fn(lo, hi); }); });
}

// Slice i of [0, n) cut into `parts` near-equal contiguous slices.
inline std::pair<int64_t, int64_t> slice_bounds(int64_t n, int64_t parts, int64_t i) {
  return {i * n / parts, (i + 1) * n / parts};
}

// Sums over the batch (a convolution's grad weight and grad bias) computed per over_batch slice: the slice that
// starts at image 0 writes the outputs, every other slice a slot of partial sums of its own, and add() adds the
// slots in batch order afterwards, so the bits are the same on every run whichever thread took which slot.
class BatchPartials {
 public:
  // w: wn outputs; b: bn outputs or null; `slices` slices of the batch (over_batch's by default) will claim.
  BatchPartials(float* w, int64_t wn, float* b, int64_t bn, int64_t n, int64_t slices = 0)
      : w_(w), b_(b), wn_(wn), bn_(b ? bn : 0) {
    const int64_t slots = (slices > 0 ? slices : batch_slices(n)) - 1;
    if (slots > 0) {
      buf_ = allocate(static_cast<std::size_t>(slots * (wn_ + bn_)) * sizeof(float));
      first_.resize(static_cast<std::size_t>(slots));
    }
  }
  // Where the slice starting at image lo writes its sums (w, b). Thread-safe.
  std::pair<float*, float*> claim(int64_t lo) {
    if (lo == 0) return {w_, b_};
    const int64_t k = used_.fetch_add(1);
    first_[static_cast<std::size_t>(k)] = {lo, k};
    float* s = slot(k);
    return {s, b_ ? s + wn_ : nullptr};
  }
  // After every slice ran: the outputs += each slot, in batch order.
  void add() {
    std::vector<std::pair<int64_t, int64_t>> order(first_.begin(), first_.begin() + used_.load());
    std::sort(order.begin(), order.end());
    for (const auto& [lo, k] : order) {
      const float* s = slot(k);
      for (int64_t i = 0; i < wn_; ++i) w_[i] += s[i];
      for (int64_t i = 0; i < bn_; ++i) b_[i] += s[wn_ + i];
    }
  }

 private:
  float* slot(int64_t k) const { return static_cast<float*>(buf_->ptr) + k * (wn_ + bn_); }

  float *w_, *b_;
  int64_t wn_, bn_;
  std::shared_ptr<Buffer> buf_;
  std::vector<std::pair<int64_t, int64_t>> first_;  // per used slot: (its slice's first image, slot)
  std::atomic<int64_t> used_{0};
};

}  // namespace ember::cpu::onednn
