#pragma once
// TransformerDecoderLayer and TransformerDecoder with PyTorch 1.13's semantics and state_dict names
// (self_attn.*, multihead_attn.*, linear1, linear2, norm1..3; the stack's layers.<i>.* and norm).
//
//   post-norm:  x = norm1(x + sa(x));  x = norm2(x + mha(x, memory));  x = norm3(x + ff(x))
//   pre-norm:   x = x + sa(norm1(x));  x = x + mha(norm2(x), memory);  x = x + ff(norm3(x))
//
// As with the encoder (transformer_encoder.hpp), each layer of the stack is initialized independently.
#include <optional>
#include <vector>

#include "engine/nn/transformer_encoder.hpp"

namespace ember::nn {

template <Backend B>
struct DecoderMasks {
  std::optional<AttnMask<B>> tgt_mask;                         // [T, T] or [N * H, T, T]
  std::optional<AttnMask<B>> memory_mask;                      // [T, S] or [N * H, T, S]
  std::optional<AttentionMask<B, 2>> tgt_key_padding_mask;     // [N, T]
  std::optional<AttentionMask<B, 2>> memory_key_padding_mask;  // [N, S]
};

template <Backend B>
struct TransformerDecoderLayer {
  BOOST_HANA_DEFINE_STRUCT(TransformerDecoderLayer, (MultiheadAttention<B>, self_attn),
                           (MultiheadAttention<B>, multihead_attn), (Linear<B>, linear1), (Dropout, dropout),
                           (Linear<B>, linear2), (LayerNorm<B>, norm1), (LayerNorm<B>, norm2), (LayerNorm<B>, norm3),
                           (Dropout, dropout1), (Dropout, dropout2), (Dropout, dropout3), (bool, norm_first),
                           (TransformerActivation, activation));

  // tgt [T, N, E], memory [S, N, E] (batch_first: batch leading) -> [T, N, E].
  Tensor<B, 3> forward(const Tensor<B, 3>& tgt, const Tensor<B, 3>& memory, const DecoderMasks<B>& m = {}) const {
    auto x = tgt;
    if (norm_first) {
      x = x.add(sa_block(norm1.forward(x), m));
      x = x.add(mha_block(norm2.forward(x), memory, m));
      x = x.add(ff_block(norm3.forward(x)));
    } else {
      x = norm1.forward(x.add(sa_block(x, m)));
      x = norm2.forward(x.add(mha_block(x, memory, m)));
      x = norm3.forward(x.add(ff_block(x)));
    }
    return x;
  }

 private:
  Tensor<B, 3> sa_block(const Tensor<B, 3>& x, const DecoderMasks<B>& m) const {
    MhaInputs<B> in;
    in.attn_mask = m.tgt_mask;
    in.key_padding_mask = m.tgt_key_padding_mask;
    in.need_weights = false;
    return dropout1.forward(self_attn.forward(x, x, x, in).output);
  }
  Tensor<B, 3> mha_block(const Tensor<B, 3>& x, const Tensor<B, 3>& mem, const DecoderMasks<B>& m) const {
    MhaInputs<B> in;
    in.attn_mask = m.memory_mask;
    in.key_padding_mask = m.memory_key_padding_mask;
    in.need_weights = false;
    return dropout2.forward(multihead_attn.forward(x, mem, mem, in).output);
  }
  Tensor<B, 3> ff_block(const Tensor<B, 3>& x) const {
    return dropout3.forward(
        linear2.forward(dropout.forward(detail::transformer_activation(activation, linear1.forward(x)))));
  }
};

struct TransformerDecoderLayerConfig {
  int64_t d_model = 0, nhead = 0, dim_feedforward = 2048;
  double dropout = 0.1;
  TransformerActivation activation = TransformerActivation::Relu;
  double layer_norm_eps = 1e-5;
  bool batch_first = false, norm_first = false;

  template <Backend B>
  TransformerDecoderLayer<B> init(const typename B::Device& device = {}) const {
    detail::check_transformer_config("TransformerDecoderLayerConfig", d_model, nhead, dim_feedforward, dropout,
                                     layer_norm_eps);
    TransformerDecoderLayer<B> m;
    const MultiheadAttentionConfig attn{d_model, nhead, dropout, true, 0, 0, batch_first};
    m.self_attn = attn.init<B>(device);
    m.multihead_attn = attn.init<B>(device);
    m.linear1 = LinearConfig{d_model, dim_feedforward}.init<B>(device);
    m.linear2 = LinearConfig{dim_feedforward, d_model}.init<B>(device);
    m.norm1 = LayerNormConfig{d_model, layer_norm_eps}.init<B>(device);
    m.norm2 = LayerNormConfig{d_model, layer_norm_eps}.init<B>(device);
    m.norm3 = LayerNormConfig{d_model, layer_norm_eps}.init<B>(device);
    m.dropout = DropoutConfig{dropout}.init();
    m.dropout1 = DropoutConfig{dropout}.init();
    m.dropout2 = DropoutConfig{dropout}.init();
    m.dropout3 = DropoutConfig{dropout}.init();
    m.norm_first = norm_first;
    m.activation = activation;
    return m;
  }
};

template <Backend B>
struct TransformerDecoder {
  BOOST_HANA_DEFINE_STRUCT(TransformerDecoder, (std::vector<TransformerDecoderLayer<B>>, layers),
                           (std::optional<LayerNorm<B>>, norm));

  int64_t num_layers() const { return static_cast<int64_t>(layers.size()); }

  Tensor<B, 3> forward(const Tensor<B, 3>& tgt, const Tensor<B, 3>& memory, const DecoderMasks<B>& m = {}) const {
    auto x = tgt;
    for (const auto& l : layers) x = l.forward(x, memory, m);
    return norm ? norm->forward(x) : x;
  }
};

struct TransformerDecoderConfig {
  TransformerDecoderLayerConfig layer;
  int64_t num_layers = 1;
  bool final_norm = false;

  template <Backend B>
  TransformerDecoder<B> init(const typename B::Device& device = {}) const {
    detail::require_positive("TransformerDecoderConfig", "num_layers", num_layers);
    TransformerDecoder<B> m;
    for (int64_t i = 0; i < num_layers; ++i) m.layers.push_back(layer.init<B>(device));
    if (final_norm) m.norm = LayerNormConfig{layer.d_model, layer.layer_norm_eps}.init<B>(device);
    return m;
  }
};

}  // namespace ember::nn
