#pragma once
// Splitting a fused chain that reads more distinct tensors than one dispatch binds (fused_chain_glsl.hpp's
// kMaxFusedInputs): a sub-expression over at most that many tensors runs first as a program of its own, and the
// rest reads its result as one input. Pure functions of the program, so tests can check them without a device.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/fusion/program.hpp"

namespace ember::vk {

// The program computing register `root` of p: only the instructions it depends on, renumbered in order, with
// `root` as the output at its own shape (no trailing reduction). input_map[j]: the input of p behind its input j.
fusion::Program extract_program(const fusion::Program& p, int32_t root, std::vector<std::size_t>& input_map);

// The register to run first: among those (not p's output, not an input) whose sub-expression reads at most
// max_bindings distinct tensors (alias: fused_chain_glsl.hpp's FusedLayout::alias), the one reading the most, the
// later on ties (the larger sub-expression). nullopt when none reads two or more.
std::optional<int32_t> split_point(const fusion::Program& p, const std::vector<int32_t>& alias,
                                   std::size_t max_bindings);

}  // namespace ember::vk
