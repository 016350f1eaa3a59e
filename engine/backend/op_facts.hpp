#pragma once
// Facts about each op, from the op table (engine/backend/ops.def): op_name(op) for messages, op_kinds(op) for the
// kind checks of runtime-typed callers (the C ABI), and op_count<E>() to validate a value that crosses an ABI.
// Included by ops.hpp; include that.
#include <cstddef>
#include <cstdint>
#include <iterator>

namespace ember {

template <class E>
struct OpRow {
  E op;
  const char* name;
  OpKinds kinds;
};

// OpTable<E>::rows: the rows of E's family, in table order.
template <class E>
struct OpTable;

template <>
struct OpTable<UnaryOp> {
  static constexpr OpRow<UnaryOp> rows[] = {
#define EMBER_UNARY_OP(id, value, name, kinds) {UnaryOp::id, name, OpKinds::kinds},
#include "engine/backend/ops.def"
  };
};
template <>
struct OpTable<ScalarOp> {
  static constexpr OpRow<ScalarOp> rows[] = {
#define EMBER_SCALAR_OP(id, value, name, kinds) {ScalarOp::id, name, OpKinds::kinds},
#include "engine/backend/ops.def"
  };
};
template <>
struct OpTable<BinaryOp> {
  static constexpr OpRow<BinaryOp> rows[] = {
#define EMBER_BINARY_OP(id, value, name, kinds) {BinaryOp::id, name, OpKinds::kinds},
#include "engine/backend/ops.def"
  };
};
template <>
struct OpTable<CompareOp> {
  static constexpr OpRow<CompareOp> rows[] = {
#define EMBER_COMPARE_OP(id, value, name, kinds) {CompareOp::id, name, OpKinds::kinds},
#include "engine/backend/ops.def"
  };
};
template <>
struct OpTable<PredicateOp> {
  static constexpr OpRow<PredicateOp> rows[] = {
#define EMBER_PREDICATE_OP(id, value, name, kinds) {PredicateOp::id, name, OpKinds::kinds},
#include "engine/backend/ops.def"
  };
};
template <>
struct OpTable<ReduceOp> {
  static constexpr OpRow<ReduceOp> rows[] = {
#define EMBER_REDUCE_OP(id, value, name, kinds) {ReduceOp::id, name, OpKinds::kinds},
#include "engine/backend/ops.def"
  };
};
template <>
struct OpTable<ArgReduceOp> {
  static constexpr OpRow<ArgReduceOp> rows[] = {
#define EMBER_ARG_REDUCE_OP(id, value, name, kinds) {ArgReduceOp::id, name, OpKinds::kinds},
#include "engine/backend/ops.def"
  };
};
template <>
struct OpTable<LogicOp> {
  static constexpr OpRow<LogicOp> rows[] = {
#define EMBER_LOGIC_OP(id, value, name, kinds) {LogicOp::id, name, OpKinds::kinds},
#include "engine/backend/ops.def"
  };
};
template <>
struct OpTable<FftOp> {
  static constexpr OpRow<FftOp> rows[] = {
#define EMBER_FFT_OP(id, value, name, kinds) {FftOp::id, name, OpKinds::kinds},
#include "engine/backend/ops.def"
  };
};

template <class E>
concept OpEnum = requires { OpTable<E>::rows; };

// Number of rows; the values are exactly 0..op_count-1 (checked below).
template <OpEnum E>
constexpr int32_t op_count() {
  return static_cast<int32_t>(std::size(OpTable<E>::rows));
}

template <OpEnum E>
constexpr const char* op_name(E op) {
  for (const auto& r : OpTable<E>::rows)
    if (r.op == op) return r.name;
  return "?";
}

template <OpEnum E>
constexpr OpKinds op_kinds(E op) {
  for (const auto& r : OpTable<E>::rows)
    if (r.op == op) return r.kinds;
  return OpKinds::Any;
}

// Whether an op accepts int operands (its kinds say FloatInt or Any).
template <OpEnum E>
constexpr bool op_takes_int(E op) {
  const OpKinds k = op_kinds(op);
  return k == OpKinds::FloatInt || k == OpKinds::Any;
}

// Row i has value i: values stay dense, so "0 <= v < op_count" is the whole validity check of a raw value.
template <OpEnum E>
constexpr bool op_values_dense() {
  int32_t i = 0;
  for (const auto& r : OpTable<E>::rows)
    if (static_cast<int32_t>(r.op) != i++) return false;
  return true;
}
static_assert(op_values_dense<UnaryOp>() && op_values_dense<ScalarOp>() && op_values_dense<BinaryOp>() &&
                  op_values_dense<CompareOp>() && op_values_dense<PredicateOp>() && op_values_dense<ReduceOp>() && op_values_dense<ArgReduceOp>() &&
                  op_values_dense<LogicOp>() && op_values_dense<FftOp>(),
              "ops.def: each family's values must be 0, 1, 2, ... in row order");

}  // namespace ember
