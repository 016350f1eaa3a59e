#pragma once
// One input of a fused chain as the backend holds it: a float tensor, or the Int / Bool tensor that a cast, a
// where or a mask_fill of the chain reads. Kept apart from program.hpp, which names no backend type.
#include <optional>

#include "engine/fusion/program.hpp"

namespace ember::fusion {

template <class FP, class IP, class BP>
struct Operand {
  InputKind kind = InputKind::Float;
  std::optional<FP> f;
  std::optional<IP> i;
  std::optional<BP> b;
};

template <class B>
using OperandOf = Operand<typename B::FloatPrimitive, typename B::IntPrimitive, typename B::BoolPrimitive>;

}  // namespace ember::fusion
