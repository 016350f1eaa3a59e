// Module ops (conv, pooling) and losses on runtime tensors, through the typed engine functions once the ranks are
// checked, so they share the engine's validation, kernels and gradients.
#include <algorithm>
#include <optional>

#include "c_api/src/runtime/backend_ops.hpp"
#include "engine/nn/loss/cross_entropy.hpp"
#include "engine/nn/dropout.hpp"
#include "engine/nn/loss/mse.hpp"

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
DynTensor conv2d(const DynTensor& x, const DynTensor& w, const DynTensor* bias, const Conv2dOptions& o) {
  return visit_same<B, DynTensor>(x, w, "conv2d", [&](const auto& xt, const auto& wt) -> DynTensor {
    const auto& xp = float_of(xt, "conv2d: input");
    const auto& wp = float_of(wt, "conv2d: weight");
    need_rank(xt, 4, "conv2d: input");
    need_rank(wt, 4, "conv2d: weight");
    std::optional<Tensor<B, 1>> b;
    Shape bs;
    if (bias) {
      const auto& bt = same_backend<B>(*bias, xt, "conv2d");
      const auto& bp = float_of(bt, "conv2d: bias");
      need_rank(bt, 1, "conv2d: bias");
      b = typed<B, 1>(bp);
      bs = tensor_shape(bt);
    }
    // The output shape is checked first: zero-channel inputs make it unbounded by the input sizes.
    check_shape("conv2d", checks::conv2d(tensor_shape(xt), tensor_shape(wt), bias ? &bs : nullptr, o));
    return wrap<B, Float>(ember::conv2d<B>(typed<B, 4>(xp), typed<B, 4>(wp), b, o).primitive());
  });
}

template <class B>
DynTensor max_pool2d(const DynTensor& x, const Pool2dOptions& o) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto& p = float_of(t, "max_pool2d: input");
        need_rank(t, 4, "max_pool2d: input");
        return wrap<B, Float>(ember::max_pool2d<B>(typed<B, 4>(p), o).primitive());
      },
      x);
}

template <class B>
DynTensor avg_pool2d(const DynTensor& x, const Pool2dOptions& o) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto& p = float_of(t, "avg_pool2d: input");
        need_rank(t, 4, "avg_pool2d: input");
        return wrap<B, Float>(ember::avg_pool2d<B>(typed<B, 4>(p), o).primitive());
      },
      x);
}

template <class B>
DynTensor cross_entropy(const DynTensor& logits, const DynTensor& targets, nn::Reduction r) {
  return visit_same<B, DynTensor>(logits, targets, "cross_entropy", [&](const auto& lt, const auto& tt) -> DynTensor {
    const auto& lp = float_of(lt, "cross_entropy: logits");
    const auto& tp = int_of(tt, "cross_entropy: targets");
    need_rank(lt, 2, "cross_entropy: logits");
    need_rank(tt, 1, "cross_entropy: targets");
    nn::CrossEntropyOptions o;
    o.reduction = r;
    // The typed loss is [1]; PyTorch's reduced loss is a scalar (rank 0).
    return wrap<B, Float>(
        to_scalar_if<B, Float>(true, nn::cross_entropy<B>(typed<B, 2>(lp), typed<B, 1, Int>(tp), o).primitive()));
  });
}

template <class B>
DynTensor mse_loss(const DynTensor& input, const DynTensor& target, nn::Reduction r) {
  return visit_same<B, DynTensor>(input, target, "mse_loss", [&](const auto& it, const auto& tt) -> DynTensor {
    const auto& ip = float_of(it, "mse_loss: input");
    const auto& tp = float_of(tt, "mse_loss: target");
    const Shape is = tensor_shape(it), ts = tensor_shape(tt);
    if (!(is == ts))
      throw ShapeError("mse_loss: input " + is.to_string() + " and target " + ts.to_string() +
                       " must have the same shape");
    return with_rank("mse_loss", std::max<std::size_t>(is.rank(), 1), [&](auto d) -> DynTensor {
      constexpr std::size_t D = decltype(d)::value;
      const auto loss =
          nn::mse_loss<B, D>(typed<B, D>(at_least_1d<B, Float>(ip)), typed<B, D>(at_least_1d<B, Float>(tp)), r);
      return wrap<B, Float>(to_scalar_if<B, Float>(true, loss.primitive()));  // a scalar, as PyTorch's reduced loss
    });
  });
}

// nn::Dropout in training mode: the mask is drawn from ember's global generator (ember_seed), where the capture
// runtime's draws are recorded and drawn again on every replay (engine/compile's Capture<B>::random_draw), so a
// compiled forward with dropout is captured, not run eagerly. p outside [0, 1] is refused by DropoutConfig.
template <class B>
DynTensor dropout(const DynTensor& x, double p) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto& xp = float_of(t, "dropout: input");
        const nn::Dropout layer = nn::DropoutConfig{p}.init();
        const std::size_t rank = tensor_shape(t).rank();
        return with_rank("dropout", std::max<std::size_t>(rank, 1), [&](auto d) -> DynTensor {
          constexpr std::size_t D = decltype(d)::value;
          const auto y = layer.forward(typed<B, D>(at_least_1d<B, Float>(xp)));
          return wrap<B, Float>(to_scalar_if<B, Float>(rank == 0, y.primitive()));
        });
      },
      x);
}

}  // namespace ops

EMBER_RUNTIME_NN_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
