#pragma once
// HideOptional<B>: backend B with every optional op hidden (engine/backend/optional_ops.hpp), so autodiff and the
// optimizers take the composed defaults. Tests run the gradient checks and optimizer steps through it to prove the
// defaults, and compare them with B's own ops.
//
// B is a private base: nothing of B is visible unless it is re-exported below, so an optional op added to a
// backend later stays hidden without touching this file. The list is the Backend concept's ops plus the
// kind-generic queries every backend has (device, to_device, dtype).
#include <string>

#include "engine/backend/backend.hpp"
#include "engine/backend/optional_ops.hpp"

namespace ember::test {

template <Backend B>
struct HideOptional : private B {
  using Device = typename B::Device;
  using FloatElem = typename B::FloatElem;
  using IntElem = typename B::IntElem;
  using FloatPrimitive = typename B::FloatPrimitive;
  using IntPrimitive = typename B::IntPrimitive;
  using BoolPrimitive = typename B::BoolPrimitive;

  static const char* name() {
    static const std::string n = std::string("hide_optional<") + B::name() + ">";
    return n.c_str();
  }
  // Kind-generic creation, transfer, queries and layout.
  using B::from_data;
  using B::into_data;
  using B::shape;
  using B::device;
  using B::to_device;
  using B::dtype;
  using B::full;
  using B::reshape;
  using B::permute;
  using B::expand;
  using B::slice;
  using B::slice_assign;
  using B::cat;
  using B::flip;
  using B::gather;
  using B::scatter_add;
  using B::index_select;
  using B::index_select_add;
  using B::where;
  using B::mask_fill;
  using B::cast;
  using B::int_arange;
  // Float math.
  using B::float_unary;
  using B::float_scalar;
  using B::float_binary;
  using B::float_compare;
  using B::float_compare_scalar;
  using B::float_reduce;
  using B::float_reduce_all;
  using B::float_arg_reduce;
  using B::float_argsort;
  using B::float_cumsum;
  using B::float_matmul;
  using B::float_fft;
  using B::float_predicate;
  // Int and Bool math.
  using B::int_unary;
  using B::int_scalar;
  using B::int_binary;
  using B::int_compare;
  using B::int_compare_scalar;
  using B::int_reduce;
  using B::int_reduce_all;
  using B::int_arg_reduce;
  using B::bool_not;
  using B::bool_logic;
  // Module ops.
  using B::conv2d;
  using B::conv2d_backward;
  using B::max_pool2d;
  using B::max_pool2d_backward;
  using B::avg_pool2d;
  using B::avg_pool2d_backward;
  using B::adaptive_avg_pool2d;
  using B::adaptive_avg_pool2d_backward;
};

}  // namespace ember::test
