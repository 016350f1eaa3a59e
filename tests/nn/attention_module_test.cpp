// nn::MultiheadAttention and the transformer layers as modules: PyTorch's param paths, the argument and mask shape
// errors, both attention paths agreeing, dropout only in training, and pre-norm / post-norm actually differing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "backends/cpu/cpu_backend.hpp"
#include "engine/ember.hpp"
#include "engine/module/module.hpp"
#include "engine/nn/transformer_decoder.hpp"

namespace ember::test {
namespace {

using namespace ember::nn;
using B = Cpu<double>;

std::vector<std::string> paths(const auto& m) {
  std::vector<std::string> out;
  for (const auto& p : ember::named_parameters(m)) out.push_back(p.path);
  return out;
}
double max_abs_diff(const auto& a, const auto& b) {
  const auto x = a.into_data().template to_vec<double>(), y = b.into_data().template to_vec<double>();
  double m = 0;
  for (std::size_t i = 0; i < x.size(); ++i) m = std::max(m, std::abs(x[i] - y[i]));
  return m;
}

TEST(MultiheadAttentionModule, ParamPathsAreTorchs) {
  EXPECT_EQ(paths(MultiheadAttentionConfig{8, 2}.init<B>()),
            (std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"}));
  MultiheadAttentionConfig kv{8, 2};
  kv.kdim = 3;
  kv.bias = false;
  EXPECT_EQ(paths(kv.init<B>()),
            (std::vector<std::string>{"q_proj_weight", "k_proj_weight", "v_proj_weight", "out_proj.weight"}));
  const auto enc = TransformerEncoderConfig{{4, 2, 8}, 2, true}.init<B>();
  const auto p = paths(enc);
  EXPECT_EQ(p.front(), "layers.0.self_attn.in_proj_weight");
  EXPECT_EQ(p.back(), "norm.beta");
  EXPECT_EQ(std::count_if(p.begin(), p.end(), [](const auto& s) { return s.rfind("layers.1.", 0) == 0; }), 12);
}

TEST(MultiheadAttentionModule, RejectsBadConfigsAndMaskShapes) {
  EXPECT_THROW(MultiheadAttentionConfig({6, 4}).init<B>(), ArgumentError);
  EXPECT_THROW(MultiheadAttentionConfig({8, 0}).init<B>(), ArgumentError);
  const auto m = MultiheadAttentionConfig{4, 2}.init<B>();
  const auto x = Tensor<B, 3>::random({3, 2, 4}, Normal{0, 1});  // L = S = 3, N = 2
  MhaInputs<B> in;
  in.attn_mask = AttentionMask<B, 2>(Tensor<B, 2>::zeros({3, 2}));
  EXPECT_THROW(m.forward(x, in), ShapeError);
  in.attn_mask = AttentionMask<B, 3>(Tensor<B, 3>::zeros({2, 3, 3}));  // needs N * H = 4
  EXPECT_THROW(m.forward(x, in), ShapeError);
  in.attn_mask.reset();
  in.key_padding_mask = AttentionMask<B, 2>(Tensor<B, 2, Bool>::from_values({false, true, false}, {1, 3}));
  EXPECT_THROW(m.forward(x, in), ShapeError);
  EXPECT_THROW(m.forward(x, x, Tensor<B, 3>::zeros({3, 2, 5})), ShapeError);  // vdim is 4
}

TEST(MultiheadAttentionModule, BothPathsAgreeAndBoolMaskEqualsMinusInfinity) {
  const auto m = MultiheadAttentionConfig{4, 2}.init<B>();
  const auto x = Tensor<B, 3>::random({3, 2, 4}, Normal{0, 1});
  const auto mask = Tensor<B, 2, Bool>::from_values({false, true, false, false, false, true, false, false, false}, {3, 3});
  MhaInputs<B> with_weights;
  with_weights.attn_mask = AttentionMask<B, 2>(mask);
  MhaInputs<B> sdpa = with_weights;
  sdpa.need_weights = false;
  const auto a = m.forward(x, with_weights), b = m.forward(x, sdpa);
  EXPECT_LT(max_abs_diff(a.output, b.output), 1e-12);
  // the masked positions get weight 0 (row 0 may not see key 1)
  EXPECT_EQ(a.weights->into_data().to_vec<double>()[1], 0.0);
  MhaInputs<B> as_float;
  as_float.attn_mask = AttentionMask<B, 2>(Tensor<B, 2>::zeros({3, 3}).mask_fill(mask, -INFINITY));
  EXPECT_LT(max_abs_diff(m.forward(x, as_float).output, a.output), 1e-12);
}

TEST(MultiheadAttentionModule, DropoutOnlyInTraining) {
  auto m = MultiheadAttentionConfig{4, 2, 0.5}.init<B>();
  const auto x = Tensor<B, 3>::random({5, 1, 4}, Normal{0, 1});
  EXPECT_GT(max_abs_diff(m.forward(x).weights.value(), m.forward(x).weights.value()), 0.0);
  m = ember::eval(m);
  EXPECT_EQ(max_abs_diff(m.forward(x).weights.value(), m.forward(x).weights.value()), 0.0);
}

TEST(TransformerLayers, PreAndPostNormDifferAndStacksChainLayers) {
  auto post = TransformerEncoderLayerConfig{4, 2, 8, 0.0}.init<B>();
  auto pre = post;
  pre.norm_first = true;
  const auto x = Tensor<B, 3>::random({3, 2, 4}, Normal{0, 1});
  EXPECT_GT(max_abs_diff(post.forward(x), pre.forward(x)), 1e-3);
  TransformerEncoder<B> stack;
  stack.layers = {post, pre};
  EXPECT_LT(max_abs_diff(stack.forward(x), pre.forward(post.forward(x))), 1e-12);
  TransformerDecoderLayerConfig dcfg{4, 2, 8, 0.0};
  dcfg.batch_first = true;
  const auto dec = TransformerDecoderConfig{dcfg, 2, true}.init<B>();
  const auto y = dec.forward(Tensor<B, 3>::random({2, 3, 4}, Normal{0, 1}), Tensor<B, 3>::random({2, 5, 4}, Normal{0, 1}));
  EXPECT_EQ(y.dims(), (std::array<int64_t, 3>{2, 3, 4}));
}

}  // namespace
}  // namespace ember::test
