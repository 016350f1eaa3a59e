// Issue 13's sort, scan and mask ops from C: values and indices against torch 1.13's (worked out in the comments),
// gradients through sort / topk / cumsum, both-or-neither outputs of sort / topk, flag and class checks.
#include <cmath>
#include <limits>

#include "tests/c_api/capi_support.hpp"

namespace ember::capi_test {
namespace {

Tensor leaf(const std::vector<float>& v, const std::vector<int64_t>& shape) {
  Tensor t = f32(v, shape);
  EXPECT_EQ(ember_tensor_set_requires_grad(t.get(), 1), EMBER_OK) << ember_last_error();
  return t;
}

Tensor bools(const std::vector<uint8_t>& v, const std::vector<int64_t>& shape) {
  ember_tensor* t = nullptr;
  EXPECT_EQ(ember_tensor_from_data(nullptr, EMBER_DTYPE_BOOL, v.data(), v.size(), shape.data(), shape.size(), &t),
            EMBER_OK)
      << ember_last_error();
  return Tensor(t);
}

// d(sum(y * w))/dx.
std::vector<float> grad_of_weighted(const ember_tensor* y, const ember_tensor* w, const ember_tensor* x) {
  ember_tensor *p = nullptr, *s = nullptr, *gx = nullptr;
  EXPECT_EQ(ember_tensor_binary(y, w, EMBER_BINARY_MUL, &p), EMBER_OK) << ember_last_error();
  Tensor keep_p(p);
  EXPECT_EQ(ember_tensor_reduce_all(p, EMBER_REDUCE_SUM, &s), EMBER_OK) << ember_last_error();
  Tensor keep_s(s);
  ember_grads* g = nullptr;
  EXPECT_EQ(ember_tensor_backward(s, nullptr, &g), EMBER_OK) << ember_last_error();
  Grads keep_g(g);
  EXPECT_EQ(ember_grads_get(g, x, &gx), EMBER_OK) << ember_last_error();
  Tensor keep_gx(gx);
  return gx ? floats(gx) : std::vector<float>{};
}

TEST(CApiSort, SortGivesValuesIndicesAndScattersTheGradient) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor x = leaf({3, nan, 1, 1, -2}, {5});
  ember_tensor *v = nullptr, *i = nullptr;
  EMBER_ASSERT_OK(ember_tensor_sort(x.get(), 0, 0, 1, &v, &i));
  Tensor kv(v), ki(i);
  // torch.sort([3, nan, 1, 1, -2], stable=True): [-2, 1, 1, 3, nan], [4, 2, 3, 0, 1]
  const auto vals = floats(v);
  EXPECT_EQ(std::vector<float>(vals.begin(), vals.begin() + 4), (std::vector<float>{-2, 1, 1, 3}));
  EXPECT_TRUE(std::isnan(vals[4]));
  EXPECT_EQ(ints(i), (std::vector<int64_t>{4, 2, 3, 0, 1}));
  // Weights by sorted position go back to where each value came from: x[4] got w[0], x[2] w[1], ...
  Tensor w = f32({10, 20, 30, 40, 50}, {5});
  EXPECT_EQ(grad_of_weighted(v, w.get(), x.get()), (std::vector<float>{40, 50, 20, 30, 10}));

  ember_tensor* a = nullptr;
  EMBER_ASSERT_OK(ember_tensor_argsort(x.get(), -1, 1, 0, &a));
  Tensor ka(a);
  EXPECT_EQ(ints(a), (std::vector<int64_t>{1, 0, 2, 3, 4}));  // descending: NaN first, ties in order
}

TEST(CApiSort, SortOfAScalarAndMisuse) {
  Tensor s = f32({2.5f}, {});
  ember_tensor *v = nullptr, *i = nullptr;
  EMBER_ASSERT_OK(ember_tensor_sort(s.get(), 0, 0, 0, &v, &i));
  Tensor kv(v), ki(i);
  EXPECT_EQ(shape_of(v), std::vector<int64_t>{});
  EXPECT_EQ(ints(i), std::vector<int64_t>{0});

  Tensor x = f32({1, 2}, {2});
  v = i = reinterpret_cast<ember_tensor*>(uintptr_t{1});
  EMBER_EXPECT_ERR(ember_tensor_sort(x.get(), 0, 2, 0, &v, &i), EMBER_ERR_INVALID_ARGUMENT, "descending must be");
  EXPECT_EQ(v, nullptr);  // both outs cleared on failure
  EXPECT_EQ(i, nullptr);
  EMBER_EXPECT_ERR(ember_tensor_sort(x.get(), 1, 0, 0, &v, &i), EMBER_ERR_INDEX, "out of range");
  EMBER_EXPECT_ERR(ember_tensor_sort(x.get(), 0, 0, 0, &v, nullptr), EMBER_ERR_INVALID_ARGUMENT, "out is NULL");
  EMBER_EXPECT_ERR(ember_tensor_sort(x.get(), 0, 0, 0, &v, &v), EMBER_ERR_INVALID_ARGUMENT, "same handle");
  Tensor n = i64({1, 2}, {2});
  EMBER_EXPECT_ERR(ember_tensor_argsort(n.get(), 0, 0, 0, &v), EMBER_ERR_DTYPE, "float tensor");
}

TEST(CApiSort, TopkSelectsAlongADim) {
  Tensor x = leaf({0.5f, -1, 4, 2.5f, 9, 8, -7, 6}, {2, 4});
  ember_tensor *v = nullptr, *i = nullptr;
  EMBER_ASSERT_OK(ember_tensor_topk(x.get(), 2, 1, 1, 1, &v, &i));
  Tensor kv(v), ki(i);
  EXPECT_EQ(floats(v), (std::vector<float>{4, 2.5f, 9, 8}));
  EXPECT_EQ(ints(i), (std::vector<int64_t>{2, 3, 0, 1}));
  Tensor w = f32({1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(grad_of_weighted(v, w.get(), x.get()), (std::vector<float>{0, 0, 1, 2, 3, 4, 0, 0}));
  EMBER_ASSERT_OK(ember_tensor_topk(x.get(), 1, 0, 0, 1, &v, &i));
  Tensor kv2(v), ki2(i);
  EXPECT_EQ(floats(v), (std::vector<float>{0.5f, -1, -7, 2.5f}));  // smallest along dim 0
  EMBER_EXPECT_ERR(ember_tensor_topk(x.get(), 5, 1, 1, 1, &v, &i), EMBER_ERR_INVALID_ARGUMENT, "out of range");
}

TEST(CApiSort, CumsumAndItsReversedGradient) {
  Tensor x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_tensor_cumsum(x.get(), 1, &y));
  Tensor k(y);
  EXPECT_EQ(floats(y), (std::vector<float>{1, 3, 6, 4, 9, 15}));
  Tensor w = f32({1, 10, 100, 1, 10, 100}, {2, 3});
  EXPECT_EQ(grad_of_weighted(y, w.get(), x.get()), (std::vector<float>{111, 110, 100, 111, 110, 100}));
  EMBER_EXPECT_ERR(ember_tensor_cumsum(x.get(), 2, &y), EMBER_ERR_INDEX, "out of range");
}

TEST(CApiSort, TrilTriuMaskedSelectOneHot) {
  Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_tensor_tril(x.get(), 0, &y));
  Tensor a(y);
  EXPECT_EQ(floats(y), (std::vector<float>{1, 0, 0, 4, 5, 0}));
  EMBER_ASSERT_OK(ember_tensor_triu(x.get(), 1, &y));
  Tensor b(y);
  EXPECT_EQ(floats(y), (std::vector<float>{0, 2, 3, 0, 0, 6}));
  Tensor v = f32({1, 2, 3}, {3});
  EMBER_EXPECT_ERR(ember_tensor_tril(v.get(), 0, &y), EMBER_ERR_SHAPE, "at least 2 dims");

  Tensor m = bools({1, 0, 1}, {1, 3});  // broadcast over the rows
  EMBER_ASSERT_OK(ember_tensor_masked_select(x.get(), m.get(), &y));
  Tensor c(y);
  EXPECT_EQ(floats(y), (std::vector<float>{1, 3, 4, 6}));
  EMBER_EXPECT_ERR(ember_tensor_masked_select(x.get(), x.get(), &y), EMBER_ERR_DTYPE, "bool tensor");

  Tensor cls = i64({0, 2, 1}, {3});
  EMBER_ASSERT_OK(ember_tensor_one_hot(cls.get(), -1, &y));
  Tensor d(y);
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(ints(y), (std::vector<int64_t>{1, 0, 0, 0, 0, 1, 0, 1, 0}));
  EMBER_EXPECT_ERR(ember_tensor_one_hot(cls.get(), 2, &y), EMBER_ERR_INVALID_ARGUMENT, "out of range");
  EMBER_EXPECT_ERR(ember_tensor_one_hot(x.get(), 3, &y), EMBER_ERR_DTYPE, "int tensor");
}

}  // namespace
}  // namespace ember::capi_test
