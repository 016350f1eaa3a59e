// Window geometry shared by the pooling shaders, the same formulas as backends/cpu/pool.cpp (PyTorch semantics,
// ceil_mode false). Every (n, c) plane of the NCHW tensors is independent.

// Kernel taps t in [lo, hi) with 0 <= start + t * d < size: the window clipped to the image.
ivec2 pool_taps(int start, int size, int k, int d) {
  const int lo = start >= 0 ? 0 : (-start + d - 1) / d;
  const int hi = start >= size ? 0 : (size - 1 - start) / d + 1;
  const int l = min(lo, k), h = min(hi, k);
  return ivec2(l, max(l, h));
}

// Average window along one axis for output o: [lo, hi) clipped to the image, and its extent counting padding
// (but not overhang past the padding), which is the divisor's factor when count_include_pad.
struct AvgSpan {
  int lo, hi, padded;
};
AvgSpan avg_span(int o, int size, int k, int s, int pad) {
  const int lo = o * s - pad;
  const int hi = min(lo + k, size + pad);
  return AvgSpan(max(lo, 0), min(hi, size), hi - lo);
}

// Adaptive windows: [floor(i * in / out), ceil((i + 1) * in / out)).
int adaptive_start(int i, int in_size, int out_size) { return (i * in_size) / out_size; }
int adaptive_end(int i, int in_size, int out_size) { return ((i + 1) * in_size + out_size - 1) / out_size; }
