// issue 13 (h-mha): MULTIHEAD_ATTENTION and TRANSFORMER_DECODER_LAYER modules from C. Params are set from PyTorch's
// state_dict of tests/reference/transformer_reference.hpp (PyTorch 1.13) by path (Linear weights transposed to
// Ember's [in, out]), then ember_module_forward_attention / _decoder must give torch's outputs and attention
// weights (f32: 1e-4); the misuse cases name what is wrong.
#include "tests/reference/transformer_reference.hpp"

#include <cmath>
#include <filesystem>
#include <string>

#include "records/safetensors.hpp"
#include "tests/c_api/capi_support.hpp"

namespace ember::capi_test {
namespace {

namespace tfref = ember::test::tfref;
using tfref::RefTensor;

template <std::size_t N>
const RefTensor& find(const RefTensor (&table)[N], const std::string& name) {
  for (const auto& t : table)
    if (name == t.name) return t;
  ADD_FAILURE() << "no reference tensor " << name;
  return table[0];
}
std::vector<int64_t> dims(const RefTensor& t) { return {t.shape.begin(), t.shape.begin() + t.rank}; }

Tensor ref_f32(const RefTensor& t, bool transpose = false) {
  std::vector<float> v(t.data, t.data + t.size);
  auto d = dims(t);
  if (transpose) {  // [out, in] -> [in, out]
    for (int64_t r = 0; r < d[0]; ++r)
      for (int64_t c = 0; c < d[1]; ++c) v[static_cast<std::size_t>(c * d[0] + r)] = static_cast<float>(t.data[r * d[1] + c]);
    std::swap(d[0], d[1]);
  }
  return f32(v, d);
}
Tensor ref_bool(const RefTensor& t) {
  std::vector<uint8_t> v;
  for (std::size_t i = 0; i < t.size; ++i) v.push_back(t.data[i] > 0.5 ? 1 : 0);
  const auto d = dims(t);
  ember_tensor* out = nullptr;
  EXPECT_EQ(ember_tensor_from_data(nullptr, EMBER_DTYPE_BOOL, v.data(), v.size(), d.data(), d.size(), &out), EMBER_OK)
      << ember_last_error();
  return Tensor(out);
}

// A torch state_dict key as the Ember layer module's param path, and whether the value is a Linear weight.
std::pair<std::string, bool> ember_path(std::string key) {
  const bool norm = key.rfind("norm", 0) == 0;
  const auto dot = key.rfind('.');
  const std::string leaf = key.substr(dot + 1), prefix = key.substr(0, dot);
  if (norm) return {prefix + (leaf == "weight" ? ".gamma" : ".beta"), false};
  const bool linear_weight = leaf == "weight";  // out_proj, linear1, linear2
  return {key, linear_weight};
}
template <std::size_t N>
void load(ember_module* m, const RefTensor (&state)[N]) {
  for (const auto& t : state) {
    const auto [path, transpose] = ember_path(t.name);
    const Tensor v = ref_f32(t, transpose);
    EMBER_EXPECT_OK(ember_module_state_set(m, path.c_str(), v.get()));
  }
}
::testing::AssertionResult near(const ember_tensor* got, const RefTensor& want) {
  if (shape_of(got) != dims(want)) return ::testing::AssertionFailure() << "shape differs from torch's";
  const auto v = floats(got);
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!(std::abs(v[i] - want.data[i]) <= 1e-4 * std::max(1.0, std::abs(want.data[i]))))
      return ::testing::AssertionFailure() << "[" << i << "] = " << v[i] << ", torch " << want.data[i];
  return ::testing::AssertionSuccess();
}

Module layer_module(const ember_layer_desc& d) {
  ember_module* m = nullptr;
  EXPECT_EQ(ember_module_layer(nullptr, &d, &m), EMBER_OK) << ember_last_error();
  return Module(m);
}

TEST(CApiAttention, MultiheadAttentionWithMasksGivesTorchsOutputAndWeights) {
  namespace R = tfref;
  ember_layer_desc d = layer(EMBER_LAYER_MULTIHEAD_ATTENTION);
  EXPECT_EQ(d.p, 0.0);  // torch's MultiheadAttention default, not Dropout's 0.5
  d.in_features = 8;
  d.num_heads = 2;
  const Module m = layer_module(d);
  load(m.get(), R::mha_masks_state);
  const Tensor q = ref_f32(find(R::mha_masks_inputs, "query")), k = ref_f32(find(R::mha_masks_inputs, "key")),
               v = ref_f32(find(R::mha_masks_inputs, "value"));
  const Tensor kpm = ref_bool(find(R::mha_masks_inputs, "key_padding_mask"));
  const Tensor am = ref_f32(find(R::mha_masks_inputs, "attn_mask"));
  ember_tensor *out = nullptr, *weights = nullptr;
  EMBER_EXPECT_OK(ember_module_forward_attention(m.get(), q.get(), k.get(), v.get(), kpm.get(), am.get(), 1, 1,
                                                 EMBER_MODE_TRAIN, &out, &weights));
  const Tensor o(out), w(weights);
  EXPECT_TRUE(near(o.get(), find(R::mha_masks_outputs, "out")));
  EXPECT_TRUE(near(w.get(), find(R::mha_masks_outputs, "weights")));
  // without weights: the SDPA path, the same output, *weights NULL
  ember_tensor* no_weights = reinterpret_cast<ember_tensor*>(uintptr_t{1});
  EMBER_EXPECT_OK(ember_module_forward_attention(m.get(), q.get(), k.get(), v.get(), kpm.get(), am.get(), 0, 1,
                                                 EMBER_MODE_EVAL, &out, &no_weights));
  const Tensor o2(out);
  EXPECT_TRUE(near(o2.get(), find(R::mha_masks_outputs, "out")));
  EXPECT_EQ(no_weights, nullptr);
}

TEST(CApiAttention, DecoderLayerWithCausalMaskGivesTorchsOutput) {
  namespace R = tfref;
  ember_layer_desc d = layer(EMBER_LAYER_TRANSFORMER_DECODER_LAYER);
  EXPECT_EQ(d.p, 0.1);
  d.in_features = 8;
  d.num_heads = 2;
  d.dim_feedforward = 16;
  d.p = 0.0;
  const Module m = layer_module(d);
  load(m.get(), R::dec_layer_state);
  const Tensor tgt = ref_f32(find(R::dec_layer_inputs, "tgt")), mem = ref_f32(find(R::dec_layer_inputs, "memory"));
  const Tensor tm = ref_bool(find(R::dec_layer_inputs, "tgt_mask"));
  const Tensor mk = ref_bool(find(R::dec_layer_inputs, "memory_key_padding_mask"));
  ember_tensor* out = nullptr;
  EMBER_EXPECT_OK(ember_module_forward_decoder(m.get(), tgt.get(), mem.get(), tm.get(), nullptr, nullptr, mk.get(),
                                               EMBER_MODE_EVAL, &out));
  const Tensor o(out);
  EXPECT_TRUE(near(o.get(), find(R::dec_layer_outputs, "out")));
  // The decoder layer has two operands: ember_module_forward refuses it with the function to use.
  ember_tensor* y = nullptr;
  EMBER_EXPECT_ERR(ember_module_forward(m.get(), tgt.get(), EMBER_MODE_EVAL, &y), EMBER_ERR_INVALID_ARGUMENT,
                   "ember_module_forward_decoder");
}

TEST(CApiAttention, SequentialEncoderLayerAndMisuse) {
  ember_layer_desc d = layer(EMBER_LAYER_TRANSFORMER_ENCODER_LAYER);
  d.in_features = 4;
  d.num_heads = 2;
  d.dim_feedforward = 8;
  d.norm_first = 1;
  d.activation = EMBER_TRANSFORMER_GELU;
  const Module enc = sequential({d});
  EXPECT_EQ(param_name(enc.get(), 0), "layers.0.self_attn.in_proj_weight");
  const Tensor x = f32(std::vector<float>(24, 0.25f), {3, 2, 4});
  const Tensor viaforward = forward(enc.get(), x.get());  // eval: no dropout, no masks
  ember_tensor* out = nullptr;
  EMBER_EXPECT_OK(ember_module_forward_encoder(enc.get(), x.get(), nullptr, nullptr, EMBER_MODE_EVAL, &out));
  const Tensor o(out);
  EXPECT_EQ(floats(o.get()), floats(viaforward.get()));
  // wrong module kind, need_weights without a place for them, a bad mask shape, embed_dim % num_heads
  const Tensor bad_mask = f32(std::vector<float>(4, 0.0f), {2, 2});
  EMBER_EXPECT_ERR(ember_module_forward_encoder(enc.get(), x.get(), bad_mask.get(), nullptr, EMBER_MODE_EVAL, &out),
                   EMBER_ERR_SHAPE, "attn_mask");
  ember_tensor* w = nullptr;
  EMBER_EXPECT_ERR(ember_module_forward_attention(enc.get(), x.get(), x.get(), x.get(), nullptr, nullptr, 1, 1,
                                                  EMBER_MODE_EVAL, &out, nullptr),
                   EMBER_ERR_INVALID_ARGUMENT, "weights is NULL");
  EMBER_EXPECT_ERR(ember_module_forward_attention(enc.get(), x.get(), x.get(), x.get(), nullptr, nullptr, 1, 1,
                                                  EMBER_MODE_EVAL, &out, &w),
                   EMBER_ERR_INVALID_ARGUMENT, "not a multihead_attention");
  ember_layer_desc bad = layer(EMBER_LAYER_MULTIHEAD_ATTENTION);
  bad.in_features = 6;
  bad.num_heads = 4;
  ember_module* m = nullptr;
  EMBER_EXPECT_ERR(ember_module_sequential(nullptr, &bad, 1, &m), EMBER_ERR_INVALID_ARGUMENT, "divisible");
}

// A record of the module's torch state_dict, through a safetensors file (read back with the C++ reader).
ember::Record torch_state_of(const ember_module* m) {
  ember_record* r = nullptr;
  EXPECT_EQ(ember_module_to_torch_state_dict(m, &r), EMBER_OK) << ember_last_error();
  const RecordH sd(r);
  const TempPath path("attention_sd.safetensors");
  EXPECT_EQ(ember_record_write_safetensors(sd.get(), path.path.c_str()), EMBER_OK) << ember_last_error();
  return ember::SafetensorsFile::open(path.path).to_record();
}

TEST(CApiAttention, TorchStateDictsMapThroughTheNameMap) {
  namespace R = tfref;
  // PyTorch's decoder-layer state_dict, as a safetensors file, loads strictly into a layer module (a tree) and
  // gives torch's output: Linear weights transposed, LayerNorm weight/bias as gamma/beta, the rest by name.
  ember::Record torch;
  for (const auto& t : R::dec_layer_state) {
    std::vector<float> v(t.data, t.data + t.size);
    torch.params[t.name] = ember::ParamRecord{0, ember::ParamKind::Float, ember::ParamRole::Trainable,
                                              ember::TensorData::from_vec<float>(v, ember::Shape(dims(t)))};
  }
  const TempPath file("attention_torch.safetensors");
  ember::write_safetensors(torch, file.path);
  ember_record* r = nullptr;
  EMBER_ASSERT_OK(ember_record_read_safetensors(file.path.c_str(), &r));
  const RecordH sd(r);
  ember_layer_desc d = layer(EMBER_LAYER_TRANSFORMER_DECODER_LAYER);
  d.in_features = 8;
  d.num_heads = 2;
  d.dim_feedforward = 16;
  d.p = 0.0;
  const Module m = layer_module(d);
  EMBER_ASSERT_OK(ember_module_load_torch_state_dict(m.get(), sd.get(), EMBER_LOAD_STRICT, nullptr));
  const Tensor tgt = ref_f32(find(R::dec_layer_inputs, "tgt")), mem = ref_f32(find(R::dec_layer_inputs, "memory"));
  const Tensor tm = ref_bool(find(R::dec_layer_inputs, "tgt_mask"));
  const Tensor mk = ref_bool(find(R::dec_layer_inputs, "memory_key_padding_mask"));
  ember_tensor* out = nullptr;
  EMBER_EXPECT_OK(ember_module_forward_decoder(m.get(), tgt.get(), mem.get(), tm.get(), nullptr, nullptr, mk.get(),
                                               EMBER_MODE_EVAL, &out));
  const Tensor o(out);
  EXPECT_TRUE(near(o.get(), find(R::dec_layer_outputs, "out")));

  // A Sequential's encoder layer exports PyTorch's keys and layouts ("0." for "layers.0."), and they load back.
  ember_layer_desc e = layer(EMBER_LAYER_TRANSFORMER_ENCODER_LAYER);
  e.in_features = 4;
  e.num_heads = 2;
  e.dim_feedforward = 6;
  const Module a = sequential({e}), b = sequential({e});
  const ember::Record exported = torch_state_of(a.get());
  EXPECT_EQ(exported.params.at("0.self_attn.in_proj_weight").data.shape, ember::Shape({12, 4}));
  EXPECT_EQ(exported.params.at("0.linear1.weight").data.shape, ember::Shape({6, 4}));  // [out, in]
  EXPECT_EQ(exported.params.at("0.self_attn.out_proj.bias").data.shape, ember::Shape({4}));
  EXPECT_EQ(exported.params.count("0.norm2.weight"), 1u);
  ember_record* back = nullptr;
  EMBER_ASSERT_OK(ember_module_to_torch_state_dict(a.get(), &back));
  const RecordH back_sd(back);
  EMBER_ASSERT_OK(ember_module_load_torch_state_dict(b.get(), back, EMBER_LOAD_STRICT, nullptr));
  const Tensor x = f32({0.5f, -1.0f, 0.25f, 2.0f, 1.0f, 0.0f, -0.5f, 0.75f}, {2, 1, 4});
  EXPECT_EQ(floats(forward(a.get(), x.get()).get()), floats(forward(b.get(), x.get()).get()));
}

}  // namespace
}  // namespace ember::capi_test
