// ONNX's Det (h-onnx-math, registered with the reductions): the determinant of [..., n, n] by Gaussian elimination
// with partial pivoting, all on the device with runtime ops (argmax picks the pivot row, a gather swaps it in, the
// sign flips where a swap happened), so it runs on every backend and differentiates through the pivots it chose.
#include "onnx/ops/math_util.hpp"

namespace ember::onnx_import {
namespace {

using math::Outs;

DynTensor rows(const DynTensor& m, int64_t begin, int64_t end) {
  return capi::slice(m, {checks::SliceArg{0, std::nullopt}, checks::SliceArg{begin, end}});
}

Outs det(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const Shape s = capi::shape(x);
  if (s.rank() < 2 || s[s.rank() - 1] != s[s.rank() - 2])
    ctx.fail(fmt::format("input must be [..., n, n], got {}", s.to_string()));
  const int64_t n = s[s.rank() - 1];
  if (n > 64) ctx.fail(fmt::format("n = {} is above the 64 this composed elimination unrolls", n));
  const std::vector<int64_t> batch_dims(s.dims.begin(), s.dims.end() - 2);
  int64_t b = 1;
  for (int64_t d : batch_dims) b *= d;
  DynTensor m = capi::reshape(x, {b, n, n});
  DynTensor result = capi::full(capi::device(x), capi::dtype(x), Shape{b}, 1.0);
  const DynTensor positions = capi::arange(capi::device(x), DType::I64, 0, n, 1);  // [n]
  for (int64_t k = 0; k < n; ++k) {
    // The pivot: the largest |m[k:, k]|, as an absolute row index [b, 1].
    const DynTensor col = capi::select(rows(m, k, n), 2, k);  // [b, n - k]
    const DynTensor p = capi::scalar(capi::arg_reduce(capi::unary(col, UnaryOp::Abs), ArgReduceOp::ArgMax, 1, true),
                                     ScalarOp::Add, static_cast<double>(k));
    // Row order with k and p exchanged, per batch element; a swap flips the determinant's sign.
    const DynTensor pos = capi::reshape(capi::cast(positions, capi::dtype(p)), {1, n});
    const DynTensor at_k = capi::compare_scalar(pos, CompareOp::Eq, static_cast<double>(k));
    const DynTensor at_p = capi::compare(pos, p, CompareOp::Eq);
    const DynTensor kk = math::scalar_like(p, static_cast<double>(k));
    const DynTensor order = capi::where(at_k, p, capi::where(at_p, kk, capi::expand(pos, {b, n})));  // [b, n]
    m = capi::gather(m, 1, capi::expand(capi::reshape(order, {b, n, 1}), {b, n, n}));
    const DynTensor swapped = capi::compare_scalar(capi::reshape(p, {b}), CompareOp::Ne, static_cast<double>(k));
    const DynTensor pivot = capi::select(capi::select(m, 1, k), 1, k);  // [b]
    result = capi::binary(result, capi::where(swapped, capi::unary(pivot, UnaryOp::Neg), pivot), BinaryOp::Mul);
    if (k + 1 == n) break;
    // Eliminate below the pivot; a zero pivot (a singular matrix: the result is already 0) divides by 1 instead.
    const DynTensor safe =
        capi::where(capi::compare_scalar(pivot, CompareOp::Eq, 0.0), math::scalar_like(pivot, 1.0), pivot);
    const DynTensor pivot_row = rows(m, k, k + 1);  // [b, 1, n]
    const DynTensor below = rows(m, k + 1, n);      // [b, n - k - 1, n]
    const DynTensor factors =
        capi::binary(capi::select(below, 2, k), capi::reshape(safe, {b, 1}), BinaryOp::Div);  // [b, n - k - 1]
    const DynTensor updated = capi::binary(
        below, capi::binary(capi::reshape(factors, {b, n - k - 1, 1}), pivot_row, BinaryOp::Mul), BinaryOp::Sub);
    const DynTensor top = rows(m, 0, k + 1);
    m = capi::cat({&top, &updated}, 1);
  }
  return math::one(capi::reshape(result, batch_dims));
}

}  // namespace

namespace math {
void register_det_ops(OpRegistry& r) { r.add("Det", det, 11); }
}  // namespace math

}  // namespace ember::onnx_import
