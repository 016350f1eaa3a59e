#pragma once
// The PyTorch name map: which PyTorch state_dict key holds each of an Ember module's params, and in which layout,
// so that a state_dict saved as safetensors loads into the equivalent Ember module (and an Ember module exports
// one PyTorch loads with load_state_dict).
//
//   Ember                                  PyTorch
//   Linear weight [in, out], bias          weight [out, in] (transposed), bias
//   Conv1d/Conv2d weight, bias             the same names and layout
//   ConvTranspose2d weight [in, out / g,   the same names and layout (no map entry needed)
//     kH, kW], bias; GroupNorm weight,
//     bias; RMSNorm weight
//   BatchNorm1d/2d gamma, beta,            weight, bias, running_mean, running_var; num_batches_tracked has no
//     running_mean, running_var              Ember counterpart: dropped on import, written as 0 on export
//   LayerNorm gamma, beta                  weight, bias
//   Embedding weight, PReLU weight         the same
//   LSTM/GRU "layers.<k>.forward_dir.X"    X_l<k> (weight_ih / weight_hh transposed: [in, gates * hidden] in
//     "layers.<k>.reverse_dir.X"           Ember, [gates * hidden, in] in PyTorch), X_l<k>_reverse
//   Sequential "layers.<i>.<...>"          nn.Sequential "<i>.<...>"
//   any other member "<name>.<...>"        the attribute of the same name; std::vector / std::array elements as
//                                          nn.ModuleList's "<name>.<i>"
//
// The map is built from the module's static types (a Linear's square weight is still known to need transposing),
// so import and export are exact, not guessed from shapes. Imported params take the module's own ParamIds
// (safetensors has none), so optimizer state built for the module keeps following them.
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "engine/nn/nn.hpp"
#include "records/module_record.hpp"

namespace ember {

struct TorchName {
  std::string ember;        // the Ember param path
  std::string torch;        // the PyTorch state_dict key
  bool transpose = false;   // rank 2, [in, out] in Ember, [out, in] in PyTorch
  uint64_t id = 0;          // the module's ParamId
};

struct TorchNameMap {
  std::vector<TorchName> names;
  // PyTorch keys with no Ember counterpart and no effect on the output (BatchNorm's num_batches_tracked).
  std::vector<std::string> torch_only;
};

// The map built from names instead of types, for modules composed at run time (the C ABI's): a param `leaf` of a
// layer of kind `layer` under `ember_prefix`, known to PyTorch under `torch_prefix`. add_torch_layer adds what the
// layer has in PyTorch only (num_batches_tracked), once per layer. For Rnn (LSTM, GRU) `leaf` is the param's whole
// path below the layer ("layers.0.forward_dir.weight_ih").
enum class TorchLayer { Other, Linear, BatchNorm, LayerNorm, Rnn };
void add_torch_param(TorchNameMap& map, TorchLayer layer, const std::string& ember_prefix,
                     const std::string& torch_prefix, const std::string& leaf, uint64_t id);
void add_torch_layer(TorchNameMap& map, TorchLayer layer, const std::string& torch_prefix);

// A PyTorch state_dict (keys and layouts as PyTorch has them, e.g. SafetensorsFile::to_record()) as a record of
// the module's paths and layouts, ready for load_record. Keys the map does not know keep their name (load_record
// reports them as unexpected); torch_only keys are dropped and listed in `dropped`.
Record record_from_torch(const Record& torch, const TorchNameMap& map, std::vector<std::string>* dropped = nullptr);

// The module's record (into_record) under PyTorch's keys and layouts, with torch_only keys as scalar i64 zeros,
// so that PyTorch's strict load_state_dict accepts it. Params the map does not know keep their path.
Record record_to_torch(const Record& ember, const TorchNameMap& map);

namespace torch_names_detail {

template <class T> struct IsLinear : std::false_type {};
template <Backend B> struct IsLinear<nn::Linear<B>> : std::true_type {};
template <class T> struct IsBatchNorm : std::false_type {};
template <Backend B> struct IsBatchNorm<nn::BatchNorm1d<B>> : std::true_type {};
template <Backend B> struct IsBatchNorm<nn::BatchNorm2d<B>> : std::true_type {};
template <class T> struct IsLayerNorm : std::false_type {};
template <Backend B> struct IsLayerNorm<nn::LayerNorm<B>> : std::true_type {};
template <class T> struct IsRnn : std::false_type {};
template <Backend B> struct IsRnn<nn::LSTM<B>> : std::true_type {};
template <Backend B> struct IsRnn<nn::GRU<B>> : std::true_type {};
template <class T> struct IsSequential : std::false_type {};
template <Backend B, class... L> struct IsSequential<nn::Sequential<B, L...>> : std::true_type {};

inline std::string join(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

template <class P>
void add(TorchNameMap& out, const P& p, const std::string& ep, const std::string& tp, bool transpose = false) {
  if (!p.empty()) out.names.push_back({ep, tp, transpose, p.id().value});
}
template <class P>
void add(TorchNameMap& out, const std::optional<P>& p, const std::string& ep, const std::string& tp) {
  if (p) add(out, *p, ep, tp);
}

template <class M>
void walk(const M& m, const std::string& ep, const std::string& tp, TorchNameMap& out) {
  using namespace module_detail;
  if constexpr (IsLinear<M>::value) {
    add(out, m.weight, join(ep, "weight"), join(tp, "weight"), true);
    add(out, m.bias, join(ep, "bias"), join(tp, "bias"));
  } else if constexpr (IsBatchNorm<M>::value) {
    add(out, m.gamma, join(ep, "gamma"), join(tp, "weight"));
    add(out, m.beta, join(ep, "beta"), join(tp, "bias"));
    add(out, m.running_mean, join(ep, "running_mean"), join(tp, "running_mean"));
    add(out, m.running_var, join(ep, "running_var"), join(tp, "running_var"));
    out.torch_only.push_back(join(tp, "num_batches_tracked"));
  } else if constexpr (IsLayerNorm<M>::value) {
    add(out, m.gamma, join(ep, "gamma"), join(tp, "weight"));
    add(out, m.beta, join(ep, "beta"), join(tp, "bias"));
  } else if constexpr (IsRnn<M>::value) {
    for (std::size_t k = 0; k < m.layers.size(); ++k) {
      auto direction = [&](const auto& d, const std::string& dir) {
        const std::string sub = "layers." + std::to_string(k) + "." + dir;
        const std::string e = join(ep, sub);
        auto torch = [&](const char* leaf) { return join(tp, *nn::rnn_torch_name(sub + "." + leaf)); };
        add(out, d.weight_ih, join(e, "weight_ih"), torch("weight_ih"), true);
        add(out, d.weight_hh, join(e, "weight_hh"), torch("weight_hh"), true);
        add(out, d.bias_ih, join(e, "bias_ih"), torch("bias_ih"));
        add(out, d.bias_hh, join(e, "bias_hh"), torch("bias_hh"));
      };
      direction(m.layers[k].forward_dir, "forward_dir");
      if (m.layers[k].reverse_dir) direction(*m.layers[k].reverse_dir, "reverse_dir");
    }
  } else if constexpr (IsSequential<M>::value) {
    std::size_t i = 0;
    auto layer = [&](const auto& l) {
      const std::string index = std::to_string(i++);
      walk(l, join(ep, "layers." + index), join(tp, index), out);
    };
    std::apply([&](const auto&... l) { (layer(l), ...); }, m.layers);
  } else if constexpr (IsParam<M>::value) {
    add(out, m, ep, tp);
  } else if constexpr (IsVector<M>::value || IsArray<M>::value) {
    for (std::size_t i = 0; i < m.size(); ++i)
      walk(m[i], join(ep, std::to_string(i)), join(tp, std::to_string(i)), out);
  } else if constexpr (IsOptional<M>::value) {
    if (m) walk(*m, ep, tp, out);
  } else if constexpr (IsTuple<M>::value) {
    std::size_t i = 0;
    auto element = [&](const auto& e) {
      const std::string index = std::to_string(i++);
      walk(e, join(ep, index), join(tp, index), out);
    };
    std::apply([&](const auto&... e) { (element(e), ...); }, m);
  } else if constexpr (reflected<M>) {
    hana::for_each(hana::accessors<M>(), [&](auto pair) {
      const std::string name = hana::to<const char*>(hana::first(pair));
      walk(hana::second(pair)(m), join(ep, name), join(tp, name), out);
    });
  }
}

}  // namespace torch_names_detail

template <class M>
TorchNameMap torch_name_map(const M& m) {
  TorchNameMap out;
  torch_names_detail::walk(m, "", "", out);
  return out;
}

// Loads a PyTorch state_dict (PyTorch's keys and layouts) into `m`, strictly or partially, as load_record does;
// `dropped` lists the torch_only keys that were present and ignored.
template <class M>
M load_torch_state_dict(M m, const Record& torch, LoadMode mode = LoadMode::Strict, LoadReport* report = nullptr,
                        std::vector<std::string>* dropped = nullptr) {
  const TorchNameMap map = torch_name_map(m);
  return load_record(std::move(m), record_from_torch(torch, map, dropped), mode, report);
}

// The module's params as a PyTorch state_dict (see record_to_torch).
template <class M>
Record torch_state_dict(const M& m) {
  return record_to_torch(into_record(m), torch_name_map(m));
}

}  // namespace ember
