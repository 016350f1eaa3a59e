// The typed engine's remaining ops from C (issue 11): expand, flip, repeat, scatter_add, masked_fill, var,
// adaptive_avg_pool2d, huber and BCE-with-logits losses. Values are torch 1.13's for the same inputs (worked out
// by hand in the comments); gradients where the op is differentiable.
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

// d(sum(y))/dx.
std::vector<float> grad_of_sum(const ember_tensor* y, const ember_tensor* x) {
  ember_tensor* s = nullptr;
  EXPECT_EQ(ember_tensor_reduce_all(y, EMBER_REDUCE_SUM, &s), EMBER_OK) << ember_last_error();
  Tensor keep_s(s);
  ember_grads* g = nullptr;
  EXPECT_EQ(ember_tensor_backward(s, nullptr, &g), EMBER_OK) << ember_last_error();
  Grads keep_g(g);
  ember_tensor* gx = nullptr;
  EXPECT_EQ(ember_grads_get(g, x, &gx), EMBER_OK) << ember_last_error();
  Tensor keep_gx(gx);
  return gx ? floats(gx) : std::vector<float>{};
}

TEST(CApiEngineOps, ExpandBroadcastsSizeOneAndNewLeadingDims) {
  Tensor x = leaf({1, 2, 3}, {1, 3});
  const int64_t to[] = {2, 2, -1};
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_tensor_expand(x.get(), to, 3, &y));
  Tensor keep(y);
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(floats(y), (std::vector<float>{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(grad_of_sum(y, x.get()), (std::vector<float>{4, 4, 4}));  // each element used 4 times

  const int64_t bad[] = {2, 2};  // 3 is not 1: cannot broadcast
  EMBER_EXPECT_ERR(ember_tensor_expand(x.get(), bad, 2, &y), EMBER_ERR_SHAPE, "cannot broadcast");
  const int64_t new_minus_one[] = {-1, 1, 3};
  EMBER_EXPECT_ERR(ember_tensor_expand(x.get(), new_minus_one, 3, &y), EMBER_ERR_SHAPE, "new leading dim");
  const int64_t lower[] = {3};
  EMBER_EXPECT_ERR(ember_tensor_expand(x.get(), lower, 1, &y), EMBER_ERR_SHAPE, "at least its rank");
  EMBER_EXPECT_ERR(ember_tensor_expand(x.get(), nullptr, 2, &y), EMBER_ERR_INVALID_ARGUMENT, "shape is NULL");
  const int64_t huge[] = {int64_t{1} << 40, int64_t{1} << 40, 3};
  EMBER_EXPECT_ERR(ember_tensor_expand(x.get(), huge, 3, &y), EMBER_ERR_SHAPE, "too many elements");
}

TEST(CApiEngineOps, FlipReversesTheListedDims) {
  Tensor x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  const int64_t last[] = {-1};
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_tensor_flip(x.get(), last, 1, &y));
  Tensor a(y);
  EXPECT_EQ(floats(y), (std::vector<float>{3, 2, 1, 6, 5, 4}));
  const int64_t both[] = {0, 1};
  EMBER_ASSERT_OK(ember_tensor_flip(x.get(), both, 2, &y));
  Tensor b(y);
  EXPECT_EQ(floats(y), (std::vector<float>{6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(grad_of_sum(y, x.get()), std::vector<float>(6, 1.0f));
  auto ix = i64({7, 8, 9}, {3});
  const int64_t zero[] = {0};
  EMBER_ASSERT_OK(ember_tensor_flip(ix.get(), zero, 1, &y));
  Tensor c(y);
  EXPECT_EQ(ints(y), (std::vector<int64_t>{9, 8, 7}));
  const int64_t twice[] = {1, -1};
  EMBER_EXPECT_ERR(ember_tensor_flip(x.get(), twice, 2, &y), EMBER_ERR_INVALID_ARGUMENT, "more than once");
  const int64_t out_of_range[] = {2};
  EMBER_EXPECT_ERR(ember_tensor_flip(x.get(), out_of_range, 1, &y), EMBER_ERR_INDEX, "out of range");
}

TEST(CApiEngineOps, RepeatTilesEachDimAndAddsLeadingDims) {
  Tensor x = leaf({1, 2, 3, 4}, {2, 2});
  const int64_t rows[] = {2, 1};
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_tensor_repeat(x.get(), rows, 2, &y));
  Tensor a(y);
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(floats(y), (std::vector<float>{1, 2, 3, 4, 1, 2, 3, 4}));
  const int64_t cols[] = {1, 2};
  EMBER_ASSERT_OK(ember_tensor_repeat(x.get(), cols, 2, &y));
  Tensor b(y);
  EXPECT_EQ(floats(y), (std::vector<float>{1, 2, 1, 2, 3, 4, 3, 4}));
  const int64_t three[] = {2, 1, 3};  // torch: x.repeat(2, 1, 3) -> [2, 2, 6]
  EMBER_ASSERT_OK(ember_tensor_repeat(x.get(), three, 3, &y));
  Tensor c(y);
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{2, 2, 6}));
  EXPECT_EQ(floats(y), (std::vector<float>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4,  //
                                           1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  EXPECT_EQ(grad_of_sum(y, x.get()), std::vector<float>(4, 6.0f));  // 2 * 1 * 3 copies
  const int64_t zero[] = {0, 1};
  EMBER_ASSERT_OK(ember_tensor_repeat(x.get(), zero, 2, &y));
  Tensor d(y);
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{0, 2}));

  // An empty x with a huge count: the result [48, 0] is valid, but tiling dim by dim built the intermediate shape
  // [48, 2^62, 0], whose nonzero dims overflow int64 (UBSan in the fuzzer).
  Tensor empty = leaf({}, {48, 0});
  const int64_t huge_count[] = {1, int64_t{1} << 62};
  EMBER_ASSERT_OK(ember_tensor_repeat(empty.get(), huge_count, 2, &y));
  Tensor e(y);
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{48, 0}));
  EXPECT_EQ(grad_of_sum(y, empty.get()), std::vector<float>{});

  const int64_t negative[] = {-1, 1};
  EMBER_EXPECT_ERR(ember_tensor_repeat(x.get(), negative, 2, &y), EMBER_ERR_INVALID_ARGUMENT, "negative count");
  const int64_t overflow[] = {std::numeric_limits<int64_t>::max(), 2};  // 2 * INT64_MAX must not wrap
  EMBER_EXPECT_ERR(ember_tensor_repeat(x.get(), overflow, 2, &y), EMBER_ERR_SHAPE, "too many elements");
  EMBER_EXPECT_ERR(ember_tensor_repeat(x.get(), rows, 1, &y), EMBER_ERR_SHAPE, "at least its rank");
}

TEST(CApiEngineOps, ScatterAddAccumulatesRepeatedIndices) {
  Tensor x = leaf({10, 20, 30}, {3});
  auto idx = i64({0, 2, 0}, {3});
  Tensor v = leaf({1, 2, 3}, {3});
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_tensor_scatter_add(x.get(), 0, idx.get(), v.get(), &y));
  Tensor keep(y);
  EXPECT_EQ(floats(y), (std::vector<float>{14, 20, 32}));
  EXPECT_EQ(grad_of_sum(y, v.get()), std::vector<float>(3, 1.0f));

  auto bad = i64({0, 3}, {2});
  Tensor v2 = f32({1, 1}, {2});
  EMBER_EXPECT_ERR(ember_tensor_scatter_add(x.get(), 0, bad.get(), v2.get(), &y), EMBER_ERR_INDEX, "out of range");
  EMBER_EXPECT_ERR(ember_tensor_scatter_add(x.get(), 0, idx.get(), v2.get(), &y), EMBER_ERR_SHAPE,
                   "must have the shape of indices");
  auto iv = i64({1, 2, 3}, {3});
  EMBER_EXPECT_ERR(ember_tensor_scatter_add(x.get(), 0, idx.get(), iv.get(), &y), EMBER_ERR_DTYPE, "x's dtype");
  auto ix = i64({0, 0, 0}, {3});
  EMBER_ASSERT_OK(ember_tensor_scatter_add(ix.get(), 0, idx.get(), iv.get(), &y));
  Tensor ints_out(y);
  EXPECT_EQ(ints(y), (std::vector<int64_t>{4, 0, 2}));
}

TEST(CApiEngineOps, MaskedFillBroadcastsTheMask) {
  Tensor x = leaf({1, 2, 3, 4}, {2, 2});
  const uint8_t m[] = {1, 0};
  const int64_t ms[] = {2};
  ember_tensor* mask = nullptr;
  EMBER_ASSERT_OK(ember_tensor_from_data(nullptr, EMBER_DTYPE_BOOL, m, sizeof m, ms, 1, &mask));
  Tensor keep_mask(mask);
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_tensor_masked_fill(x.get(), mask, -5, &y));
  Tensor keep(y);
  EXPECT_EQ(floats(y), (std::vector<float>{-5, 2, -5, 4}));
  EXPECT_EQ(grad_of_sum(y, x.get()), (std::vector<float>{0, 1, 0, 1}));  // filled elements get no gradient
  auto ix = i64({1, 2}, {2});
  EMBER_ASSERT_OK(ember_tensor_masked_fill(ix.get(), mask, 7.9, &y));
  Tensor ints_out(y);
  EXPECT_EQ(ints(y), (std::vector<int64_t>{7, 2}));
  EMBER_EXPECT_ERR(ember_tensor_masked_fill(ix.get(), mask, std::nan(""), &y), EMBER_ERR_INVALID_ARGUMENT,
                   "not representable");
  EMBER_EXPECT_ERR(ember_tensor_masked_fill(x.get(), x.get(), 0, &y), EMBER_ERR_DTYPE, "bool");
  const uint8_t m3[] = {1, 0, 1};
  const int64_t s3[] = {3};
  ember_tensor* mask3 = nullptr;
  EMBER_ASSERT_OK(ember_tensor_from_data(nullptr, EMBER_DTYPE_BOOL, m3, sizeof m3, s3, 1, &mask3));
  Tensor keep_mask3(mask3);
  EMBER_EXPECT_ERR(ember_tensor_masked_fill(x.get(), mask3, 0, &y), EMBER_ERR_SHAPE, "not broadcastable");
}

TEST(CApiEngineOps, VarWithBesselsCorrection) {
  Tensor x = leaf({1, 2, 3, 4}, {4});
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_tensor_var(x.get(), 0, 1, 0, &y));
  Tensor unbiased(y);
  EXPECT_EQ(shape_of(y), std::vector<int64_t>{});
  EXPECT_NEAR(floats(y)[0], 5.0f / 3.0f, 1e-6);  // squares 2.25 + 0.25 + 0.25 + 2.25 = 5, over 3
  // d var / dx_i = 2 (x_i - mean) / (n - 1) = [-1, -1/3, 1/3, 1]
  const auto g = grad_of_sum(y, x.get());
  ASSERT_EQ(g.size(), 4u);
  EXPECT_NEAR(g[0], -1.0f, 1e-6);
  EXPECT_NEAR(g[1], -1.0f / 3.0f, 1e-6);
  EXPECT_NEAR(g[3], 1.0f, 1e-6);
  EMBER_ASSERT_OK(ember_tensor_var(x.get(), -1, 0, 1, &y));
  Tensor biased(y);
  EXPECT_EQ(shape_of(y), std::vector<int64_t>{1});
  EXPECT_NEAR(floats(y)[0], 1.25f, 1e-6);
  Tensor m = f32({1, 3, 2, 6}, {2, 2});
  EMBER_ASSERT_OK(ember_tensor_var(m.get(), 1, 1, 0, &y));
  Tensor rows(y);
  EXPECT_EQ(floats(y), (std::vector<float>{2, 8}));
  EMBER_EXPECT_ERR(ember_tensor_var(m.get(), 2, 1, 0, &y), EMBER_ERR_INDEX, "out of range");
  auto ix = i64({1, 2}, {2});
  EMBER_EXPECT_ERR(ember_tensor_var(ix.get(), 0, 1, 0, &y), EMBER_ERR_DTYPE, "float");
  EMBER_ASSERT_OK(ember_tensor_var(x.get(), 0, std::numeric_limits<int64_t>::min(), 0, &y));  // no int overflow
  Tensor hostile(y);
}

TEST(CApiEngineOps, AdaptiveAvgPool2dAveragesEachOutputCell) {
  Tensor x = leaf({1, 2, 3, 4, 5, 6, 7, 8, 9}, {1, 1, 3, 3});
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_tensor_adaptive_avg_pool2d(x.get(), 1, 1, &y));
  Tensor one(y);
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_NEAR(floats(y)[0], 5.0f, 1e-6);
  EXPECT_EQ(grad_of_sum(y, x.get()), std::vector<float>(9, 1.0f / 9.0f));
  // 3 -> 2 cells: windows [0, 2) and [1, 3) in each dim (torch's floor / ceil bounds)
  EMBER_ASSERT_OK(ember_tensor_adaptive_avg_pool2d(x.get(), 2, 2, &y));
  Tensor two(y);
  EXPECT_EQ(floats(y), (std::vector<float>{3, 4, 6, 7}));
  EMBER_EXPECT_ERR(ember_tensor_adaptive_avg_pool2d(x.get(), 0, 1, &y), EMBER_ERR_INVALID_ARGUMENT, "positive");
  EMBER_EXPECT_ERR(ember_tensor_adaptive_avg_pool2d(x.get(), int64_t{1} << 40, int64_t{1} << 40, &y), EMBER_ERR_SHAPE,
                   "too many elements");
  Tensor flat = f32({1, 2}, {2});
  EMBER_EXPECT_ERR(ember_tensor_adaptive_avg_pool2d(flat.get(), 1, 1, &y), EMBER_ERR_SHAPE, "rank 4");
}

TEST(CApiEngineOps, HuberAndBceWithLogitsLosses) {
  Tensor in = leaf({0, 2, -0.5f}, {3});
  Tensor target = f32({0, 0, 0}, {3});
  ember_tensor* y = nullptr;
  // 0, delta * (2 - delta / 2) = 1.5, 0.5 * 0.25 = 0.125
  EMBER_ASSERT_OK(ember_loss_huber(in.get(), target.get(), EMBER_REDUCTION_SUM, 1.0, &y));
  Tensor sum(y);
  EXPECT_EQ(shape_of(y), std::vector<int64_t>{});
  EXPECT_NEAR(floats(y)[0], 1.625f, 1e-6);
  const auto g = grad_of_sum(y, in.get());  // d, clipped to +-delta
  EXPECT_EQ(g, (std::vector<float>{0, 1, -0.5f}));
  EMBER_ASSERT_OK(ember_loss_huber(in.get(), target.get(), EMBER_REDUCTION_MEAN, 1.0, &y));
  Tensor mean(y);
  EXPECT_NEAR(floats(y)[0], 1.625f / 3, 1e-6);
  EMBER_EXPECT_ERR(ember_loss_huber(in.get(), target.get(), EMBER_REDUCTION_SUM, 0.0, &y), EMBER_ERR_INVALID_ARGUMENT,
                   "delta must be positive");
  EMBER_EXPECT_ERR(ember_loss_huber(in.get(), target.get(), 7, 1.0, &y), EMBER_ERR_INVALID_ARGUMENT,
                   "unknown reduction");

  Tensor logits = f32({0, 100, -100}, {3});
  Tensor labels = f32({1, 1, 1}, {3});
  EMBER_ASSERT_OK(ember_loss_bce_with_logits(logits.get(), labels.get(), EMBER_REDUCTION_SUM, &y));
  Tensor bce(y);
  EXPECT_NEAR(floats(y)[0], std::log(2.0f) + 0.0f + 100.0f, 1e-4);  // stable for |x| = 100
  Tensor two = f32({1, 1}, {2});
  EMBER_EXPECT_ERR(ember_loss_bce_with_logits(logits.get(), two.get(), EMBER_REDUCTION_SUM, &y), EMBER_ERR_SHAPE,
                   "same shape");
}

}  // namespace
}  // namespace ember::capi_test
