// Fusion<Vulkan> (backends/vulkan/fused_chain*.cpp): the shader generated for a chain against the op-by-op executor
// (fusion::replay) on the same programs and against eager Vulkan, GELU's backward step against the eager composed
// rule, the pipeline cache (compiled once, found again with other scalars and sizes), and the layout the shader
// reads its inputs through. Runs under tests/support/vulkan_main.cpp (validation layer on).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "backends/vulkan/context.hpp"
#include "backends/vulkan/fused_chain.hpp"
#include "backends/vulkan/fused_chain_glsl.hpp"
#include "backends/vulkan/fused_chain_split.hpp"
#include "backends/vulkan/interop.hpp"
#include "backends/vulkan/vulkan_backend.hpp"
#include "engine/ember.hpp"
#include "tests/fusion/fusion_test_util.hpp"

namespace ember::test {
namespace {

using V = Vulkan;
using F = Fusion<V>;

vk::FusedChainStats stats() { return vk::fused_chain_stats(*vk::default_context()); }

// every_instruction_chain (fusion_test_util.hpp). Sums: the fused pass adds in another order than the eager
// reduction (per-workgroup partials), so they are compared with expect_close.
template <class B>
Tensor<B, 2> chain(int64_t rows, int64_t cols, double scale = 0.75) {
  return every_instruction_chain<B>(rows, cols, scale);
}

// The chain binds 6 distinct tensors (the bias row read twice and the mask read by the where and the cast share
// their bindings), so it runs fused: nothing is counted as unfused.
TEST(FusionVulkan, ChainMatchesEagerVulkan) {
  const auto before = stats();
  for (auto [rows, cols] : {std::array<int64_t, 2>{3, 5}, {17, 300}}) {
    SCOPED_TRACE(rows * cols);
    const auto fused = chain<F>(rows, cols);
    EXPECT_TRUE(F::is_pending(fused.primitive()));
    expect_same_bits(fused.into_data().to_vec<float>(), chain<V>(rows, cols).into_data().to_vec<float>());
    expect_close(chain<F>(rows, cols).sum().into_data().to_vec<float>(),
                 chain<V>(rows, cols).sum().into_data().to_vec<float>(), 1e-5);
    expect_close(chain<F>(rows, cols).mean().into_data().to_vec<float>(),
                 chain<V>(rows, cols).mean().into_data().to_vec<float>(), 1e-5);
  }
  const auto after = stats();
  EXPECT_EQ(after.unfused, before.unfused);
  EXPECT_GE(after.compiled + after.hits, before.compiled + before.hits + 6);
}

// The generated kernel and the op-by-op executor on the same recorded programs: an input broadcast along a middle
// dim, Int and Bool inputs, a program of one Fill (no inputs), each plain and with a trailing sum and mean.
TEST(FusionVulkan, KernelMatchesReplay) {
  using namespace fusion;
  const auto a = Tensor<F, 3>::from_values(uniform(2 * 5 * 7, 5), {2, 5, 7});
  const auto b = Tensor<F, 3>::from_values(uniform(2 * 7, 6), {2, 1, 7});
  const auto programs = {(a * b).sub_scalar(0.25).atan2(a.add(b)).primitive(),
                         chain<F>(9, 70).primitive(),
                         Tensor<F, 3>::full({4, 3, 2}, 1.5).exp().primitive()};
  for (const auto& p : programs) {
    for (const std::optional<ReduceOp> reduce :
         {std::optional<ReduceOp>{}, std::optional<ReduceOp>{ReduceOp::Sum}, std::optional<ReduceOp>{ReduceOp::Mean}}) {
      Builder<V> builder;
      builder.program.out = builder.visit(p.node);
      builder.program.shape = p.node->shape;
      builder.program.reduce_all = reduce;
      const auto fused = V::float_fused_chain(builder.program, builder.inputs);
      const auto replayed = replay<V>(builder.program, builder.inputs, {});
      EXPECT_EQ(fused.shape, replayed.shape);
      const auto got = V::into_data<Float>(fused).to_vec<float>(), want = V::into_data<Float>(replayed).to_vec<float>();
      if (reduce) expect_close(got, want, 1e-5);
      else expect_same_bits(got, want);
    }
  }
}

// GELU's and ReLU's backward steps inside a chain run the eager (composed) rule's ops in order: the eager bits
// (ReLU's at exact zeros of x and for both signs of g too).
TEST(FusionVulkan, GeluAndReluBackwardMatchEager) {
  auto xs = uniform(600, 11, -6, 6);
  for (std::size_t i = 0; i < xs.size(); i += 7) xs[i] = 0.0;
  const auto x = Tensor<F, 1>::from_values(xs, {600}).primitive();
  const auto g = Tensor<F, 1>::from_values(uniform(600, 12), {600}).primitive();
  for (const UnaryOp op : {UnaryOp::Gelu, UnaryOp::Relu}) {
    SCOPED_TRACE(op_name(op));
    const auto step = F::float_unary_backward(op, x, x, g);
    ASSERT_TRUE(step.has_value());
    EXPECT_TRUE(F::is_pending(*step));
    const auto want = optional_ops::float_unary_backward<V>(op, F::value(x), F::value(x), F::value(g));
    expect_same_bits(V::into_data<Float>(F::value(*step)).to_vec<float>(), V::into_data<Float>(want).to_vec<float>());
  }
}

// linear -> bias -> GELU -> dropout's mask, forward and backward: Autodiff<Fusion<Vulkan>> against Autodiff<Vulkan>.
template <class B>
std::vector<std::vector<float>> block_grads() {
  using AD = Autodiff<B>;
  const int64_t n = 6, k = 5, m = 9;
  const auto x = Tensor<AD, 2>::from_values(uniform(n * k, 7), {n, k}).require_grad();
  const auto w = Tensor<AD, 2>::from_values(uniform(k * m, 8, -1, 1), {k, m}).require_grad();
  const auto bias = Tensor<AD, 1>::from_values(uniform(m, 9), {m}).require_grad();
  std::vector<bool> keep(static_cast<std::size_t>(n * m));
  for (std::size_t i = 0; i < keep.size(); ++i) keep[i] = i % 3 != 0;
  const auto mask = Tensor<AD, 2, Bool>::from_values(keep, {n, m}).to_float().mul_scalar(1.5);
  const auto y = (x.matmul(w) + bias.template unsqueeze<2>(0)).gelu() * mask;
  const auto grads = y.mul(y).sum().backward();
  return {y.into_data().template to_vec<float>(), x.grad(grads)->into_data().template to_vec<float>(),
          w.grad(grads)->into_data().template to_vec<float>(), bias.grad(grads)->into_data().template to_vec<float>()};
}

TEST(FusionVulkan, AutodiffGradientsMatchEager) {
  const auto fused = block_grads<F>(), eager = block_grads<V>();
  ASSERT_EQ(fused.size(), eager.size());
  for (std::size_t i = 0; i < fused.size(); ++i) {
    SCOPED_TRACE(i);
    expect_close(fused[i], eager[i], 1e-5);
  }
}

// A program compiles once; the same chain with another scalar and another size finds its pipeline (scalars, sizes
// and strides are push constants, not part of the key), while a different op compiles anew.
TEST(FusionVulkan, CompilesOnceThenHitsTheCache) {
  auto run = [](int64_t rows, double s, bool cosh) {
    const auto x = Tensor<F, 2>::from_values(uniform(rows * 8, 21), {rows, 8});
    const auto b = Tensor<F, 1>::from_values(uniform(8, 22), {8});
    const auto y = (x + b.unsqueeze<2>(0)).mul_scalar(s);
    (cosh ? y.cosh() : y.sinh()).into_data();
  };
  const auto before = stats();
  run(4, 0.5, false);
  const auto first = stats();
  EXPECT_EQ(first.compiled, before.compiled + 1);
  run(4, 0.5, false);
  run(13, -2.25, false);
  const auto again = stats();
  EXPECT_EQ(again.compiled, first.compiled);
  EXPECT_EQ(again.hits, first.hits + 2);
  run(4, 0.5, true);
  EXPECT_EQ(stats().compiled, again.compiled + 1);
  EXPECT_LE(stats().cached, vk::kMaxFusedPipelines);
}

// The cache is bounded: beyond its limit the least recently used pipeline goes, and running that program again
// compiles it again; the most recent ones stay.
TEST(FusionVulkan, CacheEvictsTheLeastRecentlyUsed) {
  auto& ctx = *vk::default_context();
  auto run = [](int which) {
    const auto x = Tensor<F, 1>::from_values(uniform(40, 23), {40}).mul_scalar(0.25);
    (which == 0 ? x.atan() : which == 1 ? x.asinh() : x.erf()).into_data();
  };
  run(0);
  run(1);
  vk::set_max_fused_pipelines(ctx, 2);
  const auto before = stats();
  EXPECT_EQ(before.cached, 2u);
  run(2);  // evicts program 0
  run(1);  // still cached
  auto s = stats();
  EXPECT_EQ(s.compiled, before.compiled + 1);
  EXPECT_EQ(s.evicted, before.evicted + 1);
  EXPECT_EQ(s.cached, 2u);
  run(0);  // compiled again
  EXPECT_EQ(stats().compiled, s.compiled + 1);
  vk::set_max_fused_pipelines(ctx, vk::kMaxFusedPipelines);
}

// A program over more tensors than one dispatch binds runs as several kernels: a sub-expression over at most 7
// first, the rest reading its result; nothing op by op, and the eager bits.
TEST(FusionVulkan, TooManyInputsSplitIntoKernels) {
  std::vector<Tensor<F, 1>> fx;
  std::vector<Tensor<V, 1>> vx;
  for (uint64_t k = 0; k < 2 * vk::kMaxFusedInputs + 3; ++k) {
    const auto v = uniform(33, 30 + k);
    fx.push_back(Tensor<F, 1>::from_values(v, {33}));
    vx.push_back(Tensor<V, 1>::from_values(v, {33}));
  }
  auto fsum = fx[0];
  auto vsum = vx[0];
  for (std::size_t k = 1; k < fx.size(); ++k) {
    fsum = k % 2 ? fsum * fx[k].tanh() : fsum + fx[k];
    vsum = k % 2 ? vsum * vx[k].tanh() : vsum + vx[k];
  }
  const auto before = stats();
  const auto got = fsum.into_data().to_vec<float>();
  const auto after = stats();
  EXPECT_EQ(after.split, before.split + 1);
  EXPECT_EQ(after.unfused, before.unfused);
  expect_same_bits(got, vsum.into_data().to_vec<float>());
  expect_close(fx[0].mul(fsum).sum().into_data().to_vec<float>(), vx[0].mul(vsum).sum().into_data().to_vec<float>(),
               1e-5);
}

// The sub-expression chosen: the most distinct tensors within the limit; extracted with only what it needs.
TEST(FusionVulkan, SplitPointAndExtract) {
  using fusion::InstrKind;
  fusion::Program p;
  p.shape = Shape{4};
  auto instr = [](InstrKind k, int32_t op, int32_t a = -1, int32_t b = -1) {
    fusion::Instr i;
    i.kind = k;
    i.op = op;
    i.a = a;
    i.b = b;
    i.shape = Shape{4};
    return i;
  };
  const int32_t add = static_cast<int32_t>(BinaryOp::Add);
  // r0..r3 inputs 0..3, r4 = r0 + r1, r5 = r4 + r2, r6 = r5 + r3 (out)
  for (int32_t k = 0; k < 4; ++k) {
    p.inputs.push_back({fusion::InputKind::Float, Shape{4}});
    p.instrs.push_back(instr(InstrKind::Input, k));
  }
  p.instrs.push_back(instr(InstrKind::Binary, add, 0, 1));
  p.instrs.push_back(instr(InstrKind::Binary, add, 4, 2));
  p.instrs.push_back(instr(InstrKind::Binary, add, 5, 3));
  p.out = 6;
  EXPECT_EQ(vk::split_point(p, {0, 1, 2, 3}, 3), std::optional<int32_t>(5));
  EXPECT_EQ(vk::split_point(p, {0, 1, 2, 3}, 2), std::optional<int32_t>(4));
  EXPECT_EQ(vk::split_point(p, {0, 0, 0, 0}, 1), std::nullopt);  // one tensor under every register
  std::vector<std::size_t> map;
  const auto q = vk::extract_program(p, 5, map);
  EXPECT_EQ(map, (std::vector<std::size_t>{0, 1, 2}));
  ASSERT_EQ(q.instrs.size(), 5u);
  EXPECT_EQ(q.out, 4);
  // Post-order: input 0, input 1, their sum, input 2, the output (operands always before their users).
  EXPECT_EQ(q.instrs[2].kind, InstrKind::Binary);
  EXPECT_EQ(q.instrs[3].kind, InstrKind::Input);
  EXPECT_EQ(q.instrs[3].op, 2);
  EXPECT_EQ(q.instrs[4].a, 2);
  EXPECT_EQ(q.instrs[4].b, 3);
}

// Over the push-constant words (31 scalars of a chain of scalar ops, the element count and one dim): op by op.
TEST(FusionVulkan, TooManyScalarsRunsOpByOp) {
  const auto v = uniform(50, 40);
  auto f = Tensor<F, 1>::from_values(v, {50});
  auto e = Tensor<V, 1>::from_values(v, {50});
  for (int k = 0; k < 31; ++k) {
    f = f.mul_scalar(1.0 + k / 64.0);
    e = e.mul_scalar(1.0 + k / 64.0);
  }
  const auto before = stats();
  const auto got = f.into_data().to_vec<float>();
  EXPECT_EQ(stats().unfused, before.unfused + 1);
  expect_same_bits(got, e.into_data().to_vec<float>());
}

// A context of its own: its chains run on it (also a constant chain, which has no input to say where), and when
// it goes, its cached pipelines go before its device (the validation layer reports any object left behind, and a
// pipeline destroyed while in use).
TEST(FusionVulkan, OwnContextRunsItsChainsAndTearsDownClean) {
  vk::ContextOptions o;
  o.validation = true;
  o.on_validation_message = [](const std::string& m) { ADD_FAILURE() << m; };
  {
    const auto dev = vulkan::create(o);
    const auto v = uniform(70, 50);
    const auto x = Tensor<F, 1>::from_values(v, {70}, dev);
    const auto y = x.exp().mul_scalar(0.5).add(Tensor<F, 1>::full({70}, 0.25, dev));
    const auto want = Tensor<V, 1>::from_values(v, {70}).exp().mul_scalar(0.5).add_scalar(0.25);
    expect_same_bits(y.into_data().to_vec<float>(), want.into_data().to_vec<float>());
    const auto c = Tensor<F, 1>::full({5}, 2.0, dev).exp();
    EXPECT_EQ(F::value(c.primitive()).ctx, dev.get());
    EXPECT_EQ(vk::fused_chain_stats(*dev.get()).compiled, 2u);
    EXPECT_EQ(vk::fused_chain_stats(*dev.get()).unfused, 0u);
  }
}

// How the shader reads its inputs: unit dims dropped, dims contiguous in every operand merged, a bias row strided
// over the merged [6, 4], a one-element input a constant; scalars are push words, not key.
TEST(FusionVulkan, LayoutMergesDimsAndKeepsScalarsOutOfTheKey) {
  fusion::Program p;
  p.shape = Shape{2, 3, 1, 4};
  p.inputs = {{fusion::InputKind::Float, Shape{2, 3, 1, 4}}, {fusion::InputKind::Float, Shape{4}},
              {fusion::InputKind::Float, Shape{1}}};
  auto instr = [](fusion::InstrKind k, int32_t op, int32_t a = -1, int32_t b = -1, double s = 0) {
    fusion::Instr i;
    i.kind = k;
    i.op = op;
    i.a = a;
    i.b = b;
    i.s = s;
    return i;
  };
  using fusion::InstrKind;
  p.instrs = {instr(InstrKind::Input, 0), instr(InstrKind::Input, 1), instr(InstrKind::Input, 2),
              instr(InstrKind::Binary, static_cast<int32_t>(BinaryOp::Add), 0, 1),
              instr(InstrKind::Scalar, static_cast<int32_t>(ScalarOp::Mul), 3, -1, 0.5),
              instr(InstrKind::Binary, static_cast<int32_t>(BinaryOp::Mul), 4, 2)};
  p.out = 5;
  const auto l = vk::fused_layout(p);
  EXPECT_EQ(l.dims, (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(l.access, (std::vector<vk::FusedAccess>{vk::FusedAccess::Same, vk::FusedAccess::Strided,
                                                    vk::FusedAccess::Constant}));
  EXPECT_EQ(l.strides[1], (std::vector<int64_t>{0, 1}));
  // n, the 2 dims, the bias's 2 strides, the scalar 0.5.
  const float half = 0.5f;
  uint32_t half_bits;
  std::memcpy(&half_bits, &half, 4);
  EXPECT_EQ(l.push, (std::vector<uint32_t>{24, 6, 4, 0, 1, half_bits}));
  EXPECT_TRUE(vk::fused_fits(p, l));
  p.instrs[4].s = -3.0;
  p.shape = Shape{5, 4};
  p.inputs[0].shape = Shape{5, 4};
  EXPECT_EQ(vk::fused_layout(p).key, l.key);
  const std::string glsl = vk::fused_chain_glsl(p, l, true);
  EXPECT_NE(glsl.find("in1[o1]"), std::string::npos) << glsl;
  EXPECT_NE(glsl.find("in2[0]"), std::string::npos) << glsl;
  // The same bias row read twice: one binding and one set of strides, read through the first input's buffer.
  p.inputs[2].shape = Shape{4};
  const auto twice = vk::fused_layout(p, {0, 1, 1});
  EXPECT_EQ(vk::fused_bindings(twice), 2u);
  EXPECT_EQ(twice.push.size(), 6u);
  EXPECT_NE(twice.key, vk::fused_layout(p).key);
  const std::string shared = vk::fused_chain_glsl(p, twice, true);
  EXPECT_EQ(shared.find("buffer In2"), std::string::npos) << shared;
  EXPECT_NE(shared.find("r2 = in1[o1]"), std::string::npos) << shared;
}

}  // namespace
}  // namespace ember::test
