// The executor and OnnxModel on hand-built IR (onnx/executor.hpp, onnx/model.hpp), and the core operators
// (Constant, Identity): no ONNX file or library needed.
#include <gtest/gtest.h>

#include "onnx/executor.hpp"
#include "onnx/model.hpp"
#include "tests/onnx/onnx_op_test_util.hpp"

namespace ember::onnx_import {
namespace {

using test::node;
using test::tensor_attr;

ValueInfo tensor_info(std::string name, DType dtype, std::optional<std::vector<int64_t>> dims,
                      std::vector<std::string> params = {}) {
  ValueInfo v;
  v.name = std::move(name);
  v.dtype = dtype;
  v.dims = std::move(dims);
  v.dim_params = std::move(params);
  return v;
}

// y = Identity(x), w2 = Identity(w): nodes given out of order, which the model sorts.
Model identity_model() {
  Model m;
  m.opsets[""] = 13;
  m.graph.inputs.push_back(tensor_info("x", DType::F32, std::vector<int64_t>{-1, 2}, {"batch", ""}));
  m.graph.outputs.push_back(tensor_info("y", DType::F32, std::nullopt));
  m.graph.outputs.push_back(tensor_info("w2", DType::F32, std::nullopt));
  m.graph.initializers.emplace_back("w", TensorData::from_vec<float>({1.f, 2.f}, Shape{2}));
  m.graph.nodes.push_back(node("Identity", {"t"}, {"y"}));
  m.graph.nodes.push_back(node("Identity", {"x"}, {"t"}));
  m.graph.nodes.push_back(node("Identity", {"w"}, {"w2"}));
  for (std::size_t i = 0; i < m.graph.nodes.size(); ++i) m.graph.nodes[i].index = static_cast<int64_t>(i);
  return m;
}

std::vector<float> values(const DynTensor& t) { return capi::to_data(t).to_vec<float>(); }

TEST(OnnxModel, RunsSortedGraphWithDynamicBatch) {
  OnnxModel m = OnnxModel::from_ir(identity_model(), capi::cpu_device());
  for (int64_t batch : {1, 3}) {
    std::vector<float> xs(static_cast<std::size_t>(batch * 2));
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i) - 1.5f;
    const DynTensor x = capi::from_data(capi::cpu_device(), TensorData::from_vec<float>(xs, Shape{batch, 2}));
    const auto out = m.forward({x});
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(values(out[0]), xs);
    EXPECT_EQ(capi::shape(out[0]), (Shape{batch, 2}));
    EXPECT_EQ(values(out[1]), (std::vector<float>{1.f, 2.f}));
  }
}

TEST(OnnxModel, ChecksInputsAgainstDeclaredTypesAndDims) {
  OnnxModel m = OnnxModel::from_ir(identity_model(), capi::cpu_device());
  const auto& dev = capi::cpu_device();
  EXPECT_THROW(m.forward({}), OnnxError);
  EXPECT_THROW(m.forward({capi::from_data(dev, TensorData::from_vec<float>({1, 2, 3}, Shape{1, 3}))}), OnnxError);
  EXPECT_THROW(m.forward({capi::from_data(dev, TensorData::from_vec<float>({1, 2}, Shape{2}))}), OnnxError);
  EXPECT_THROW(m.forward({capi::from_data(dev, TensorData::from_vec<int64_t>({1, 2}, Shape{1, 2}))}), OnnxError);
}

TEST(OnnxModel, ParamsCanBeReplacedAndRecorded) {
  OnnxModel m = OnnxModel::from_ir(identity_model(), capi::cpu_device());
  ASSERT_EQ(m.params().size(), 1u);
  EXPECT_EQ(m.params()[0].first, "w");
  EXPECT_TRUE(capi::requires_grad(m.params()[0].second));
  const auto& dev = capi::cpu_device();
  m.set_param("w", capi::from_data(dev, TensorData::from_vec<float>({5.f, 6.f}, Shape{2})));
  const DynTensor x = capi::from_data(dev, TensorData::from_vec<float>({0.f, 0.f}, Shape{1, 2}));
  EXPECT_EQ(values(m.forward({x})[1]), (std::vector<float>{5.f, 6.f}));
  EXPECT_THROW(m.set_param("w", capi::from_data(dev, TensorData::from_vec<float>({1.f}, Shape{1}))), OnnxError);
  EXPECT_THROW(m.set_param("nope", capi::from_data(dev, TensorData::from_vec<float>({1.f}, Shape{1}))), OnnxError);

  const Record r = m.record();
  ASSERT_EQ(r.params.count("w"), 1u);
  EXPECT_EQ(r.params.at("w").data.to_vec<float>(), (std::vector<float>{5.f, 6.f}));
  OnnxModel fresh = OnnxModel::from_ir(identity_model(), dev);
  fresh.load_record(r);
  EXPECT_EQ(values(fresh.params()[0].second), (std::vector<float>{5.f, 6.f}));
  Record wrong = r;
  wrong.params.at("w").data = TensorData::from_vec<float>({1.f}, Shape{1});
  EXPECT_THROW(fresh.load_record(wrong), OnnxError);
}

TEST(OnnxModel, GradientsReachInitializers) {
  // y = Identity(w): backward of y reaches the param w.
  OnnxModel m = OnnxModel::from_ir(identity_model(), capi::cpu_device());
  const auto& dev = capi::cpu_device();
  const DynTensor x = capi::from_data(dev, TensorData::from_vec<float>({0.f, 0.f}, Shape{1, 2}));
  const auto out = m.forward({x}, true);
  const DynTensor seed = capi::from_data(dev, TensorData::from_vec<float>({2.f, 3.f}, Shape{2}));
  const capi::DynGrads g = capi::backward(out[1], &seed, false, false);
  const auto gw = capi::grad(g, m.params()[0].second);
  ASSERT_TRUE(gw.has_value());
  EXPECT_EQ(values(*gw), (std::vector<float>{2.f, 3.f}));
}

TEST(OnnxGraphCheck, RejectsCyclesUndefinedInputsAndDuplicates) {
  Model cyc = identity_model();
  cyc.graph.nodes[1].inputs = {"y"};  // t = Identity(y), y = Identity(t)
  EXPECT_THROW(OnnxModel::from_ir(cyc, capi::cpu_device()), OnnxError);
  try {
    OnnxModel::from_ir(cyc, capi::cpu_device());
  } catch (const OnnxError& e) {
    EXPECT_NE(std::string(e.what()).find("cycle"), std::string::npos) << e.what();
  }
  Model undefined = identity_model();
  undefined.graph.nodes[1].inputs = {"nowhere"};
  EXPECT_THROW(OnnxModel::from_ir(undefined, capi::cpu_device()), OnnxError);
  Model dup = identity_model();
  dup.graph.nodes[2].outputs = {"t"};
  EXPECT_THROW(OnnxModel::from_ir(dup, capi::cpu_device()), OnnxError);
  Model missing_out = identity_model();
  missing_out.graph.outputs[0].name = "z";
  EXPECT_THROW(OnnxModel::from_ir(missing_out, capi::cpu_device()), OnnxError);
}

TEST(OnnxGraphCheck, ReportsEveryUnsupportedOperatorAtOnce) {
  Model m = identity_model();
  m.graph.nodes.push_back(node("NoSuchOpA", {"x"}, {"a"}));
  m.graph.nodes.push_back(node("NoSuchOpB", {"a"}, {"b"}));
  m.graph.nodes.back().name = "second";
  try {
    OnnxModel::from_ir(m, capi::cpu_device());
    FAIL() << "unsupported operators were accepted";
  } catch (const UnsupportedOperatorError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("2 node(s)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("NoSuchOpA"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'second'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("opset 13"), std::string::npos) << msg;
  }
}

TEST(OnnxCoreOps, ConstantTakesEveryValueForm) {
  const std::vector<std::pair<std::string, Attribute>> forms = {
      {"value", tensor_attr(TensorData::from_vec<int32_t>({4, 5}, Shape{2}))},
      {"value_float", test::float_attr(2.5)},
      {"value_int", test::int_attr(-3)},
      {"value_floats", [] {
         Attribute a;
         a.type = Attribute::Type::Floats;
         a.floats = {1.5, -2.0};
         return a;
       }()},
      {"value_ints", test::ints_attr({7, 8, 9})},
  };
  const std::vector<std::vector<double>> want = {{4, 5}, {2.5}, {-3}, {1.5, -2.0}, {7, 8, 9}};
  const std::vector<Shape> shapes = {Shape{2}, Shape{}, Shape{}, Shape{2}, Shape{3}};
  for (std::size_t i = 0; i < forms.size(); ++i) {
    const Node n = test::make_node("Constant", 0, 1, {{forms[i].first, forms[i].second}});
    const auto out = test::run_op(n, 13, {});
    ASSERT_TRUE(out.at(0).has_value()) << forms[i].first;
    EXPECT_EQ(out[0]->shape, shapes[i]) << forms[i].first;
    EXPECT_EQ(out[0]->to_vec<double>(), want[i]) << forms[i].first;
  }
  EXPECT_EQ(test::run_op(test::make_node("Constant", 0, 1, {{"value_int", test::int_attr(1)}}), 13, {})[0]->dtype,
            DType::I64);
  EXPECT_THROW(test::run_op(test::make_node("Constant", 0, 1), 13, {}), OnnxError);
  EXPECT_THROW(test::run_op(test::make_node("Constant", 0, 1, {{"value_string", test::string_attr("a")}}), 13, {}),
               UnsupportedDTypeError);
}

TEST(OnnxExecutor, SubgraphSeesOuterScope) {
  // A converter of a test-only op runs its "body" attribute: the body adds nothing and returns the outer "x".
  Graph body;
  body.outputs.push_back(tensor_info("x", DType::F32, std::nullopt));
  Node outer = node("Identity", {"x"}, {"y"});
  Executor exec(capi::cpu_device(), {{"", 13}}, false);
  EXPECT_THROW(exec.run_subgraph(body, {}), OnnxError);  // outside a node's conversion
  Graph g;
  g.inputs.push_back(tensor_info("x", DType::F32, std::nullopt));
  g.outputs.push_back(tensor_info("y", DType::F32, std::nullopt));
  g.nodes.push_back(outer);
  const DynTensor x = capi::from_data(capi::cpu_device(), TensorData::from_vec<float>({3.f}, Shape{1}));
  EXPECT_EQ(values(exec.run(g, {x})[0]), (std::vector<float>{3.f}));
  // With a converter table that lacks the graph's nodes (a graph a converter built), the registry still serves.
  const ConverterTable empty;
  exec.use_converters(&empty);
  EXPECT_EQ(values(exec.run(g, {x})[0]), (std::vector<float>{3.f}));
  const ConverterTable table = converter_table(g, 13);
  EXPECT_EQ(table.size(), 1u);
  g.nodes[0].op_type = "NoSuchOp";
  EXPECT_THROW(exec.run(g, {x}), UnsupportedOperatorError);
}

}  // namespace
}  // namespace ember::onnx_import

// The conformance runner's comparison (tests/onnx/conformance/compare.hpp), like ONNX's backend tests.
#include "tests/onnx/conformance/compare.hpp"

namespace ember::onnx_import {
namespace {

TEST(OnnxConformanceCompare, FloatsWithinToleranceIntsExactShapesEqual) {
  bool shape_error = false;
  const TensorData want = TensorData::from_vec<float>({1000.f, 0.f, NAN, INFINITY}, Shape{4});
  // within rtol 1e-3 of 1000 (0.9 off), 0 exact, NaN vs NaN, inf vs inf; computed in float64 by the CPU runtime
  EXPECT_EQ(conformance::compare_output(TensorData::from_vec<double>({1000.9, 0.0, NAN, INFINITY}, Shape{4}), want,
                                        shape_error),
            "");
  EXPECT_NE(conformance::compare_output(TensorData::from_vec<float>({1001.1f, 0.f, NAN, INFINITY}, Shape{4}), want,
                                        shape_error),
            "");
  EXPECT_FALSE(shape_error);
  EXPECT_NE(conformance::compare_output(TensorData::from_vec<float>({1000.f, 1e-6f, NAN, INFINITY}, Shape{4}), want,
                                        shape_error),
            "");
  EXPECT_NE(conformance::compare_output(TensorData::from_vec<float>({1000.f, 0.f, 1.f, INFINITY}, Shape{4}), want,
                                        shape_error),
            "");
  EXPECT_NE(conformance::compare_output(TensorData::from_vec<float>({1000.f, 0.f, NAN, -INFINITY}, Shape{4}), want,
                                        shape_error),
            "");
  EXPECT_NE(conformance::compare_output(TensorData::from_vec<float>({1000.f, 0.f}, Shape{2}), want, shape_error), "");
  EXPECT_TRUE(shape_error);
  // ints: exact after converting the output (the runtime's int64) to the expected int32
  const TensorData ints = TensorData::from_vec<int32_t>({3, -4}, Shape{2});
  EXPECT_EQ(conformance::compare_output(TensorData::from_vec<int64_t>({3, -4}, Shape{2}), ints, shape_error), "");
  EXPECT_NE(conformance::compare_output(TensorData::from_vec<int64_t>({3, -5}, Shape{2}), ints, shape_error), "");
  const TensorData scalar = TensorData::from_vec<float>({1.f}, Shape{});
  EXPECT_NE(conformance::compare_output(TensorData::from_vec<float>({1.f}, Shape{1}), scalar, shape_error), "");
}

}  // namespace
}  // namespace ember::onnx_import
