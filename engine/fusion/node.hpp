#pragma once
// The lazy float tensor of Fusion<B>: a node that either holds B's tensor or says how to compute it from other
// nodes with one elementwise op. Pending nodes form a DAG; materialize() turns the pending part under one node into
// a Program (program.hpp) and runs it as one fused chain.
//
// A pending node is never written out just because something else holds it: when another holder reads it later,
// its (short) chain runs again from the materialized inputs, which costs arithmetic but no memory traffic. The
// chain length is capped (kMaxChain), so a value is recomputed from at most that many ops.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/backend/optional_ops.hpp"
#include "engine/fusion/operand.hpp"
#include "engine/fusion/program.hpp"

namespace ember::fusion {

// Ops a pending value may depend on before its operands are materialized first: bounds both the recomputation a
// shared intermediate costs and the recursion of the builder.
inline constexpr int32_t kMaxChain = 32;

template <class B>
struct Node {
  using FP = typename B::FloatPrimitive;
  Shape shape;
  typename B::Device device;
  std::optional<FP> value;  // B's tensor, once computed (from the start for a materialized one)
  // While pending: the op, its float operands in order (Unary / Scalar / Expand: 1; Binary, Where: 2; MaskFill: 1)
  // and the Int or Bool tensor it reads (Cast's source, Where's condition, MaskFill's mask).
  Instr op;
  std::vector<std::shared_ptr<Node>> args;
  std::optional<typename B::IntPrimitive> ints;
  std::optional<typename B::BoolPrimitive> mask;
  int32_t cost = 0;  // pending ops this value needs (0 once materialized)
};

template <class B>
using NodePtr = std::shared_ptr<Node<B>>;

// One lock for every node: materialize() reads and rewrites nodes that other threads' tensors may share. The fused
// kernel runs under it, so concurrent threads' chains run one at a time (the kernel itself is parallel).
inline std::mutex& node_mutex() {
  static std::mutex m;
  return m;
}

// The Program computing one pending node, and the tensors its inputs read.
template <class B>
class Builder {
 public:
  Program program;
  std::vector<OperandOf<B>> inputs;

  int32_t visit(const NodePtr<B>& n) {
    if (auto it = reg_.find(n.get()); it != reg_.end()) return it->second;
    int32_t r;
    if (n->value) {
      r = input(InputKind::Float, n->shape, [&](OperandOf<B>& o) { o.f = n->value; });
    } else {
      Instr i = n->op;
      i.shape = n->shape;
      switch (i.kind) {
        case InstrKind::Unary:
        case InstrKind::Scalar:
        case InstrKind::Expand: i.a = visit(n->args[0]); break;
        case InstrKind::Binary:
        case InstrKind::GeluBackward:
        case InstrKind::ReluBackward:
          i.a = visit(n->args[0]);
          i.b = visit(n->args[1]);
          break;
        case InstrKind::Where:
          i.a = bool_input(*n->mask);
          i.b = visit(n->args[0]);
          i.c = visit(n->args[1]);
          break;
        case InstrKind::MaskFill:
          i.a = visit(n->args[0]);
          i.b = bool_input(*n->mask);
          break;
        case InstrKind::Cast:
          i.a = n->ints ? input(InputKind::Int, B::template shape<Int>(*n->ints), [&](OperandOf<B>& o) { o.i = n->ints; })
                        : bool_input(*n->mask);
          break;
        case InstrKind::Fill:
        case InstrKind::Input: break;
      }
      r = emit(std::move(i));
    }
    reg_.emplace(n.get(), r);
    return r;
  }

 private:
  std::unordered_map<const Node<B>*, int32_t> reg_;

  int32_t emit(Instr i) {
    program.instrs.push_back(std::move(i));
    return static_cast<int32_t>(program.instrs.size() - 1);
  }
  template <class Set>
  int32_t input(InputKind kind, const Shape& shape, Set&& set) {
    OperandOf<B> o;
    o.kind = kind;
    set(o);
    inputs.push_back(std::move(o));
    program.inputs.push_back({kind, shape});
    Instr i;
    i.kind = InstrKind::Input;
    i.op = static_cast<int32_t>(inputs.size() - 1);
    i.shape = shape;
    return emit(std::move(i));
  }
  int32_t bool_input(const typename B::BoolPrimitive& m) {
    return input(InputKind::Bool, B::template shape<Bool>(m), [&](OperandOf<B>& o) { o.b = m; });
  }
};

// B's tensor of n, computing its pending chain in one fused program. Call with node_mutex() held.
template <class B>
const typename B::FloatPrimitive& materialize_locked(const NodePtr<B>& n) {
  if (!n->value) {
    Builder<B> b;
    b.program.out = b.visit(n);
    b.program.shape = n->shape;
    n->value = optional_ops::float_fused_chain<B>(b.program, b.inputs, n->device);
    // The operands are no longer needed by this node: let them go (their memory, and their own chains).
    n->args.clear();
    n->ints.reset();
    n->mask.reset();
    n->cost = 0;
  }
  return *n->value;
}

template <class B>
typename B::FloatPrimitive materialize(const NodePtr<B>& n) {
  std::lock_guard lock(node_mutex());
  return materialize_locked<B>(n);
}

// The Sum or Mean of all of n's elements ([1]). A pending n is reduced in the pass that computes it, without storing
// it (n stays pending); a materialized one by B's reduction.
template <class B>
typename B::FloatPrimitive reduce_all(const NodePtr<B>& n, ReduceOp op) {
  std::lock_guard lock(node_mutex());
  if (n->value) return B::float_reduce_all(*n->value, op);
  Builder<B> b;
  b.program.out = b.visit(n);
  b.program.shape = n->shape;
  b.program.reduce_all = op;
  return optional_ops::float_fused_chain<B>(b.program, b.inputs, n->device);
}

}  // namespace ember::fusion
