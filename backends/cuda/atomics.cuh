#pragma once
// Accumulation into memory shared by several threads (scatter_add, index_select_add, pooling backward), per
// element type. Bool tensors accumulate as logical or (0/1 stays 0/1, like PyTorch's bool add).
#include <cstdint>

namespace ember::cuda {

__device__ __forceinline__ void atomic_accumulate(float* p, float v) { atomicAdd(p, v); }

// Two's-complement wrapping add, as the CPU backend's int64 += does.
__device__ __forceinline__ void atomic_accumulate(int64_t* p, int64_t v) {
  atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}

// Bytes have no atomics: or the value into its aligned 32-bit word. The allocator pads every buffer to a multiple
// of 512 bytes, so the word never leaves the allocation.
__device__ __forceinline__ void atomic_accumulate(uint8_t* p, uint8_t v) {
  if (!v) return;
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  unsigned int* word = reinterpret_cast<unsigned int*>(addr & ~uintptr_t{3});
  atomicOr(word, static_cast<unsigned int>(v) << (8 * (addr & 3)));
}

}  // namespace ember::cuda
