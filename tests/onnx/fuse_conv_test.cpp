// Conv + Relu (+ MaxPool) fused at load (onnx/fuse_conv.hpp, issue 19): which graphs the rewrite changes and which
// it must leave alone, and that a marked Conv computes what the separate nodes do -- through the fused no-grad path
// and, when its inputs require grad, with their gradients.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "onnx/fuse_conv.hpp"
#include "tests/onnx/onnx_op_test_util.hpp"

namespace ember::onnx_import {
namespace {

using test::int_attr;
using test::ints_attr;
using test::node;

ValueInfo value(std::string name) {
  ValueInfo v;
  v.name = std::move(name);
  return v;
}

// x -> Conv -> c -> Relu -> y, plus whatever `extra` nodes read; outputs as given.
Graph conv_relu_graph(std::vector<Node> extra, std::vector<std::string> outputs) {
  Graph g;
  g.nodes.push_back(node("Conv", {"x", "w", "b"}, {"c"}));
  g.nodes.push_back(node("Relu", {"c"}, {"y"}));
  for (Node& n : extra) g.nodes.push_back(std::move(n));
  for (std::string& o : outputs) g.outputs.push_back(value(std::move(o)));
  return g;
}

TEST(OnnxFuseConvRelu, RewritesConvThenReluIntoOneMarkedConv) {
  Graph g = conv_relu_graph({}, {"y"});
  fuse_conv_relu(g);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Conv");
  EXPECT_EQ(g.nodes[0].outputs, std::vector<std::string>{"y"});
  EXPECT_EQ(g.nodes[0].attr_int(kConvFusedReluAttr, 0), 1);
}

TEST(OnnxFuseConvRelu, LeavesAConvWhoseResultIsReadElsewhere) {
  Graph other_reader = conv_relu_graph({node("Add", {"c", "y"}, {"z"})}, {"z"});
  fuse_conv_relu(other_reader);
  EXPECT_EQ(other_reader.nodes.size(), 3u);
  Graph graph_output = conv_relu_graph({}, {"y", "c"});
  fuse_conv_relu(graph_output);
  EXPECT_EQ(graph_output.nodes.size(), 2u);
  for (const Graph* g : {&other_reader, &graph_output}) EXPECT_FALSE(g->nodes[0].has_attr(kConvFusedReluAttr));
}

TEST(OnnxFuseConvRelu, LeavesGraphsWithSubgraphs) {
  Node body_user = node("If", {"cond"}, {"z"}, {{"then_branch", test::graph_attr(Graph{})}});
  Graph g = conv_relu_graph({std::move(body_user)}, {"y", "z"});
  fuse_conv_relu(g);
  EXPECT_EQ(g.nodes.size(), 3u);
}

// x -> Conv -> c -> Relu -> r -> MaxPool (attrs, outputs) -> y.
Graph conv_relu_pool_graph(std::map<std::string, Attribute, std::less<>> pool_attrs, std::vector<std::string> outs) {
  Graph g;
  g.nodes.push_back(node("Conv", {"x", "w", "b"}, {"c"}));
  g.nodes.push_back(node("Relu", {"c"}, {"r"}));
  g.nodes.push_back(node("MaxPool", {"r"}, outs, std::move(pool_attrs)));
  g.outputs.push_back(value("y"));
  return g;
}

TEST(OnnxFuseConvRelu, TakesAPlainMaxPoolAfterConvRelu) {
  Graph g = conv_relu_pool_graph(
      {{"kernel_shape", ints_attr({3, 3})}, {"strides", ints_attr({2, 2})}, {"pads", ints_attr({1, 1, 1, 1})}}, {"y"});
  fuse_conv_relu(g);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].outputs, std::vector<std::string>{"y"});
  EXPECT_EQ(g.nodes[0].attr_ints(kConvFusedMaxPoolAttr), (std::vector<int64_t>{3, 3, 2, 2, 1, 1}));
  Graph defaults = conv_relu_pool_graph({{"kernel_shape", ints_attr({2, 2})}}, {"y"});
  fuse_conv_relu(defaults);
  ASSERT_EQ(defaults.nodes.size(), 1u);
  EXPECT_EQ(defaults.nodes[0].attr_ints(kConvFusedMaxPoolAttr), (std::vector<int64_t>{2, 2, 1, 1, 0, 0}));
}

TEST(OnnxFuseConvRelu, LeavesMaxPoolsTheRuntimePoolDoesNotComputeAsTheyAre) {
  const auto k2 = [] { return std::pair{std::string("kernel_shape"), ints_attr({2, 2})}; };
  std::vector<std::pair<std::map<std::string, Attribute, std::less<>>, std::vector<std::string>>> cases{
      {{k2(), {"ceil_mode", int_attr(1)}}, {"y"}},
      {{k2(), {"pads", ints_attr({0, 0, 1, 1})}}, {"y"}},             // asymmetric
      {{k2(), {"dilations", ints_attr({2, 2})}}, {"y"}},
      {{k2(), {"auto_pad", test::string_attr("SAME_UPPER")}}, {"y"}},
      {{k2()}, {"y", "indices"}},                                     // the Indices output
      {{{"kernel_shape", ints_attr({2})}}, {"y"}},                    // 1-D
      {{{"kernel_shape", ints_attr({2, 2})}, {"pads", ints_attr({2, 2, 2, 2})}}, {"y"}}};  // pads > kernel / 2
  for (auto& [attrs, outs] : cases) {
    Graph g = conv_relu_pool_graph(attrs, outs);
    fuse_conv_relu(g);
    ASSERT_EQ(g.nodes.size(), 2u) << "case " << &attrs - &cases[0].first;
    EXPECT_FALSE(g.nodes[0].has_attr(kConvFusedMaxPoolAttr));
  }
}

TensorData random(Shape s, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(s.num_elements()));
  for (double& e : v) e = u(gen);
  return TensorData::from_vec<double>(v, s).convert(DType::F32);
}

void expect_close(const TensorData& got, const TensorData& want, const char* what) {
  ASSERT_EQ(got.shape, want.shape) << what;
  const std::vector<double> a = got.to_vec<double>(), b = want.to_vec<double>();
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-4 * (1 + std::abs(b[i]))) << what << " " << i;
}

Node conv_node(bool fused, std::size_t spatial, std::vector<int64_t> pool = {}) {
  std::map<std::string, Attribute, std::less<>> attrs{{"pads", ints_attr(std::vector<int64_t>(2 * spatial, 1))}};
  if (fused) attrs.emplace(std::string(kConvFusedReluAttr), int_attr(1));
  if (!pool.empty()) attrs.emplace(std::string(kConvFusedMaxPoolAttr), ints_attr(pool));
  return test::make_node("Conv", 3, 1, std::move(attrs));
}

Node max_pool_node(const std::vector<int64_t>& pool) {
  return test::make_node("MaxPool", 1, 1,
                         {{"kernel_shape", ints_attr({pool[0], pool[1]})},
                          {"strides", ints_attr({pool[2], pool[3]})},
                          {"pads", ints_attr({pool[4], pool[5], pool[4], pool[5]})}});
}

// Without gradients: Conv + Relu + MaxPool fused (the CPU pools oneDNN's blocked convolution output) against the
// three converters in a row, over a 2x2 / 2 pool and ResNet's padded 3x3 / 2 one, batches of 1 and 3.
TEST(OnnxFuseConvRelu, MarkedConvWithMaxPoolIsTheThreeNodes) {
  for (const std::vector<int64_t>& pool : {std::vector<int64_t>{2, 2, 2, 2, 0, 0}, {3, 3, 2, 2, 1, 1}}) {
    for (int64_t batch : {1, 3}) {
      const TensorData x = random(Shape{batch, 16, 9, 8}, 8), w = random(Shape{24, 16, 3, 3}, 9);
      const TensorData b = random(Shape{24}, 10);
      const TensorData fused = *test::run_op(conv_node(true, 2, pool), 13, {x, w, b}).at(0);
      const TensorData conv = *test::run_op(conv_node(false, 2), 13, {x, w, b}).at(0);
      const TensorData relu = *test::run_op(test::make_node("Relu", 1, 1), 13, {conv}).at(0);
      const TensorData want = *test::run_op(max_pool_node(pool), 13, {relu}).at(0);
      expect_close(fused, want, pool[0] == 2 ? "2x2 pool" : "3x3 pool");
    }
  }
}

// Without gradients: the marked Conv (2-D: the runtime's fused conv2d_relu; 1-D: a ReLU after conv2d) against the
// plain Conv followed by the Relu converter. Half the outputs are negative before the ReLU.
TEST(OnnxFuseConvRelu, MarkedConvIsReluOfConv) {
  for (std::size_t spatial : {1u, 2u}) {
    const Shape xs = spatial == 2 ? Shape{2, 16, 6, 5} : Shape{2, 16, 9};
    const Shape ws = spatial == 2 ? Shape{24, 16, 3, 3} : Shape{24, 16, 3};
    const TensorData x = random(xs, 1), w = random(ws, 2), b = random(Shape{24}, 3);
    const TensorData fused = *test::run_op(conv_node(true, spatial), 13, {x, w, b}).at(0);
    const TensorData plain = *test::run_op(conv_node(false, spatial), 13, {x, w, b}).at(0);
    const TensorData want = *test::run_op(test::make_node("Relu", 1, 1), 13, {plain}).at(0);
    expect_close(fused, want, spatial == 2 ? "2-D" : "1-D");
    int64_t zeros = 0;
    for (double v : fused.to_vec<double>()) zeros += v == 0.0;
    EXPECT_GT(zeros, 0) << "no output was clipped: the ReLU is untested";
  }
}

// With inputs that require grad the marked Conv records conv2d, ReLU (and max_pool2d): gradients as for the
// separate nodes.
TEST(OnnxFuseConvRelu, MarkedConvPassesGradientsLikeTheSeparateNodes) {
  for (bool with_pool : {false, true}) {
  const std::vector<int64_t> pool_mark = with_pool ? std::vector<int64_t>{2, 2, 2, 2, 0, 0} : std::vector<int64_t>{};
  const DynDevice& dev = capi::cpu_device();
  const TensorData xd = random(Shape{2, 8, 5, 5}, 4), wd = random(Shape{12, 8, 3, 3}, 5), bd = random(Shape{12}, 6);
  const TensorData seed_data = random(with_pool ? Shape{2, 12, 2, 2} : Shape{2, 12, 5, 5}, 7);
  // Returns {y, dx, dw, db} of sum(y * seed) where y is the marked Conv (fused) or Conv then Relu.
  const auto run = [&](bool fused) {
    std::vector<DynTensor> leaves;
    for (const TensorData* d : {&xd, &wd, &bd}) leaves.push_back(capi::set_requires_grad(capi::from_data(dev, *d), true));
    const Node conv = conv_node(fused, 2, fused ? pool_mark : std::vector<int64_t>{});
    OpContext ctx{conv, 13, dev, false, {}, nullptr};
    for (const DynTensor& l : leaves) ctx.inputs.emplace_back(l);
    DynTensor y = *op_registry().find("Conv", 13)->operator()(ctx).at(0);
    if (!fused) {
      const Node relu = test::make_node("Relu", 1, 1);
      OpContext rctx{relu, 13, dev, false, {y}, nullptr};
      y = *op_registry().find("Relu", 13)->operator()(rctx).at(0);
      if (with_pool) {
        const Node pool = max_pool_node(pool_mark);
        OpContext pctx{pool, 13, dev, false, {y}, nullptr};
        y = *op_registry().find("MaxPool", 13)->operator()(pctx).at(0);
      }
    }
    const DynTensor seed = capi::from_data(dev, seed_data);
    const capi::DynGrads grads = capi::backward(y, &seed, false, false);
    std::vector<TensorData> out{capi::to_data(y)};
    for (const DynTensor& l : leaves) {
      const auto g = capi::grad(grads, l);
      EXPECT_TRUE(g.has_value()) << "a gradient did not reach an input";
      out.push_back(g ? capi::to_data(*g) : TensorData{});
    }
    return out;
  };
  const std::vector<TensorData> fused = run(true), plain = run(false);
  const char* names[] = {"y", "dx", "dw", "db"};
  for (std::size_t i = 0; i < fused.size(); ++i) expect_close(fused[i], plain[i], names[i]);
  }
}

}  // namespace
}  // namespace ember::onnx_import
