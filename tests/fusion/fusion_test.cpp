// Fusion<B> (engine/fusion/): chains stay pending until read, run as one program, and compute exactly what the
// ops one by one compute on B: the CPU's fused tile kernel against eager Cpu (bit for bit, sizes around the tile
// length, broadcast operands, Int and Bool operands), against the op-by-op executor on the same program, the chain
// cap, and Autodiff<Fusion<B>>'s gradients against Autodiff<B>'s.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <optional>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "engine/ember.hpp"
#include "tests/fusion/fusion_test_util.hpp"

namespace ember::test {
namespace {

using C = Cpu<float>;
using F = Fusion<C>;

// every_instruction_chain (fusion_test_util.hpp), read to the host.
template <class B>
std::vector<float> chain(int64_t rows, int64_t cols) {
  return every_instruction_chain<B>(rows, cols).into_data().template to_vec<float>();
}

TEST(Fusion, ChainMatchesEagerBitForBit) {
  // Around the CPU kernel's tile (512): one element, less than a tile, exactly one, one more, many with a ragged end;
  // a row length that does not divide the tile, so broadcast runs cross tile boundaries; rows of two tiles, whose bias
  // runs are read in place at an offset, and rows where only some tiles stay within one row (2 x 700: the second
  // tile crosses into row 1 and is gathered, the third starts at column 324 and is read in place).
  for (auto [rows, cols] : std::vector<std::array<int64_t, 2>>{
           {1, 1}, {3, 170}, {1, 512}, {1, 513}, {37, 61}, {8, 300}, {3, 1024}, {2, 700}}) {
    SCOPED_TRACE(::testing::Message() << rows << " x " << cols);
    expect_same_bits(chain<F>(rows, cols), chain<C>(rows, cols));
  }
}

TEST(Fusion, OpsStayPendingUntilRead) {
  const auto x = Tensor<F, 1>::from_values(uniform(1000, 3), {1000});
  EXPECT_FALSE(F::is_pending(x.primitive()));
  const auto y = x.mul_scalar(2.0).relu();
  const auto z = y.add(x).exp();
  EXPECT_TRUE(F::is_pending(y.primitive()));
  EXPECT_TRUE(F::is_pending(z.primitive()));
  const auto got = z.into_data().to_vec<float>();
  EXPECT_FALSE(F::is_pending(z.primitive()));
  // The intermediate was computed inside z's pass, never written: it is still pending (and recomputed if read).
  EXPECT_TRUE(F::is_pending(y.primitive()));
  const auto want =
      Tensor<C, 1>::from_values(uniform(1000, 3), {1000}).mul_scalar(2.0).relu().add(Tensor<C, 1>::from_values(uniform(1000, 3), {1000})).exp();
  expect_same_bits(got, want.into_data().to_vec<float>());
  // A non-elementwise op materializes its operand.
  const auto m = y.reshape<2>({10, 100}).matmul(Tensor<F, 2>::ones({100, 3}));
  EXPECT_FALSE(F::is_pending(y.primitive()));
  EXPECT_EQ(m.dims(), (std::array<int64_t, 2>{10, 3}));
}

TEST(Fusion, LongChainIsCutAndStillExact) {
  // 3 * kMaxChain ops: the pending operand is materialized each time the chain would pass the cap.
  auto run = [](auto x) {
    for (int i = 0; i < 3 * fusion::kMaxChain; ++i) x = (i % 2 ? x.mul_scalar(1.01) : x.sin().add_scalar(0.5));
    return x;
  };
  const auto v = uniform(777, 4);
  const auto fused = run(Tensor<F, 1>::from_values(v, {777}));
  const auto eager = run(Tensor<C, 1>::from_values(v, {777}));
  EXPECT_TRUE(F::is_pending(fused.primitive()));
  expect_same_bits(fused.into_data().to_vec<float>(), eager.into_data().to_vec<float>());
}

// A loss (sum / mean over everything) ends its operand's chain in the same pass: the operand is never stored, and on
// one thread the result is the eager reduction's bits (its blocking of 4096 and lanes of 16 are reproduced).
TEST(Fusion, TrailingSumAndMeanMatchEagerBitForBit) {
  const int threads = cpu::num_threads();
  cpu::set_num_threads(1);
  for (int64_t n : {1, 100, 4096, 4097, 3 * 4096 + 517}) {
    SCOPED_TRACE(n);
    const auto v = uniform(n, 10);
    const auto fx = Tensor<F, 1>::from_values(v, {n});
    const auto cx = Tensor<C, 1>::from_values(v, {n});
    const auto fy = fx.gelu().mul(fx).add_scalar(0.125);
    const auto cy = cx.gelu().mul(cx).add_scalar(0.125);
    expect_same_bits(fy.sum().into_data().to_vec<float>(), cy.sum().into_data().to_vec<float>());
    expect_same_bits(fy.mean().into_data().to_vec<float>(), cy.mean().into_data().to_vec<float>());
    EXPECT_TRUE(F::is_pending(fy.primitive()));
    // Max is not fused: the operand is materialized and reduced by the CPU.
    expect_same_bits(fy.max().into_data().to_vec<float>(), cy.max().into_data().to_vec<float>());
    EXPECT_FALSE(F::is_pending(fy.primitive()));
  }
  cpu::set_num_threads(threads);
}

// The CPU's fused kernel and the op-by-op executor on the same recorded programs (including an input broadcast
// along a middle dim, and a program that is one Fill).
TEST(Fusion, CpuKernelMatchesReplay) {
  using namespace fusion;
  const auto a = Tensor<F, 3>::from_values(uniform(2 * 5 * 7, 5), {2, 5, 7});
  const auto b = Tensor<F, 3>::from_values(uniform(2 * 7, 6), {2, 1, 7});
  const auto programs = {(a * b).sub_scalar(0.25).atan2(a.add(b)).primitive(),
                         Tensor<F, 3>::full({4, 3, 2}, 1.5).primitive()};
  for (const auto& p : programs) {
    for (const std::optional<ReduceOp> reduce : {std::optional<ReduceOp>{}, std::optional<ReduceOp>{ReduceOp::Sum}}) {
      Builder<C> builder;
      builder.program.out = builder.visit(p.node);
      builder.program.shape = p.node->shape;
      builder.program.reduce_all = reduce;
      const auto fused = C::float_fused_chain(builder.program, builder.inputs);
      const auto replayed = replay<C>(builder.program, builder.inputs, {});
      EXPECT_EQ(fused.shape, replayed.shape);
      expect_same_bits(C::into_data<Float>(fused).to_vec<float>(), C::into_data<Float>(replayed).to_vec<float>());
    }
  }
}

// linear -> bias -> GELU (or ReLU) -> dropout's mask, forward and backward: Autodiff<Fusion<Cpu>> against
// Autodiff<Cpu>.
template <class B>
std::vector<std::vector<float>> block_grads(bool relu = false) {
  using AD = Autodiff<B>;
  const int64_t n = 6, k = 5, m = 9;
  const auto x = Tensor<AD, 2>::from_values(uniform(n * k, 7), {n, k}).require_grad();
  const auto w = Tensor<AD, 2>::from_values(uniform(k * m, 8, -1, 1), {k, m}).require_grad();
  const auto bias = Tensor<AD, 1>::from_values(uniform(m, 9), {m}).require_grad();
  std::vector<bool> keep(static_cast<std::size_t>(n * m));
  for (std::size_t i = 0; i < keep.size(); ++i) keep[i] = i % 3 != 0;
  const auto mask = Tensor<AD, 2, Bool>::from_values(keep, {n, m}).to_float().mul_scalar(1.5);
  const auto z = x.matmul(w) + bias.template unsqueeze<2>(0);
  const auto y = (relu ? z.relu() : z.gelu()) * mask;
  const auto grads = y.mul(y).sum().backward();
  return {y.into_data().template to_vec<float>(), x.grad(grads)->into_data().template to_vec<float>(),
          w.grad(grads)->into_data().template to_vec<float>(), bias.grad(grads)->into_data().template to_vec<float>()};
}

// GELU's and ReLU's backward steps are one instruction of the chain running the CPU's own formula, so the
// gradients have the eager bits; other activations answer nullopt (their composed rule fuses as it is).
TEST(Fusion, AutodiffGradientsMatchEager) {
  for (const bool relu : {false, true}) {
    SCOPED_TRACE(relu ? "relu" : "gelu");
    const auto fused = block_grads<F>(relu), eager = block_grads<C>(relu);
    ASSERT_EQ(fused.size(), eager.size());
    for (std::size_t i = 0; i < fused.size(); ++i) {
      SCOPED_TRACE(i);
      expect_same_bits(fused[i], eager[i]);
    }
  }
  // x with exact zeros (ReLU's step is 0 there) and g with both signs.
  auto xs = uniform(600, 11);
  for (std::size_t i = 0; i < xs.size(); i += 7) xs[i] = 0.0;
  const auto x = Tensor<F, 1>::from_values(xs, {600}).primitive();
  const auto g = Tensor<F, 1>::from_values(uniform(600, 12), {600}).primitive();
  for (const UnaryOp op : {UnaryOp::Gelu, UnaryOp::Relu}) {
    SCOPED_TRACE(op_name(op));
    const auto step = F::float_unary_backward(op, x, x, g);
    ASSERT_TRUE(step.has_value());
    EXPECT_TRUE(F::is_pending(*step));
    const auto want = *C::float_unary_backward(op, F::value(x), F::value(x), F::value(g));
    expect_same_bits(C::into_data<Float>(F::value(*step)).to_vec<float>(), C::into_data<Float>(want).to_vec<float>());
    // The same program op by op (fusion::replay, what a backend without float_fused_chain runs).
    const auto again = F::float_unary_backward(op, x, x, g);
    fusion::Builder<C> builder;
    builder.program.out = builder.visit(again->node);
    builder.program.shape = again->node->shape;
    const auto replayed = fusion::replay<C>(builder.program, builder.inputs, {});
    expect_same_bits(C::into_data<Float>(replayed).to_vec<float>(), C::into_data<Float>(want).to_vec<float>());
  }
  EXPECT_FALSE(F::float_unary_backward(UnaryOp::Tanh, x, x, g).has_value());
}

}  // namespace
}  // namespace ember::test
