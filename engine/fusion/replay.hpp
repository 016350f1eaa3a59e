#pragma once
// The op-by-op executor of a fused chain: each instruction through B's own elementwise ops. It is the default of
// the optional op float_fused_chain (engine/backend/optional_ops.hpp) for a backend without a fused kernel (today
// CUDA, whose generated kernels are a later part, engine/fusion/README.md; Vulkan for a program over its
// push-constant words), and the reference the CPU's and Vulkan's fused kernels are tested against (tests/fusion/).
#include <optional>
#include <stdexcept>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/backend/ops.hpp"
#include "engine/fusion/operand.hpp"
#include "engine/fusion/program.hpp"

// optional_ops.hpp includes this file for its float_fused_chain default; its GELU-backward dispatcher (defined there)
// is declared here so the GeluBackward instruction can run the backend's fused step.
namespace ember::optional_ops {
template <Backend B>
typename B::FloatPrimitive float_unary_backward(UnaryOp op, const typename B::FloatPrimitive& x,
                                                const typename B::FloatPrimitive& y,
                                                const typename B::FloatPrimitive& g);
}  // namespace ember::optional_ops

namespace ember::fusion {

template <Backend B>
typename B::FloatPrimitive replay(const Program& p, const std::vector<OperandOf<B>>& in,
                                  const typename B::Device& dev) {
  using FP = typename B::FloatPrimitive;
  std::vector<std::optional<FP>> reg(p.instrs.size());
  auto input = [&](int32_t r) -> const OperandOf<B>& { return in[static_cast<std::size_t>(p.instrs[r].op)]; };
  for (std::size_t k = 0; k < p.instrs.size(); ++k) {
    const Instr& i = p.instrs[k];
    switch (i.kind) {
      case InstrKind::Input:
        if (input(static_cast<int32_t>(k)).kind == InputKind::Float) reg[k] = input(static_cast<int32_t>(k)).f;
        break;  // Int and Bool inputs are read by the Cast / Where / MaskFill that names them
      case InstrKind::Fill: reg[k] = B::template full<Float>(i.shape, i.s, dev); break;
      case InstrKind::Unary: reg[k] = B::float_unary(*reg[i.a], static_cast<UnaryOp>(i.op)); break;
      case InstrKind::Scalar: reg[k] = B::float_scalar(*reg[i.a], static_cast<ScalarOp>(i.op), i.s); break;
      case InstrKind::Binary: reg[k] = B::float_binary(*reg[i.a], *reg[i.b], static_cast<BinaryOp>(i.op)); break;
      case InstrKind::Where: reg[k] = B::template where<Float>(*input(i.a).b, *reg[i.b], *reg[i.c]); break;
      case InstrKind::MaskFill: reg[k] = B::template mask_fill<Float>(*reg[i.a], *input(i.b).b, i.s); break;
      case InstrKind::Cast:
        if (input(i.a).kind == InputKind::Int) reg[k] = B::template cast<Int, Float>(*input(i.a).i);
        else reg[k] = B::template cast<Bool, Float>(*input(i.a).b);
        break;
      case InstrKind::Expand: reg[k] = B::template expand<Float>(*reg[i.a], i.shape); break;
      case InstrKind::GeluBackward:  // y is unused by GELU's rule: x stands in for it
        reg[k] = optional_ops::float_unary_backward<B>(UnaryOp::Gelu, *reg[i.a], *reg[i.a], *reg[i.b]);
        break;
      case InstrKind::ReluBackward:  // x > 0 exactly when relu(x) > 0: x stands in for y
        reg[k] = optional_ops::float_unary_backward<B>(UnaryOp::Relu, *reg[i.a], *reg[i.a], *reg[i.b]);
        break;
    }
  }
  // The builder ends every program on a float value of the program's shape.
  if (!reg[p.out]) throw std::logic_error("fusion::replay: the output register is an Int or Bool input");
  if (p.reduce_all) return B::float_reduce_all(*reg[p.out], *p.reduce_all);
  return *reg[p.out];
}

}  // namespace ember::fusion
