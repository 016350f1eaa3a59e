// ONNX LSTM / GRU / RNN converters (onnx/ops/rnn.cpp) against tests/reference/onnx_rnn_reference.hpp: outputs in
// float64 and float32, and the gradients that reach every input (the weights are an imported model's Params).
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "onnx/model.hpp"
#include "tests/onnx/onnx_op_test_util.hpp"
#include "tests/reference/onnx_rnn_reference.hpp"

namespace ember::onnx_import {
namespace {

namespace ref = ::ember::test::onnx_rnn_ref;

constexpr std::size_t kSeqLensInput = 4;

Shape shape_of(const ref::Tensor& t) {
  Shape s;
  for (std::size_t i = 0; i < t.rank; ++i) s.dims.push_back(t.shape[i]);
  return s;
}

std::vector<double> values_of(const ref::Tensor& t) {
  const Shape s = shape_of(t);
  return {t.values, t.values + s.num_elements()};
}

// A float input in `dtype`, or sequence_lens as int32 (its ONNX type).
TensorData input_data(const ref::Tensor& t, std::size_t index, DType dtype) {
  const TensorData d = TensorData::from_vec(values_of(t), shape_of(t));
  return d.convert(index == kSeqLensInput ? DType::I32 : dtype);
}

Node case_node(const ref::Case& c) {
  const bool lstm = std::string(c.op) == "LSTM";
  std::map<std::string, Attribute, std::less<>> attrs{{"hidden_size", test::int_attr(c.hidden_size)},
                                                      {"layout", test::int_attr(c.layout)},
                                                      {"direction", test::string_attr(c.direction)}};
  if (!std::isnan(c.clip)) attrs["clip"] = test::float_attr(c.clip);
  if (lstm) attrs["input_forget"] = test::int_attr(c.input_forget);
  if (std::string(c.op) == "GRU") attrs["linear_before_reset"] = test::int_attr(c.linear_before_reset);
  if (std::string(c.activations).size()) {
    Attribute a;
    a.type = Attribute::Type::Strings;
    std::stringstream names(c.activations);
    for (std::string n; std::getline(names, n, ',');) a.strings.push_back(n);
    attrs["activations"] = a;
  }
  if (c.num_alpha) {
    Attribute a;
    a.type = Attribute::Type::Floats;
    a.floats.assign(c.alpha.begin(), c.alpha.begin() + static_cast<std::ptrdiff_t>(c.num_alpha));
    attrs["activation_alpha"] = a;
  }
  if (c.num_beta) {
    Attribute a;
    a.type = Attribute::Type::Floats;
    a.floats.assign(c.beta.begin(), c.beta.begin() + static_cast<std::ptrdiff_t>(c.num_beta));
    attrs["activation_beta"] = a;
  }
  Node n = test::make_node(c.op, lstm ? 8 : 6, lstm ? 3 : 2, std::move(attrs));
  for (std::size_t i = 0; i < n.inputs.size(); ++i)
    if (!c.inputs[i].values) n.inputs[i] = "";
  return n;
}

void expect_near(const TensorData& got, const ref::Tensor& want, double tol, const std::string& what) {
  ASSERT_EQ(got.shape, shape_of(want)) << what;
  const std::vector<double> g = got.to_vec<double>(), w = values_of(want);
  for (std::size_t i = 0; i < w.size(); ++i)
    ASSERT_NEAR(g[i], w[i], tol * (1.0 + std::abs(w[i]))) << what << " at " << i;
}

class OnnxRnnReference : public ::testing::TestWithParam<std::size_t> {};

TEST_P(OnnxRnnReference, OutputsAndGradientsInFloat64) {
  const ref::Case& c = ref::kCases[GetParam()];
  const Node node = case_node(c);
  OpContext ctx{node, 14, capi::cpu_device(), true, {}, nullptr};
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    if (!c.inputs[i].values) {
      ctx.inputs.emplace_back(std::nullopt);
      continue;
    }
    DynTensor t = capi::from_data(capi::cpu_device(), input_data(c.inputs[i], i, DType::F64));
    if (i != kSeqLensInput) t = capi::set_requires_grad(t, true);
    ctx.inputs.emplace_back(t);
  }
  const auto outs = (*op_registry().find(c.op, 14))(ctx);
  ASSERT_EQ(outs.size(), node.outputs.size());

  std::optional<DynTensor> loss;
  for (std::size_t k = 0; k < outs.size(); ++k) {
    ASSERT_TRUE(outs[k].has_value()) << "output " << k;
    expect_near(capi::to_data(*outs[k]), c.outputs[k], 1e-9, std::string(c.name) + " output " + std::to_string(k));
    const DynTensor seed = capi::from_data(capi::cpu_device(), input_data(c.seeds[k], 0, DType::F64));
    const DynTensor term = capi::reduce_all(capi::binary(*outs[k], seed, BinaryOp::Mul), ReduceOp::Sum);
    loss = loss ? capi::binary(*loss, term, BinaryOp::Add) : term;
  }
  const capi::DynGrads grads = capi::backward(*loss, nullptr, false, false);
  // grads[] follows X W R B initial_h initial_c P; inputs[] has sequence_lens at 4.
  const std::size_t input_of_grad[] = {0, 1, 2, 3, 5, 6, 7};
  for (std::size_t g = 0; g < c.grads.size(); ++g) {
    const std::size_t i = input_of_grad[g];
    if (!c.grads[g].values) continue;
    const auto grad = capi::grad(grads, *ctx.inputs[i]);
    ASSERT_TRUE(grad.has_value()) << c.name << ": no gradient reached input " << i;
    expect_near(capi::to_data(*grad), c.grads[g], 1e-9, std::string(c.name) + " gradient of input " + std::to_string(i));
  }
}

TEST_P(OnnxRnnReference, OutputsInFloat32) {
  const ref::Case& c = ref::kCases[GetParam()];
  const Node node = case_node(c);
  std::vector<std::optional<TensorData>> inputs;
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    if (c.inputs[i].values) inputs.emplace_back(input_data(c.inputs[i], i, DType::F32));
    else inputs.emplace_back(std::nullopt);
  }
  const auto outs = test::run_op(node, 14, inputs);
  ASSERT_EQ(outs.size(), node.outputs.size());
  for (std::size_t k = 0; k < outs.size(); ++k) {
    ASSERT_TRUE(outs[k].has_value());
    EXPECT_EQ(outs[k]->dtype, DType::F32);
    expect_near(*outs[k], c.outputs[k], 1e-4, std::string(c.name) + " output " + std::to_string(k));
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, OnnxRnnReference, ::testing::Range<std::size_t>(0, ref::kCases.size()),
                         [](const auto& info) { return std::string(ref::kCases[info.param].name); });

// The reference's first LSTM case with some of its inputs, for the tests of omitted outputs and bad inputs.
struct SmallLstm {
  const ref::Case& c = ref::kCases[0];
  Node node = case_node(c);
  std::vector<std::optional<TensorData>> inputs;
  SmallLstm() {
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      if (c.inputs[i].values) inputs.emplace_back(input_data(c.inputs[i], i, DType::F64));
      else inputs.emplace_back(std::nullopt);
    }
  }
};

TEST(OnnxRnn, OmittedOutputsAreNotReturned) {
  SmallLstm l;
  ASSERT_EQ(std::string(l.c.op), "LSTM");
  l.node.outputs = {"", "h"};
  const auto outs = test::run_op(l.node, 14, l.inputs);
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_FALSE(outs[0].has_value());
  ASSERT_TRUE(outs[1].has_value());
  expect_near(*outs[1], l.c.outputs[1], 1e-9, "Y_h alone");
}

TEST(OnnxRnn, BadAttributesAndInputsAreOnnxErrors) {
  {
    SmallLstm l;
    l.node.attrs["direction"] = test::string_attr("sideways");
    EXPECT_THROW(test::run_op(l.node, 14, l.inputs), OnnxError);
  }
  {
    SmallLstm l;  // one direction's weights for a bidirectional node
    TensorData w = *l.inputs[1];
    w.shape.dims[0] = 1;
    w.bytes.resize(w.bytes.size() / 2);
    l.inputs[1] = w;
    EXPECT_THROW(test::run_op(l.node, 14, l.inputs), OnnxError);
  }
  {
    SmallLstm l;  // a length beyond the sequence
    l.inputs[kSeqLensInput] = TensorData::from_vec<int32_t>({4, 9, 1}, Shape{3});
    EXPECT_THROW(test::run_op(l.node, 14, l.inputs), OnnxError);
  }
  {
    SmallLstm l;  // LSTM takes three functions per direction
    Attribute a;
    a.type = Attribute::Type::Strings;
    a.strings = {"Sigmoid", "Tanh"};
    l.node.attrs["activations"] = a;
    EXPECT_THROW(test::run_op(l.node, 14, l.inputs), OnnxError);
    l.node.attrs["activations"].strings = {"Sigmoid", "Tanh", "Gelu"};
    EXPECT_THROW(test::run_op(l.node, 14, l.inputs), OnnxError);
  }
  {
    SmallLstm l;  // integer X
    l.inputs[0] = l.inputs[0]->convert(DType::I32);
    EXPECT_THROW(test::run_op(l.node, 14, l.inputs), OnnxError);
  }
  {
    SmallLstm l;
    l.node.attrs["layout"] = test::int_attr(2);
    EXPECT_THROW(test::run_op(l.node, 14, l.inputs), OnnxError);
  }
}

// An imported model whose LSTM weights are initializers: a training forward through OnnxModel and the executor
// gives those Params the reference gradients (what fine-tuning an imported recurrent model relies on).
TEST(OnnxRnn, ImportedModelsGradientsReachTheInitializers) {
  const ref::Case& c = ref::kCases[0];
  ASSERT_EQ(std::string(c.op), "LSTM");
  Model m;
  m.opsets[""] = 14;
  const Node n = case_node(c);
  const std::size_t weights[] = {1, 2, 3};  // W R B
  for (std::size_t i : weights) m.graph.initializers.emplace_back(n.inputs[i], input_data(c.inputs[i], i, DType::F64));
  std::vector<DynTensor> feed;
  for (std::size_t i : {0u, 4u, 5u, 6u}) {  // X sequence_lens initial_h initial_c
    const TensorData d = input_data(c.inputs[i], i, DType::F64);
    ValueInfo v;
    v.name = n.inputs[i];
    v.dtype = d.dtype;
    v.dims = d.shape.dims;
    m.graph.inputs.push_back(v);
    feed.push_back(capi::from_data(capi::cpu_device(), d));
  }
  for (const std::string& out : n.outputs) {
    ValueInfo v;
    v.name = out;
    m.graph.outputs.push_back(v);
  }
  m.graph.nodes.push_back(n);
  const OnnxModel model = OnnxModel::from_ir(std::move(m), capi::cpu_device());
  const std::vector<DynTensor> outs = model.forward(feed, true);
  ASSERT_EQ(outs.size(), 3u);
  std::optional<DynTensor> loss;
  for (std::size_t k = 0; k < outs.size(); ++k) {
    const DynTensor seed = capi::from_data(capi::cpu_device(), input_data(c.seeds[k], 0, DType::F64));
    const DynTensor term = capi::reduce_all(capi::binary(outs[k], seed, BinaryOp::Mul), ReduceOp::Sum);
    loss = loss ? capi::binary(*loss, term, BinaryOp::Add) : term;
  }
  const capi::DynGrads grads = capi::backward(*loss, nullptr, false, false);
  ASSERT_EQ(model.params().size(), 3u);
  for (std::size_t p = 0; p < 3; ++p) {
    const auto grad = capi::grad(grads, model.params()[p].second);
    ASSERT_TRUE(grad.has_value()) << model.params()[p].first;
    expect_near(capi::to_data(*grad), c.grads[weights[p]], 1e-9, "gradient of " + model.params()[p].first);
  }
}

TEST(OnnxRnn, RegisteredFromOpset7) {
  for (const char* op : {"LSTM", "GRU", "RNN"}) {
    EXPECT_EQ(op_registry().find(op, 6), nullptr) << op;
    EXPECT_NE(op_registry().find(op, 7), nullptr) << op;
    EXPECT_NE(op_registry().find(op, 17), nullptr) << op;
  }
}

}  // namespace
}  // namespace ember::onnx_import
