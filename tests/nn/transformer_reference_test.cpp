// MultiheadAttention, TransformerEncoder (post- and pre-norm) and TransformerDecoderLayer against PyTorch 1.13
// (tests/reference/transformer_reference.hpp, written by gen_transformer_reference.py): forward values and the
// gradients of every input and param, on Autodiff<Cpu<float>> (1e-4) and Autodiff<Cpu<double>> (1e-5). The torch
// state_dicts are loaded through records/torch_names, so the PyTorch name map of these modules is checked too.
#include "tests/reference/transformer_reference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "engine/ember.hpp"
#include "engine/nn/transformer_decoder.hpp"
#include "records/torch_names.hpp"

namespace ember::test {
namespace {

using namespace ember::nn;
using tfref::RefTensor;

template <std::size_t N>
const RefTensor& find(const RefTensor (&table)[N], const std::string& name) {
  for (const auto& t : table)
    if (name == t.name) return t;
  throw std::runtime_error("no reference tensor " + name);
}
Shape ref_shape(const RefTensor& t) { return Shape(std::vector<int64_t>(t.shape.begin(), t.shape.begin() + t.rank)); }
std::vector<double> ref_values(const RefTensor& t) { return {t.data, t.data + t.size}; }

template <class B, std::size_t D>
Tensor<B, D> input(const RefTensor& t, bool track = false) {
  auto x = Tensor<B, D>::from_data(TensorData::from_vec<double>(ref_values(t), ref_shape(t)));
  return track ? x.require_grad() : x;
}
template <class B, std::size_t D>
Tensor<B, D, Bool> bool_input(const RefTensor& t) {
  return input<B, D>(t).gt(0.5);
}

// The torch state_dict as a Record under PyTorch's keys, loaded strictly into m through the name map.
template <class M, std::size_t N>
M load_torch(M m, const RefTensor (&state)[N]) {
  Record rec;
  for (const auto& t : state)
    rec.params[t.name] = ParamRecord{0, ParamKind::Float, ParamRole::Trainable,
                                     TensorData::from_vec<double>(ref_values(t), ref_shape(t))};
  return load_torch_state_dict(std::move(m), rec);
}

template <class B>
constexpr double tol() {
  return std::is_same_v<typename B::FloatElem, double> ? 1e-5 : 1e-4;
}

// |got - want| <= tol * max(1, |want|) elementwise, with the shape.
::testing::AssertionResult near(const std::string& what, const Shape& got_shape, const std::vector<double>& got,
                                const RefTensor& want, double tol) {
  if (!(got_shape == ref_shape(want)))
    return ::testing::AssertionFailure() << what << ": shape " << got_shape.to_string() << " != "
                                         << ref_shape(want).to_string();
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double w = want.data[i];
    if (!(std::abs(got[i] - w) <= tol * std::max(1.0, std::abs(w))))
      return ::testing::AssertionFailure() << what << "[" << i << "] = " << got[i] << ", torch " << w;
  }
  return ::testing::AssertionSuccess();
}
template <class T>
::testing::AssertionResult near(const std::string& what, const T& got, const RefTensor& want, double tol) {
  return near(what, got.shape(), got.into_data().template to_vec<double>(), want, tol);
}

// Every gradient of the case: inputs by name, params by their PyTorch key (transposed back for Linear weights).
template <class B, class M, class G, std::size_t NG>
void expect_grads(const M& m, const G& grads, const std::vector<std::pair<std::string, Tensor<B, 3>>>& inputs,
                  const RefTensor (&want)[NG]) {
  const auto map = torch_name_map(m);
  for (const auto& w : want) {
    bool found = false;
    for (const auto& [name, x] : inputs)
      if (name == w.name) {
        found = true;
        const auto g = x.grad(grads);
        ASSERT_TRUE(g) << name;
        EXPECT_TRUE(near("grad " + name, *g, w, tol<B>()));
      }
    for (const auto& n : map.names) {
      if (n.torch != w.name) continue;
      visit_params(m, [&](const std::string& path, const auto& p) {
        if (path != n.ember) return;
        found = true;
        const auto g = p.val().grad(grads);
        ASSERT_TRUE(g) << path;
        constexpr bool matrix = std::decay_t<decltype(p)>::Value::rank == 2;
        if constexpr (matrix) {
          EXPECT_TRUE(near("grad " + path, n.transpose ? g->transpose() : *g, w, tol<B>()));
        } else {
          EXPECT_TRUE(near("grad " + path, *g, w, tol<B>()));
        }
      });
    }
    EXPECT_TRUE(found) << "no Ember counterpart of torch gradient " << w.name;
  }
}

template <class B, std::size_t D, std::size_t N>
Tensor<B, 1> weighted(const Tensor<B, D>& out, const RefTensor (&loss_weights)[N], const char* which) {
  return out.mul(input<B, D>(find(loss_weights, which))).sum();
}

template <class B>
class TransformerReference : public ::testing::Test {};
using Backends = ::testing::Types<Autodiff<Cpu<float>>, Autodiff<Cpu<double>>>;
TYPED_TEST_SUITE(TransformerReference, Backends);

TYPED_TEST(TransformerReference, MhaBoolKeyPaddingFloatAttnMaskAveragedWeights) {
  using B = TypeParam;
  namespace R = tfref;
  auto m = load_torch(MultiheadAttentionConfig{8, 2}.init<B>(), R::mha_masks_state);
  const auto q = input<B, 3>(find(R::mha_masks_inputs, "query"), true);
  const auto k = input<B, 3>(find(R::mha_masks_inputs, "key"), true);
  const auto v = input<B, 3>(find(R::mha_masks_inputs, "value"), true);
  MhaInputs<B> in;
  in.key_padding_mask = bool_input<B, 2>(find(R::mha_masks_inputs, "key_padding_mask"));
  in.attn_mask = AttentionMask<B, 2>(input<B, 2>(find(R::mha_masks_inputs, "attn_mask")));
  const auto r = m.forward(q, k, v, in);
  ASSERT_TRUE(r.weights);
  EXPECT_FALSE(r.head_weights);
  EXPECT_TRUE(near("out", r.output, find(R::mha_masks_outputs, "out"), tol<B>()));
  EXPECT_TRUE(near("weights", *r.weights, find(R::mha_masks_outputs, "weights"), tol<B>()));
  const auto grads = weighted(r.output, R::mha_masks_loss_weights, "out")
                         .add(weighted(*r.weights, R::mha_masks_loss_weights, "weights"))
                         .backward();
  expect_grads<B>(m, grads, {{"query", q}, {"key", k}, {"value", v}}, R::mha_masks_grads);
}

TYPED_TEST(TransformerReference, MhaBatchFirstBool3dAttnMaskWithoutWeights) {
  using B = TypeParam;
  namespace R = tfref;
  MultiheadAttentionConfig cfg{8, 2};
  cfg.batch_first = true;
  auto m = load_torch(cfg.init<B>(), R::mha_bool3d_state);
  const auto q = input<B, 3>(find(R::mha_bool3d_inputs, "query"), true);
  const auto k = input<B, 3>(find(R::mha_bool3d_inputs, "key"), true);
  const auto v = input<B, 3>(find(R::mha_bool3d_inputs, "value"), true);
  MhaInputs<B> in;
  in.key_padding_mask = bool_input<B, 2>(find(R::mha_bool3d_inputs, "key_padding_mask"));
  in.attn_mask = AttentionMask<B, 3>(bool_input<B, 3>(find(R::mha_bool3d_inputs, "attn_mask")));
  in.need_weights = false;
  const auto r = m.forward(q, k, v, in);
  EXPECT_FALSE(r.weights);
  EXPECT_FALSE(r.head_weights);
  EXPECT_TRUE(near("out", r.output, find(R::mha_bool3d_outputs, "out"), tol<B>()));
  const auto grads = weighted(r.output, R::mha_bool3d_loss_weights, "out").backward();
  expect_grads<B>(m, grads, {{"query", q}, {"key", k}, {"value", v}}, R::mha_bool3d_grads);
}

TYPED_TEST(TransformerReference, MhaKdimVdimFloatKeyPaddingPerHeadWeights) {
  using B = TypeParam;
  namespace R = tfref;
  MultiheadAttentionConfig cfg{8, 2};
  cfg.kdim = 5;
  cfg.vdim = 6;
  auto m = load_torch(cfg.init<B>(), R::mha_kvdim_state);
  EXPECT_FALSE(m.in_proj_weight);
  EXPECT_EQ(m.kdim(), 5);
  EXPECT_EQ(m.vdim(), 6);
  const auto q = input<B, 3>(find(R::mha_kvdim_inputs, "query"), true);
  const auto k = input<B, 3>(find(R::mha_kvdim_inputs, "key"), true);
  const auto v = input<B, 3>(find(R::mha_kvdim_inputs, "value"), true);
  MhaInputs<B> in;
  in.key_padding_mask = input<B, 2>(find(R::mha_kvdim_inputs, "key_padding_mask"));
  in.average_attn_weights = false;
  const auto r = m.forward(q, k, v, in);
  EXPECT_FALSE(r.weights);
  ASSERT_TRUE(r.head_weights);
  EXPECT_TRUE(near("out", r.output, find(R::mha_kvdim_outputs, "out"), tol<B>()));
  EXPECT_TRUE(near("weights", *r.head_weights, find(R::mha_kvdim_outputs, "weights"), tol<B>()));
  const auto grads = weighted(r.output, R::mha_kvdim_loss_weights, "out")
                         .add(weighted(*r.head_weights, R::mha_kvdim_loss_weights, "weights"))
                         .backward();
  expect_grads<B>(m, grads, {{"query", q}, {"key", k}, {"value", v}}, R::mha_kvdim_grads);
}

template <class B, std::size_t NI, std::size_t NS, std::size_t NO, std::size_t NW, std::size_t NG>
void check_encoder(TransformerEncoderConfig cfg, const RefTensor (&inputs)[NI], const RefTensor (&state)[NS],
                   const RefTensor (&outputs)[NO], const RefTensor (&loss_weights)[NW], const RefTensor (&want)[NG]) {
  auto m = load_torch(cfg.init<B>(), state);
  const auto src = input<B, 3>(find(inputs, "src"), true);
  EncoderMasks<B> masks;
  masks.mask = AttentionMask<B, 2>(input<B, 2>(find(inputs, "mask")));
  masks.src_key_padding_mask = bool_input<B, 2>(find(inputs, "src_key_padding_mask"));
  const auto out = m.forward(src, masks);
  EXPECT_TRUE(near("out", out, find(outputs, "out"), tol<B>()));
  const auto grads = weighted(out, loss_weights, "out").backward();
  expect_grads<B>(m, grads, {{"src", src}}, want);
}

TYPED_TEST(TransformerReference, TwoLayerPostNormEncoderRelu) {
  namespace R = tfref;
  TransformerEncoderConfig cfg{{8, 2, 16, 0.0, TransformerActivation::Relu}, 2, false};
  check_encoder<TypeParam>(cfg, R::enc_post_inputs, R::enc_post_state, R::enc_post_outputs,
                           R::enc_post_loss_weights, R::enc_post_grads);
}

TYPED_TEST(TransformerReference, TwoLayerPreNormEncoderGeluBatchFirstFinalNorm) {
  namespace R = tfref;
  TransformerEncoderLayerConfig layer{8, 2, 16, 0.0, TransformerActivation::Gelu};
  layer.batch_first = true;
  layer.norm_first = true;
  check_encoder<TypeParam>({layer, 2, true}, R::enc_pre_inputs, R::enc_pre_state, R::enc_pre_outputs,
                           R::enc_pre_loss_weights, R::enc_pre_grads);
}

TYPED_TEST(TransformerReference, DecoderLayerPostNormCausalBoolMask) {
  using B = TypeParam;
  namespace R = tfref;
  auto m = load_torch(TransformerDecoderLayerConfig{8, 2, 16, 0.0}.init<B>(), R::dec_layer_state);
  const auto tgt = input<B, 3>(find(R::dec_layer_inputs, "tgt"), true);
  const auto memory = input<B, 3>(find(R::dec_layer_inputs, "memory"), true);
  DecoderMasks<B> masks;
  masks.tgt_mask = AttentionMask<B, 2>(bool_input<B, 2>(find(R::dec_layer_inputs, "tgt_mask")));
  masks.memory_key_padding_mask = bool_input<B, 2>(find(R::dec_layer_inputs, "memory_key_padding_mask"));
  const auto out = m.forward(tgt, memory, masks);
  EXPECT_TRUE(near("out", out, find(R::dec_layer_outputs, "out"), tol<B>()));
  const auto grads = weighted(out, R::dec_layer_loss_weights, "out").backward();
  expect_grads<B>(m, grads, {{"tgt", tgt}, {"memory", memory}}, R::dec_layer_grads);
}

}  // namespace
}  // namespace ember::test
