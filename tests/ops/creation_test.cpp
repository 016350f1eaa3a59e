// Creation and host transfer on every backend: constant fills, arange, eye, seeded random values, from_data /
// into_data for every DType (with the f16 conversions checked bit by bit), from_values, item, to_vec, dims.
#include <cmath>
#include <cstring>
#include <limits>
#include <span>

#include "tests/support/test_backends.hpp"
#include "tests/support/int_width.hpp"

namespace creation_cases {

using namespace ember;
using namespace ember::test;

template <class B>
class CreationTest : public ::testing::Test {};
TYPED_TEST_SUITE(CreationTest, TestBackends, BackendNames);

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

template <class B, std::size_t D, class K>
std::vector<int64_t> ints(const Tensor<B, D, K>& t) {
  return t.template to_vec<int64_t>();
}

template <class T>
TensorData data_of(const std::vector<T>& v, Shape s) {
  return TensorData::from_vec<T>(v, std::move(s));
}

// ---------------------------------------------------------------- constant fills

TYPED_TEST(CreationTest, ZerosOnesFullFloat) {
  using B = TypeParam;
  EXPECT_TRUE(matches(Tensor<B, 2>::zeros({2, 3}), Shape{2, 3}, {0, 0, 0, 0, 0, 0}, 0.0));
  EXPECT_TRUE(matches(Tensor<B, 2>::ones({3, 1}), Shape{3, 1}, {1, 1, 1}, 0.0));
  EXPECT_TRUE(matches(Tensor<B, 3>::full({1, 2, 2}, -2.5), Shape{1, 2, 2}, {-2.5, -2.5, -2.5, -2.5}, 0.0));
  EXPECT_TRUE(matches(Tensor<B, 1>::full({3}, kInf), Shape{3}, {kInf, kInf, kInf}, 0.0));
  EXPECT_TRUE(matches(Tensor<B, 1>::full({2}, kNan), Shape{2}, {kNan, kNan}, 0.0));
  // Large enough for the parallel fill path.
  auto big = Tensor<B, 2>::full({600, 500}, 0.25);
  const auto v = values(big);
  ASSERT_EQ(v.size(), 300000u);
  for (double x : v) ASSERT_EQ(x, 0.25);
}

TYPED_TEST(CreationTest, ZerosOnesFullIntAndBool) {
  using B = TypeParam;
  SKIP_UNLESS_INT64(B);
  EXPECT_EQ(ints(Tensor<B, 2, Int>::zeros({2, 2})), (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(ints(Tensor<B, 1, Int>::ones({3})), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(ints(Tensor<B, 1, Int>::full({2}, -7)), (std::vector<int64_t>{-7, -7}));
  EXPECT_EQ(ints(Tensor<B, 1, Int>::full({1}, 1e12)), (std::vector<int64_t>{1000000000000}));
  EXPECT_EQ(ints(Tensor<B, 2, Bool>::zeros({1, 3})), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(ints(Tensor<B, 2, Bool>::ones({1, 3})), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ((Tensor<B, 2, Bool>::ones({2, 1}).into_data().dtype), DType::Bool);
  EXPECT_EQ((Tensor<B, 2, Int>::ones({2, 1}).into_data().dtype), DType::I64);
}

TYPED_TEST(CreationTest, LikeConstructorsKeepShape) {
  using B = TypeParam;
  auto x = make<B, 2>({1, 2, 3, 4, 5, 6}, {3, 2});
  EXPECT_TRUE(matches(x.zeros_like(), Shape{3, 2}, {0, 0, 0, 0, 0, 0}, 0.0));
  EXPECT_TRUE(matches(x.ones_like(), Shape{3, 2}, {1, 1, 1, 1, 1, 1}, 0.0));
  EXPECT_TRUE(matches(x.full_like(4.5), Shape{3, 2}, {4.5, 4.5, 4.5, 4.5, 4.5, 4.5}, 0.0));
  auto i = make_int<B, 1>({5, 6, 7}, {3});
  EXPECT_TRUE(matches(i.zeros_like(), Shape{3}, {0, 0, 0}, 0.0));
  EXPECT_TRUE(matches(i.full_like(9), Shape{3}, {9, 9, 9}, 0.0));
  auto b = make_bool<B, 2>({true, false}, {1, 2});
  EXPECT_TRUE(matches(b.ones_like(), Shape{1, 2}, {1, 1}, 0.0));
  EXPECT_TRUE(matches(b.zeros_like(), Shape{1, 2}, {0, 0}, 0.0));
  // The source is untouched.
  EXPECT_TRUE(matches(x, Shape{3, 2}, {1, 2, 3, 4, 5, 6}, 0.0));
}

TYPED_TEST(CreationTest, ZeroSizeAndNegativeShapes) {
  using B = TypeParam;
  auto e = Tensor<B, 2>::zeros({0, 3});
  EXPECT_EQ(e.shape(), (Shape{0, 3}));
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(values(e).empty());
  EXPECT_EQ((Tensor<B, 1, Int>::ones({0}).numel()), 0);
  EXPECT_THROW((Tensor<B, 2>::zeros({-1, 3})), ShapeError);
  // Two negative dims multiply to a positive count; still invalid.
  EXPECT_THROW((Tensor<B, 2>::zeros({-2, -3})), ShapeError);
  EXPECT_THROW((Tensor<B, 2, Int>::full({2, -2}, 1)), ShapeError);
  Rng rng(1);
  EXPECT_THROW((Tensor<B, 2>::random({-2, 3}, Normal{}, rng)), ShapeError);
  EXPECT_THROW((Tensor<B, 2>::random({-2, -3}, Normal{}, rng)), ShapeError);
}

// ---------------------------------------------------------------- arange, eye

TYPED_TEST(CreationTest, Arange) {
  using B = TypeParam;
  EXPECT_TRUE(matches(Tensor<B, 1, Int>::arange(2, 7), Shape{5}, {2, 3, 4, 5, 6}, 0.0));
  EXPECT_TRUE(matches(Tensor<B, 1, Int>::arange(-3, 1), Shape{4}, {-3, -2, -1, 0}, 0.0));
  EXPECT_TRUE(matches(Tensor<B, 1, Int>::arange(4, 4), Shape{0}, {}, 0.0));
  EXPECT_THROW((Tensor<B, 1, Int>::arange(5, 2)), ArgumentError);
  // Past the parallel threshold: every value must still be start + i.
  const auto big = ints(Tensor<B, 1, Int>::arange(-100, 200000));
  ASSERT_EQ(big.size(), 200100u);
  for (std::size_t i = 0; i < big.size(); ++i) ASSERT_EQ(big[i], static_cast<int64_t>(i) - 100);
}

TYPED_TEST(CreationTest, EyeEveryKind) {
  using B = TypeParam;
  const std::vector<double> i3{1, 0, 0, 0, 1, 0, 0, 0, 1};
  EXPECT_TRUE(matches(Tensor<B, 2>::eye(3), Shape{3, 3}, i3, 0.0));
  EXPECT_TRUE(matches(Tensor<B, 2, Int>::eye(3), Shape{3, 3}, i3, 0.0));
  EXPECT_TRUE(matches(Tensor<B, 2, Bool>::eye(3), Shape{3, 3}, i3, 0.0));
  EXPECT_TRUE(matches(Tensor<B, 2>::eye(1), Shape{1, 1}, {1}, 0.0));
  EXPECT_EQ((Tensor<B, 2>::eye(0).shape()), (Shape{0, 0}));
  EXPECT_EQ((Tensor<B, 2>::eye(2).into_data().dtype), dtype_of<typename B::FloatElem>());
}

// ---------------------------------------------------------------- random

// The host reference: what the same seed must give on any backend (values rounded to the float element).
template <class B>
std::vector<double> host_sample(uint64_t seed, const Distribution& dist, std::size_t n) {
  Rng rng(seed);
  auto v = sample(rng, dist, n);
  for (auto& x : v) x = static_cast<double>(static_cast<typename B::FloatElem>(x));
  return v;
}

TYPED_TEST(CreationTest, RandomSameSeedMatchesHostReferenceExactly) {
  using B = TypeParam;
  for (const Distribution& dist : {Distribution{Uniform{-2.0, 3.0}}, Distribution{Normal{1.0, 0.5}},
                                   Distribution{Bernoulli{0.3}}}) {
    Rng r1(42), r2(42);
    auto a = Tensor<B, 2>::random({7, 5}, dist, r1);
    auto b = Tensor<B, 2>::random({7, 5}, dist, r2);
    EXPECT_EQ(a.shape(), (Shape{7, 5}));
    EXPECT_EQ(values(a), values(b));
    EXPECT_EQ(values(a), host_sample<B>(42, dist, 35));
    // The tensor took exactly the draws the host reference takes: the generator is left in the same state.
    Rng h(42);
    (void)sample(h, dist, 35);
    EXPECT_EQ(r1.next(), h.next());
  }
  // Odd count for Box-Muller (values come in pairs).
  Rng r(9);
  EXPECT_EQ(values(Tensor<B, 1>::random({3}, Normal{}, r)), host_sample<B>(9, Normal{}, 3));
}

// Backends that make Bernoulli tensors themselves (the CPU in place over its pool, Vulkan in a shader) give the host's
// values at sizes around their splits (blocks of 4 words, groups of 8 blocks, the pool's chunks) and at the edge
// probabilities (none hit, every word hits: threshold 2^32), with the value a hit takes.
TYPED_TEST(CreationTest, RandomBernoulliMatchesHostAtEverySizeAndP) {
  using B = TypeParam;
  for (const double p : {0.0, 1e-9, 0.1, 0.5, 0.999, 1.0, 2.0}) {
    for (const int64_t n : {int64_t{1}, int64_t{3}, int64_t{33}, int64_t{4099}, int64_t{70001}}) {
      const Bernoulli dist{p, -1.5};
      Rng r(1234 + static_cast<uint64_t>(n));
      const auto got = values(Tensor<B, 1>::random({n}, dist, r));
      const auto want = host_sample<B>(1234 + static_cast<uint64_t>(n), dist, static_cast<std::size_t>(n));
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t i = 0; i < want.size(); ++i)
        ASSERT_EQ(got[i], want[i]) << B::name() << " p " << p << " n " << n << " element " << i;
    }
  }
}

// Philox4x32-10 against Random123's published known answers (its tests/kat_vectors).
TEST(CreationRandom, PhiloxMatchesRandom123KnownAnswers) {
  EXPECT_EQ(Philox4x32::block({0, 0, 0, 0}, 0, 0), (Philox4x32::Block{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(Philox4x32::block({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, 0xffffffff, 0xffffffff),
            (Philox4x32::Block{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(Philox4x32::block({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, 0xa4093822, 0x299f31d0),
            (Philox4x32::Block{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
  // Word i of a stream: word i % 4 of the block at counter i / 4, the key's low half first.
  const uint64_t key = 0x299f31d0a4093822ull;
  const auto block5 = Philox4x32::block({5, 0, 0, 0}, 0xa4093822, 0x299f31d0);
  for (uint64_t j = 0; j < 4; ++j) EXPECT_EQ(philox_word(key, 20 + j), block5[j]);
  const auto high = Philox4x32::block({0, 1, 0, 0}, 0xa4093822, 0x299f31d0);  // block 2^32: the counter's high word
  EXPECT_EQ(philox_word(key, uint64_t{4} << 32), high[0]);
}

// A Bernoulli draw takes one key from the generator, and element i hits where philox_word(key, i) is below
// ceil(p * 2^32): checked at the threshold for awkward p, and element by element.
TEST(CreationRandom, BernoulliIsPhiloxWordBelowThreshold) {
  EXPECT_EQ(bernoulli_threshold(0.0), 0u);
  EXPECT_EQ(bernoulli_threshold(-0.5), 0u);
  EXPECT_EQ(bernoulli_threshold(kNan), 0u);
  EXPECT_EQ(bernoulli_threshold(1e-300), 1u);  // any p > 0 can hit (word 0)
  EXPECT_EQ(bernoulli_threshold(0.5), uint64_t{1} << 31);
  EXPECT_EQ(bernoulli_threshold(0.25 + 0x1.0p-40), (uint64_t{1} << 30) + 1);
  EXPECT_EQ(bernoulli_threshold(1.0 - 0x1.0p-53), uint64_t{1} << 32);
  EXPECT_EQ(bernoulli_threshold(1.0), uint64_t{1} << 32);
  EXPECT_EQ(bernoulli_threshold(2.0), uint64_t{1} << 32);
  for (const double p : {0.0, 1e-300, 0.1, 0.3, 0.5, 0.9, 1.0, 2.0}) {
    Rng a(11), b(11);
    std::vector<double> got(4099);
    sample_into<double>(a, Bernoulli{p, 2.5}, got);
    const uint64_t key = b.next(), t = bernoulli_threshold(p);
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(got[i], philox_word(key, i) < t ? 2.5 : 0.0) << "p " << p << ", element " << i;
    EXPECT_EQ(a.next(), b.next()) << "one draw per tensor";
  }
}

// fill_bernoulli at any start position and length (a head and tail of single blocks around whole groups, float
// through AVX-512 and AVX2 where the CPU has them) gives philox_word's values, across the counter's 2^32-block carry
// too: an AVX-512 pair of groups that starts 8 blocks before it (begin 2^34 - 40 words) or ends at it (- 104).
TEST(CreationRandom, FillBernoulliIsPhiloxWordsFromAnyPosition) {
  const uint64_t key = 0xfeedfacecafef00dull, t = bernoulli_threshold(0.37);
  const uint64_t past_2_32_blocks = uint64_t{1} << 34;
  for (const uint64_t begin : {uint64_t{0}, uint64_t{5}, uint64_t{31}, past_2_32_blocks - 70, past_2_32_blocks - 40,
                               past_2_32_blocks - 104, past_2_32_blocks + 32}) {
    for (const std::size_t n : {std::size_t{0}, std::size_t{3}, std::size_t{32}, std::size_t{33}, std::size_t{64},
                                std::size_t{97}, std::size_t{1000}}) {
      std::vector<float> f(n);
      std::vector<double> d(n);
      fill_bernoulli<float>(f.data(), begin, n, key, t, 3.0f, 0.0f);
      fill_bernoulli<double>(d.data(), begin, n, key, t, 3.0, 0.0);
      for (std::size_t i = 0; i < n; ++i) {
        const bool hit = philox_word(key, begin + i) < t;
        ASSERT_EQ(f[i], hit ? 3.0f : 0.0f) << "begin " << begin << " element " << i;
        ASSERT_EQ(d[i], hit ? 3.0 : 0.0) << "begin " << begin << " element " << i;
      }
    }
  }
}

// Bernoulli{p, value} draws value where Bernoulli{p} draws 1, from the same draws.
TYPED_TEST(CreationTest, RandomBernoulliValue) {
  using B = TypeParam;
  Rng r1(3), r2(3);
  const auto scaled = values(Tensor<B, 1>::random({300}, Bernoulli{0.7, 1.0 / 0.7}, r1));
  const auto keep = values(Tensor<B, 1>::random({300}, Bernoulli{0.7}, r2));
  const double v = static_cast<double>(static_cast<typename B::FloatElem>(1.0 / 0.7));
  for (std::size_t i = 0; i < keep.size(); ++i) ASSERT_EQ(scaled[i], keep[i] * v) << i;
  EXPECT_EQ(r1.next(), r2.next());
}

TYPED_TEST(CreationTest, RandomIntAndBoolKinds) {
  using B = TypeParam;
  Rng r1(5), r2(5), r3(5);
  auto i = Tensor<B, 1, Int>::random({200}, Uniform{0.0, 10.0}, r1);
  Rng h(5);
  const auto ref = sample(h, Uniform{0.0, 10.0}, 200);
  const auto iv = ints(i);
  for (std::size_t k = 0; k < iv.size(); ++k) {
    ASSERT_EQ(iv[k], static_cast<int64_t>(ref[k]));
    ASSERT_TRUE(iv[k] >= 0 && iv[k] <= 9);
  }
  auto b = Tensor<B, 1, Bool>::random({200}, Bernoulli{0.5}, r2);
  auto f = Tensor<B, 1>::random({200}, Bernoulli{0.5}, r3);
  EXPECT_EQ(values(b), values(f));
}

TYPED_TEST(CreationTest, RandomStreamAdvancesAndSeedsDiffer) {
  using B = TypeParam;
  Rng r(7);
  auto a = Tensor<B, 1>::random({16}, Uniform{}, r);
  auto b = Tensor<B, 1>::random({16}, Uniform{}, r);
  EXPECT_NE(values(a), values(b));  // the generator moved on
  Rng r8(8);
  EXPECT_NE(values(a), values(Tensor<B, 1>::random({16}, Uniform{}, r8)));
  // The process-wide generator is reproducible through ember::seed.
  ember::seed(123);
  auto g1 = Tensor<B, 2>::random({4, 4}, Normal{});
  auto g2 = Tensor<B, 2>::random({4, 4}, Normal{});
  ember::seed(123);
  auto g3 = Tensor<B, 2>::random({4, 4}, Normal{});
  EXPECT_EQ(values(g1), values(g3));
  EXPECT_NE(values(g1), values(g2));
  EXPECT_EQ(values(g1), host_sample<B>(123, Normal{}, 16));
}

TYPED_TEST(CreationTest, NormalStatistics) {
  using B = TypeParam;
  Rng r(2024);
  auto x = Tensor<B, 1>::random({100000}, Normal{2.0, 3.0}, r);
  const auto v = values(x);
  double sum = 0.0;
  for (double e : v) sum += e;
  const double mean = sum / static_cast<double>(v.size());
  double ss = 0.0;
  for (double e : v) ss += (e - mean) * (e - mean);
  const double sd = std::sqrt(ss / static_cast<double>(v.size() - 1));
  // Standard errors: 3/sqrt(1e5) ~ 0.0095 for the mean, ~0.0067 for the std; bounds are ~5 sigma.
  EXPECT_NEAR(mean, 2.0, 0.05);
  EXPECT_NEAR(sd, 3.0, 0.035);
  EXPECT_NEAR(x.mean().item(), mean, 1e-3);
  // Roughly 68.3% within one std.
  std::size_t within = 0;
  for (double e : v) within += std::fabs(e - 2.0) < 3.0;
  EXPECT_NEAR(static_cast<double>(within) / 1e5, 0.6827, 0.01);
}

TYPED_TEST(CreationTest, UniformRangeAndStatistics) {
  using B = TypeParam;
  Rng r(31337);
  const auto v = values(Tensor<B, 1>::random({100000}, Uniform{-1.0, 3.0}, r));
  double sum = 0.0, lo = 1e9, hi = -1e9;
  for (double e : v) {
    sum += e;
    lo = std::min(lo, e);
    hi = std::max(hi, e);
  }
  EXPECT_GE(lo, -1.0);
  EXPECT_LT(hi, 3.0);
  EXPECT_LT(lo, -0.99);  // the whole range is covered
  EXPECT_GT(hi, 2.99);
  EXPECT_NEAR(sum / 1e5, 1.0, 0.02);  // std 4/sqrt(12) / sqrt(1e5) ~ 0.0037
}

TYPED_TEST(CreationTest, BernoulliRate) {
  using B = TypeParam;
  Rng r(99);
  auto x = Tensor<B, 1>::random({100000}, Bernoulli{0.3}, r);
  const auto v = values(x);
  double ones = 0;
  for (double e : v) {
    ASSERT_TRUE(e == 0.0 || e == 1.0);
    ones += e;
  }
  EXPECT_NEAR(ones / 1e5, 0.3, 0.01);  // std ~0.0015
  Rng r0(1), r1(1);
  EXPECT_EQ(ints(Tensor<B, 1, Int>::random({50}, Bernoulli{0.0}, r0)), std::vector<int64_t>(50, 0));
  EXPECT_EQ(ints(Tensor<B, 1, Int>::random({50}, Bernoulli{1.0}, r1)), std::vector<int64_t>(50, 1));
}

// ---------------------------------------------------------------- f16 (host conversions)

uint16_t h(float f) { return float_to_f16(f).bits; }
float hf(uint16_t bits) { return f16_to_float(f16{bits}); }

TEST(CreationF16, KnownValues) {
  EXPECT_EQ(h(1.0f), 0x3C00);
  EXPECT_EQ(h(-2.0f), 0xC000);
  EXPECT_EQ(h(0.5f), 0x3800);
  EXPECT_EQ(h(0.0f), 0x0000);
  EXPECT_EQ(h(-0.0f), 0x8000);
  EXPECT_EQ(h(65504.0f), 0x7BFF);                 // largest finite half
  EXPECT_EQ(h(65519.0f), 0x7BFF);                 // below the halfway point to 65536
  EXPECT_EQ(h(65520.0f), 0x7C00);                 // halfway: rounds to even, which is infinity
  EXPECT_EQ(h(1e6f), 0x7C00);                     // overflow
  EXPECT_EQ(h(-1e6f), 0xFC00);
  EXPECT_EQ(h(std::ldexp(1.0f, -14)), 0x0400);    // smallest normal
  EXPECT_EQ(h(std::ldexp(1.0f, -24)), 0x0001);    // smallest subnormal
  EXPECT_EQ(h(1e-7f), 0x0002);                    // 1e-7 / 2^-24 = 1.68 -> 2
  EXPECT_EQ(h(std::ldexp(1.0f, -25)), 0x0000);    // exactly half the smallest subnormal: to even (0)
  EXPECT_EQ(h(std::ldexp(3.0f, -26)), 0x0001);    // 0.75 of it: up
  EXPECT_EQ(h(std::ldexp(3.0f, -25)), 0x0002);    // 1.5 subnormals: halfway between 1 and 2, to even (2)
  EXPECT_EQ(h(std::ldexp(5.0f, -25)), 0x0002);    // 2.5: to even (2)
  EXPECT_EQ(h(1e-9f), 0x0000);                    // underflow
  EXPECT_EQ(h(-1e-9f), 0x8000);
  EXPECT_EQ(h(1023.0f * std::ldexp(1.0f, -24)), 0x03FF);  // largest subnormal
  EXPECT_EQ(h(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(h(-std::numeric_limits<float>::infinity()), 0xFC00);
  const uint16_t n = h(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(n & 0x7C00, 0x7C00);
  EXPECT_NE(n & 0x03FF, 0);
}

TEST(CreationF16, RoundHalfToEven) {
  EXPECT_EQ(h(1.0f + std::ldexp(1.0f, -11)), 0x3C00);      // halfway 1 .. 1+2^-10: to 1 (even)
  EXPECT_EQ(h(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // halfway 1+2^-10 .. 1+2^-9: to the even one
  EXPECT_EQ(h(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3C01);  // just above halfway: up
  EXPECT_EQ(h(2049.0f), 0x6800);  // halfway 2048 .. 2050: 2048
  EXPECT_EQ(h(2051.0f), 0x6802);  // halfway 2050 .. 2052: 2052
  EXPECT_EQ(h(-2051.0f), 0xE802);
  EXPECT_EQ(h(0.1f), 0x2E66);
  EXPECT_EQ(h(3.14159265f), 0x4248);
}

TEST(CreationF16, ToFloatAndExhaustiveRoundTrip) {
  EXPECT_EQ(hf(0x3C00), 1.0f);
  EXPECT_EQ(hf(0x7BFF), 65504.0f);
  EXPECT_EQ(hf(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(hf(0x03FF), 1023.0f * std::ldexp(1.0f, -24));
  EXPECT_EQ(hf(0x8001), -std::ldexp(1.0f, -24));
  EXPECT_EQ(hf(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(hf(0xFC00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(hf(0x7E00)));
  EXPECT_TRUE(std::isnan(hf(0x7C01)));
  EXPECT_TRUE(std::signbit(hf(0x8000)) && hf(0x8000) == 0.0f);
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const float f = hf(static_cast<uint16_t>(b));
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(hf(h(f)))) << b;
    } else {
      ASSERT_EQ(h(f), b) << "bits " << b << " -> " << f;
    }
  }
}

TEST(CreationF16, TensorDataConvert) {
  auto d = data_of<float>({1.0f, 65504.0f, 1e-7f, std::numeric_limits<float>::infinity(), -2.0f}, Shape{5});
  auto hd = d.convert(DType::F16);
  EXPECT_EQ(hd.dtype, DType::F16);
  EXPECT_EQ(hd.bytes.size(), 10u);
  std::vector<uint16_t> bits(5);
  std::memcpy(bits.data(), hd.bytes.data(), 10);
  EXPECT_EQ(bits, (std::vector<uint16_t>{0x3C00, 0x7BFF, 0x0002, 0x7C00, 0xC000}));
  EXPECT_EQ(hd.convert(DType::F32).to_vec<float>(),
            (std::vector<float>{1.0f, 65504.0f, 2 * std::ldexp(1.0f, -24), std::numeric_limits<float>::infinity(),
                                -2.0f}));
  // Float to int truncates toward zero; anything to bool is != 0.
  auto f = data_of<double>({2.7, -2.7, 0.0, -0.0}, Shape{2, 2});
  EXPECT_EQ(f.convert(DType::I32).to_vec<int32_t>(), (std::vector<int32_t>{2, -2, 0, 0}));
  EXPECT_EQ(f.convert(DType::Bool).to_vec<uint8_t>(), (std::vector<uint8_t>{1, 1, 0, 0}));
  EXPECT_EQ(f.convert(DType::Bool).to_vec<bool>(), (std::vector<bool>{true, true, false, false}));
  EXPECT_EQ(f.convert(DType::Bool).shape, (Shape{2, 2}));
  EXPECT_EQ(f.convert(DType::I16).to_vec<int16_t>(), (std::vector<int16_t>{2, -2, 0, 0}));
}

// ---------------------------------------------------------------- from_data / into_data for every dtype

TYPED_TEST(CreationTest, FromDataEveryDTypeIntoFloat) {
  using B = TypeParam;
  using E = typename B::FloatElem;
  auto load = [](const TensorData& d) { return Tensor<B, 1>::from_data(d); };
  EXPECT_TRUE(matches(load(data_of<float>({1.5f, -2.25f, 3.0f}, Shape{3})), Shape{3}, {1.5, -2.25, 3}, 0.0));
  EXPECT_TRUE(matches(load(data_of<double>({0.1, -1e30, 1e-300}, Shape{3})), Shape{3},
                      {double(E(0.1)), double(E(-1e30)), double(E(1e-300))}, 0.0));
  EXPECT_TRUE(matches(load(data_of<f16>({{0x3C00}, {0x7BFF}, {0x0001}, {0xC000}, {0x7C00}, {0x7E00}}, Shape{6})),
                      Shape{6}, {1.0, 65504.0, std::ldexp(1.0, -24), -2.0, kInf, kNan}, 0.0));
  EXPECT_TRUE(matches(load(data_of<int32_t>({-5, 0, 123456789}, Shape{3})), Shape{3},
                      {-5, 0, double(E(123456789))}, 0.0));
  EXPECT_TRUE(matches(load(data_of<int64_t>({-7, 1LL << 40}, Shape{2})), Shape{2}, {-7, std::ldexp(1.0, 40)}, 0.0));
  EXPECT_TRUE(matches(load(data_of<uint8_t>({0, 255, 128}, Shape{3})), Shape{3}, {0, 255, 128}, 0.0));
  EXPECT_TRUE(matches(load(data_of<int16_t>({-32768, 7, 32767}, Shape{3})), Shape{3}, {-32768, 7, 32767}, 0.0));
  TensorData raw({std::byte{0}, std::byte{1}, std::byte{7}}, Shape{3}, DType::Bool);  // any nonzero is true
  EXPECT_TRUE(matches(load(raw), Shape{3}, {0, 1, 1}, 0.0));
  // Negative zero and subnormals of the own element type survive.
  const auto neg0 = values(load(data_of<double>({-0.0}, Shape{1})));
  EXPECT_TRUE(std::signbit(neg0[0]));
}

TYPED_TEST(CreationTest, FromDataEveryDTypeIntoIntAndBool) {
  using B = TypeParam;
  SKIP_UNLESS_INT64(B);
  auto as_int = [](const TensorData& d) { return ints(Tensor<B, 1, Int>::from_data(d)); };
  auto as_bool = [](const TensorData& d) { return ints(Tensor<B, 1, Bool>::from_data(d)); };
  EXPECT_EQ(as_int(data_of<float>({2.9f, -2.9f, 0.5f}, Shape{3})), (std::vector<int64_t>{2, -2, 0}));
  EXPECT_EQ(as_int(data_of<double>({1e10, -3.5}, Shape{2})), (std::vector<int64_t>{10000000000, -3}));
  EXPECT_EQ(as_int(data_of<f16>({{0x3C00}, {0xC100}, {0x7BFF}}, Shape{3})), (std::vector<int64_t>{1, -2, 65504}));
  EXPECT_EQ(as_int(data_of<int32_t>({-5, 7}, Shape{2})), (std::vector<int64_t>{-5, 7}));
  EXPECT_EQ(as_int(data_of<int64_t>({-(1LL << 62), 3}, Shape{2})), (std::vector<int64_t>{-(1LL << 62), 3}));
  EXPECT_EQ(as_int(data_of<uint8_t>({200, 0}, Shape{2})), (std::vector<int64_t>{200, 0}));
  EXPECT_EQ(as_int(data_of<int16_t>({-300, 5}, Shape{2})), (std::vector<int64_t>{-300, 5}));
  EXPECT_EQ(as_int(TensorData({std::byte{0}, std::byte{9}}, Shape{2}, DType::Bool)), (std::vector<int64_t>{0, 1}));

  EXPECT_EQ(as_bool(data_of<float>({0.0f, -0.0f, 0.5f, std::nanf("")}, Shape{4})),
            (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(as_bool(data_of<double>({0.0, -3.0}, Shape{2})), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(as_bool(data_of<f16>({{0x0000}, {0x8000}, {0x0001}}, Shape{3})), (std::vector<int64_t>{0, 0, 1}));
  EXPECT_EQ(as_bool(data_of<int32_t>({0, -1}, Shape{2})), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(as_bool(data_of<int64_t>({5, 0}, Shape{2})), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(as_bool(data_of<uint8_t>({0, 255}, Shape{2})), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(as_bool(data_of<int16_t>({-1, 0}, Shape{2})), (std::vector<int64_t>{1, 0}));
  // Bool bytes other than 0/1 are normalized, so into_data gives 0/1 back.
  auto b = Tensor<B, 1, Bool>::from_data(TensorData({std::byte{0}, std::byte{2}, std::byte{255}}, Shape{3}, DType::Bool));
  const auto out = b.into_data();
  EXPECT_EQ(out.dtype, DType::Bool);
  EXPECT_EQ(out.bytes, (std::vector<std::byte>{std::byte{0}, std::byte{1}, std::byte{1}}));
  EXPECT_EQ(b.logical_not().template to_vec<int64_t>(), (std::vector<int64_t>{1, 0, 0}));
}

TYPED_TEST(CreationTest, IntoDataRoundTripsOwnDTypeBitExactly) {
  using B = TypeParam;
  SKIP_UNLESS_INT64(B);
  using E = typename B::FloatElem;
  const std::vector<E> fv{E(1.25), -std::numeric_limits<E>::infinity(), std::numeric_limits<E>::quiet_NaN(), E(-0.0),
                          std::numeric_limits<E>::denorm_min(), std::numeric_limits<E>::max()};
  const auto fd = data_of<E>(fv, Shape{2, 3});
  const auto fo = Tensor<B, 2>::from_data(fd).into_data();
  EXPECT_EQ(fo.dtype, dtype_of<E>());
  EXPECT_EQ(fo.shape, (Shape{2, 3}));
  EXPECT_EQ(fo.bytes, fd.bytes);

  const auto id = data_of<int64_t>({std::numeric_limits<int64_t>::min(), -1, 0, std::numeric_limits<int64_t>::max()},
                                   Shape{4, 1});
  const auto io = Tensor<B, 2, Int>::from_data(id).into_data();
  EXPECT_EQ(io.dtype, DType::I64);
  EXPECT_EQ(io.shape, (Shape{4, 1}));
  EXPECT_EQ(io.bytes, id.bytes);

  const auto bd = data_of<bool>({true, false, true}, Shape{1, 3});
  const auto bo = Tensor<B, 2, Bool>::from_data(bd).into_data();
  EXPECT_EQ(bo.dtype, DType::Bool);
  EXPECT_EQ(bo.bytes, bd.bytes);

  // Zero-size tensors round trip too.
  const auto zo = Tensor<B, 3>::from_data(data_of<E>({}, Shape{2, 0, 3})).into_data();
  EXPECT_EQ(zo.shape, (Shape{2, 0, 3}));
  EXPECT_TRUE(zo.bytes.empty());
}

// ---------------------------------------------------------------- from_values, item, to_vec, dims

TYPED_TEST(CreationTest, FromValuesFromEveryHostType) {
  using B = TypeParam;
  EXPECT_TRUE(matches(Tensor<B, 2>::from_values(std::vector<float>{1, 2, 3, 4}, {2, 2}), Shape{2, 2},
                      {1, 2, 3, 4}, 0.0));
  EXPECT_TRUE(matches(Tensor<B, 2>::from_values(std::vector<double>{0.5, -1.5}, {1, 2}), Shape{1, 2}, {0.5, -1.5},
                      0.0));
  EXPECT_TRUE(matches(Tensor<B, 1>::from_values(std::vector<int64_t>{-3, 9}, {2}), Shape{2}, {-3, 9}, 0.0));
  EXPECT_TRUE(matches(Tensor<B, 1, Int>::from_values(std::vector<int64_t>{-3, 9}, {2}), Shape{2}, {-3, 9}, 0.0));
  EXPECT_TRUE(matches(Tensor<B, 1, Int>::from_values(std::vector<int32_t>{4, -4}, {2}), Shape{2}, {4, -4}, 0.0));
  EXPECT_TRUE(matches(Tensor<B, 1, Int>::from_values(std::vector<double>{4.9, -4.9}, {2}), Shape{2}, {4, -4}, 0.0));
  EXPECT_TRUE(matches(Tensor<B, 2, Bool>::from_values(std::vector<bool>{true, false, false, true}, {2, 2}),
                      Shape{2, 2}, {1, 0, 0, 1}, 0.0));
  EXPECT_TRUE(matches(Tensor<B, 1>::from_values(std::vector<bool>{true, false}, {2}), Shape{2}, {1, 0}, 0.0));
  const double arr[] = {7, 8, 9};
  EXPECT_TRUE(matches(Tensor<B, 1>::from_values(std::span<const double>(arr), {3}), Shape{3}, {7, 8, 9}, 0.0));
  EXPECT_THROW((Tensor<B, 2>::from_values(std::vector<double>{1, 2, 3}, {2, 2})), ShapeError);
  EXPECT_THROW((Tensor<B, 1, Bool>::from_values(std::vector<bool>{true}, {2})), ShapeError);
}

TYPED_TEST(CreationTest, ItemToVecDimsNumel) {
  using B = TypeParam;
  EXPECT_EQ((make<B, 2>({3.5}, {1, 1}).item()), 3.5);
  EXPECT_EQ((make_int<B, 1>({-42}, {1}).item()), -42.0);
  EXPECT_EQ((make_bool<B, 3>({true}, {1, 1, 1}).item()), 1.0);
  EXPECT_EQ((make<B, 2>({1, 2, 3, 4, 5, 6}, {2, 3}).sum().item()), 21.0);
  EXPECT_THROW((make<B, 1>({1, 2}, {2}).item()), ShapeError);
  EXPECT_THROW((Tensor<B, 1>::zeros({0}).item()), ShapeError);

  auto x = make<B, 3>({1.5, -2.5, 3, 4, 5, 6}, {1, 2, 3});
  EXPECT_EQ(x.template to_vec<float>(), (std::vector<float>{1.5f, -2.5f, 3, 4, 5, 6}));
  EXPECT_EQ(x.template to_vec<double>(), (std::vector<double>{1.5, -2.5, 3, 4, 5, 6}));
  EXPECT_EQ(x.template to_vec<int64_t>(), (std::vector<int64_t>{1, -2, 3, 4, 5, 6}));
  EXPECT_EQ((make_bool<B, 1>({true, false, true}, {3}).template to_vec<bool>()), (std::vector<bool>{true, false, true}));
  EXPECT_EQ((make_int<B, 1>({0, 3}, {2}).template to_vec<bool>()), (std::vector<bool>{false, true}));
  EXPECT_EQ((make_int<B, 1>({0, 3}, {2}).template to_vec<int32_t>()), (std::vector<int32_t>{0, 3}));

  EXPECT_EQ(x.dims(), (std::array<int64_t, 3>{1, 2, 3}));
  EXPECT_EQ(x.numel(), 6);
  EXPECT_EQ(x.dim(0), 1);
  EXPECT_EQ(x.dim(-1), 3);
  EXPECT_EQ(x.dim(-3), 1);
  EXPECT_THROW(x.dim(3), IndexError);
  EXPECT_THROW(x.dim(-4), IndexError);
  EXPECT_EQ(x.shape().to_string(), "[1, 2, 3]");
  EXPECT_EQ((Tensor<B, 2, Int>::zeros({4, 0}).numel()), 0);
  EXPECT_EQ(x.to_device(x.device()).template to_vec<double>(), x.template to_vec<double>());
}

// ---------------------------------------------------------------- TensorData validation (host)

TEST(CreationTensorData, ValidateRejectsBadBytesAndShapes) {
  EXPECT_THROW(TensorData(std::vector<std::byte>(7), Shape{2}, DType::F32), ShapeError);
  EXPECT_THROW(TensorData(std::vector<std::byte>(4), Shape{2}, DType::F64), ShapeError);
  EXPECT_THROW(TensorData(std::vector<std::byte>(3), Shape{2, 2}, DType::Bool), ShapeError);
  EXPECT_THROW(TensorData(std::vector<std::byte>(8), Shape{-2}, DType::F32), ShapeError);
  // Two negative dims give a positive count that the bytes match; the shape is still invalid.
  EXPECT_THROW(TensorData(std::vector<std::byte>(8), Shape{-1, -2}, DType::F32), ShapeError);
  EXPECT_NO_THROW(TensorData(std::vector<std::byte>(12), Shape{3, 2}, DType::F16));
  EXPECT_NO_THROW(TensorData(std::vector<std::byte>(0), Shape{3, 0}, DType::I64));
  try {
    TensorData(std::vector<std::byte>(10), Shape{2, 3}, DType::I32);
    ADD_FAILURE() << "no throw";
  } catch (const ShapeError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("10 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("[2, 3]"), std::string::npos) << m;
    EXPECT_NE(m.find("i32"), std::string::npos) << m;
  }
  // Mutated after construction: validate() catches it.
  auto d = data_of<double>({1, 2, 3}, Shape{3});
  EXPECT_NO_THROW(d.validate());
  d.bytes.pop_back();
  EXPECT_THROW(d.validate(), ShapeError);
  d = data_of<double>({1, 2, 3}, Shape{3});
  d.shape = Shape{4};
  EXPECT_THROW(d.validate(), ShapeError);
  d.shape = Shape{3};
  d.dtype = DType::F32;  // 24 bytes is not 3 f32
  EXPECT_THROW(d.validate(), ShapeError);
  EXPECT_THROW(data_of<float>({1, 2}, Shape{3}), ShapeError);
  EXPECT_EQ(dtype_size(DType::F16), 2u);
  EXPECT_EQ(dtype_name(DType::Bool), "bool");
}

}  // namespace creation_cases
