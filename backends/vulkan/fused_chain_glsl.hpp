#pragma once
// The GLSL of a fused chain (fused_chain.hpp): how each input is read, the push-constant words, the cache key and
// the shader text. Pure functions of the program, kept apart from Vulkan objects so tests can look at them.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/fusion/merged_layout.hpp"
#include "engine/fusion/program.hpp"

namespace ember::vk {

// How an input is read (engine/fusion/merged_layout.hpp: in place, one element, or strided over merged dims).
using FusedAccess = fusion::Access;

// The merged dims, per-input accesses and strides (fusion::merge_layout), and what a Vulkan dispatch adds to them.
struct FusedLayout : fusion::MergedLayout {
  // Per input: the first input holding the same tensor (same memory, kind and shape), itself if none. Each
  // distinct tensor is bound and read once (a chain reads a mask for a where, its negation's mask_fill and a cast).
  std::vector<int32_t> alias;
  // Push-constant words: [0] the element count, then `dims`, then the strides of each Strided input, then the
  // scalars of the Fill / Scalar / MaskFill instructions in program order (f32 bits). Only what varies between
  // runs of one shader is here; everything else is in `key`.
  std::vector<uint32_t> push;
  std::vector<uint32_t> scalar_word;  // per instruction: its scalar's index in `push` (0: none)
  // The program's structure: instruction kinds, ops and registers, input kinds and accesses, the merged rank and
  // whether a sum is taken. Two programs with the same key run the same shader.
  std::string key;
};

// Storage buffers one dispatch binds (Pipelines::kBindings): the output and up to 7 distinct input tensors.
inline constexpr std::size_t kMaxFusedInputs = 7;
// Push-constant words (Pipelines::kPushBytes / 4).
inline constexpr std::size_t kMaxFusedPushWords = 32;

// alias: as FusedLayout::alias (empty: every input distinct).
FusedLayout fused_layout(const fusion::Program& p, std::vector<int32_t> alias = {});
// The distinct tensors a program binds (inputs that are their own alias).
std::size_t fused_bindings(const FusedLayout& l);
// Whether the shader of this layout fits one dispatch (else the program runs op by op).
bool fused_fits(const fusion::Program& p, const FusedLayout& l);
// The compute shader (workgroup size kFusedWorkgroup). int64: the context stores Int tensors as int64 (else int32,
// shaders/int64.glsl's EMBER_NO_INT64).
std::string fused_chain_glsl(const fusion::Program& p, const FusedLayout& l, bool int64);
inline constexpr uint32_t kFusedWorkgroup = 256;

// SPIR-V for Vulkan 1.1 from GLSL compute-shader source (glslang); throws VulkanError with glslang's log.
std::vector<uint32_t> compile_compute_glsl(const std::string& source, const char* what);

}  // namespace ember::vk
