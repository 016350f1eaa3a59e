#pragma once
// The device GEMM (shaders/gemm.comp) as an internal entry point for the ops built on it (matmul, conv2d):
//   C[m, n] = alpha * op(A)[m, k] @ op(B)[k, n] + beta * C[m, n]
// on raw allocations addressed by element offsets and leading dims (row-major; a transposed operand is read in
// place), batched over up to two levels whose per-operand strides may be 0 (broadcast). Records dispatches only.
#include <array>
#include <cstdint>
#include <memory>

#include "backends/vulkan/context.hpp"
#include "backends/vulkan/memory.hpp"

namespace ember::vk {

struct GemmMatrix {
  std::shared_ptr<Allocation> alloc;
  int64_t offset = 0;  // elements
  int64_t ld = 0;      // leading dim of the stored (untransposed) matrix, elements
  bool trans = false;  // A stored [k, m] / B stored [n, k]; ignored for C
};

// One batch level: `count` products, operand p's matrix advancing by stride[p] elements (A, B, C).
struct GemmBatch {
  int64_t count = 1;
  std::array<int64_t, 3> stride{0, 0, 0};
};

struct Gemm {
  int64_t m = 0, n = 0, k = 0;
  float alpha = 1.0f, beta = 0.0f;  // beta == 0 never reads C
  GemmMatrix a, b, c;
  std::array<GemmBatch, 2> batch{};  // outer, inner
};

void gemm(Context& ctx, const Gemm& g);

}  // namespace ember::vk
