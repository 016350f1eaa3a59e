#pragma once
// The registers an instruction of a fused program reads (program.hpp), in operand order: what the backends'
// program passes (Vulkan's split into dispatches, the CPU code generator's register allocation) walk. A header of its
// own so that they can share it without touching program.hpp, which every backend and the engine include.
#include <cstdint>
#include <vector>

#include "engine/fusion/program.hpp"

namespace ember::fusion {

// Int / Bool operands included: they are Input registers too.
inline std::vector<int32_t> instr_operands(const Instr& i) {
  switch (i.kind) {
    case InstrKind::Input:
    case InstrKind::Fill: return {};
    case InstrKind::Unary:
    case InstrKind::Scalar:
    case InstrKind::Cast:
    case InstrKind::Expand: return {i.a};
    case InstrKind::Binary:
    case InstrKind::GeluBackward:
    case InstrKind::ReluBackward:
    case InstrKind::MaskFill: return {i.a, i.b};
    case InstrKind::Where: return {i.a, i.b, i.c};
  }
  return {};
}

}  // namespace ember::fusion
