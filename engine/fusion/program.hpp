#pragma once
// A fused chain: the instruction list one kernel runs for a chain of elementwise ops (engine/fusion/README.md).
//
// Every instruction writes one register, numbered by its position. Every register is evaluated over the program's
// output shape: an operand of a smaller shape is read broadcast (NumPy's right-aligned rule, which composes, so a
// value computed at [4, 1] and then broadcast to [3, 4, 5] equals the same value computed at [3, 4, 5]). Backends
// run a program in one pass over the output (one read of each input, one write of the result); the generic
// executor (replay.hpp) runs it op by op through the backend's own ops.
#include <cstdint>
#include <optional>
#include <vector>

#include "engine/backend/ops.hpp"
#include "engine/tensor/shape.hpp"

namespace ember::fusion {

enum class InputKind : uint8_t { Float, Int, Bool };

enum class InstrKind : uint8_t {
  Input,     // op: index into Program::inputs (a materialized tensor, read broadcast)
  Fill,      // s everywhere
  Unary,     // op: UnaryOp of register a
  Scalar,    // op: ScalarOp of register a and s
  Binary,    // op: BinaryOp of registers a and b
  Where,     // register a (a Bool input) ? register b : register c
  MaskFill,  // register b (a Bool input) ? s : register a
  Cast,      // register a (an Int or Bool input) as the float element
  Expand,    // register a broadcast to this instruction's shape (no arithmetic)
  GeluBackward,  // g * GELU'(x), x register a, g register b: autodiff's GELU step as one instruction (kernels run
                 // the eager backend's own fused formula, so the result has the eager gradient's bits)
  ReluBackward,  // g * (x > 0), x register a, g register b: ReLU's step as one instruction instead of a compare
                 // that materializes x and a Bool tensor (kernels match the eager backend's step bit for bit)
};

struct Instr {
  InstrKind kind = InstrKind::Fill;
  int32_t op = 0;
  int32_t a = -1, b = -1, c = -1;
  double s = 0.0;
  Shape shape;  // the value's own shape (the op-by-op executor needs it; a fused kernel evaluates at Program::shape)
};

struct ProgramInput {
  InputKind kind = InputKind::Float;
  Shape shape;
};

struct Program {
  std::vector<ProgramInput> inputs;
  std::vector<Instr> instrs;
  Shape shape;      // the output's shape
  int32_t out = 0;  // the register holding the output (the last instruction)
  // A trailing reduction over all of the output's elements (Sum or Mean) in the same pass: the output is then never
  // stored, and the program's result is its [1] reduction.
  std::optional<ReduceOp> reduce_all;

  // Arithmetic instructions (what a fused kernel saves passes over memory for).
  std::size_t op_count() const {
    std::size_t n = 0;
    for (const auto& i : instrs) n += i.kind != InstrKind::Input && i.kind != InstrKind::Expand;
    return n;
  }
};

}  // namespace ember::fusion
