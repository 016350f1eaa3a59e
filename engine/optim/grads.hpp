#pragma once
// GradientsParams<B>: the gradients of one backward pass re-keyed by ParamId (Burn's GradientsParams).
//
// Autodiff Gradients are keyed by graph node id, which changes every time a param gets a new value; optimizers,
// accumulators and clipping need a key that survives steps and save/load, which is the ParamId. Gradients are kept
// flattened (Tensor<Inner, 1>) with the param's shape beside them, so one container holds params of every rank and
// optimizers run the same elementwise math whatever the rank.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/autodiff/autodiff_backend.hpp"
#include "engine/module/traversal.hpp"

namespace ember {

template <AutodiffBackend B>
class GradientsParams {
 public:
  using Inner = typename B::InnerBackend;
  using Flat = Tensor<Inner, 1>;
  struct Entry {
    Flat flat;
    Shape shape;
  };

  GradientsParams() = default;

  // Collects p.val().grad(grads) for every float param of `module` that requires grad and was reached by the
  // backward pass. Frozen params, buffers and constants never require grad, so they never get an entry.
  template <class M>
  static GradientsParams from_grads(const typename B::Gradients& grads, const M& module) {
    GradientsParams out;
    visit_params(module, [&](const std::string&, const auto& p) {
      using P = std::decay_t<decltype(p)>;
      if constexpr (P::Value::is_float) {
        // is_initialized: a param never materialized was never used in a forward, so it has no gradient.
        if (!p.require_grad() || !p.is_initialized()) return;
        if (auto g = p.val().grad(grads)) out.put(p.id(), *g);
      }
    });
    return out;
  }

  template <std::size_t D>
  void put(ParamId id, const Tensor<Inner, D>& g) {
    put_flat(id, g.template reshape<1>({g.numel()}), g.shape());
  }
  void put_flat(ParamId id, Flat flat, Shape shape) {
    if (flat.numel() != shape.num_elements())
      throw ShapeError("GradientsParams: " + std::to_string(flat.numel()) + " values for param " +
                       std::to_string(id.value) + " of shape " + shape.to_string());
    entries_.insert_or_assign(id, Entry{std::move(flat), std::move(shape)});
  }

  // The gradient flattened to rank 1; nullopt when the param has none.
  std::optional<Flat> get(ParamId id) const {
    auto it = entries_.find(id);
    if (it == entries_.end()) return std::nullopt;
    return it->second.flat;
  }
  // The gradient in the param's own shape (D must be the param's rank).
  template <std::size_t D>
  std::optional<Tensor<Inner, D>> get_shaped(ParamId id) const {
    auto it = entries_.find(id);
    if (it == entries_.end()) return std::nullopt;
    if (it->second.shape.rank() != D)
      throw ShapeError("GradientsParams::get_shaped: param " + std::to_string(id.value) + " has shape " +
                       it->second.shape.to_string() + ", not rank " + std::to_string(D));
    std::array<int64_t, D> dims;
    for (std::size_t i = 0; i < D; ++i) dims[i] = it->second.shape[i];
    return it->second.flat.template reshape<D>(dims);
  }
  std::optional<Shape> shape(ParamId id) const {
    auto it = entries_.find(id);
    if (it == entries_.end()) return std::nullopt;
    return it->second.shape;
  }
  std::optional<Flat> remove(ParamId id) {
    auto it = entries_.find(id);
    if (it == entries_.end()) return std::nullopt;
    Flat g = std::move(it->second.flat);
    entries_.erase(it);
    return g;
  }
  bool contains(ParamId id) const { return entries_.count(id) != 0; }
  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  std::vector<ParamId> ids() const {
    std::vector<ParamId> out;
    for (const auto& [id, e] : entries_) out.push_back(id);
    return out;
  }
  const std::map<ParamId, Entry>& entries() const { return entries_; }

  // Replaces every gradient g by f(g) (same number of elements); used by clipping and accumulation.
  template <class F>
  void transform(F&& f) {
    for (auto& [id, e] : entries_) {
      Flat r = f(std::as_const(e.flat));
      if (r.numel() != e.flat.numel())
        throw ShapeError("GradientsParams::transform: the result for param " + std::to_string(id.value) +
                         " changed size");
      e.flat = std::move(r);
    }
  }

 private:
  std::map<ParamId, Entry> entries_;  // ordered: clipping sums norms in a deterministic order
};

}  // namespace ember
