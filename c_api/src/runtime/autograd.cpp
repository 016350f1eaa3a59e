// Autodiff on runtime tensors: require grad, backward (optionally seeded, optionally keeping the graph and adding
// into the leaves' .grad), torch.autograd.grad, the .grad slots of leaves, reading gradients (no-grad scopes are in
// grad_mode.cpp, in-place updates in inplace.cpp).
#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "c_api/src/runtime/backend_ops.hpp"

namespace ember::capi {
namespace {

template <class B>
constexpr bool kTracks = detail::HasGradTracking<B>;

}  // namespace

namespace ops {

// PyTorch's requires_grad_: a leaf (or a tensor that requires no grad) becomes a leaf that requires grad, or stops
// requiring it; the result of a recorded op already requires grad and stays a non-leaf (on), and cannot be made to
// stop (off: that is what detach is for).
template <class B>
DynTensor set_requires_grad(const DynTensor& x, bool on) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto& p = float_of(t, "set_requires_grad: tensor");
        if constexpr (kTracks<B>) {
          if (!B::float_is_leaf(p)) {
            if (on) return t;
            throw ArgumentError(
                "set_requires_grad: you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use var_no_grad = "
                "var.detach().");
          }
          return wrap<B, Float>(B::float_require_grad(p, on));
        } else {
          throw UnsupportedError("set_requires_grad: this backend does not record gradients");
        }
      },
      x);
}

template <class B>
bool requires_grad(const DynTensor& x) {
  return visit_backend<B>(
      [&](const auto& t) -> bool {
        if (t.kind() != Kind::Float) return false;
        if constexpr (kTracks<B>) return B::float_is_require_grad(std::get<0>(t.prim));
        else return false;
      },
      x);
}

template <class B>
DynTensor detach(const DynTensor& x) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        if constexpr (kTracks<B>) {
          if (t.kind() == Kind::Float) return wrap<B, Float>(B::float_detach(std::get<0>(t.prim)));
        }
        return t;  // int and bool tensors are never tracked
      },
      x);
}

// The seed of a backward from `x`: `grad` (same shape, checked by the engine), or ones for a one-element x.
template <class B>
typename B::InnerBackend::FloatPrimitive seed_of(const BackendTensor<B>& t, const DynTensor* grad, const char* what) {
  const auto& p = float_of(t, std::string(what) + ": tensor");
  if (grad) return B::inner(float_of(same_backend<B>(*grad, t, what), std::string(what) + ": grad"));
  const Shape s = B::template shape<Float>(p);
  if (s.num_elements() != 1)
    throw ArgumentError(fmt::format("{}: grad can be implicitly created only for scalar outputs (the tensor has shape "
                                    "{}; pass a grad of that shape)", what, s.to_string()));
  return B::InnerBackend::template full<Float>(s, 1.0, B::template device<Float>(p));
}

template <class B>
DynGrads backward(const DynTensor& x, const DynTensor* grad, bool retain_graph, bool accumulate) {
  return visit_backend<B>(
      [&](const auto& t) -> DynGrads {
        if constexpr (kTracks<B>) {
          const auto& p = float_of(t, "backward: tensor");
          if (!B::float_is_require_grad(p))
            throw ArgumentError("backward: the tensor does not require grad (no tracked input reaches it)");
          std::vector<std::pair<typename B::FloatPrimitive, typename B::InnerBackend::FloatPrimitive>> roots;
          roots.emplace_back(p, seed_of(t, grad, "backward"));
          return BackendGrads<B>{B::backward_seeded(roots, retain_graph, accumulate)};
        } else {
          throw UnsupportedError("backward: this backend does not record gradients");
        }
      },
      x);
}

template <class B>
std::vector<std::optional<DynTensor>> autograd_grad(const std::vector<const DynTensor*>& outputs,
                                                    const std::vector<const DynTensor*>& grad_outputs,
                                                    const std::vector<const DynTensor*>& inputs, bool retain_graph) {
  if constexpr (kTracks<B>) {
    const auto& first = as_backend<B>(*outputs.at(0), "autograd_grad");
    std::vector<std::pair<typename B::FloatPrimitive, typename B::InnerBackend::FloatPrimitive>> roots;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const auto& o = same_backend<B>(*outputs[i], first, "autograd_grad");
      const char* what = "autograd_grad";
      roots.emplace_back(float_of(o, fmt::format("autograd_grad: output {}", i)),
                         seed_of(o, grad_outputs.empty() ? nullptr : grad_outputs[i], what));
    }
    std::vector<typename B::FloatPrimitive> xs;
    for (std::size_t i = 0; i < inputs.size(); ++i)
      xs.push_back(float_of(same_backend<B>(*inputs[i], first, "autograd_grad"), fmt::format("autograd_grad: input {}", i)));
    std::vector<std::optional<DynTensor>> out;
    for (auto& g : B::grad_of(roots, xs, retain_graph)) {
      if (g) out.emplace_back(DynTensor(wrap<B, Float>(B::from_inner(*g))));
      else out.emplace_back(std::nullopt);
    }
    return out;
  } else {
    throw UnsupportedError("autograd_grad: this backend does not record gradients");
  }
}

template <class B>
std::optional<DynTensor> leaf_grad(const DynTensor& x) {
  return visit_backend<B>(
      [&](const auto& t) -> std::optional<DynTensor> {
        if constexpr (kTracks<B>) {
          if (t.kind() != Kind::Float) return std::nullopt;  // int and bool tensors never have one
          auto g = B::leaf_grad(std::get<0>(t.prim));
          if (!g) return std::nullopt;
          return DynTensor(wrap<B, Float>(B::from_inner(*g)));
        } else {
          return std::nullopt;
        }
      },
      x);
}

template <class B>
void set_leaf_grad(const DynTensor& x, const DynTensor* grad) {
  visit_backend<B>(
      [&](const auto& t) {
        const auto& p = float_of(t, "set_grad: tensor");
        if constexpr (kTracks<B>) {
          if (!grad) return B::set_leaf_grad(p, std::nullopt);
          const auto& g = float_of(same_backend<B>(*grad, t, "set_grad"), "set_grad: grad");
          B::set_leaf_grad(p, B::inner(g));  // the values only: a .grad is never part of a graph
        } else {
          throw UnsupportedError("set_grad: this backend does not record gradients");
        }
      },
      x);
}

template <class B>
bool is_leaf(const DynTensor& x) {
  return visit_backend<B>(
      [&](const auto& t) -> bool {
        if (t.kind() != Kind::Float) return true;
        if constexpr (kTracks<B>) return B::float_is_leaf(std::get<0>(t.prim));
        else return true;
      },
      x);
}

template <class B>
std::optional<DynTensor> grad(const DynGrads& grads, const DynTensor& x) {
  return visit_backend<B>(
      [&](const auto& g) -> std::optional<DynTensor> {
        const auto& t = as_backend<B>(x, "grad");
        const auto& p = float_of(t, "grad: tensor");
        auto r = B::grad(p, g.grads);
        if (!r) return std::nullopt;
        return DynTensor(wrap<B, Float>(B::from_inner(*r)));
      },
      grads);
}

}  // namespace ops

EMBER_RUNTIME_AUTOGRAD_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
