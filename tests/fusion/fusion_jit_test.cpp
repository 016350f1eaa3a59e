// Fusion<Cpu<float>>'s code generator (backends/cpu/fused_jit.hpp): chains of every instruction it emits, compiled
// (checked through its counters) and bit-identical to the eager ops and to the tiled interpreter (a NaN's payload
// aside, where two NaNs meet), around the vector
// and tile lengths and over special values; programs it declines (an op it does not emit, too many live values) run
// in the interpreter with the same results. Skipped where the generator is not built or the CPU lacks AVX-512F.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/fused_jit.hpp"
#include "backends/cpu/gelu_avx512.hpp"
#include "engine/ember.hpp"
#include "tests/fusion/fusion_test_util.hpp"

namespace ember::test {
namespace {

using C = Cpu<float>;
using F = Fusion<C>;

// The generator needs a program that is new to its cache to count a compile: each test uses its own scalars.
bool jit_here() {
  // A probe program: if the generator is off or absent, fused_jit_kernel answers null without counting.
  fusion::Program p;
  fusion::Instr in;
  in.kind = fusion::InstrKind::Input;
  p.instrs.push_back(in);
  p.inputs.push_back({fusion::InputKind::Float, Shape{1}});
  p.shape = Shape{1};
  return cpu::fused_jit_kernel(p) != nullptr;
}

// Inputs with the special values every emitted form must carry through as the eager op does.
std::vector<double> with_specials(int64_t n, uint64_t seed) {
  auto v = uniform(n, seed, -8, 8);
  const double inf = std::numeric_limits<double>::infinity();
  const double specials[] = {std::nan(""), inf, -inf, 0.0, -0.0, 1e-30, -1e30, 13.25, -13.25, -6.0, 5.7, 0.5, -2.5};
  for (std::size_t i = 0; i < v.size(); i += 7) v[i] = specials[(i / 7) % std::size(specials)];
  return v;
}

// Every instruction the generator emits, on [rows, cols] with a bias row, a column, a one-element input, Int and Bool
// casts, a fill, where and mask_fill; GELU's and ReLU's backward steps through Fusion's float_unary_backward.
template <class B>
Tensor<B, 2> every_emitted_instruction(int64_t rows, int64_t cols, double salt) {
  const auto x = Tensor<B, 2>::from_values(with_specials(rows * cols, 1), {rows, cols});
  const auto g = Tensor<B, 2>::from_values(with_specials(rows * cols, 2), {rows, cols});
  const auto bias = Tensor<B, 1>::from_values(uniform(cols, 3), {cols});
  const auto column = Tensor<B, 2>::from_values(uniform(rows, 4), {rows, 1});
  const auto one = Tensor<B, 1>::from_values({0.75}, {1});
  std::vector<int64_t> ints(static_cast<std::size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) ints[static_cast<std::size_t>(i)] = i % 5 - 2;
  const auto idx = Tensor<B, 2, Int>::from_values(ints, {rows, 1});
  std::vector<bool> keep(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < keep.size(); ++i) keep[i] = (i * 2654435761u) % 5 < 3;
  const auto mask = Tensor<B, 2, Bool>::from_values(keep, {rows, cols});

  auto y = (x + bias.template unsqueeze<2>(0)).gelu();               // Input (bias row), Binary add, Unary gelu
  y = y * one.template unsqueeze<2>(0) - column + idx.to_float();     // one element, column, Int cast
  y = y.mask_where(mask, Tensor<B, 2>::full({rows, cols}, -0.5));     // Where, Fill
  y = y.mask_fill(mask.logical_not(), salt) * mask.to_float();       // MaskFill, Bool cast
  y = y.maximum(x.neg()).minimum(x.abs().sqrt().add_scalar(salt));   // Max, Min, Neg, Abs, Sqrt, Scalar add
  y = y.div(x.recip().add_scalar(2.0)) + x.floor() - x.ceil() * x.round();  // Div, Recip, Floor, Ceil, Round
  y = y.relu().sub_scalar(0.25).mul_scalar(1.5).div_scalar(3.0).rsub_scalar(1.0).rdiv_scalar(2.0);
  y = y.clamp_min(-4.0).clamp_max(4.0).pow_scalar(2.0) + x.abs().pow_scalar(0.5) - x.pow_scalar(-1.0);
  y = y + bias.template unsqueeze<2>(0).expand(std::array<int64_t, 2>{rows, cols});  // Expand
  // GELU's and ReLU's steps (GeluBackward, ReluBackward), read at the chain's end.
  const Tensor<B, 2> dg(B::float_unary_backward(UnaryOp::Gelu, x.primitive(), x.primitive(), y.primitive()).value());
  const Tensor<B, 2> dr(B::float_unary_backward(UnaryOp::Relu, x.primitive(), x.primitive(), g.primitive()).value());
  return dg + dr;
}

std::vector<float> host(const auto& t) { return t.into_data().template to_vec<float>(); }

TEST(FusedJit, EveryEmittedInstructionHasTheEagerBits) {
  if (!jit_here()) GTEST_SKIP() << "no fused-chain code generator here (built without Xbyak, or no AVX-512F)";
  // Lengths around the vector (16) and the tile (512): masked tails of every size class, rows crossing tiles.
  double salt = 0.125;
  for (auto [rows, cols] : std::vector<std::array<int64_t, 2>>{
           {1, 1}, {1, 15}, {1, 16}, {1, 17}, {3, 170}, {1, 513}, {37, 61}, {2, 700}}) {
    SCOPED_TRACE(::testing::Message() << rows << " x " << cols);
    salt += 0.0625;  // a new program each time: its compile is counted
    const auto before = cpu::fused_jit_stats();
    const auto fused = host(every_emitted_instruction<F>(rows, cols, salt));
    const auto after = cpu::fused_jit_stats();
    EXPECT_GT(after.compiled, before.compiled) << "the chain was not compiled";
    EXPECT_EQ(after.declined, before.declined) << after.last_declined;
    // NaN inputs meet NaN operands here (GELU's step of inf with a NaN gradient): which NaN an op returns then is
    // the compiler's operand order, not the op's result (fusion_test_util.hpp).
    expect_same_bits_any_nan(fused, host(every_emitted_instruction<C>(rows, cols, salt)));
    cpu::set_fused_jit(false);
    const auto interpreted = host(every_emitted_instruction<F>(rows, cols, salt));
    cpu::set_fused_jit(true);
    expect_same_bits_any_nan(fused, interpreted);
  }
}

// Each emitted op alone, on operands with special values at different positions (so that NaN, infinities, signed
// zeros and tiny values meet ordinary ones): a one-op chain's result is the op's, not hidden behind later ops.
TEST(FusedJit, EachEmittedOpAloneHasTheEagerBits) {
  if (!jit_here()) GTEST_SKIP() << "no fused-chain code generator here (built without Xbyak, or no AVX-512F)";
  const int64_t n = 203;  // 12 vectors and a tail of 11
  auto z_values = with_specials(n, 21);
  auto w_values = with_specials(n, 22);
  std::rotate(w_values.begin(), w_values.begin() + 3, w_values.end());
  std::vector<bool> keep(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < keep.size(); ++i) keep[i] = i % 3 == 0;
  auto check = [&](const char* name, auto op) {
    SCOPED_TRACE(name);
    const auto zf = Tensor<F, 1>::from_values(z_values, {n}), wf = Tensor<F, 1>::from_values(w_values, {n});
    const auto zc = Tensor<C, 1>::from_values(z_values, {n}), wc = Tensor<C, 1>::from_values(w_values, {n});
    const auto mf = Tensor<F, 1, Bool>::from_values(keep, {n});
    const auto mc = Tensor<C, 1, Bool>::from_values(keep, {n});
    const auto declined = cpu::fused_jit_stats().declined;
    expect_same_bits_any_nan(host(op(zf, wf, mf)), host(op(zc, wc, mc)));
    EXPECT_EQ(cpu::fused_jit_stats().declined, declined) << cpu::fused_jit_stats().last_declined;
  };
  check("neg", [](auto z, auto, auto) { return z.neg(); });
  check("abs", [](auto z, auto, auto) { return z.abs(); });
  check("sqrt", [](auto z, auto, auto) { return z.sqrt(); });
  check("recip", [](auto z, auto, auto) { return z.recip(); });
  check("relu", [](auto z, auto, auto) { return z.relu(); });
  check("floor", [](auto z, auto, auto) { return z.floor(); });
  check("ceil", [](auto z, auto, auto) { return z.ceil(); });
  check("round", [](auto z, auto, auto) { return z.round(); });
  check("gelu", [](auto z, auto, auto) { return z.gelu(); });
  check("add", [](auto z, auto w, auto) { return z + w; });
  check("sub", [](auto z, auto w, auto) { return z - w; });
  check("mul", [](auto z, auto w, auto) { return z * w; });
  check("div", [](auto z, auto w, auto) { return z.div(w); });
  check("maximum", [](auto z, auto w, auto) { return z.maximum(w); });
  check("minimum", [](auto z, auto w, auto) { return z.minimum(w); });
  check("add_scalar", [](auto z, auto, auto) { return z.add_scalar(0.1); });
  check("sub_scalar", [](auto z, auto, auto) { return z.sub_scalar(0.1); });
  check("mul_scalar", [](auto z, auto, auto) { return z.mul_scalar(-0.3); });
  check("div_scalar", [](auto z, auto, auto) { return z.div_scalar(0.7); });
  check("rsub_scalar", [](auto z, auto, auto) { return z.rsub_scalar(0.1); });
  check("rdiv_scalar", [](auto z, auto, auto) { return z.rdiv_scalar(-0.7); });
  check("clamp_min", [](auto z, auto, auto) { return z.clamp_min(-1.5); });
  check("clamp_max", [](auto z, auto, auto) { return z.clamp_max(1.5); });
  check("pow 2", [](auto z, auto, auto) { return z.pow_scalar(2.0); });
  check("pow 0.5", [](auto z, auto, auto) { return z.pow_scalar(0.5); });
  check("pow -1", [](auto z, auto, auto) { return z.pow_scalar(-1.0); });
  check("where", [](auto z, auto w, auto m) { return z.mask_where(m, w); });
  check("mask_fill", [](auto z, auto, auto m) { return z.mask_fill(m, -2.25); });
  check("bool cast", [](auto z, auto, auto m) { return z * m.to_float(); });
  check("gelu step", [](auto z, auto w, auto) {
    using T = decltype(z);
    using B = typename T::Backend_;
    return T(B::float_unary_backward(UnaryOp::Gelu, z.primitive(), z.primitive(), w.primitive()).value());
  });
  check("relu step", [](auto z, auto w, auto) {
    using T = decltype(z);
    using B = typename T::Backend_;
    return T(B::float_unary_backward(UnaryOp::Relu, z.primitive(), z.primitive(), w.primitive()).value());
  });
}

// With the CPU's AVX-512 GELU kernels off (the eager op then runs the portable formula), GELU chains are declined:
// the generator emits the kernels' sequence, which is no longer the eager op's.
TEST(FusedJit, GeluChainsFollowTheEagerKernel) {
  if (!jit_here()) GTEST_SKIP() << "no fused-chain code generator here (built without Xbyak, or no AVX-512F)";
  const auto v = uniform(300, 31);
  const auto g = uniform(300, 32);
  auto step = [&](auto x, auto gr) {
    using T = decltype(x);
    using B = typename T::Backend_;
    const auto z = x.mul_scalar(1.25).gelu();
    return T(B::float_unary_backward(UnaryOp::Gelu, z.primitive(), z.primitive(), gr.primitive()).value());
  };
  cpu::set_gelu_avx512(false);
  const auto before = cpu::fused_jit_stats();
  const auto fused = host(step(Tensor<F, 1>::from_values(v, {300}), Tensor<F, 1>::from_values(g, {300})));
  const auto after = cpu::fused_jit_stats();
  const auto eager = host(step(Tensor<C, 1>::from_values(v, {300}), Tensor<C, 1>::from_values(g, {300})));
  cpu::set_gelu_avx512(true);
  EXPECT_GT(after.declined, before.declined);
  EXPECT_NE(after.last_declined.find("GELU"), std::string::npos) << after.last_declined;
  expect_same_bits(fused, eager);
}

// A compiled chain ending in a sum: the tile's values go through the eager reduction's blocking as before.
TEST(FusedJit, TrailingSumOfACompiledChainHasTheEagerBits) {
  if (!jit_here()) GTEST_SKIP() << "no fused-chain code generator here (built without Xbyak, or no AVX-512F)";
  const int threads = cpu::num_threads();
  cpu::set_num_threads(1);
  for (int64_t n : {5, 4097, 3 * 4096 + 517}) {
    SCOPED_TRACE(n);
    const auto v = uniform(n, 11);
    const auto before = cpu::fused_jit_stats();
    const auto fy = Tensor<F, 1>::from_values(v, {n}).gelu().mul_scalar(0.375).relu();
    const auto cy = Tensor<C, 1>::from_values(v, {n}).gelu().mul_scalar(0.375).relu();
    expect_same_bits(host(fy.sum()), host(cy.sum()));
    EXPECT_GE(cpu::fused_jit_stats().compiled + cpu::fused_jit_stats().hits, before.compiled + before.hits + 1);
  }
  cpu::set_num_threads(threads);
}

// exp has no emitted form: the chain is declined, with the op named, and runs in the interpreter.
TEST(FusedJit, ChainWithAnOpItDoesNotEmitRunsInTheInterpreter) {
  if (!jit_here()) GTEST_SKIP() << "no fused-chain code generator here (built without Xbyak, or no AVX-512F)";
  const auto v = uniform(1000, 12);
  const auto before = cpu::fused_jit_stats();
  const auto fused = host(Tensor<F, 1>::from_values(v, {1000}).mul_scalar(0.3125).exp().add_scalar(1.0));
  const auto after = cpu::fused_jit_stats();
  EXPECT_EQ(after.declined, before.declined + 1);
  EXPECT_NE(after.last_declined.find("exp"), std::string::npos) << after.last_declined;
  expect_same_bits(fused, host(Tensor<C, 1>::from_values(v, {1000}).mul_scalar(0.3125).exp().add_scalar(1.0)));
}

// More live values than the 23 value registers: declined, and the interpreter's result is the op-by-op one.
TEST(FusedJit, TooManyLiveValuesRunInTheInterpreter) {
  if (!jit_here()) GTEST_SKIP() << "no fused-chain code generator here (built without Xbyak, or no AVX-512F)";
  using namespace fusion;
  const auto x = Tensor<C, 1>::from_values(uniform(100, 13), {100});
  Program p;
  p.shape = Shape{100};
  p.inputs.push_back({InputKind::Float, Shape{100}});
  auto emit = [&](Instr i) {
    i.shape = Shape{100};
    p.instrs.push_back(i);
    return static_cast<int32_t>(p.instrs.size() - 1);
  };
  Instr in;
  in.kind = InstrKind::Input;
  const int32_t xin = emit(in);
  std::vector<int32_t> terms;
  for (int k = 0; k < 30; ++k) {  // x * k for 30 k, all alive until the sum below
    Instr m;
    m.kind = InstrKind::Scalar;
    m.op = static_cast<int32_t>(ScalarOp::Mul);
    m.a = xin;
    m.s = 1.0 + k;
    terms.push_back(emit(m));
  }
  int32_t acc = terms.back();
  for (int k = 28; k >= 0; --k) {
    Instr a;
    a.kind = InstrKind::Binary;
    a.op = static_cast<int32_t>(BinaryOp::Add);
    a.a = acc;
    a.b = terms[static_cast<std::size_t>(k)];
    acc = emit(a);
  }
  p.out = acc;
  std::vector<OperandOf<C>> inputs(1);
  inputs[0].kind = InputKind::Float;
  inputs[0].f = x.primitive();
  const auto before = cpu::fused_jit_stats();
  const auto fused = C::float_fused_chain(p, inputs);
  const auto after = cpu::fused_jit_stats();
  EXPECT_EQ(after.declined, before.declined + 1);
  EXPECT_NE(after.last_declined.find("live"), std::string::npos) << after.last_declined;
  expect_same_bits(C::into_data<Float>(fused).to_vec<float>(),
                   C::into_data<Float>(replay<C>(p, inputs, {})).to_vec<float>());
}

}  // namespace
}  // namespace ember::test
