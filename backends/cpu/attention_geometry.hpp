#pragma once
// The sizes of one scaled-dot-product attention call and its bias's strides, shared by the CPU's two attention
// paths (attention.cpp: flash tiles for long sequences; attention_matmul.cpp: whole-head GEMMs for short ones).
#include <cstdint>

#include "engine/backend/sdpa_types.hpp"
#include "engine/tensor/shape.hpp"

namespace ember::cpu::sdpa_detail {

// q [b, h, l, e], k [b, h, s, e], v [b, h, s, ev]; the bias's strides are 0 along its broadcast dims.
struct Geometry {
  int64_t b, h, l, s, e, ev;
  int64_t bias_b = 0, bias_h = 0, bias_l = 0, bias_s = 0;
  bool has_bias = false;
  bool causal = false;
  double scale = 1;
};

inline Geometry geometry(const Shape& q, const Shape& k, const Shape& v, const Shape* bias, const SdpaOptions& o) {
  Geometry g{q[0], q[1], q[2], k[2], q[3], v[3]};
  g.causal = o.is_causal;
  g.scale = o.scale;
  if (bias) {
    g.has_bias = true;
    const Shape& bs = *bias;
    const int64_t st3 = 1, st2 = bs[3], st1 = bs[2] * st2, st0 = bs[1] * st1;
    g.bias_s = bs[3] == 1 ? 0 : st3;
    g.bias_l = bs[2] == 1 ? 0 : st2;
    g.bias_h = bs[1] == 1 ? 0 : st1;
    g.bias_b = bs[0] == 1 ? 0 : st0;
  }
  return g;
}

// The whole-head GEMM path holds one [l, s] score matrix (and its gradient) per thread: taken while that is at
// most this many elements (128 x 128: 64 KiB of floats, in L2), where the flash path's per-row online-softmax
// bookkeeping costs more than the products themselves (sequence 64, head dim 32: the language model's shape).
inline constexpr int64_t kMatmulPathMaxScores = 128 * 128;
inline bool uses_matmul_path(int64_t l, int64_t s) { return l * s <= kMatmulPathMaxScores; }

}  // namespace ember::cpu::sdpa_detail
