#pragma once
// im2col / col2im for 2-D convolutions (NCHW), shared by the im2col + GEMM convolution (conv.cpp) and the first
// layer's batch-sliced backward (onednn_conv.cpp). Both split their work over channels with parallel_for; called
// from inside a parallel region (a batch slice) they run inline on the calling thread.
#include <cstdint>

#include "engine/backend/conv_geometry.hpp"

namespace ember::cpu {

// col[(c*kh + i)*kw + j, (n*ho + oh)*wo + ow] = x[n, c0 + c, oh*sh + i*dh - ph, ow*sw + j*dw - pw] (0 if padded),
// for the g.cg channels of one group starting at c0.
template <class T>
void im2col(const T* x, const Conv2dGeometry& g, int64_t c0, T* col);

// The adjoint of im2col: grad_x[n, c0 + c, ...] += col[...] over every tap that read that pixel. grad_x must be
// zeroed first. Chunks own whole channels, so threads never write the same pixel. Clobbers col's padded entries.
template <class T>
void col2im(T* col, const Conv2dGeometry& g, int64_t c0, T* gx);

// Sum with independent partial sums, so the compiler can vectorize and the adds don't serialize on latency.
template <class T>
inline T lane_sum(const T* p, int64_t n) {
  constexpr int kLanes = 16;
  T acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int r = 0; r < kLanes; ++r) acc[r] += p[i + r];
  T s = T(0);
  for (; i < n; ++i) s += p[i];
  for (int r = 0; r < kLanes; ++r) s += acc[r];
  return s;
}

}  // namespace ember::cpu
