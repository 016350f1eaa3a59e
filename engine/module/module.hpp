#pragma once
// The module API, derived once for every reflected module from visit/map/rebind (traversal.hpp).
// The Record type is engine/module/record.hpp; into_record / load_record live in records/module_record.hpp because
// they convert elements by PrecisionSettings.
#include <functional>
#include <string>
#include <vector>

#include "engine/module/traversal.hpp"

namespace ember {

// What a module says about one of its params, without materializing it.
struct ParamInfo {
  std::string path;
  ParamId id;
  ParamKind kind;
  ParamRole role;
  Shape shape;
  bool require_grad;
  bool initialized;
};

template <class M>
std::vector<ParamInfo> named_parameters(const M& m) {
  std::vector<ParamInfo> out;
  visit_params(m, [&](const std::string& path, const auto& p) {
    using P = std::decay_t<decltype(p)>;
    out.push_back({path, p.id(), P::kind, p.role(), p.shape(), p.require_grad(), p.is_initialized()});
  });
  return out;
}

// Number of elements over all params (buffers and constants included, like PyTorch's state_dict size);
// never materializes a lazy param.
template <class M>
int64_t num_params(const M& m) {
  int64_t n = 0;
  visit_params(m, [&](const std::string&, const auto& p) { n += p.shape().num_elements(); });
  return n;
}

// Moves every param to `device`; lazy params stay lazy and initialize there.
template <class M, class Device>
M to_device(M m, const Device& device) {
  return map_params(std::move(m), [&](const std::string&, auto p) {
    using P = decltype(p);
    if (!p.is_initialized())
      return P::uninitialized(p.id(), [p](const Device& d) { return p.val().to_device(d); }, device,
                              p.require_grad(), p.shape(), p.role());
    return P::initialized(p.id(), p.val().to_device(device), p.require_grad(), p.role());
  });
}

// A copy on `device` whose params are new graph leaves (Burn's fork): gradients of the copy never flow back.
template <class M, class Device>
M fork(const M& m, const Device& device) {
  return map_params(M(m), [&](const std::string&, auto p) {
    using P = decltype(p);
    if constexpr (P::Value::is_float)
      return P::initialized(p.id(), p.val().detach().to_device(device), p.require_grad(), p.role());
    else
      return P::initialized(p.id(), p.val().to_device(device), false, p.role());
  });
}

// The distinct devices the module's params live on (lazy params report their target device).
template <template <class> class M, class B>
std::vector<typename B::Device> devices(const M<B>& m) {
  std::vector<typename B::Device> out;
  visit_params(m, [&](const std::string&, const auto& p) {
    const auto d = p.device();
    for (const auto& e : out)
      if (e == d) return;
    out.push_back(d);
  });
  return out;
}

// Sets require_grad on the params whose path satisfies `select` (freezing / unfreezing). Buffers and constants
// never require grad.
template <class M>
M set_require_grad(M m, bool on, const std::function<bool(const std::string&)>& select = nullptr) {
  return map_params(std::move(m), [&](const std::string& path, auto p) {
    if (p.role() != ParamRole::Trainable || (select && !select(path))) return p;
    return p.with_require_grad(on);
  });
}
// Freezes every param (Burn's no_grad on a module).
template <class M>
M no_grad(M m) {
  return set_require_grad(std::move(m), false);
}
// Freezes the params at or under `prefix` ("encoder" freezes encoder.*).
template <class M>
M freeze(M m, const std::string& prefix) {
  return set_require_grad(std::move(m), false, [prefix](const std::string& path) {
    return path == prefix || path.rfind(prefix + ".", 0) == 0;
  });
}

// The same module on `Inner` (the inner backend of its autodiff backend), for inference: values detached, eval
// mode. Spelled with Rebind_t so modules that are not M<B>-shaped (nn::Sequential<B, Layers...>) can reuse it.
template <class Inner, class M>
Rebind_t<M, Inner> valid_on(const M& m) {
  auto inner = rebind_params<Inner>(m, [](const std::string&, const auto& p) {
    using P = std::decay_t<decltype(p)>;
    using Out = Rebind_t<P, Inner>;
    using T = typename Out::Value;
    if constexpr (P::Value::is_float) {
      if (!p.is_initialized())  // stay lazy: materialize on first use
        return Out::uninitialized(p.id(), [p](const auto&) { return T(p.val().inner().primitive()); }, p.device(),
                                  false, p.shape(), p.role());
      return Out::initialized(p.id(), T(p.val().inner().primitive()), false, p.role());
    } else {
      return Out::initialized(p.id(), T(p.val().primitive()), false, p.role());
    }
  });
  return set_training(std::move(inner), false);
}
template <template <class> class M, class B>
  requires AutodiffBackend<B>
M<typename B::InnerBackend> valid(const M<B>& m) {
  return valid_on<typename B::InnerBackend>(m);
}

template <class M>
M train(M m) {
  return set_training(std::move(m), true);
}
template <class M>
M eval(M m) {
  return set_training(std::move(m), false);
}

}  // namespace ember
