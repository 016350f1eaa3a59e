#pragma once
// The f32 max pooling forward with AVX-512 (pool.cpp asks it first). The scalar kernel takes one tap at a time
// with a data-dependent branch per tap; on the digits CNN's [64, 32, 8, 8] pool it was 41 % of the model's
// inference (bench/README.md). Here 16 output elements of a plane go at once: each tap is one gather (along rows
// of >= 16 outputs at stride 1 or 2: two contiguous loads) of their 16 input values, compared branch-free (same rule and tap order as the scalar kernel: a value that beats the
// running best, or a NaN, wins), so values and argmax indices are bit-identical to the scalar kernel's.
// Outputs whose window reaches into the padding stay with the scalar kernel (pool.cpp); every other output of
// the plane, flattened over rows, feeds the vectors, so a plane of 4 x 4 outputs fills one vector exactly.
#include <cstdint>
#include <vector>

#include "engine/backend/pool_geometry.hpp"

namespace ember::cpu {

// Which outputs of a plane the vector kernel takes, made once per call and shared by all planes.
struct MaxPoolWindows {
  std::vector<int32_t> inner;   // outputs whose whole window lies in the image (flat index oh * wo + ow)
  std::vector<int32_t> origin;  // their first tap's offset in the input plane
  std::vector<int32_t> border;  // outputs whose window is clipped by the padding: the scalar kernel's
  std::vector<int32_t> taps;    // each tap's offset from the origin, in the scalar kernel's order (row-major)
  // > 0: the inner outputs are whole runs of row_run >= 16 per output row (the same columns in every row) at a
  // column stride of 1 or 2, so their taps are read with contiguous loads instead of gathers (ResNet's 3x3 / 2
  // pool over 112 x 112, the 2x2 pools of larger images). 0: blocks of any 16 inner outputs, one gather per tap.
  int64_t row_run = 0;
  int64_t stride = 1;  // the column stride of a row run
};

// True when the vector kernel can run g: built for x86-64, the CPU has AVX-512F, planes are indexable in int32,
// and it is not turned off (set_max_pool_vectorized(false): tests compare it with the scalar kernel).
bool max_pool_vectorized_usable(const Pool2dGeometry& g);
void set_max_pool_vectorized(bool on);

MaxPoolWindows max_pool_windows(const Pool2dGeometry& g);

// The inner outputs of one plane: src is the plane's input, dst / idx its outputs (indices within the plane).
void max_pool_inner_avx512(const float* src, float* dst, int64_t* idx, const MaxPoolWindows& w);

}  // namespace ember::cpu
