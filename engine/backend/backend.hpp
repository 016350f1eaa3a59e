#pragma once
// The Backend concept: what a compute backend provides.
//
// Deviation from DESIGN.md's "float_add, int_sum, ..." naming, on purpose:
//  * math ops are grouped by family and switch on an enum (float_unary(x, UnaryOp::Exp), see ops.hpp), so each
//    backend writes one kernel per family and autodiff one backward per family;
//  * layout and indexing ops (reshape, permute, slice, cat, gather, ...) do not depend on the element kind, so
//    they are templates over the kind: B::template reshape<K>(p, shape). A backend specializes them per kind only
//    where it must (Autodiff<B> records Float and passes Int/Bool through).
// Shapes, dims and indices reaching a backend are already validated by the tensor layer (engine/tensor/checks.hpp)
// so every backend reports the same errors; backends may assume valid input.
#include <concepts>
#include <span>
#include <vector>

#include "engine/backend/ops.hpp"
#include "engine/tensor/kind.hpp"
#include "engine/tensor/tensor_data.hpp"

namespace ember {

template <class B, class K>
struct PrimitiveOf;
template <class B>
struct PrimitiveOf<B, Float> {
  using type = typename B::FloatPrimitive;
};
template <class B>
struct PrimitiveOf<B, Int> {
  using type = typename B::IntPrimitive;
};
template <class B>
struct PrimitiveOf<B, Bool> {
  using type = typename B::BoolPrimitive;
};
template <class B, class K>
using Primitive = typename PrimitiveOf<B, K>::type;

template <class B>
concept Backend = requires(const typename B::Device& dev, const typename B::FloatPrimitive& f,
                           const typename B::IntPrimitive& i, const typename B::BoolPrimitive& b,
                           const Shape& shape, const TensorData& data) {
  typename B::Device;
  typename B::FloatElem;
  typename B::IntElem;
  { B::name() } -> std::convertible_to<const char*>;
  // Kind-generic creation, transfer and layout.
  { B::template from_data<Float>(data, dev) } -> std::same_as<typename B::FloatPrimitive>;
  { B::template into_data<Int>(i) } -> std::same_as<TensorData>;
  { B::template shape<Bool>(b) } -> std::same_as<Shape>;
  { B::template full<Float>(shape, 0.0, dev) } -> std::same_as<typename B::FloatPrimitive>;
  { B::template reshape<Float>(f, shape) } -> std::same_as<typename B::FloatPrimitive>;
  { B::template permute<Int>(i, std::vector<std::size_t>{}) } -> std::same_as<typename B::IntPrimitive>;
  { B::template expand<Bool>(b, shape) } -> std::same_as<typename B::BoolPrimitive>;
  { B::template slice<Float>(f, std::vector<Range>{}) } -> std::same_as<typename B::FloatPrimitive>;
  { B::template slice_assign<Float>(f, std::vector<Range>{}, f) } -> std::same_as<typename B::FloatPrimitive>;
  { B::template cat<Float>(std::vector<typename B::FloatPrimitive>{}, std::size_t{}) };
  { B::template flip<Float>(f, std::vector<std::size_t>{}) } -> std::same_as<typename B::FloatPrimitive>;
  { B::template gather<Float>(std::size_t{}, f, i) } -> std::same_as<typename B::FloatPrimitive>;
  { B::template scatter_add<Float>(std::size_t{}, f, i, f) } -> std::same_as<typename B::FloatPrimitive>;
  { B::template index_select<Float>(f, std::size_t{}, i) } -> std::same_as<typename B::FloatPrimitive>;
  { B::template index_select_add<Float>(f, std::size_t{}, i, f) } -> std::same_as<typename B::FloatPrimitive>;
  { B::template where<Float>(b, f, f) } -> std::same_as<typename B::FloatPrimitive>;
  { B::template mask_fill<Float>(f, b, 0.0) } -> std::same_as<typename B::FloatPrimitive>;
  { B::template cast<Float, Int>(f) } -> std::same_as<typename B::IntPrimitive>;
  { B::int_arange(int64_t{}, int64_t{}, dev) } -> std::same_as<typename B::IntPrimitive>;
  // Float math.
  { B::float_unary(f, UnaryOp::Exp) } -> std::same_as<typename B::FloatPrimitive>;
  { B::float_scalar(f, ScalarOp::Add, 1.0) } -> std::same_as<typename B::FloatPrimitive>;
  { B::float_binary(f, f, BinaryOp::Add) } -> std::same_as<typename B::FloatPrimitive>;
  { B::float_compare(f, f, CompareOp::Eq) } -> std::same_as<typename B::BoolPrimitive>;
  { B::float_compare_scalar(f, CompareOp::Eq, 1.0) } -> std::same_as<typename B::BoolPrimitive>;
  { B::float_predicate(f, PredicateOp::IsNan) } -> std::same_as<typename B::BoolPrimitive>;
  { B::float_reduce(f, ReduceOp::Sum, std::size_t{}) } -> std::same_as<typename B::FloatPrimitive>;
  { B::float_reduce_all(f, ReduceOp::Sum) } -> std::same_as<typename B::FloatPrimitive>;
  { B::float_arg_reduce(f, ArgReduceOp::ArgMax, std::size_t{}) } -> std::same_as<typename B::IntPrimitive>;
  // The stable order along dim (ascending or descending, NaN counted as the largest value, as torch.sort); sort's
  // values are a gather at these indices, so autodiff needs no rule of its own for them.
  { B::float_argsort(f, std::size_t{}, false) } -> std::same_as<typename B::IntPrimitive>;
  // The running sum along dim (torch.cumsum).
  { B::float_cumsum(f, std::size_t{}) } -> std::same_as<typename B::FloatPrimitive>;
  { B::float_matmul(f, f) } -> std::same_as<typename B::FloatPrimitive>;
  // n: the signal length (the input's for Fft / Ifft / Rfft, the output's for Irfft); see FftOp.
  { B::float_fft(f, FftOp::Fft, int64_t{}) } -> std::same_as<typename B::FloatPrimitive>;
  // Int and Bool math.
  { B::int_unary(i, UnaryOp::Neg) } -> std::same_as<typename B::IntPrimitive>;
  { B::int_scalar(i, ScalarOp::Add, 1.0) } -> std::same_as<typename B::IntPrimitive>;
  { B::int_binary(i, i, BinaryOp::Add) } -> std::same_as<typename B::IntPrimitive>;
  { B::int_compare(i, i, CompareOp::Eq) } -> std::same_as<typename B::BoolPrimitive>;
  { B::int_compare_scalar(i, CompareOp::Eq, 1.0) } -> std::same_as<typename B::BoolPrimitive>;
  { B::int_reduce(i, ReduceOp::Sum, std::size_t{}) } -> std::same_as<typename B::IntPrimitive>;
  { B::int_reduce_all(i, ReduceOp::Sum) } -> std::same_as<typename B::IntPrimitive>;
  { B::int_arg_reduce(i, ArgReduceOp::ArgMax, std::size_t{}) } -> std::same_as<typename B::IntPrimitive>;
  { B::bool_not(b) } -> std::same_as<typename B::BoolPrimitive>;
  { B::bool_logic(b, b, LogicOp::And) } -> std::same_as<typename B::BoolPrimitive>;
  // Module ops.
  { B::conv2d(f, f, (const typename B::FloatPrimitive*)nullptr, Conv2dOptions{}) };
  { B::conv2d_backward(f, f, f, true, Conv2dOptions{}) };
  { B::max_pool2d(f, Pool2dOptions{}) };
  { B::max_pool2d_backward(f, f, i) } -> std::same_as<typename B::FloatPrimitive>;
  { B::avg_pool2d(f, Pool2dOptions{}) } -> std::same_as<typename B::FloatPrimitive>;
  { B::avg_pool2d_backward(f, f, Pool2dOptions{}) } -> std::same_as<typename B::FloatPrimitive>;
  { B::adaptive_avg_pool2d(f, std::array<int64_t, 2>{}) } -> std::same_as<typename B::FloatPrimitive>;
  { B::adaptive_avg_pool2d_backward(f, f) } -> std::same_as<typename B::FloatPrimitive>;
};

// A backend that records float ops and computes gradients (Autodiff<B>).
template <class B>
concept AutodiffBackend = Backend<B> && Backend<typename B::InnerBackend> &&
                          requires(const typename B::FloatPrimitive& f) {
                            typename B::Gradients;
                            { B::backward(f) } -> std::same_as<typename B::Gradients>;
                            { B::inner(f) } -> std::same_as<typename B::InnerBackend::FloatPrimitive>;
                            { B::from_inner(B::inner(f)) } -> std::same_as<typename B::FloatPrimitive>;
                          };

}  // namespace ember
