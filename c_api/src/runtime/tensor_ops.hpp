#pragma once
// Tensor functions of the runtime-dispatch layer (dyn.hpp): creation, queries, the engine's ops with runtime rank,
// and autodiff. Every function validates its arguments and throws the engine's typed errors (ShapeError,
// KindError, ...) or UnsupportedError; none of them crashes on bad input.
#include <optional>
#include <vector>

#include "c_api/src/runtime/dyn.hpp"
#include "engine/nn/loss/reduction.hpp"

namespace ember::capi {

// ---------------------------------------------------------------- creation and host transfer
// Float dtypes give Float tensors, integer dtypes Int, Bool Bool; values convert to the backend's element types.
DynTensor from_data(const DynDevice& dev, const TensorData& data);
DynTensor full(const DynDevice& dev, DType dtype, const Shape& shape, double value);
DynTensor arange(const DynDevice& dev, DType dtype, int64_t start, int64_t end, int64_t step);
DynTensor random(const DynDevice& dev, const Distribution& dist, uint64_t seed, const Shape& shape);
TensorData to_data(const DynTensor& t);

DType dtype(const DynTensor& t);
Shape shape(const DynTensor& t);
DynDevice device(const DynTensor& t);

// ---------------------------------------------------------------- math
DynTensor unary(const DynTensor& x, UnaryOp op);
DynTensor binary(const DynTensor& a, const DynTensor& b, BinaryOp op);
DynTensor scalar(const DynTensor& x, ScalarOp op, double s);
DynTensor compare(const DynTensor& a, const DynTensor& b, CompareOp op);
DynTensor compare_scalar(const DynTensor& x, CompareOp op, double s);
// Float -> Bool (isnan, isinf).
DynTensor predicate(const DynTensor& x, PredicateOp op);
DynTensor logical(const DynTensor& a, const DynTensor& b, LogicOp op);
DynTensor logical_not(const DynTensor& x);
DynTensor where(const DynTensor& cond, const DynTensor& a, const DynTensor& b);
DynTensor reduce(const DynTensor& x, ReduceOp op, int64_t dim, bool keepdim);
DynTensor reduce_all(const DynTensor& x, ReduceOp op);
DynTensor arg_reduce(const DynTensor& x, ArgReduceOp op, int64_t dim, bool keepdim);
DynTensor matmul(const DynTensor& a, const DynTensor& b);
DynTensor softmax(const DynTensor& x, int64_t dim, bool log);
DynTensor cast(const DynTensor& x, DType dtype);
DynTensor conv2d(const DynTensor& x, const DynTensor& w, const DynTensor* bias, const Conv2dOptions& o);
DynTensor max_pool2d(const DynTensor& x, const Pool2dOptions& o);
DynTensor avg_pool2d(const DynTensor& x, const Pool2dOptions& o);
DynTensor cross_entropy(const DynTensor& logits, const DynTensor& targets, nn::Reduction r);
DynTensor mse_loss(const DynTensor& input, const DynTensor& target, nn::Reduction r);

// ---------------------------------------------------------------- layout
DynTensor reshape(const DynTensor& x, const std::vector<int64_t>& dims);
DynTensor permute(const DynTensor& x, const std::vector<int64_t>& axes);
DynTensor transpose(const DynTensor& x, int64_t d0, int64_t d1);
DynTensor slice(const DynTensor& x, const std::vector<checks::SliceArg>& ranges);
DynTensor cat(const std::vector<const DynTensor*>& xs, int64_t dim);
DynTensor index_select(const DynTensor& x, int64_t dim, const DynTensor& indices);
DynTensor gather(const DynTensor& x, int64_t dim, const DynTensor& indices);

// ---------------------------------------------------------------- autodiff
DynTensor set_requires_grad(const DynTensor& x, bool on);
bool requires_grad(const DynTensor& x);
DynTensor detach(const DynTensor& x);
// Seeded with ones, or with `grad` (same shape): the gradients of sum(x * grad).
DynGrads backward(const DynTensor& x, const DynTensor* grad);
std::optional<DynTensor> grad(const DynGrads& grads, const DynTensor& x);
// Per-thread nestable no-grad scope. exit without enter throws ArgumentError.
void no_grad_enter();
void no_grad_exit();
bool grad_enabled();

}  // namespace ember::capi
