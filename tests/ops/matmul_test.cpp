// matmul on every backend: 2-D, batched 3-D and 4-D, batch broadcasting on either side, k = 0 and other empty
// shapes, non-square and large operands; against numpy values (tests/reference/math_reference.hpp) and a naive
// double loop here. Inputs are multiples of 1/16 in [-2, 2], so every product and partial sum is exact in f32 and
// the result does not depend on the summation order. Products of such values are exact in f16 too, so the f16 GEMM
// variant (op_suite_vulkan_f16) must reproduce them at the f32 tolerance. Shape errors name the op and both shapes.
#include <cstdint>
#include <string>
#include <vector>

#include "tests/reference/math_reference.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace matmul_cases {

std::vector<double> ramp(int64_t n, int64_t seed) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>((i * 7 + seed * 13) % 33 - 16) / 16.0;
  return v;
}

// Naive batched matmul in double with NumPy batch broadcasting; shapes of equal rank >= 2.
std::vector<double> naive(const std::vector<double>& a, const std::vector<int64_t>& as, const std::vector<double>& b,
                          const std::vector<int64_t>& bs, std::vector<int64_t>* out_shape) {
  const std::size_t r = as.size();
  const int64_t m = as[r - 2], k = as[r - 1], n = bs[r - 1];
  std::vector<int64_t> batch(r - 2);
  for (std::size_t d = 0; d + 2 < r; ++d) batch[d] = as[d] == 1 ? bs[d] : as[d];
  int64_t nb = 1;
  for (auto d : batch) nb *= d;
  *out_shape = batch;
  out_shape->push_back(m);
  out_shape->push_back(n);
  std::vector<double> out(static_cast<std::size_t>(nb * m * n), 0.0);
  for (int64_t bi = 0; bi < nb; ++bi) {
    int64_t rem = bi, oa = 0, ob = 0, sa = 1, sb = 1;
    for (std::size_t d = r - 2; d-- > 0;) {
      const int64_t idx = rem % batch[d];
      rem /= batch[d];
      oa += (as[d] == 1 ? 0 : idx) * sa;
      ob += (bs[d] == 1 ? 0 : idx) * sb;
      sa *= as[d];
      sb *= bs[d];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0.0;
        for (int64_t p = 0; p < k; ++p) s += a[(oa * m + i) * k + p] * b[(ob * k + p) * n + j];
        out[(bi * m + i) * n + j] = s;
      }
  }
  return out;
}

template <class B, std::size_t D>
::testing::AssertionResult matmul_matches_naive(std::array<int64_t, D> as, std::array<int64_t, D> bs) {
  int64_t na = 1, nb = 1;
  for (auto d : as) na *= d;
  for (auto d : bs) nb *= d;
  const auto av = ramp(na, 1), bv = ramp(nb, 2);
  const auto a = make<B, D>(av, as);
  const auto b = make<B, D>(bv, bs);
  std::vector<int64_t> os;
  const auto want = naive(av, {as.begin(), as.end()}, bv, {bs.begin(), bs.end()}, &os);
  return matches(a.matmul(b), Shape(os), want, Tol<B>::exact);
}

template <class B>
class Matmul : public ::testing::Test {};
TYPED_TEST_SUITE(Matmul, TestBackends, BackendNames);

TYPED_TEST(Matmul, TwoDimMatchesNumpy) {
  using B = TypeParam;
  const auto p = make<B, 2>(V(ref::mm_p), {3, 5});
  const auto q = make<B, 2>(V(ref::mm_q), {5, 2});
  EXPECT_TRUE(matches(p.matmul(q), Shape{3, 2}, V(ref::mm_pq), Tol<B>::exact));
  std::vector<int64_t> os;
  EXPECT_TRUE(matches(p.matmul(q), Shape{3, 2}, naive(V(ref::mm_p), {3, 5}, V(ref::mm_q), {5, 2}, &os), Tol<B>::exact));
}

TYPED_TEST(Matmul, HandDerived) {
  using B = TypeParam;
  const auto a = make<B, 2>({1, 2, 3, 4, 5, 6}, {2, 3});
  const auto b = make<B, 2>({7, 8, 9, 10, 11, 12}, {3, 2});
  EXPECT_TRUE(matches(a.matmul(b), Shape{2, 2}, {58, 64, 139, 154}, 0.0));
  EXPECT_TRUE(matches(b.matmul(a), Shape{3, 3}, {39, 54, 69, 49, 68, 87, 59, 82, 105}, 0.0));
  // Identity on either side.
  EXPECT_TRUE(matches(a.matmul(Tensor<B, 2>::eye(3)), Shape{2, 3}, {1, 2, 3, 4, 5, 6}, 0.0));
  EXPECT_TRUE(matches(Tensor<B, 2>::eye(2).matmul(a), Shape{2, 3}, {1, 2, 3, 4, 5, 6}, 0.0));
  // Row times column and column times row.
  const auto row = make<B, 2>({1, 2, 3}, {1, 3});
  const auto col = make<B, 2>({4, 5, 6}, {3, 1});
  EXPECT_TRUE(matches(row.matmul(col), Shape{1, 1}, {32}, 0.0));
  EXPECT_TRUE(matches(col.matmul(row), Shape{3, 3}, {4, 8, 12, 5, 10, 15, 6, 12, 18}, 0.0));
}

TYPED_TEST(Matmul, BatchBroadcastingMatchesNumpy) {
  using B = TypeParam;
  const auto a = make<B, 4>(V(ref::mm_a), {2, 1, 3, 4});
  const auto b = make<B, 4>(V(ref::mm_b), {1, 5, 4, 2});
  EXPECT_TRUE(matches(a.matmul(b), Shape{2, 5, 3, 2}, V(ref::mm_ab), Tol<B>::exact));
  std::vector<int64_t> os;
  EXPECT_TRUE(matches(a.matmul(b), Shape{2, 5, 3, 2}, naive(V(ref::mm_a), {2, 1, 3, 4}, V(ref::mm_b), {1, 5, 4, 2}, &os),
                      Tol<B>::exact));
}

TYPED_TEST(Matmul, BatchedShapesAgainstNaiveLoop) {
  using B = TypeParam;
  // 3-D: equal batches, b shared (folded into one GEMM), a shared, both size 1.
  EXPECT_TRUE((matmul_matches_naive<B, 3>({4, 3, 5}, {4, 5, 2})));
  EXPECT_TRUE((matmul_matches_naive<B, 3>({4, 3, 5}, {1, 5, 2})));
  EXPECT_TRUE((matmul_matches_naive<B, 3>({1, 3, 5}, {4, 5, 2})));
  EXPECT_TRUE((matmul_matches_naive<B, 3>({1, 6, 2}, {1, 2, 7})));
  // 4-D: full batches, mixed broadcasting on both batch dims.
  EXPECT_TRUE((matmul_matches_naive<B, 4>({2, 3, 4, 5}, {2, 3, 5, 6})));
  EXPECT_TRUE((matmul_matches_naive<B, 4>({2, 1, 4, 5}, {1, 3, 5, 6})));
  EXPECT_TRUE((matmul_matches_naive<B, 4>({1, 3, 4, 5}, {2, 1, 5, 6})));
  EXPECT_TRUE((matmul_matches_naive<B, 4>({2, 3, 1, 5}, {1, 1, 5, 1})));
  // Non-square 2-D.
  EXPECT_TRUE((matmul_matches_naive<B, 2>({1, 7}, {7, 9})));
  EXPECT_TRUE((matmul_matches_naive<B, 2>({9, 1}, {1, 4})));
  EXPECT_TRUE((matmul_matches_naive<B, 2>({17, 3}, {3, 29})));
}

TYPED_TEST(Matmul, EmptyDims) {
  using B = TypeParam;
  // k = 0: the sum over nothing is zero.
  const auto a = Tensor<B, 2>::ones({3, 0});
  const auto b = Tensor<B, 2>::ones({0, 4});
  EXPECT_TRUE(matches(a.matmul(b), Shape{3, 4}, std::vector<double>(12, 0.0), 0.0));
  EXPECT_TRUE(matches(Tensor<B, 3>::ones({2, 3, 0}).matmul(Tensor<B, 3>::ones({2, 0, 4})), Shape{2, 3, 4},
                      std::vector<double>(24, 0.0), 0.0));
  EXPECT_TRUE(matches(Tensor<B, 3>::ones({2, 3, 0}).matmul(Tensor<B, 3>::ones({1, 0, 4})), Shape{2, 3, 4},
                      std::vector<double>(24, 0.0), 0.0));
  // m = 0, n = 0, empty batch.
  EXPECT_TRUE(matches(Tensor<B, 2>::ones({0, 3}).matmul(Tensor<B, 2>::ones({3, 4})), Shape{0, 4}, {}, 0.0));
  EXPECT_TRUE(matches(Tensor<B, 2>::ones({3, 4}).matmul(Tensor<B, 2>::ones({4, 0})), Shape{3, 0}, {}, 0.0));
  EXPECT_TRUE(matches(Tensor<B, 3>::ones({0, 3, 4}).matmul(Tensor<B, 3>::ones({1, 4, 2})), Shape{0, 3, 2}, {}, 0.0));
  EXPECT_TRUE(matches(Tensor<B, 3>::ones({1, 3, 4}).matmul(Tensor<B, 3>::ones({0, 4, 2})), Shape{0, 3, 2}, {}, 0.0));
}

TYPED_TEST(Matmul, LargeOperands) {
  using B = TypeParam;
  // One big GEMM (OpenBLAS threads), a folded batch, and many small batches spread over the thread pool.
  EXPECT_TRUE((matmul_matches_naive<B, 2>({64, 128}, {128, 96})));
  EXPECT_TRUE((matmul_matches_naive<B, 3>({8, 256, 64}, {1, 64, 32})));
  EXPECT_TRUE((matmul_matches_naive<B, 3>({600, 8, 8}, {600, 8, 8})));
  EXPECT_TRUE((matmul_matches_naive<B, 3>({1, 8, 8}, {600, 8, 8})));
  EXPECT_TRUE((matmul_matches_naive<B, 4>({30, 1, 8, 8}, {1, 20, 8, 8})));
}

TYPED_TEST(Matmul, ShapeErrorsNameOpAndShapes) {
  using B = TypeParam;
  auto expect_error = [](auto&& f, const std::vector<std::string>& parts) {
    try {
      f();
      ADD_FAILURE() << "no ShapeError";
    } catch (const ShapeError& e) {
      const std::string msg = e.what();
      for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
    }
  };
  const auto a = Tensor<B, 2>::ones({2, 3});
  const auto b = Tensor<B, 2>::ones({4, 5});
  expect_error([&] { a.matmul(b); }, {"matmul", "[2, 3]", "[4, 5]"});
  expect_error([&] { b.matmul(a); }, {"matmul", "[4, 5]", "[2, 3]"});
  // Batched: inner dims differ, and batch dims that do not broadcast.
  expect_error([&] { Tensor<B, 3>::ones({2, 3, 4}).matmul(Tensor<B, 3>::ones({2, 5, 6})); },
               {"matmul", "[2, 3, 4]", "[2, 5, 6]"});
  expect_error([&] { Tensor<B, 3>::ones({2, 3, 4}).matmul(Tensor<B, 3>::ones({3, 4, 6})); },
               {"matmul", "[2, 3, 4]", "[3, 4, 6]"});
  expect_error([&] { Tensor<B, 4>::ones({2, 3, 1, 4}).matmul(Tensor<B, 4>::ones({3, 3, 4, 1})); },
               {"matmul", "[2, 3, 1, 4]", "[3, 3, 4, 1]"});
  // Rank 1 is not a matrix.
  expect_error([&] { Tensor<B, 1>::ones({3}).matmul(Tensor<B, 1>::ones({3})); }, {"matmul", "[3]"});
  // k = 0 against k = 1.
  expect_error([&] { Tensor<B, 2>::ones({3, 0}).matmul(Tensor<B, 2>::ones({1, 4})); }, {"matmul", "[3, 0]", "[1, 4]"});
}

}  // namespace matmul_cases
}  // namespace ember::test
