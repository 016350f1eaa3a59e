#pragma once
// A Sequential composed at run time from the engine's nn layers, for the C ABI.
//
// Layers are the typed engine's own (nn::Linear<B>, nn::Conv2d<B>, ...) held in a std::variant, so forward runs
// exactly the engine's code and parameters are engine Params. The generic module machinery (visit/map in
// engine/module/traversal.hpp) does not know the variant, so this header adds visit and map overloads for
// Sequential<B>, found by argument-dependent lookup and more specialized than the generic templates. With them,
// into_record, load_record, named_parameters, GradientsParams::from_grads and every optimizer's step work on a
// runtime Sequential unchanged, and parameter paths are "layers.<i>.<name>", exactly those of a typed
// nn::Sequential with the same layers, so records move freely between C and C++.
#include <array>
#include <memory>
#include <shared_mutex>
#include <type_traits>
#include <variant>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "c_api/src/runtime/dyn.hpp"
#include "c_api/src/runtime/layer_kind.hpp"
#include "engine/nn/nn.hpp"
#include "records/module_record.hpp"

namespace ember::capi {

// nn has no Flatten module: merges dims [start, end] (PyTorch's nn.Flatten defaults 1, -1).
struct Flatten {
  int64_t start = 1, end = -1;
};

// Alternatives in the order of c_api/src/layers.def (ember.h's ember_layer_kind), so variant index == kind.
template <class B>
using Layer = std::variant<nn::Linear<B>, nn::Conv2d<B>, nn::ReLU, nn::GELU, nn::Sigmoid, nn::Tanh, nn::Threshold,
                           nn::PReLU<B>, nn::Dropout, nn::LayerNorm<B>, nn::Embedding<B>, nn::MaxPool2d,
                           nn::AvgPool2d, Flatten, nn::LeakyReLU, nn::SiLU, nn::Softmax, nn::LogSoftmax,
                           nn::BatchNorm1d<B>, nn::BatchNorm2d<B>, nn::AdaptiveAvgPool2d,
                           nn::GroupNorm<B>, nn::RMSNorm<B>, nn::ConvTranspose2d<B>, nn::Upsample,
                           nn::MultiheadAttention<B>, nn::LSTM<B>, nn::GRU<B>, nn::TransformerEncoderLayer<B>,
                           nn::TransformerDecoderLayer<B>>;
namespace layer_order_check {
// The rows name their types with B. The order is the same for every backend, so the CPU's (a header-only type
// here: nothing is instantiated) checks it in every build unit, the plugins' too.
using B = Autodiff<Cpu<float>>;
static_assert(std::variant_size_v<Layer<B>> == kLayerKinds, "Layer<B> and layers.def differ in length");
#define EMBER_LAYER(id, value, name, type)                                           \
  static_assert(std::is_same_v<std::variant_alternative_t<value, Layer<B>>, type>, \
                "Layer<B>'s alternative " #value " is not " #type " (the row of c_api/src/layers.def)");
#include "c_api/src/layers.def"
}  // namespace layer_order_check

template <class B>
struct Sequential {
  using Backend = B;
  std::vector<Layer<B>> layers;
};

template <class B, class V>
void visit(const Sequential<B>& m, V& v) {
  v.enter("layers");
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    v.enter(std::to_string(i));
    std::visit([&](const auto& layer) { ember::visit(layer, v); }, m.layers[i]);
    v.exit();
  }
  v.exit();
}

template <class B, class F>
Sequential<B> map(Sequential<B> m, F& f) {
  f.enter("layers");
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    f.enter(std::to_string(i));
    std::visit([&](auto& layer) { layer = ember::map(std::move(layer), f); }, m.layers[i]);
    f.exit();
  }
  f.exit();
  return m;
}

// A layer as the C ABI describes it (ember_layer_desc without the C types); defaults are PyTorch's.
struct LayerSpec {
  int32_t kind = 0;
  int64_t in = 0, out = 0;
  std::array<int64_t, 2> kernel{1, 1}, stride{0, 0}, padding{0, 0}, dilation{1, 1};
  int64_t groups = 1, dim = -1, end_dim = -1;
  double p = 0.5, threshold = 0.0, value = 0.0, init = 0.25, eps = 1e-5, momentum = 0.1, negative_slope = 0.01;
  bool bias = true, gelu_tanh = false, count_include_pad = true;
  // The sequence, attention and upsampling layers' fields (ember_layer_desc's appended block).
  int64_t num_heads = 1, num_layers = 1, num_groups = 1, dim_feedforward = 2048, kdim = 0, vdim = 0;
  std::array<int64_t, 2> output_padding{0, 0}, size{0, 0};
  std::array<double, 2> scale_factor{0.0, 0.0};
  bool batch_first = false, bidirectional = false, affine = true, norm_first = false, align_corners = false;
  int32_t interpolation = 0;  // ember_interpolate_mode
  int32_t activation = 0;     // ember_transformer_activation
};

// A Sequential<B> of the module's runtime (type-erased: only that runtime reads it).
struct DynSequential {
  std::shared_ptr<void> payload;
};
template <class B, class F>
decltype(auto) visit_backend(F&& f, DynSequential& m) {
  return f(*static_cast<Sequential<B>*>(m.payload.get()));
}
template <class B, class F>
decltype(auto) visit_backend(F&& f, const DynSequential& m) {
  return f(*static_cast<const Sequential<B>*>(m.payload.get()));
}

struct ModuleTree;  // module_tree.hpp (c_api/src): a container built by the caller, or one layer

// What a C module handle owns. The mutex makes the module safe to share: forwards take it shared; anything that
// replaces params (load, optimizer step) and train-mode forwards of modules with BatchNorm (which update running
// statistics) take it exclusively.
struct ModuleState {
  const BackendRuntime* runtime = nullptr;  // the runtime of `device`, which made `module`
  DynSequential module;
  DynDevice device;  // where the params live; inputs must live there too
  bool has_batch_norm = false;
  std::vector<int32_t> layer_kinds;  // ember_module_sequential's layers (ember_layer_kind), for the PyTorch name map
  mutable std::shared_mutex mu;
  // Set for modules of ember_module_create / ember_module_layer: their params are tensor handles (module_tree.hpp);
  // `module` then holds the one typed layer of a layer module (empty for containers and unmaterialized lazy layers).
  std::shared_ptr<ModuleTree> tree;
};

struct ParamDesc {
  ParamInfo info;
  DType dtype = DType::F32;
};

// The module functions (op_list.hpp's EMBER_RUNTIME_SEQUENTIAL_OPS), dispatched to the module's runtime:
// make_sequential builds the layers on `dev` and materializes every param in order (deterministic under
// ember::seed); load_module_record on a strict mismatch throws LoadError (carrying the report) and leaves the
// module unchanged. Declared in tensor_ops.hpp with the others.

}  // namespace ember::capi
