// adam_step(param, grad, exp_avg, exp_avg_sq, args) on runtime tensors (ember_tensor_adam_step, issue 14): the new
// param and moments from one call of the inner backend's fused update (optional_ops.hpp float_adam_step: one pass on
// the CPU; the composed ops elsewhere), untracked. The caller stores them in its three handles as in-place copies, so
// a leaf param keeps its identity and its .grad, and versions count as for p.copy_(new) under no_grad.
#include <fmt/format.h>

#include "c_api/src/runtime/backend_ops.hpp"
#include "engine/backend/optional_ops.hpp"

namespace ember::capi {
namespace ops {

template <class B>
std::vector<DynTensor> adam_step(const DynTensor& param, const DynTensor& grad, const DynTensor& exp_avg,
                                 const DynTensor& exp_avg_sq, const AdamStepArgs& a) {
  using Inner = typename B::InnerBackend;
  const BackendTensor<B>& pt = as_backend<B>(param, "adam_step");
  const auto& pp = float_of(pt, "adam_step: param");
  const Shape s = tensor_shape(pt);
  auto operand = [&](const DynTensor& t, const char* what) -> const typename B::FloatPrimitive& {
    const BackendTensor<B>& bt = same_backend<B>(t, pt, "adam_step");
    const auto& p = float_of(bt, fmt::format("adam_step: {}", what));
    if (!(tensor_shape(bt) == s))
      throw ShapeError(fmt::format("adam_step: {} has shape {}, the param {}", what, tensor_shape(bt).to_string(),
                                   s.to_string()));
    return p;
  };
  const auto& gp = operand(grad, "grad");
  const auto& mp = operand(exp_avg, "exp_avg");
  const auto& vp = operand(exp_avg_sq, "exp_avg_sq");
  const auto m = B::inner(mp), v = B::inner(vp);
  auto r = optional_ops::float_adam_step<Inner>(B::inner(pp), B::inner(gp), &m, &v, a);
  return {wrap<B, Float>(B::from_inner(std::move(r.param))), wrap<B, Float>(B::from_inner(std::move(r.exp_avg))),
          wrap<B, Float>(B::from_inner(std::move(r.exp_avg_sq)))};
}

}  // namespace ops

EMBER_RUNTIME_ADAM_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
