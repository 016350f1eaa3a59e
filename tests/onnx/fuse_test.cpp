// Gemm + Relu fused at load (onnx/fuse.hpp) and Gemm as one fused linear (onnx/ops/nn.cpp, runtime op linear): the
// rewrite happens only where the Gemm's result has no other reader, and a two-layer MLP in PyTorch's export form
// (Gemm transB = 1 with a [N] bias, Relu) gives the reference outputs under no_grad (the fused kernels) and with
// gradients recorded, whose gradients reach the initializers.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "onnx/fuse.hpp"
#include "onnx/model.hpp"
#include "tests/onnx/onnx_op_test_util.hpp"

namespace ember::onnx_import {
namespace {

using test::int_attr;
using test::node;

ValueInfo info(std::string name) {
  ValueInfo v;
  v.name = std::move(name);
  v.dtype = DType::F32;
  return v;
}

Graph gemm_relu_graph() {
  Graph g;
  g.inputs = {info("x")};
  g.outputs = {info("y")};
  g.nodes.push_back(node("Gemm", {"x", "w", "b"}, {"t"}, {{"transB", int_attr(1)}}));
  g.nodes.push_back(node("Relu", {"t"}, {"y"}));
  return g;
}

TEST(OnnxFuse, GemmReluBecomesOneMarkedGemm) {
  Graph g = gemm_relu_graph();
  fuse_gemm_relu(g);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op_type, "Gemm");
  EXPECT_EQ(g.nodes[0].outputs, (std::vector<std::string>{"y"}));
  EXPECT_EQ(g.nodes[0].attr_int(kFusedReluAttr, 0), 1);
}

TEST(OnnxFuse, KeepsAGemmWhoseResultHasOtherReaders) {
  Graph out = gemm_relu_graph();
  out.outputs.push_back(info("t"));  // the pre-activation is a graph output too
  fuse_gemm_relu(out);
  EXPECT_EQ(out.nodes.size(), 2u);
  Graph two = gemm_relu_graph();
  two.nodes.push_back(node("Neg", {"t"}, {"z"}));
  two.outputs.push_back(info("z"));
  fuse_gemm_relu(two);
  EXPECT_EQ(two.nodes.size(), 3u);
  EXPECT_FALSE(two.nodes[0].has_attr(kFusedReluAttr));
}

// y = Gemm(Relu(Gemm(x, w1^T) + b1), w2^T) + b2 with w1 [h, k], w2 [n, h]: PyTorch's Linear -> ReLU -> Linear.
struct Mlp {
  int64_t k = 24, h = 80, n = 72;
  std::vector<float> w1, b1, w2, b2;
  Mlp() {
    std::mt19937 gen(5);
    std::uniform_real_distribution<float> u(-0.5f, 0.5f);
    auto fill = [&](std::size_t size) {
      std::vector<float> v(size);
      for (float& x : v) x = u(gen);
      return v;
    };
    w1 = fill(static_cast<std::size_t>(h * k));
    b1 = fill(static_cast<std::size_t>(h));
    w2 = fill(static_cast<std::size_t>(n * h));
    b2 = fill(static_cast<std::size_t>(n));
  }
  Model model() const {
    Model m;
    m.opsets[""] = 13;
    m.graph.inputs = {info("x")};
    m.graph.outputs = {info("y")};
    m.graph.initializers.emplace_back("w1", TensorData::from_vec<float>(w1, Shape{h, k}));
    m.graph.initializers.emplace_back("b1", TensorData::from_vec<float>(b1, Shape{h}));
    m.graph.initializers.emplace_back("w2", TensorData::from_vec<float>(w2, Shape{n, h}));
    m.graph.initializers.emplace_back("b2", TensorData::from_vec<float>(b2, Shape{1, n}));  // [1, N]: also a row bias
    m.graph.nodes.push_back(node("Gemm", {"x", "w1", "b1"}, {"z"}, {{"transB", int_attr(1)}}));
    m.graph.nodes.push_back(node("Relu", {"z"}, {"a"}));
    m.graph.nodes.push_back(node("Gemm", {"a", "w2", "b2"}, {"y"}, {{"transB", int_attr(1)}}));
    for (std::size_t i = 0; i < m.graph.nodes.size(); ++i) m.graph.nodes[i].index = static_cast<int64_t>(i);
    return m;
  }
  // Forward in double; with dy = ones, the gradient of sum(y) with respect to w1 ([h, k]) in gw1.
  std::vector<double> forward(const std::vector<float>& x, int64_t batch, std::vector<double>& gw1) const {
    std::vector<double> z(static_cast<std::size_t>(batch * h)), y(static_cast<std::size_t>(batch * n));
    gw1.assign(static_cast<std::size_t>(h * k), 0.0);
    for (int64_t r = 0; r < batch; ++r) {
      for (int64_t j = 0; j < h; ++j) {
        double s = b1[j];
        for (int64_t i = 0; i < k; ++i) s += double(x[r * k + i]) * w1[j * k + i];
        z[r * h + j] = s;
      }
      for (int64_t o = 0; o < n; ++o) {
        double s = b2[o];
        for (int64_t j = 0; j < h; ++j) s += std::max(0.0, z[r * h + j]) * w2[o * h + j];
        y[r * n + o] = s;
      }
      for (int64_t j = 0; j < h; ++j) {
        if (z[r * h + j] <= 0) continue;
        double dz = 0;
        for (int64_t o = 0; o < n; ++o) dz += w2[o * h + j];
        for (int64_t i = 0; i < k; ++i) gw1[j * k + i] += dz * x[r * k + i];
      }
    }
    return y;
  }
};

void expect_close(const std::vector<float>& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::abs(want[i]))) << what << " at " << i;
}

TEST(OnnxFuse, FusedMlpMatchesTheReferenceWithAndWithoutGradients) {
  const Mlp mlp;
  OnnxModel model = OnnxModel::from_ir(mlp.model(), capi::cpu_device());
  for (int64_t batch : {1, 64}) {  // one row: OpenBLAS's gemv; 64: oneDNN's matmul with post-ops
    std::mt19937 gen(static_cast<uint32_t>(batch));
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<float> xs(static_cast<std::size_t>(batch * mlp.k));
    for (float& v : xs) v = u(gen);
    std::vector<double> gw1;
    const std::vector<double> want = mlp.forward(xs, batch, gw1);
    const DynTensor x = capi::from_data(capi::cpu_device(), TensorData::from_vec<float>(xs, Shape{batch, mlp.k}));

    capi::no_grad_enter();
    const DynTensor fused = model.forward({x})[0];
    capi::no_grad_exit();
    EXPECT_FALSE(capi::requires_grad(fused));
    expect_close(capi::to_data(fused).to_vec<float>(), want, "no_grad");

    const DynTensor recorded = model.forward({x}, true)[0];
    expect_close(capi::to_data(recorded).to_vec<float>(), want, "recorded");
    const DynTensor ones = capi::full(capi::cpu_device(), DType::F32, Shape{batch, mlp.n}, 1.0);
    const capi::DynGrads g = capi::backward(recorded, &ones, false, false);
    const auto grad_w1 = capi::grad(g, model.params()[0].second);
    ASSERT_TRUE(grad_w1.has_value());
    expect_close(capi::to_data(*grad_w1).to_vec<float>(), gw1, "grad w1");
  }
}

}  // namespace
}  // namespace ember::onnx_import
