#pragma once
// MultiheadAttention with PyTorch 1.13's semantics, arguments and state_dict names.
//
//   out = out_proj(concat_h softmax(q_h k_h^T / sqrt(head_dim) + bias) v_h),   q = query W_q^T + b_q, ...
//
// Params are stored in PyTorch's layout and under PyTorch's names, so a torch state_dict maps through
// records/torch_names unchanged: in_proj_weight [3E, E] (rows q | k | v) and in_proj_bias [3E] when kdim == vdim ==
// embed_dim; otherwise q_proj_weight [E, E], k_proj_weight [E, kdim], v_proj_weight [E, vdim] (in_proj_weight
// absent) with in_proj_bias still [3E], as torch does; out_proj is an nn::Linear (out_proj.weight is transposed
// by the name map like every Linear's). add_bias_kv / add_zero_attn are not supported.
//
// Inputs are [L, N, E] (batch_first: [N, L, E]); key/value [S, N, kdim/vdim]. The masks (attention_mask.hpp) are
// merged into one additive bias. Without weights the heads go through ember::nn::scaled_dot_product_attention
// (fused where the backend has the kernel); need_weights (and attention dropout in training) takes the composed
// path, which materializes the [N, H, L, S] weights: returned averaged over heads ([N, L, S], torch's
// average_attn_weights=True) or per head ([N, H, L, S]). As torch's, the returned weights are those after dropout.
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "engine/module/traversal.hpp"
#include "engine/nn/attention_mask.hpp"
#include "engine/nn/dropout.hpp"
#include "engine/nn/functional/scaled_dot_product_attention.hpp"
#include "engine/nn/init.hpp"
#include "engine/nn/linear.hpp"
#include "engine/nn/shape_util.hpp"

namespace ember::nn {

template <Backend B>
struct MhaInputs {
  std::optional<AttentionMask<B, 2>> key_padding_mask;  // [N, S]: bool true = ignore that key, or float (added)
  bool need_weights = true;                             // torch's default
  std::optional<AttnMask<B>> attn_mask;                 // [L, S] or [N * H, L, S], bool or float
  bool average_attn_weights = true;
};

template <Backend B>
struct MhaOutput {
  Tensor<B, 3> output;                       // [L, N, E] (batch_first: [N, L, E])
  std::optional<Tensor<B, 3>> weights;       // need_weights && average_attn_weights: [N, L, S]
  std::optional<Tensor<B, 4>> head_weights;  // need_weights && !average_attn_weights: [N, H, L, S]
};

namespace detail {

// softmax(q k^T * scale + bias) (dropout) v on [N, H, L, hd] heads with the weights kept, for need_weights.
template <Backend B>
std::pair<Tensor<B, 4>, Tensor<B, 4>> attention_with_weights(const Tensor<B, 4>& q, const Tensor<B, 4>& k,
                                                             const Tensor<B, 4>& v,
                                                             const std::optional<Tensor<B, 4>>& bias, double scale,
                                                             const Dropout& dropout) {
  auto scores = q.mul_scalar(scale).matmul(k.swap_dims(2, 3));  // torch scales q first
  if (bias) scores = scores.add(*bias);
  const auto weights = dropout.forward(scores.softmax(3));
  return {weights.matmul(v), weights};
}

}  // namespace detail

template <Backend B>
struct MultiheadAttention {
  BOOST_HANA_DEFINE_STRUCT(MultiheadAttention, (std::optional<Param<Tensor<B, 2>>>, in_proj_weight),
                           (std::optional<Param<Tensor<B, 2>>>, q_proj_weight),
                           (std::optional<Param<Tensor<B, 2>>>, k_proj_weight),
                           (std::optional<Param<Tensor<B, 2>>>, v_proj_weight),
                           (std::optional<Param<Tensor<B, 1>>>, in_proj_bias), (Linear<B>, out_proj),
                           (int64_t, num_heads), (bool, batch_first), (Dropout, dropout));

  int64_t embed_dim() const { return out_proj.d_output(); }
  int64_t head_dim() const { return embed_dim() / num_heads; }
  int64_t kdim() const { return in_proj_weight ? embed_dim() : k_proj_weight->shape()[1]; }
  int64_t vdim() const { return in_proj_weight ? embed_dim() : v_proj_weight->shape()[1]; }

  // query [L, N, E], key [S, N, kdim], value [S, N, vdim] (batch_first: batch leading) -> MhaOutput.
  MhaOutput<B> forward(const Tensor<B, 3>& query, const Tensor<B, 3>& key, const Tensor<B, 3>& value,
                       const MhaInputs<B>& in = {}) const {
    // Work batch-first: [N, L, E].
    const auto q_in = batch_first ? query : query.swap_dims(0, 1);
    const auto k_in = batch_first ? key : key.swap_dims(0, 1);
    const auto v_in = batch_first ? value : value.swap_dims(0, 1);
    const int64_t E = embed_dim(), H = num_heads, hd = head_dim();
    check_inputs(q_in, k_in, v_in);
    const int64_t N = q_in.dim(0), L = q_in.dim(1), S = k_in.dim(1);

    const auto q = split_heads(project(q_in, 0, kQuery), N, L);
    const auto k = split_heads(project(k_in, E, kKey), N, S);
    const auto v = split_heads(project(v_in, 2 * E, kValue), N, S);
    const auto bias = detail::attention_bias<B>(in.attn_mask, in.key_padding_mask, N, H, L, S);
    const double scale = 1.0 / std::sqrt(static_cast<double>(hd));

    std::optional<Tensor<B, 4>> weights;
    const bool dropout_active = dropout.mode.training && dropout.prob > 0.0;
    const auto heads = [&] {
      if (!in.need_weights && !dropout_active) return scaled_dot_product_attention(q, k, v, bias, false, scale);
      auto [o, w] = detail::attention_with_weights(q, k, v, bias, scale, dropout);
      weights = std::move(w);
      return o;
    }();
    // [N, H, L, hd] -> [N, L, E]
    const auto y = out_proj.forward(heads.swap_dims(1, 2).template reshape<3>({N, L, E}));
    MhaOutput<B> out{batch_first ? y : y.swap_dims(0, 1), std::nullopt, std::nullopt};
    if (in.need_weights) {
      if (in.average_attn_weights) out.weights = weights->mean_dim(1).template reshape<3>({N, L, S});
      else out.head_weights = weights;
    }
    return out;
  }

  // Self-attention shorthand: forward(x, x, x, in).
  MhaOutput<B> forward(const Tensor<B, 3>& x, const MhaInputs<B>& in = {}) const { return forward(x, x, x, in); }

 private:
  enum Which { kQuery, kKey, kValue };

  // x [N, T, d_in] -> x W^T + b with W the q/k/v rows (PyTorch layout [E, d_in]) and b in_proj_bias[offset:+E].
  Tensor<B, 3> project(const Tensor<B, 3>& x, int64_t offset, Which which) const {
    const int64_t E = embed_dim();
    Tensor<B, 2> w = in_proj_weight ? in_proj_weight->val().narrow(0, offset, E)
                     : which == kQuery ? q_proj_weight->val()
                     : which == kKey   ? k_proj_weight->val()
                                       : v_proj_weight->val();
    const int64_t d_in = w.dim(1);
    auto y = x.matmul(w.transpose().template reshape<3>({1, d_in, E}));
    if (in_proj_bias) y = y.add(in_proj_bias->val().narrow(0, offset, E).template reshape<3>({1, 1, E}));
    return y;
  }
  // [N, T, E] -> [N, H, T, hd]
  Tensor<B, 4> split_heads(const Tensor<B, 3>& x, int64_t N, int64_t T) const {
    return x.template reshape<4>({N, T, num_heads, head_dim()}).swap_dims(1, 2);
  }
  void check_inputs(const Tensor<B, 3>& q, const Tensor<B, 3>& k, const Tensor<B, 3>& v) const {
    const auto name = [&](const Tensor<B, 3>& t) { return t.shape().to_string(); };
    if (q.dim(2) != embed_dim() || k.dim(2) != kdim() || v.dim(2) != vdim())
      throw ShapeError(fmt::format("MultiheadAttention: query {}, key {}, value {} (batch-first view) must end in "
                                   "embed_dim {}, kdim {}, vdim {}",
                                   name(q), name(k), name(v), embed_dim(), kdim(), vdim()));
    if (k.dim(0) != q.dim(0) || v.dim(0) != q.dim(0) || k.dim(1) != v.dim(1))
      throw ShapeError(fmt::format("MultiheadAttention: query {}, key {}, value {} (batch-first view) disagree in batch "
                                   "size or key/value length",
                                   name(q), name(k), name(v)));
  }
};

struct MultiheadAttentionConfig {
  int64_t embed_dim = 0, num_heads = 0;
  double dropout = 0.0;
  bool bias = true;
  int64_t kdim = 0, vdim = 0;  // 0: embed_dim (torch's None)
  bool batch_first = false;

  // Initialization as torch's _reset_parameters: xavier_uniform_ on in_proj_weight (fans of the [3E, E] matrix) or
  // on each of q/k/v_proj_weight, zeros for in_proj_bias and out_proj.bias, out_proj.weight as a Linear's.
  template <Backend B>
  MultiheadAttention<B> init(const typename B::Device& device = {}) const {
    detail::require_positive("MultiheadAttentionConfig", "embed_dim", embed_dim);
    detail::require_positive("MultiheadAttentionConfig", "num_heads", num_heads);
    if (embed_dim % num_heads != 0)
      throw ArgumentError(fmt::format("MultiheadAttentionConfig: embed_dim {} is not divisible by num_heads {}",
                                      embed_dim, num_heads));
    if (kdim < 0 || vdim < 0) throw ArgumentError("MultiheadAttentionConfig: kdim and vdim must be >= 0");
    // Bounded before any size arithmetic (3 * embed_dim, the weights' element counts) can overflow; far above any
    // real model, as the RNNs' limit.
    constexpr int64_t kMaxDim = int64_t{1} << 24;
    if (embed_dim > kMaxDim || kdim > kMaxDim || vdim > kMaxDim)
      throw ArgumentError(fmt::format("MultiheadAttentionConfig: embed_dim {}, kdim {}, vdim {}: at most {}", embed_dim,
                                      kdim, vdim, kMaxDim));
    if (!(dropout >= 0.0 && dropout <= 1.0))
      throw ArgumentError(fmt::format("MultiheadAttentionConfig: dropout must be in [0, 1], got {:f}", dropout));
    const int64_t E = embed_dim, kd = kdim ? kdim : E, vd = vdim ? vdim : E;
    using W = Tensor<B, 2>;
    MultiheadAttention<B> m;
    if (kd == E && vd == E) {
      m.in_proj_weight = lazy_param<W>(init::XavierUniform{}, std::array<int64_t, 2>{3 * E, E}, Fans{E, 3 * E}, device);
    } else {
      m.q_proj_weight = lazy_param<W>(init::XavierUniform{}, std::array<int64_t, 2>{E, E}, Fans{E, E}, device);
      m.k_proj_weight = lazy_param<W>(init::XavierUniform{}, std::array<int64_t, 2>{E, kd}, Fans{kd, E}, device);
      m.v_proj_weight = lazy_param<W>(init::XavierUniform{}, std::array<int64_t, 2>{E, vd}, Fans{vd, E}, device);
    }
    if (bias) m.in_proj_bias = lazy_param<Tensor<B, 1>>(init::Zeros{}, std::array<int64_t, 1>{3 * E}, {}, device);
    m.out_proj = LinearConfig{E, E, bias}.init<B>(device);
    if (bias) m.out_proj.bias = lazy_param<Tensor<B, 1>>(init::Zeros{}, std::array<int64_t, 1>{E}, {}, device);
    m.num_heads = num_heads;
    m.batch_first = batch_first;
    m.dropout = DropoutConfig{dropout}.init();
    return m;
  }
};

}  // namespace ember::nn
