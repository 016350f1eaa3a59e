#pragma once
// The language model of `ember train --model transformer`: a small decoder-only (GPT-style) character transformer.
//
//   ids [N, T] -> tok_emb + pos_emb -> blocks (pre-norm: x += attn(ln1(x)); x += mlp(ln2(x))) -> ln_f -> head
//   attention: qkv = Linear(d, 3d), split into heads [N, H, T, d/H], causal scaled-dot-product attention, heads
//              merged (ember::nn::packed_scaled_dot_product_attention does the three at once), proj = Linear(d, d)
//   mlp:       fc1 = Linear(d, 4d), GELU (exact), fc2 = Linear(4d, d)
//
// The member names are those of the PyTorch twin (tests/reference/gen_lm_fixture.py), so records/torch_names maps a
// PyTorch state_dict onto this module with no extra table (Linear weights transposed, LayerNorm weight/bias ->
// gamma/beta, `blocks` as nn.ModuleList).
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/nn/functional/packed_attention.hpp"
#include "engine/nn/nn.hpp"

namespace ember::tools {

struct LmConfig {
  int64_t vocab_size = 0;
  int64_t context = 64;  // the longest sequence (positional embedding rows)
  int64_t d_model = 128;
  int64_t num_heads = 4;
  int64_t num_layers = 2;

  void validate() const {
    if (vocab_size < 1 || context < 1 || d_model < 1 || num_heads < 1 || num_layers < 1)
      throw ArgumentError(fmt::format("transformer: vocab {}, context {}, d_model {}, heads {}, layers {} must all be >= 1",
                                      vocab_size, context, d_model, num_heads, num_layers));
    if (d_model % num_heads != 0)
      throw ArgumentError(fmt::format("transformer: d_model {} is not a multiple of the {} heads", d_model, num_heads));
  }
};

// A Linear over every token: [N, T, in] is folded to [N * T, in] so that forward and backward are one GEMM each
// (a rank-3 input would take the batched matmul, whose weight gradient is N products summed afterwards).
template <Backend B>
Tensor<B, 3> per_token(const nn::Linear<B>& l, const Tensor<B, 3>& x) {
  const int64_t n = x.dim(0), t = x.dim(1);
  return l.forward(x.reshape(std::array<int64_t, 2>{n * t, x.dim(2)})).reshape(std::array<int64_t, 3>{n, t, l.d_output()});
}

template <Backend B>
struct LmBlock {
  BOOST_HANA_DEFINE_STRUCT(LmBlock, (nn::LayerNorm<B>, ln1), (nn::Linear<B>, qkv), (nn::Linear<B>, proj),
                           (nn::LayerNorm<B>, ln2), (nn::Linear<B>, fc1), (nn::Linear<B>, fc2), (int64_t, num_heads));

  static LmBlock init(const LmConfig& c, const typename B::Device& dev) {
    LmBlock b;
    b.ln1 = nn::LayerNormConfig{c.d_model}.init<B>(dev);
    b.qkv = nn::LinearConfig{c.d_model, 3 * c.d_model}.init<B>(dev);
    b.proj = nn::LinearConfig{c.d_model, c.d_model}.init<B>(dev);
    b.ln2 = nn::LayerNormConfig{c.d_model}.init<B>(dev);
    b.fc1 = nn::LinearConfig{c.d_model, 4 * c.d_model}.init<B>(dev);
    b.fc2 = nn::LinearConfig{4 * c.d_model, c.d_model}.init<B>(dev);
    b.num_heads = c.num_heads;
    return b;
  }

  // x [N, T, d] -> [N, T, d]: each position attends to itself and the positions before it. One GEMM makes qkv
  // [N, T, 3d]; the attention reads its heads in place where the backend can (optional_ops.hpp HasPackedSdpa: no
  // permute copies of q, k, v or of the output, and the gradient lands in qkv's layout for one backward GEMM).
  Tensor<B, 3> attention(const Tensor<B, 3>& x) const {
    const auto y = nn::packed_scaled_dot_product_attention(per_token(qkv, x), num_heads, /*is_causal=*/true);
    return per_token(proj, y);
  }

  Tensor<B, 3> forward(const Tensor<B, 3>& x) const {
    const auto a = x.add(attention(ln1.forward(x)));
    return a.add(per_token(fc2, per_token(fc1, ln2.forward(a)).gelu()));
  }
};

template <Backend B>
struct CharTransformer {
  BOOST_HANA_DEFINE_STRUCT(CharTransformer, (nn::Embedding<B>, tok_emb), (nn::Embedding<B>, pos_emb),
                           (std::vector<LmBlock<B>>, blocks), (nn::LayerNorm<B>, ln_f), (nn::Linear<B>, head));

  static CharTransformer init(const LmConfig& c, const typename B::Device& dev = {}) {
    c.validate();
    CharTransformer m;
    // N(0, 0.02) embeddings as GPT-2 does: N(0, 1) rows would dwarf the residual stream of a small model.
    m.tok_emb = nn::EmbeddingConfig{c.vocab_size, c.d_model, nn::init::Normal{0.0, 0.02}}.init<B>(dev);
    m.pos_emb = nn::EmbeddingConfig{c.context, c.d_model, nn::init::Normal{0.0, 0.02}}.init<B>(dev);
    for (int64_t i = 0; i < c.num_layers; ++i) m.blocks.push_back(LmBlock<B>::init(c, dev));
    m.ln_f = nn::LayerNormConfig{c.d_model}.init<B>(dev);
    m.head = nn::LinearConfig{c.d_model, c.vocab_size}.init<B>(dev);
    return m;
  }

  int64_t context() const { return pos_emb.n_embedding(); }
  int64_t vocab_size() const { return tok_emb.n_embedding(); }

  // ids [N, T] (T <= context) -> logits [N, T, vocab].
  Tensor<B, 3> forward(const Tensor<B, 2, Int>& ids) const {
    const int64_t t = ids.dim(1);
    if (t < 1 || t > context())
      throw ShapeError(fmt::format("transformer: sequence length {} is not in 1..{} (the context)", t, context()));
    const auto pos = Tensor<B, 1, Int>::arange(0, t, ids.device()).reshape(std::array<int64_t, 2>{1, t});
    auto x = tok_emb.forward(ids).add(pos_emb.forward(pos));
    for (const auto& b : blocks) x = b.forward(x);
    return per_token(head, ln_f.forward(x));
  }
};

}  // namespace ember::tools
