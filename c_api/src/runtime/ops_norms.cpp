// conv_transpose2d on runtime tensors (issue 13), through the typed engine function once the ranks are checked, so it
// shares the engine's validation, composition and gradients.
#include <optional>

#include "c_api/src/runtime/backend_ops.hpp"
#include "engine/tensor/conv_transpose.hpp"

namespace ember::capi {
namespace {

template <class B>
void need_rank(const BackendTensor<B>& t, std::size_t rank, const std::string& what) {
  const Shape s = tensor_shape(t);
  if (s.rank() != rank)
    throw ShapeError(what + " must be rank " + std::to_string(rank) + ", got " + s.to_string());
}

}  // namespace

namespace ops {

template <class B>
DynTensor conv_transpose2d(const DynTensor& x, const DynTensor& w, const DynTensor* bias,
                           const ConvTranspose2dOptions& o) {
  return visit_same<B, DynTensor>(x, w, "conv_transpose2d", [&](const auto& xt, const auto& wt) -> DynTensor {
    const auto& xp = float_of(xt, "conv_transpose2d: input");
    const auto& wp = float_of(wt, "conv_transpose2d: weight");
    need_rank(xt, 4, "conv_transpose2d: input");
    need_rank(wt, 4, "conv_transpose2d: weight");
    std::optional<Tensor<B, 1>> b;
    Shape bs;
    if (bias) {
      const auto& bt = same_backend<B>(*bias, xt, "conv_transpose2d");
      const auto& bp = float_of(bt, "conv_transpose2d: bias");
      need_rank(bt, 1, "conv_transpose2d: bias");
      b = typed<B, 1>(bp);
      bs = tensor_shape(bt);
    }
    // The output shape is checked first: a large stride or kernel makes it unbounded by the input sizes.
    check_shape("conv_transpose2d",
                checks::conv_transpose2d(tensor_shape(xt), tensor_shape(wt), bias ? &bs : nullptr, o));
    return wrap<B, Float>(ember::conv_transpose2d<B>(typed<B, 4>(xp), typed<B, 4>(wp), b, o).primitive());
  });
}

}  // namespace ops

EMBER_RUNTIME_NORMS_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
