// ember.h: runtime-composed Sequential modules.
#include <cstddef>
#include <cstring>

#include "c_api/src/boundary.hpp"
#include "c_api/src/module_tree.hpp"

using namespace ember;
using namespace ember::capi;

namespace {

constexpr std::size_t kLayerDescV1 = EMBER_STRUCT_END(ember_layer_desc, reserved);
constexpr std::size_t kParamInfoV1 = EMBER_STRUCT_END(ember_param_info, shape);

ember_layer_desc layer_defaults(int32_t kind) {
  const LayerSpec s;
  ember_layer_desc d{};
  d.struct_size = sizeof d;
  d.kind = kind;
  d.in_features = s.in;
  d.out_features = s.out;
  for (int i = 0; i < 2; ++i) {
    d.kernel_size[i] = s.kernel[i];
    d.stride[i] = s.stride[i];
    d.padding[i] = s.padding[i];
    d.dilation[i] = s.dilation[i];
  }
  if (kind == EMBER_LAYER_MAX_POOL2D || kind == EMBER_LAYER_AVG_POOL2D) d.kernel_size[0] = d.kernel_size[1] = 2;
  d.groups = s.groups;
  // Flatten starts at dim 1 (PyTorch's nn.Flatten); softmax and log_softmax default to the last dim.
  d.dim = kind == EMBER_LAYER_FLATTEN ? 1 : s.dim;
  d.end_dim = s.end_dim;
  // PyTorch's dropout defaults: LSTM / GRU (between layers) and MultiheadAttention 0, the transformer layers 0.1.
  d.p = kind == EMBER_LAYER_LSTM || kind == EMBER_LAYER_GRU || kind == EMBER_LAYER_MULTIHEAD_ATTENTION ? 0.0
        : kind == EMBER_LAYER_TRANSFORMER_ENCODER_LAYER || kind == EMBER_LAYER_TRANSFORMER_DECODER_LAYER ? 0.1
                                                                                                       : s.p;
  d.threshold = s.threshold;
  d.value = s.value;
  d.init = s.init;
  d.eps = s.eps;
  if (kind == EMBER_LAYER_RMS_NORM) d.eps = -1.0;  // PyTorch's eps=None: the input dtype's machine epsilon
  d.momentum = s.momentum;
  d.negative_slope = s.negative_slope;
  d.bias = s.bias;
  d.approximate = EMBER_GELU_NONE;
  d.count_include_pad = s.count_include_pad;
  d.num_heads = s.num_heads;
  d.num_layers = s.num_layers;
  d.num_groups = s.num_groups;
  d.dim_feedforward = s.dim_feedforward;
  d.kdim = s.kdim;
  d.vdim = s.vdim;
  for (int i = 0; i < 2; ++i) {
    d.output_padding[i] = s.output_padding[i];
    d.size[i] = s.size[i];
    d.scale_factor[i] = s.scale_factor[i];
  }
  d.batch_first = s.batch_first;
  d.bidirectional = s.bidirectional;
  d.affine = s.affine;
  d.norm_first = s.norm_first;
  d.interpolation = s.interpolation;
  d.align_corners = s.align_corners;
  d.activation = s.activation;
  return d;
}

LayerSpec to_spec(const ember_layer_desc& d, std::size_t i) {
  const std::string where = "layers[" + std::to_string(i) + "]";
  if (d.kind < 0 || d.kind >= kLayerKinds) throw ArgumentError(where + ": unknown layer kind " + std::to_string(d.kind));
  if (d.approximate != EMBER_GELU_NONE && d.approximate != EMBER_GELU_TANH)
    throw ArgumentError(where + ": unknown gelu approximate " + std::to_string(d.approximate));
  LayerSpec s;
  s.kind = d.kind;
  s.in = d.in_features;
  s.out = d.out_features;
  for (int k = 0; k < 2; ++k) {
    s.kernel[k] = d.kernel_size[k];
    s.stride[k] = d.stride[k];
    s.padding[k] = d.padding[k];
    s.dilation[k] = d.dilation[k];
  }
  s.groups = d.groups;
  s.dim = d.dim;
  s.end_dim = d.end_dim;
  s.p = d.p;
  s.threshold = d.threshold;
  s.value = d.value;
  s.init = d.init;
  s.eps = d.eps;
  s.momentum = d.momentum;
  s.negative_slope = d.negative_slope;
  s.bias = d.bias != 0;
  s.gelu_tanh = d.approximate == EMBER_GELU_TANH;
  s.count_include_pad = d.count_include_pad != 0;
  if (d.interpolation != EMBER_INTERPOLATE_NEAREST && d.interpolation != EMBER_INTERPOLATE_BILINEAR)
    throw ArgumentError(where + ": unknown interpolation mode " + std::to_string(d.interpolation));
  if (d.activation != EMBER_TRANSFORMER_RELU && d.activation != EMBER_TRANSFORMER_GELU)
    throw ArgumentError(where + ": unknown transformer activation " + std::to_string(d.activation));
  if (d.reserved2 != 0) throw ArgumentError(where + ": reserved2 must be 0");
  s.num_heads = d.num_heads;
  s.num_layers = d.num_layers;
  s.num_groups = d.num_groups;
  s.dim_feedforward = d.dim_feedforward;
  s.kdim = d.kdim;
  s.vdim = d.vdim;
  for (int k = 0; k < 2; ++k) {
    s.output_padding[k] = d.output_padding[k];
    s.size[k] = d.size[k];
    s.scale_factor[k] = d.scale_factor[k];
  }
  s.batch_first = d.batch_first != 0;
  s.bidirectional = d.bidirectional != 0;
  s.affine = d.affine != 0;
  s.norm_first = d.norm_first != 0;
  s.interpolation = d.interpolation;
  s.align_corners = d.align_corners != 0;
  s.activation = d.activation;
  return s;
}

ModuleState& module_of(const ember_module* m, const char* arg) { return *use(m, arg); }

// Params of either kind of module: a Sequential's typed layers, or a tree's handles.
std::vector<ParamDesc> params_of(const ember_module* m) {
  const ModuleState& s = module_of(m, "module");
  return s.tree ? tree_param_descs(s) : parameters(s);
}

}  // namespace

namespace ember::capi {
LayerSpec read_layer_desc(const ember_layer_desc* desc) {
  if (!desc) throw ArgumentError("desc is NULL");
  if (desc->struct_size < kLayerDescV1)
    throw ArgumentError("desc: struct_size " + std::to_string(desc->struct_size) + " is smaller than any version (" +
                        std::to_string(kLayerDescV1) + "): initialize it with ember_layer_init");
  return to_spec(read_struct(desc, layer_defaults(desc->kind), kLayerDescV1, "desc"), 0);
}
}  // namespace ember::capi

extern "C" {

ember_status ember_layer_init(ember_layer_desc* desc, int32_t kind) {
  return guard(__func__, [&] {
    if (!desc) throw ArgumentError("desc is NULL");
    if (kind < 0 || kind >= kLayerKinds) throw ArgumentError("unknown layer kind " + std::to_string(kind));
    *desc = layer_defaults(kind);
  });
}

ember_status ember_module_sequential(const ember_device* device, const ember_layer_desc* layers, size_t n,
                                     ember_module** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    if (n == 0) throw ArgumentError("a Sequential needs at least one layer");
    if (!layers) throw ArgumentError("layers is NULL");
    if (n > 4096) throw ArgumentError(std::to_string(n) + " layers (at most 4096)");
    // The caller's array has the caller's element size: step by layers[0].struct_size.
    const std::size_t stride = layers[0].struct_size;
    // Larger than any struct this header will plausibly grow to: a garbage size must not make us read far away.
    if (stride > 4096) throw ArgumentError("layers[0].struct_size " + std::to_string(stride) + " is implausibly large");
    if (stride < kLayerDescV1)
      throw ArgumentError("layers[0].struct_size " + std::to_string(stride) + " is smaller than any version (" +
                          std::to_string(kLayerDescV1) + "): initialize each element with ember_layer_init");
    std::vector<LayerSpec> specs;
    const auto* base = reinterpret_cast<const std::byte*>(layers);
    // A caller's struct_size need not be a multiple of the struct's alignment (an older, shorter struct ends at
    // `reserved`): copy each element to an aligned buffer before reading its fields.
    alignas(ember_layer_desc) std::byte element[4096];
    for (std::size_t i = 0; i < n; ++i) {
      std::memcpy(element, base + i * stride, stride);
      const auto* d = reinterpret_cast<const ember_layer_desc*>(element);
      const std::string name = "layers[" + std::to_string(i) + "]";
      if (d->struct_size != stride)
        throw ArgumentError(name + ".struct_size " + std::to_string(d->struct_size) + " differs from layers[0]'s " +
                            std::to_string(stride) + " (initialize every element with ember_layer_init)");
      specs.push_back(to_spec(read_struct(d, layer_defaults(d->kind), kLayerDescV1, name.c_str()), i));
    }
    o = make_handle<ember_module>(make_sequential(device_or_default(device), specs));
  });
}

ember_status ember_module_forward(ember_module* module, const ember_tensor* x, int32_t mode, ember_tensor** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    if (mode != EMBER_MODE_EVAL && mode != EMBER_MODE_TRAIN) throw ArgumentError("unknown mode " + std::to_string(mode));
    // Keeps the state alive for the call even if another thread frees the handle (which the rules forbid anyway).
    const std::shared_ptr<ModuleState> state = use(module, "module");
    const bool train = mode == EMBER_MODE_TRAIN;
    o = make_handle<ember_tensor>(state->tree ? tree_forward(*state, use(x, "x"), train)
                                              : forward(*state, use(x, "x"), train));
  });
}

ember_status ember_module_free(ember_module* module) { return free_handle(module, __func__); }

ember_status ember_module_param_count(const ember_module* module, size_t* count) {
  return guard(__func__, [&] { out_value(count, "count") = params_of(module).size(); });
}

ember_status ember_module_param_info(const ember_module* module, size_t index, ember_param_info* info) {
  return guard(__func__, [&] {
    const auto params = params_of(module);
    if (index >= params.size())
      throw IndexError("index " + std::to_string(index) + " out of range for " + std::to_string(params.size()) + " params");
    const ParamDesc& p = params[index];
    ember_param_info v{};
    v.dtype = static_cast<int32_t>(p.dtype);
    v.role = static_cast<int32_t>(p.info.role);
    v.requires_grad = p.info.require_grad;
    v.id = p.info.id.value;
    v.numel = p.info.shape.num_elements();
    v.rank = static_cast<uint32_t>(p.info.shape.rank());
    for (std::size_t i = 0; i < p.info.shape.rank() && i < EMBER_MAX_RANK; ++i) v.shape[i] = p.info.shape[i];
    write_struct(info, v, kParamInfoV1, "info");
  });
}

ember_status ember_module_param_name(const ember_module* module, size_t index, char* buf, size_t capacity,
                                     size_t* length) {
  return guard(__func__, [&] {
    const auto params = params_of(module);
    if (index >= params.size())
      throw IndexError("index " + std::to_string(index) + " out of range for " + std::to_string(params.size()) + " params");
    write_text(params[index].info.path, buf, capacity, length);
  });
}

ember_status ember_module_param_value(const ember_module* module, size_t index, ember_tensor** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const ModuleState& m = module_of(module, "module");
    if (m.tree) {
      const auto entries = tree_params(m);
      if (index >= entries.size())
        throw IndexError("index " + std::to_string(index) + " out of range for " + std::to_string(entries.size()) +
                         " params");
      o = make_handle<ember_tensor>(use(entries[index].param->handle, "param"));  // a snapshot, as documented
    } else {
      o = make_handle<ember_tensor>(param_value(m, index));
    }
  });
}

ember_status ember_module_num_elements(const ember_module* module, int64_t* numel) {
  return guard(__func__, [&] {
    int64_t n = 0;
    for (const auto& p : params_of(module)) n += p.info.shape.num_elements();
    out_value(numel, "numel") = n;
  });
}

}  // extern "C"
