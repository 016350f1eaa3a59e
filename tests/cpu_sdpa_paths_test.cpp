// The CPU's two attention paths (backends/cpu/attention.hpp): whole-head GEMMs for short sequences and flash tiles
// for long ones. Each agrees with the other and with the composed default on the same inputs, forward (output, row
// logsumexp) and backward (dq, dk, dv), with and without causal masking and a broadcast bias holding -inf and a fully
// masked row; and the dispatcher picks by the score matrix's size (the language model's 64 x 64 takes the GEMMs,
// the 2048 x 2048 the tiles).
#include <gtest/gtest.h>

#include <array>
#include <limits>
#include <vector>

#include "backends/cpu/attention.hpp"
#include "backends/cpu/attention_geometry.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace {

using C = Cpu<double>;
using FP = C::FloatPrimitive;
constexpr double kInf = std::numeric_limits<double>::infinity();

FP values_of(std::array<int64_t, 4> shape, uint64_t seed) {
  Rng rng(seed);
  std::vector<double> v(static_cast<std::size_t>(shape[0] * shape[1] * shape[2] * shape[3]));
  for (auto& x : v) x = -1.5 + 3 * rng.uniform();
  return Tensor<C, 4>::from_values(v, shape).primitive();
}
std::vector<double> vec(const FP& p) { return C::into_data<Float>(p).to_vec<double>(); }

void compare_paths(int64_t l, int64_t s, bool causal, bool with_bias) {
  SCOPED_TRACE(testing::Message() << "l " << l << " s " << s << " causal " << causal << " bias " << with_bias);
  const int64_t b = 2, h = 3, e = 4, ev = 5;
  const FP q = values_of({b, h, l, e}, 11), k = values_of({b, h, s, e}, 12), v = values_of({b, h, s, ev}, 13);
  auto bias_v = vec(values_of({b, 1, l, s}, 14));
  for (std::size_t i = 5; i < bias_v.size(); i += 7) bias_v[i] = -kInf;
  for (int64_t j = 0; j < s; ++j) bias_v[static_cast<std::size_t>(s + j)] = -kInf;  // batch 0, row 1: fully masked
  const FP bias = Tensor<C, 4>::from_values(bias_v, std::array<int64_t, 4>{b, 1, l, s}).primitive();
  const FP* pb = with_bias ? &bias : nullptr;
  const SdpaOptions o{causal, 0.4};
  const auto mm = cpu::sdpa_forward_matmul(q, k, v, pb, o);
  const auto fl = cpu::sdpa_forward_flash(q, k, v, pb, o);
  const auto co = optional_ops::composed::float_sdpa<C>(q, k, v, pb, o);
  EXPECT_TRUE(close(vec(mm.out), vec(co.out), 1e-12)) << "out";
  EXPECT_TRUE(close(vec(fl.out), vec(co.out), 1e-12)) << "out (flash)";
  EXPECT_TRUE(close(vec(mm.lse), vec(co.lse), 1e-12)) << "lse";
  EXPECT_TRUE(close(vec(fl.lse), vec(co.lse), 1e-12)) << "lse (flash)";
  if (with_bias) {
    EXPECT_EQ(vec(mm.lse)[1], kInf);
    for (int64_t x = 0; x < ev; ++x) EXPECT_EQ(vec(mm.out)[static_cast<std::size_t>(ev + x)], 0.0);
  }
  const FP dout = values_of({b, h, l, ev}, 15);
  const auto gm = cpu::sdpa_backward_matmul(q, k, v, pb, mm.out, mm.lse, dout, o);
  const auto gf = cpu::sdpa_backward_flash(q, k, v, pb, fl.out, fl.lse, dout, o);
  const auto gc = optional_ops::composed::float_sdpa_backward<C>(q, k, v, pb, co.out, co.lse, dout, o, false);
  for (const auto* g : {&gm, &gf}) {
    EXPECT_TRUE(close(vec(g->q), vec(gc.q), 1e-12)) << "dq";
    EXPECT_TRUE(close(vec(g->k), vec(gc.k), 1e-12)) << "dk";
    EXPECT_TRUE(close(vec(g->v), vec(gc.v), 1e-12)) << "dv";
  }
  if (with_bias) {
    for (int64_t x = 0; x < e; ++x) EXPECT_EQ(vec(gm.q)[static_cast<std::size_t>(e + x)], 0.0);
  }
}

TEST(CpuSdpaPaths, MatmulAndFlashAgreeWithComposed) {
  for (bool causal : {false, true})
    for (bool bias : {false, true}) {
      compare_paths(64, 64, causal, bias);  // the language model's shape
      compare_paths(70, 67, causal, bias);  // past one flash tile
      compare_paths(5, 40, causal, bias);   // fewer rows than keys
      compare_paths(40, 3, causal, bias);   // rows past the last key
    }
}

// Above the bound the dispatcher's result is the flash path's exactly (same kernel), below it the GEMM path's.
TEST(CpuSdpaPaths, DispatchBySize) {
  EXPECT_TRUE(cpu::sdpa_detail::uses_matmul_path(64, 64));
  EXPECT_TRUE(cpu::sdpa_detail::uses_matmul_path(128, 128));
  EXPECT_FALSE(cpu::sdpa_detail::uses_matmul_path(129, 128));
  EXPECT_FALSE(cpu::sdpa_detail::uses_matmul_path(2048, 2048));
  const SdpaOptions o{true, 0.3};
  const FP* none = nullptr;
  for (std::array<int64_t, 2> ls : {std::array<int64_t, 2>{64, 64}, std::array<int64_t, 2>{200, 90}}) {
    const FP q = values_of({1, 2, ls[0], 3}, 21), k = values_of({1, 2, ls[1], 3}, 22), v = values_of({1, 2, ls[1], 3}, 23);
    const auto chosen = cpu::sdpa_forward(q, k, v, none, o);
    const bool mm = cpu::sdpa_detail::uses_matmul_path(ls[0], ls[1]);
    const auto expect = mm ? cpu::sdpa_forward_matmul(q, k, v, none, o) : cpu::sdpa_forward_flash(q, k, v, none, o);
    EXPECT_EQ(vec(chosen.out), vec(expect.out)) << ls[0] << "x" << ls[1];
    EXPECT_EQ(vec(chosen.lse), vec(expect.lse)) << ls[0] << "x" << ls[1];
  }
}

}  // namespace
}  // namespace ember::test
