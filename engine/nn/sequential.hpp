#pragma once
// Sequential<B, Layers...>: a typed chain of layers; forward feeds each layer's output to the next.
//
// Design. A generic container of heterogeneous layers cannot be `template <Backend B> struct Sequential` (the
// layer types must be named somewhere) and should not type-erase (forward would lose its static types, and rank
// changes such as Embedding's [b, s] Int -> [b, s, d] Float would be impossible). So the layer types are template
// arguments and the layers live in a std::tuple:
//
//   using Mlp = nn::Sequential<B, nn::Linear<B>, nn::ReLU, nn::Dropout, nn::Linear<B>>;
//   auto mlp = nn::sequential<B>(LinearConfig{4, 8}.init<B>(), nn::ReLU{}, DropoutConfig{0.1}.init(),
//                                LinearConfig{8, 2}.init<B>());
//
// The tuple is the reflected member `layers`, so parameter paths are "layers.0.weight", "layers.3.bias" (PyTorch's
// nn.Sequential uses "0.weight"; a record importer maps the prefix). B is carried so the module knows its backend
// (valid() below); every layer must be on B or backend-independent (ReLU, Dropout, pools: plain structs).
//
// Traversal: Rebind's generic `M<B>` rule handles templates with one backend parameter only, so this header
// specializes Rebind for Sequential (re-binding each layer), and adds the valid() overload that module.hpp's
// M<B>-shaped one cannot match. visit/map/records/num_params/freeze/set_training work unchanged.
#include <tuple>
#include <utility>

#include "engine/module/module.hpp"

namespace ember::nn {

template <Backend B, class... Layers>
struct Sequential {
  static_assert(sizeof...(Layers) >= 1, "Sequential needs at least one layer");
  BOOST_HANA_DEFINE_STRUCT(Sequential, (std::tuple<Layers...>, layers));

  static constexpr std::size_t size = sizeof...(Layers);

  template <std::size_t I>
  const auto& get() const {
    return std::get<I>(layers);
  }
  template <std::size_t I>
  auto& get() {
    return std::get<I>(layers);
  }

  // The output type is whatever the last layer returns (ranks and kinds may change along the chain).
  template <class X>
  auto forward(const X& x) const {
    return chain<0>(x);
  }

 private:
  template <std::size_t I, class X>
  auto chain(const X& x) const {
    auto y = std::get<I>(layers).forward(x);
    if constexpr (I + 1 == sizeof...(Layers))
      return y;
    else
      return chain<I + 1>(y);
  }
};

// Builds a Sequential on B from layer values (types deduced).
template <Backend B, class... Layers>
Sequential<B, std::decay_t<Layers>...> sequential(Layers&&... layers) {
  Sequential<B, std::decay_t<Layers>...> s;
  s.layers = std::tuple<std::decay_t<Layers>...>(std::forward<Layers>(layers)...);
  return s;
}

}  // namespace ember::nn

namespace ember {
template <Backend B, class... Layers, class NewB>
struct Rebind<nn::Sequential<B, Layers...>, NewB> {
  using type = nn::Sequential<NewB, Rebind_t<Layers, NewB>...>;
};

// valid() for a top-level Sequential (nested in a module, the module's own valid() handles it). In namespace
// ember so both ember::valid(seq) and an unqualified valid(seq) find it.
template <AutodiffBackend B, class... Layers>
Rebind_t<nn::Sequential<B, Layers...>, typename B::InnerBackend> valid(const nn::Sequential<B, Layers...>& m) {
  return valid_on<typename B::InnerBackend>(m);
}
}  // namespace ember
