#pragma once
// The CUDA C++ of a fused chain (Fusion<Cuda>, issue 14): the kernel NVRTC compiles for one program structure, its
// cache key, and the parameter words a launch passes. Pure functions of the program (no CUDA types), so tests look
// at them and compile them with NVRTC on a machine without a GPU.
//
// One kernel, `ember_fused_chain`, takes one parameter: a block of 64-bit words (FusedWords), laid out as
//   [0] the output, [1 + k] input k's device pointer, then the element count, the merged dims, the strides of each
//   Strided input (rank words each), and each Fill / Scalar / MaskFill scalar (f32 bits),
// so what varies between runs of one structure (buffers, batch size, broadcast strides, scalars) is in the words and
// everything else is in the source, compiled once per key.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/fusion/merged_layout.hpp"
#include "engine/fusion/program.hpp"

namespace ember::cuda {

// Threads per block of the generated kernel (the trailing sum reduces one block in shared memory).
inline constexpr int kFusedThreads = 256;
// Parameter words at most: CUDA passes kernel parameters in 4 KiB (a program over this runs op by op).
inline constexpr std::size_t kMaxFusedWords = 4096 / 8;

struct FusedWords {
  std::vector<uint64_t> words;
  std::size_t scalars_at = 0;  // index of the first scalar word
};

// The structure that selects a kernel: instruction kinds, ops and registers, input kinds and accesses, the merged
// rank and whether a sum is taken. Two programs with the same key run the same kernel.
std::string fused_chain_key(const fusion::Program& p, const fusion::MergedLayout& l);

// The kernel's source: the op enums (from engine/backend/ops.def), float_math.cuh (the eager kernels' math), then
// one statement per instruction in a grid-stride loop. With Program::reduce_all each block writes the sum of its
// elements to out[blockIdx.x] instead of storing the output.
std::string fused_chain_cuda(const fusion::Program& p, const fusion::MergedLayout& l);

// The words of one launch (out and in: device pointers; in[k] for program input k).
FusedWords fused_chain_words(const fusion::Program& p, const fusion::MergedLayout& l, const void* out,
                             const std::vector<const void*>& in);

// Words a launch of this program takes (kMaxFusedWords bounds what one kernel can run).
std::size_t fused_chain_word_count(const fusion::Program& p, const fusion::MergedLayout& l);

}  // namespace ember::cuda
