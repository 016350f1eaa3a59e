// If / Loop / Scan (onnx/ops/control_flow.cpp) on hand-built graphs run by the executor. The bodies use Identity
// and Constant only, so what is checked is the control flow itself: which branch runs, trip counts and conditions,
// outer-scope reads, how scan inputs are sliced and scan outputs stacked (axes, directions, sequence lengths), and
// that gradients flow back through the iterations.
#include <gtest/gtest.h>

#include "onnx/executor.hpp"
#include "tests/onnx/onnx_op_test_util.hpp"

namespace ember::onnx_import {
namespace {

using test::graph_attr;
using test::node;
using test::tensor_attr;

ValueInfo info(std::string name, std::optional<DType> dtype = std::nullopt,
               std::optional<std::vector<int64_t>> dims = std::nullopt) {
  ValueInfo v;
  v.name = std::move(name);
  v.dtype = dtype;
  v.dims = std::move(dims);
  return v;
}

// A graph of one node whose inputs and outputs are the graph's.
Graph one_node_graph(Node n) {
  Graph g;
  for (const std::string& in : n.inputs)
    if (!in.empty()) g.inputs.push_back(info(in));
  for (const std::string& out : n.outputs) g.outputs.push_back(info(out));
  g.nodes.push_back(std::move(n));
  return g;
}

DynTensor f32(std::vector<float> v, Shape s) { return capi::from_data(capi::cpu_device(), TensorData::from_vec(v, s)); }
DynTensor i64(std::vector<int64_t> v, Shape s) {
  return capi::from_data(capi::cpu_device(), TensorData::from_vec(v, s));
}
DynTensor boolean(bool b) { return capi::from_data(capi::cpu_device(), TensorData::from_vec<bool>({b}, Shape{})); }

std::vector<DynTensor> run(const Graph& g, const std::vector<DynTensor>& inputs, int64_t opset = 13) {
  Executor exec(capi::cpu_device(), {{"", opset}}, false);
  return exec.run(g, inputs);
}

TEST(OnnxIf, RunsTheChosenBranchWhichReadsTheOuterScope) {
  Graph then_b;
  then_b.nodes.push_back(node("Identity", {"x"}, {"then_out"}));  // x is the outer graph's input
  then_b.outputs.push_back(info("then_out"));
  Graph else_b;
  else_b.nodes.push_back(
      node("Constant", {}, {"else_out"}, {{"value", tensor_attr(TensorData::from_vec<float>({7.f, 8.f}, Shape{2}))}}));
  else_b.outputs.push_back(info("else_out"));
  Graph g = one_node_graph(node("If", {"cond"}, {"y"},
                                {{"then_branch", graph_attr(then_b)}, {"else_branch", graph_attr(else_b)}}));
  g.inputs.push_back(info("x"));
  const DynTensor x = f32({1.f, 2.f}, Shape{2});
  EXPECT_EQ(capi::to_data(run(g, {boolean(true), x})[0]).to_vec<float>(), (std::vector<float>{1.f, 2.f}));
  EXPECT_EQ(capi::to_data(run(g, {boolean(false), x})[0]).to_vec<float>(), (std::vector<float>{7.f, 8.f}));
  EXPECT_THROW(run(g, {f32({1.f, 0.f}, Shape{2}), x}), OnnxError);  // cond must be one value
}

// Loop body: cond_out = cond_source, v_out = Identity(v_in), iteration = Identity(i) as a scan output.
Graph loop_graph(const std::string& cond_source, std::optional<bool> body_cond = std::nullopt) {
  Graph body;
  body.inputs = {info("i"), info("cond_in"), info("v_in")};
  if (body_cond)
    body.nodes.push_back(node("Constant", {}, {"cond_const"},
                              {{"value", tensor_attr(TensorData::from_vec<bool>({*body_cond}, Shape{}))}}));
  body.nodes.push_back(node("Identity", {cond_source}, {"cond_out"}));
  body.nodes.push_back(node("Identity", {"v_in"}, {"v_out"}));
  body.nodes.push_back(node("Identity", {"i"}, {"iteration"}));
  body.outputs = {info("cond_out"), info("v_out"), info("iteration", DType::I64, std::vector<int64_t>{})};
  return one_node_graph(node("Loop", {"M", "cond", "v"}, {"v_final", "iterations"}, {{"body", graph_attr(body)}}));
}

TEST(OnnxLoop, CountsTripsAndStacksScanOutputs) {
  const Graph g = loop_graph("cond_in");
  const DynTensor v = f32({5.f, 6.f}, Shape{2});
  const auto out = run(g, {i64({3}, Shape{}), boolean(true), v});
  EXPECT_EQ(capi::to_data(out[0]).to_vec<float>(), (std::vector<float>{5.f, 6.f}));
  const TensorData its = capi::to_data(out[1]);
  EXPECT_EQ(its.shape, Shape{3});
  EXPECT_EQ(its.to_vec<int64_t>(), (std::vector<int64_t>{0, 1, 2}));

  // cond false on entry: no iteration; the scan output takes its shape [0] from the body's declared output.
  const auto none = run(g, {i64({3}, Shape{}), boolean(false), v});
  EXPECT_EQ(capi::to_data(none[1]).shape, Shape{0});
  EXPECT_EQ(capi::to_data(none[0]).to_vec<float>(), (std::vector<float>{5.f, 6.f}));
}

TEST(OnnxLoop, TheBodysConditionEndsTheLoop) {
  // The body says stop after its first iteration, however many trips M allows (and with no M at all).
  const Graph g = loop_graph("cond_const", false);
  const DynTensor v = f32({1.f}, Shape{1});
  EXPECT_EQ(capi::to_data(run(g, {i64({10}, Shape{}), boolean(true), v})[1]).to_vec<int64_t>(),
            (std::vector<int64_t>{0}));
  Graph no_m = g;
  no_m.nodes[0].inputs[0] = "";
  no_m.inputs.erase(no_m.inputs.begin());
  EXPECT_EQ(capi::to_data(run(no_m, {boolean(true), v})[1]).to_vec<int64_t>(), (std::vector<int64_t>{0}));
}

// Scan body: state_out = Identity(x_t), xs = Identity(x_t), ys = Identity(y_t).
Graph scan_body() {
  Graph body;
  body.inputs = {info("s_in"), info("x_t"), info("y_t")};
  body.nodes.push_back(node("Identity", {"x_t"}, {"s_out"}));
  body.nodes.push_back(node("Identity", {"x_t"}, {"xs"}));
  body.nodes.push_back(node("Identity", {"y_t"}, {"ys"}));
  body.outputs = {info("s_out"), info("xs"), info("ys")};
  return body;
}

TEST(OnnxScan, SlicesAndStacksAlongAxesAndDirections) {
  // x [3, 2] scanned along axis 0 forward; y [2, 3] along axis 1 in reverse. xs restacks x; ys stacks the
  // reversed columns of y forward along axis 1, which flips y's columns.
  Graph g = one_node_graph(node("Scan", {"s", "x", "y"}, {"s_final", "xs", "ys"},
                                {{"body", graph_attr(scan_body())},
                                 {"num_scan_inputs", test::int_attr(2)},
                                 {"scan_input_axes", test::ints_attr({0, -1})},
                                 {"scan_input_directions", test::ints_attr({0, 1})},
                                 {"scan_output_axes", test::ints_attr({0, 1})}}));
  const DynTensor s = f32({0.f, 0.f}, Shape{2});
  const DynTensor x = f32({1, 2, 3, 4, 5, 6}, Shape{3, 2});
  const DynTensor y = f32({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const auto out = run(g, {s, x, y}, 11);
  EXPECT_EQ(capi::to_data(out[0]).to_vec<float>(), (std::vector<float>{5, 6}));
  EXPECT_EQ(capi::to_data(out[1]).shape, (Shape{3, 2}));
  EXPECT_EQ(capi::to_data(out[1]).to_vec<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(capi::to_data(out[2]).shape, (Shape{2, 3}));
  EXPECT_EQ(capi::to_data(out[2]).to_vec<float>(), (std::vector<float>{3, 2, 1, 6, 5, 4}));

  // Reversing ys's output direction too restores y.
  g.nodes[0].attrs["scan_output_directions"] = test::ints_attr({0, 1});
  EXPECT_EQ(capi::to_data(run(g, {s, x, y}, 11)[2]).to_vec<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(OnnxScan, GradientsFlowThroughTheIterations) {
  Graph g = one_node_graph(node("Scan", {"s", "x", "y"}, {"s_final", "xs", "ys"},
                                {{"body", graph_attr(scan_body())}, {"num_scan_inputs", test::int_attr(2)}}));
  const DynTensor s = f32({0.f, 0.f}, Shape{2});
  const DynTensor x = capi::set_requires_grad(f32({1, 2, 3, 4, 5, 6}, Shape{3, 2}), true);
  const DynTensor y = f32({1, 2, 3, 4, 5, 6}, Shape{3, 2});
  const auto out = run(g, {s, x, y}, 11);
  // loss = sum(xs * seed) + sum(s_final): d/dx = seed, plus 1 on x's last row (the final state).
  const DynTensor seed = f32({1, -1, 2, -2, 3, -3}, Shape{3, 2});
  const DynTensor loss = capi::binary(capi::reduce_all(capi::binary(out[1], seed, BinaryOp::Mul), ReduceOp::Sum),
                                      capi::reduce_all(out[0], ReduceOp::Sum), BinaryOp::Add);
  const auto grad = capi::grad(capi::backward(loss, nullptr, false, false), x);
  ASSERT_TRUE(grad.has_value());
  EXPECT_EQ(capi::to_data(*grad).to_vec<float>(), (std::vector<float>{1, -1, 2, -2, 4, -2}));
}

TEST(OnnxScan, Opset8ScansEachBatchEntryForItsLength) {
  Graph body;
  body.inputs = {info("s_in"), info("x_t")};
  body.nodes.push_back(node("Identity", {"x_t"}, {"s_out"}));
  body.nodes.push_back(node("Identity", {"x_t"}, {"xs"}));
  body.outputs = {info("s_out"), info("xs")};
  const Graph g = one_node_graph(node("Scan", {"lens", "s", "x"}, {"s_final", "xs"},
                                      {{"body", graph_attr(body)}, {"num_scan_inputs", test::int_attr(1)},
                                       {"directions", test::ints_attr({1})}}));
  // batch 2, sequence 3, elements [1]; entry 1 has length 2 and runs reversed from its step 1.
  const DynTensor s = f32({0, 0}, Shape{2, 1});
  const DynTensor x = f32({1, 2, 3, 4, 5, 6}, Shape{2, 3, 1});
  const auto out = run(g, {i64({3, 2}, Shape{2}), s, x}, 8);
  EXPECT_EQ(capi::to_data(out[0]).to_vec<float>(), (std::vector<float>{1, 4}));
  EXPECT_EQ(capi::to_data(out[1]).shape, (Shape{2, 3, 1}));
  EXPECT_EQ(capi::to_data(out[1]).to_vec<float>(), (std::vector<float>{3, 2, 1, 5, 4, 0}));
}

TEST(OnnxControlFlow, RegisteredAndNeedTheExecutor) {
  EXPECT_NE(op_registry().find("Scan", 8), nullptr);
  EXPECT_NE(op_registry().find("Scan", 16), nullptr);
  EXPECT_EQ(op_registry().find("Scan", 7), nullptr);
  // run_op has no executor: a clear error rather than a crash.
  Graph branch;
  branch.nodes.push_back(node("Identity", {"c"}, {"out"}));
  branch.outputs.push_back(info("out"));
  const Node n = test::make_node("If", 1, 1, {{"then_branch", graph_attr(branch)}, {"else_branch", graph_attr(branch)}});
  try {
    test::run_op(n, 13, {TensorData::from_vec<bool>({true}, Shape{})});
    FAIL() << "If ran without an executor";
  } catch (const OnnxError& e) {
    EXPECT_NE(std::string(e.what()).find("executor"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ember::onnx_import
