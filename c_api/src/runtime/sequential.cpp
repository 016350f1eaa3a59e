// Runtime Sequential: building layers from specs, forward with runtime rank, params and records.
#include "c_api/src/runtime/sequential.hpp"

#include "c_api/src/runtime/backend_ops.hpp"

#include <mutex>

#include <fmt/format.h>

namespace ember::capi {
namespace {

// ember_layer_desc's RNN fields: in_features = input_size, out_features = hidden_size, p = dropout.
nn::RnnOptions rnn_options(const LayerSpec& s) {
  nn::RnnOptions o;
  o.input_size = s.in;
  o.hidden_size = s.out;
  o.num_layers = s.num_layers;
  o.bias = s.bias;
  o.batch_first = s.batch_first;
  o.dropout = s.p;
  o.bidirectional = s.bidirectional;
  return o;
}

// ember_layer_desc's upsample fields: size (0, 0) means "use scale_factor", as scale_factor (0, 0) means "use size".
nn::UpsampleConfig upsample_config(const LayerSpec& s) {
  nn::UpsampleConfig c;
  if (s.size[0] != 0 || s.size[1] != 0) c.size = s.size;
  if (s.scale_factor[0] != 0 || s.scale_factor[1] != 0) c.scale_factor = s.scale_factor;
  if (s.interpolation == 0) c.mode = InterpolateMode::Nearest;
  else if (s.interpolation == 1) c.mode = InterpolateMode::Bilinear;
  else throw ArgumentError(fmt::format("upsample: unknown interpolation mode {}", s.interpolation));
  c.align_corners = s.align_corners;
  return c;
}

// issue 13 (h-mha): a transformer layer's config from ember_layer_desc (in_features = d_model, num_heads = nhead,
// p = dropout, eps = layer_norm_eps).
template <class Config>
Config transformer_layer(const LayerSpec& s) {
  Config c;
  c.d_model = s.in;
  c.nhead = s.num_heads;
  c.dim_feedforward = s.dim_feedforward;
  c.dropout = s.p;
  c.activation = static_cast<nn::TransformerActivation>(s.activation);
  c.layer_norm_eps = s.eps;
  c.batch_first = s.batch_first;
  c.norm_first = s.norm_first;
  return c;
}

template <class B>
Layer<B> make_layer(const LayerSpec& s, const typename B::Device& dev) {
  auto stride_or = [](std::array<int64_t, 2> st, std::array<int64_t, 2> dflt) {
    return st[0] == 0 && st[1] == 0 ? dflt : st;
  };
  switch (static_cast<LayerKind>(s.kind)) {
    case LayerKind::Linear: return nn::LinearConfig{s.in, s.out, s.bias}.init<B>(dev);
    case LayerKind::Conv2d: {
      nn::Conv2dConfig c;
      c.in_channels = s.in;
      c.out_channels = s.out;
      c.kernel_size = s.kernel;
      c.stride = stride_or(s.stride, {1, 1});
      c.padding = s.padding;
      c.dilation = s.dilation;
      c.groups = s.groups;
      c.bias = s.bias;
      return c.init<B>(dev);
    }
    case LayerKind::Relu: return nn::ReLU{};
    case LayerKind::Gelu: return nn::GELU{s.gelu_tanh ? nn::GeluApproximate::Tanh : nn::GeluApproximate::None};
    case LayerKind::Sigmoid: return nn::Sigmoid{};
    case LayerKind::Tanh: return nn::Tanh{};
    case LayerKind::Threshold: return nn::Threshold{s.threshold, s.value};
    case LayerKind::Prelu: return nn::PReLUConfig{s.in, s.init}.init<B>(dev);
    case LayerKind::Dropout: return nn::DropoutConfig{s.p}.init();
    case LayerKind::LayerNorm: return nn::LayerNormConfig{s.in, s.eps}.init<B>(dev);
    case LayerKind::Embedding: return nn::EmbeddingConfig{s.in, s.out}.init<B>(dev);
    case LayerKind::MaxPool2d: {
      nn::MaxPool2dConfig c;
      c.kernel_size = s.kernel;
      c.stride = stride_or(s.stride, s.kernel);
      c.padding = s.padding;
      c.dilation = s.dilation;
      return c.init();
    }
    case LayerKind::AvgPool2d: {
      nn::AvgPool2dConfig c;
      c.kernel_size = s.kernel;
      c.stride = stride_or(s.stride, s.kernel);
      c.padding = s.padding;
      c.count_include_pad = s.count_include_pad;
      return c.init();
    }
    case LayerKind::Flatten: return Flatten{s.dim, s.end_dim};
    case LayerKind::LeakyRelu: return nn::LeakyReLU{s.negative_slope};
    case LayerKind::Silu: return nn::SiLU{};
    case LayerKind::Softmax: return nn::Softmax{s.dim};
    case LayerKind::LogSoftmax: return nn::LogSoftmax{s.dim};
    case LayerKind::BatchNorm1d: return nn::BatchNorm1dConfig{s.in, s.eps, s.momentum}.init<B>(dev);
    case LayerKind::BatchNorm2d: return nn::BatchNorm2dConfig{s.in, s.eps, s.momentum}.init<B>(dev);
    case LayerKind::AdaptiveAvgPool2d: return nn::AdaptiveAvgPool2dConfig{s.kernel}.init();
    case LayerKind::GroupNorm: return nn::GroupNormConfig{s.num_groups, s.in, s.eps, s.affine}.init<B>(dev);
    case LayerKind::RmsNorm: {
      // A negative eps is PyTorch's eps=None: the input dtype's machine epsilon.
      const std::optional<double> eps = s.eps < 0 ? std::nullopt : std::optional<double>(s.eps);
      return nn::RMSNormConfig{s.in, eps, s.affine}.init<B>(dev);
    }
    case LayerKind::ConvTranspose2d: {
      nn::ConvTranspose2dConfig c;
      c.in_channels = s.in;
      c.out_channels = s.out;
      c.kernel_size = s.kernel;
      c.stride = stride_or(s.stride, {1, 1});
      c.padding = s.padding;
      c.output_padding = s.output_padding;
      c.dilation = s.dilation;
      c.groups = s.groups;
      c.bias = s.bias;
      return c.init<B>(dev);
    }
    case LayerKind::Lstm: return nn::LSTMConfig{rnn_options(s)}.init<B>(dev);
    case LayerKind::Gru: return nn::GRUConfig{rnn_options(s)}.init<B>(dev);
    case LayerKind::Upsample: return upsample_config(s).init();
    // issue 13 (h-mha): in_features = embed_dim / d_model, p = dropout.
    case LayerKind::MultiheadAttention:
      return nn::MultiheadAttentionConfig{s.in, s.num_heads, s.p, s.bias, s.kdim, s.vdim, s.batch_first}.init<B>(dev);
    case LayerKind::TransformerEncoderLayer: return transformer_layer<nn::TransformerEncoderLayerConfig>(s).init<B>(dev);
    case LayerKind::TransformerDecoderLayer: return transformer_layer<nn::TransformerDecoderLayerConfig>(s).init<B>(dev);
    default: break;
  }
  throw ArgumentError("sequential: unknown layer kind " + std::to_string(s.kind));
}

// Runs one layer on x. Layers are taken by reference: only train-mode BatchNorm writes to its layer (its running
// statistics), and the caller holds the module exclusively then; Dropout and eval-mode BatchNorm run on a copy
// whose mode flag is set, so concurrent forwards never write shared state.
template <class B>
struct Forward {
  const BackendTensor<B>& x;
  bool train;

  // f(Tensor<B, D>) for the float input of any rank.
  template <class F>
  BackendTensor<B> any_rank(const char* who, F&& f) const {
    const auto& p = float_of(x, std::string(who) + ": input");
    return with_rank(who, tensor_shape(x).rank(), [&](auto d) -> BackendTensor<B> {
      return wrap<B, Float>(f(typed<B, decltype(d)::value>(p)).primitive());
    });
  }
  template <std::size_t R, class F>
  BackendTensor<B> rank(const char* who, F&& f) const {
    const auto& p = float_of(x, std::string(who) + ": input");
    const Shape s = tensor_shape(x);
    if (s.rank() != R)
      throw ShapeError(std::string(who) + ": input must be rank " + std::to_string(R) + ", got " + s.to_string());
    return wrap<B, Float>(f(typed<B, R>(p)).primitive());
  }
  BackendTensor<B> unary(const char* who, UnaryOp op) const {
    return wrap<B, Float>(B::float_unary(float_of(x, std::string(who) + ": input"), op));
  }

  BackendTensor<B> operator()(nn::Linear<B>& l) const { return any_rank("linear", [&](const auto& t) { return l.forward(t); }); }
  BackendTensor<B> operator()(nn::Conv2d<B>& l) const { return rank<4>("conv2d", [&](const auto& t) { return l.forward(t); }); }
  BackendTensor<B> operator()(nn::ReLU&) const { return unary("relu", UnaryOp::Relu); }
  BackendTensor<B> operator()(nn::GELU& l) const {
    return unary("gelu", l.approximate == nn::GeluApproximate::Tanh ? UnaryOp::GeluTanh : UnaryOp::Gelu);
  }
  BackendTensor<B> operator()(nn::Sigmoid&) const { return unary("sigmoid", UnaryOp::Sigmoid); }
  BackendTensor<B> operator()(nn::Tanh&) const { return unary("tanh", UnaryOp::Tanh); }
  BackendTensor<B> operator()(nn::Threshold& l) const { return any_rank("threshold", [&](const auto& t) { return l.forward(t); }); }
  BackendTensor<B> operator()(nn::PReLU<B>& l) const { return any_rank("prelu", [&](const auto& t) { return l.forward(t); }); }
  BackendTensor<B> operator()(nn::Dropout& l) const {
    nn::Dropout d = l;
    d.mode.training = train;
    return any_rank("dropout", [&](const auto& t) { return d.forward(t); });
  }
  BackendTensor<B> operator()(nn::LayerNorm<B>& l) const { return any_rank("layer_norm", [&](const auto& t) { return l.forward(t); }); }
  BackendTensor<B> operator()(nn::Embedding<B>& l) const {
    const auto& p = int_of(x, "embedding: input");
    return with_rank("embedding", tensor_shape(x).rank(), [&](auto d) -> BackendTensor<B> {
      constexpr std::size_t D = decltype(d)::value;
      if constexpr (D + 1 > kMaxRank) throw UnsupportedError("embedding: the output would exceed the maximum rank");
      else return wrap<B, Float>(l.forward(typed<B, D, Int>(p)).primitive());
    });
  }
  BackendTensor<B> operator()(nn::MaxPool2d& l) const { return rank<4>("max_pool2d", [&](const auto& t) { return l.forward(t); }); }
  BackendTensor<B> operator()(nn::AvgPool2d& l) const { return rank<4>("avg_pool2d", [&](const auto& t) { return l.forward(t); }); }
  BackendTensor<B> operator()(nn::Upsample& l) const {
    return rank<4>("upsample", [&](const auto& t) { return l.forward(t); });
  }
  BackendTensor<B> operator()(nn::AdaptiveAvgPool2d& l) const {
    return rank<4>("adaptive_avg_pool2d", [&](const auto& t) { return l.forward(t); });
  }
  BackendTensor<B> operator()(Flatten& l) const {
    const Shape s = tensor_shape(x);
    const std::size_t a = wrap_dim("flatten", l.start, s.rank()), e = wrap_dim("flatten", l.end, s.rank());
    if (a > e)
      throw IndexError("flatten: start dim " + std::to_string(l.start) + " is after end dim " + std::to_string(l.end) +
                       " for shape " + s.to_string());
    Shape to;
    for (std::size_t i = 0; i < s.rank(); ++i) {
      if (i <= a || i > e) to.dims.push_back(s[i]);
      else to.dims.back() *= s[i];
    }
    return visit_kind(x, [&](auto k, const auto& p) -> BackendTensor<B> {
      using K = decltype(k);
      return wrap<B, K>(B::template reshape<K>(p, to));
    });
  }
  BackendTensor<B> operator()(nn::LeakyReLU& l) const { return any_rank("leaky_relu", [&](const auto& t) { return l.forward(t); }); }
  BackendTensor<B> operator()(nn::SiLU& l) const { return any_rank("silu", [&](const auto& t) { return l.forward(t); }); }
  BackendTensor<B> operator()(nn::Softmax& l) const { return any_rank("softmax", [&](const auto& t) { return l.forward(t); }); }
  BackendTensor<B> operator()(nn::LogSoftmax& l) const { return any_rank("log_softmax", [&](const auto& t) { return l.forward(t); }); }
  BackendTensor<B> operator()(nn::BatchNorm1d<B>& l) const {
    const std::size_t r = tensor_shape(x).rank();
    auto run = [&](auto& bn) {
      if (r == 3) return rank<3>("batch_norm1d", [&](const auto& t) { return bn.forward(t); });
      return rank<2>("batch_norm1d", [&](const auto& t) { return bn.forward(t); });
    };
    if (train) {
      l.mode.training = true;
      return run(l);
    }
    nn::BatchNorm1d<B> c = l;
    c.mode.training = false;
    return run(c);
  }
  BackendTensor<B> operator()(nn::GroupNorm<B>& l) const {
    return with_rank("group_norm", tensor_shape(x).rank(), [&](auto d) -> BackendTensor<B> {
      constexpr std::size_t D = decltype(d)::value;
      if constexpr (D < 2) throw ShapeError("group_norm: input must be [N, C, *], got " + tensor_shape(x).to_string());
      else return wrap<B, Float>(l.forward(typed<B, D>(float_of(x, "group_norm: input"))).primitive());
    });
  }
  BackendTensor<B> operator()(nn::RMSNorm<B>& l) const { return any_rank("rms_norm", [&](const auto& t) { return l.forward(t); }); }
  BackendTensor<B> operator()(nn::ConvTranspose2d<B>& l) const {
    return rank<4>("conv_transpose2d", [&](const auto& t) { return l.forward(t); });
  }
  // ember_module_forward on an RNN gives its output only (zero initial states, full lengths);
  // ember_module_forward_rnn (api_rnn.cpp) gives the final states too.
  BackendTensor<B> operator()(nn::LSTM<B>& l) const {
    nn::LSTM<B> c = l;
    c.mode.training = train;
    return rank<3>("lstm", [&](const auto& t) { return c.forward(t).output; });
  }
  BackendTensor<B> operator()(nn::GRU<B>& l) const {
    nn::GRU<B> c = l;
    c.mode.training = train;
    return rank<3>("gru", [&](const auto& t) { return c.forward(t).output; });
  }
  // issue 13 (h-mha): in a Sequential, attention is self-attention without masks and the encoder layer runs without
  // masks; ember_module_forward_attention / _encoder / _decoder (api_attention.cpp) take the other operands.
  // Dropout flags are set on a copy, so concurrent forwards never write shared state.
  BackendTensor<B> operator()(nn::MultiheadAttention<B>& l) const {
    const auto c = set_training(l, train);
    nn::MhaInputs<B> in;
    in.need_weights = false;
    return rank<3>("multihead_attention", [&](const auto& t) { return c.forward(t, t, t, in).output; });
  }
  BackendTensor<B> operator()(nn::TransformerEncoderLayer<B>& l) const {
    const auto c = set_training(l, train);
    return rank<3>("transformer_encoder_layer", [&](const auto& t) { return c.forward(t); });
  }
  BackendTensor<B> operator()(nn::TransformerDecoderLayer<B>&) const {
    throw ArgumentError("transformer_decoder_layer: needs the memory too: use ember_module_forward_decoder");
  }
  BackendTensor<B> operator()(nn::BatchNorm2d<B>& l) const {
    if (train) {
      l.mode.training = true;
      return rank<4>("batch_norm2d", [&](const auto& t) { return l.forward(t); });
    }
    nn::BatchNorm2d<B> c = l;
    c.mode.training = false;
    return rank<4>("batch_norm2d", [&](const auto& t) { return c.forward(t); });
  }
};

}  // namespace

namespace ops {

template <class B>
std::shared_ptr<ModuleState> make_sequential(const DynDevice& dev, const std::vector<LayerSpec>& specs) {
  if (specs.empty()) throw ArgumentError("sequential: needs at least one layer");
  auto state = std::make_shared<ModuleState>();
  state->runtime = &runtime_instance<B>();
  state->module = on_backend<B>(dev, [&](auto) -> DynSequential {
    Sequential<B> seq;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      try {
        seq.layers.push_back(make_layer<B>(specs[i], BackendTraits<B>::device(dev)));
      } catch (const Error& e) {
        throw ArgumentError("layer " + std::to_string(i) + ": " + e.what());
      }
    }
    // Shapes first (a hostile size must fail here, not overflow an allocation), then values in order.
    visit_params(seq, [](const std::string& path, const auto& p) { check_shape(path.c_str(), p.shape()); });
    visit_params(seq, [](const std::string&, const auto& p) { (void)p.val(); });
    return DynSequential{std::make_shared<Sequential<B>>(std::move(seq))};
  });
  state->device = dev;
  for (const auto& s : specs) state->has_batch_norm = state->has_batch_norm || s.kind == 18 || s.kind == 19;
  for (const auto& s : specs) state->layer_kinds.push_back(s.kind);
  return state;
}

template <class B>
DynTensor forward(ModuleState& m, const DynTensor& x, bool train) {
  std::shared_lock shared(m.mu, std::defer_lock);
  std::unique_lock exclusive(m.mu, std::defer_lock);
  if (train && m.has_batch_norm) exclusive.lock();
  else shared.lock();
  return visit_backend<B>(
      [&](auto& seq) -> DynTensor {
        BackendTensor<B> h = as_backend<B>(x, "forward");
        if (!(tensor_device(h) == BackendTraits<B>::device(m.device))) {
          const BackendRuntime& rt = runtime_instance<B>();
          throw ArgumentError("forward: the input lives on " + rt.device_name(BackendTraits<B>::dyn_device(tensor_device(h))) +
                              ", the module on " + rt.device_name(m.device));
        }
        for (std::size_t i = 0; i < seq.layers.size(); ++i) {
          try {
            h = std::visit(Forward<B>{h, train}, seq.layers[i]);
          } catch (const ShapeError& e) {  // say which layer: "layer 2: linear: input [4, 3] has last dim ..."
            throw ShapeError("layer " + std::to_string(i) + ": " + e.what());
          } catch (const KindError& e) {
            throw KindError("layer " + std::to_string(i) + ": " + e.what());
          } catch (const IndexError& e) {
            throw IndexError("layer " + std::to_string(i) + ": " + e.what());
          } catch (const CaptureError& e) {  // a Vulkan plan rejects the op: name it ("layer 0 (embedding): ...")
            static constexpr const char* kNames[] = {
#define EMBER_LAYER(id, value, name, type) name,
#include "c_api/src/layers.def"
            };
            throw CaptureError("layer " + std::to_string(i) + " (" + kNames[seq.layers[i].index()] + "): " + e.what());
          }
        }
        return h;
      },
      m.module);
}

template <class B>
std::vector<ParamDesc> parameters(const ModuleState& m) {
  std::shared_lock lock(m.mu);
  return visit_backend<B>(
      [&](const auto& seq) {
        std::vector<ParamDesc> out;
        for (auto& info : named_parameters(seq)) {
          const DType d = info.kind == ParamKind::Float ? kind_dtype<B, Float>()
                          : info.kind == ParamKind::Int ? kind_dtype<B, Int>()
                                                        : DType::Bool;
          out.push_back({std::move(info), d});
        }
        return out;
      },
      m.module);
}

template <class B>
DynTensor param_value(const ModuleState& m, std::size_t index) {
  std::shared_lock lock(m.mu);
  return visit_backend<B>(
      [&](const auto& seq) -> DynTensor {
        std::optional<BackendTensor<B>> found;
        std::size_t i = 0;
        visit_params(seq, [&](const std::string&, const auto& p) {
          using T = typename std::decay_t<decltype(p)>::Value;
          if (i++ == index) found = wrap<B, typename T::Kind>(p.val().primitive());
        });
        if (!found)
          throw IndexError("param_value: index " + std::to_string(index) + " out of range for " + std::to_string(i) +
                           " params");
        return *found;
      },
      m.module);
}

template <class B>
Record module_record(const ModuleState& m) {
  std::shared_lock lock(m.mu);
  return visit_backend<B>([](const auto& seq) { return into_record(seq); }, m.module);
}

template <class B>
LoadReport load_module_record(ModuleState& m, const Record& r, LoadMode mode) {
  std::unique_lock lock(m.mu);
  return visit_backend<B>(
      [&](auto& seq) {
        LoadReport report;
        // load_record works on a copy and throws before anything is assigned, so a failure leaves `seq` as it was.
        seq = load_record(seq, r, mode, &report);
        return report;
      },
      m.module);
}

// The layer module's params (ember_module_layer) live in tensor handles, which optimizers and loads update; before
// each forward the typed layers take those exact tensors (same graph leaves, so gradients reach the handles).
template <class B>
void set_param_values(ModuleState& m, const std::vector<DynTensor>& values) {
  std::unique_lock lock(m.mu);
  visit_backend<B>(
      [&](auto& seq) {
        std::size_t i = 0;
        // Validate every value first: a mismatch leaves the layers as they were.
        visit_params(seq, [&](const std::string& path, const auto& p) {
          using T = typename std::decay_t<decltype(p)>::Value;
          if (i >= values.size())
            throw ArgumentError(fmt::format("module: {} values for more params", values.size()));
          const BackendTensor<B>& v = as_backend<B>(values[i++], "module");
          if (v.kind() != static_cast<Kind>(kind_index<typename T::Kind>()))
            throw KindError(fmt::format("param '{}' holds a {} tensor, the layer needs {}", path,
                                        dtype_name(tensor_dtype(v)), param_kind_name(p.kind)));
          if (!(tensor_shape(v) == p.shape()))
            throw ShapeError(fmt::format("param '{}' has shape {}, the layer needs {}", path,
                                         tensor_shape(v).to_string(), p.shape().to_string()));
        });
        if (i != values.size())
          throw ArgumentError(fmt::format("module: {} values for {} params", values.size(), i));
        i = 0;
        seq = map_params(std::move(seq), [&](const std::string&, auto p) {
          using P = decltype(p);
          using T = typename P::Value;
          using K = typename T::Kind;
          const BackendTensor<B>& v = as_backend<B>(values[i++], "module");
          const auto& prim = std::get<kind_index<K>()>(v.prim);
          bool tracked = false;
          if constexpr (std::is_same_v<K, Float> && detail::HasGradTracking<B>) tracked = B::float_is_require_grad(prim);
          return P::initialized(p.id(), T(prim), tracked, p.role());
        });
      },
      m.module);
}

}  // namespace ops

EMBER_RUNTIME_SEQUENTIAL_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
