#pragma once
// TransformerEncoderLayer and TransformerEncoder with PyTorch 1.13's semantics and state_dict names
// (self_attn.*, linear1, linear2, norm1, norm2; the stack's layers.<i>.* and norm).
//
//   post-norm (norm_first = false):  x = norm1(x + sa(x));        x = norm2(x + ff(x))
//   pre-norm  (norm_first = true):   x = x + sa(norm1(x));        x = x + ff(norm2(x))
//   sa(x) = dropout1(self_attn(x, x, x, src_mask, src_key_padding_mask, need_weights=false))
//   ff(x) = dropout2(linear2(dropout(activation(linear1(x)))))
//
// Unlike torch, whose TransformerEncoder deep-copies one layer (every layer starts with the same weights), the
// config initializes each layer independently. torch's eval-mode "fast path" (nested tensors, padded outputs set to
// 0) is not reproduced: outputs are always those of the regular path.
#include <optional>
#include <vector>

#include "engine/nn/dropout.hpp"
#include "engine/nn/layer_norm.hpp"
#include "engine/nn/linear.hpp"
#include "engine/nn/multihead_attention.hpp"
#include "engine/nn/transformer_feed_forward.hpp"

namespace ember::nn {

template <Backend B>
struct EncoderMasks {
  std::optional<AttnMask<B>> mask;                          // src_mask: [S, S] or [N * H, S, S]
  std::optional<AttentionMask<B, 2>> src_key_padding_mask;  // [N, S]
};

template <Backend B>
struct TransformerEncoderLayer {
  BOOST_HANA_DEFINE_STRUCT(TransformerEncoderLayer, (MultiheadAttention<B>, self_attn), (Linear<B>, linear1),
                           (Dropout, dropout), (Linear<B>, linear2), (LayerNorm<B>, norm1), (LayerNorm<B>, norm2),
                           (Dropout, dropout1), (Dropout, dropout2), (bool, norm_first),
                           (TransformerActivation, activation));

  // src [S, N, E] (batch_first: [N, S, E]) -> same shape.
  Tensor<B, 3> forward(const Tensor<B, 3>& src, const EncoderMasks<B>& masks = {}) const {
    auto x = src;
    if (norm_first) {
      x = x.add(sa_block(norm1.forward(x), masks));
      x = x.add(ff_block(norm2.forward(x)));
    } else {
      x = norm1.forward(x.add(sa_block(x, masks)));
      x = norm2.forward(x.add(ff_block(x)));
    }
    return x;
  }

 private:
  Tensor<B, 3> sa_block(const Tensor<B, 3>& x, const EncoderMasks<B>& m) const {
    MhaInputs<B> in;
    in.attn_mask = m.mask;
    in.key_padding_mask = m.src_key_padding_mask;
    in.need_weights = false;
    return dropout1.forward(self_attn.forward(x, x, x, in).output);
  }
  Tensor<B, 3> ff_block(const Tensor<B, 3>& x) const {
    return dropout2.forward(
        linear2.forward(dropout.forward(detail::transformer_activation(activation, linear1.forward(x)))));
  }
};

struct TransformerEncoderLayerConfig {
  int64_t d_model = 0, nhead = 0, dim_feedforward = 2048;
  double dropout = 0.1;
  TransformerActivation activation = TransformerActivation::Relu;
  double layer_norm_eps = 1e-5;
  bool batch_first = false, norm_first = false;

  template <Backend B>
  TransformerEncoderLayer<B> init(const typename B::Device& device = {}) const {
    detail::check_transformer_config("TransformerEncoderLayerConfig", d_model, nhead, dim_feedforward, dropout,
                                     layer_norm_eps);
    TransformerEncoderLayer<B> m;
    m.self_attn = MultiheadAttentionConfig{d_model, nhead, dropout, true, 0, 0, batch_first}.init<B>(device);
    m.linear1 = LinearConfig{d_model, dim_feedforward}.init<B>(device);
    m.linear2 = LinearConfig{dim_feedforward, d_model}.init<B>(device);
    m.norm1 = LayerNormConfig{d_model, layer_norm_eps}.init<B>(device);
    m.norm2 = LayerNormConfig{d_model, layer_norm_eps}.init<B>(device);
    m.dropout = DropoutConfig{dropout}.init();
    m.dropout1 = DropoutConfig{dropout}.init();
    m.dropout2 = DropoutConfig{dropout}.init();
    m.norm_first = norm_first;
    m.activation = activation;
    return m;
  }
};

template <Backend B>
struct TransformerEncoder {
  BOOST_HANA_DEFINE_STRUCT(TransformerEncoder, (std::vector<TransformerEncoderLayer<B>>, layers),
                           (std::optional<LayerNorm<B>>, norm));

  int64_t num_layers() const { return static_cast<int64_t>(layers.size()); }

  Tensor<B, 3> forward(const Tensor<B, 3>& src, const EncoderMasks<B>& masks = {}) const {
    auto x = src;
    for (const auto& l : layers) x = l.forward(x, masks);
    return norm ? norm->forward(x) : x;
  }
};

struct TransformerEncoderConfig {
  TransformerEncoderLayerConfig layer;
  int64_t num_layers = 1;
  bool final_norm = false;  // torch's norm=LayerNorm(d_model, layer_norm_eps)

  template <Backend B>
  TransformerEncoder<B> init(const typename B::Device& device = {}) const {
    detail::require_positive("TransformerEncoderConfig", "num_layers", num_layers);
    TransformerEncoder<B> m;
    for (int64_t i = 0; i < num_layers; ++i) m.layers.push_back(layer.init<B>(device));
    if (final_norm) m.norm = LayerNormConfig{layer.d_model, layer.layer_norm_eps}.init<B>(device);
    return m;
  }
};

}  // namespace ember::nn
