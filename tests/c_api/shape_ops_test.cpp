// The composed shape ops from C (issue 13): pad, step slices, baddbmm, einsum, logsumexp, std, interpolate and the
// Upsample layer. Values worked out by hand in the comments (torch 1.13 agrees: the op suite and the Python tests
// compare against it); gradients where the routing matters; each function's refusals.
#include <cmath>

#include "tests/c_api/capi_support.hpp"

namespace ember::capi_test {
namespace {

Tensor leaf(const std::vector<float>& v, const std::vector<int64_t>& shape) {
  Tensor t = f32(v, shape);
  EXPECT_EQ(ember_tensor_set_requires_grad(t.get(), 1), EMBER_OK) << ember_last_error();
  return t;
}

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

TEST(CApiShapeOps, PadModes) {
  Tensor x = leaf({1, 2, 3}, {1, 3});
  ember_tensor* y = nullptr;
  const int64_t left1[] = {1, 0};
  EMBER_ASSERT_OK(ember_tensor_pad(x.get(), left1, 2, EMBER_PAD_CONSTANT, 9, &y));
  Tensor a(y);
  EXPECT_EQ(floats(y), (std::vector<float>{9, 1, 2, 3}));
  // reflect (2, 1): sources 2 1 0 1 2 1, so x0 is used once, x1 three times, x2 twice.
  const int64_t p21[] = {2, 1};
  EMBER_ASSERT_OK(ember_tensor_pad(x.get(), p21, 2, EMBER_PAD_REFLECT, 0, &y));
  Tensor b(y);
  EXPECT_EQ(floats(y), (std::vector<float>{3, 2, 1, 2, 3, 2}));
  EXPECT_EQ(grad_of_sum(y, x.get()), (std::vector<float>{1, 3, 2}));
  EMBER_ASSERT_OK(ember_tensor_pad(x.get(), p21, 2, EMBER_PAD_REPLICATE, 0, &y));
  Tensor c(y);
  EXPECT_EQ(floats(y), (std::vector<float>{1, 1, 1, 2, 3, 3}));
  auto xi = i64({4, 5}, {2});
  EMBER_ASSERT_OK(ember_tensor_pad(xi.get(), left1, 2, EMBER_PAD_CONSTANT, -1.5, &y));  // truncated, as torch
  Tensor d(y);
  EXPECT_EQ(ints(y), (std::vector<int64_t>{-1, 4, 5}));
  EMBER_EXPECT_ERR(ember_tensor_pad(x.get(), p21, 2, 7, 0, &y), EMBER_ERR_INVALID_ARGUMENT, "unknown pad mode");
  EMBER_EXPECT_ERR(ember_tensor_pad(x.get(), p21, 1, EMBER_PAD_CONSTANT, 0, &y), EMBER_ERR_INVALID_ARGUMENT, "even");
  const int64_t big[] = {3, 0};
  EMBER_EXPECT_ERR(ember_tensor_pad(x.get(), big, 2, EMBER_PAD_REFLECT, 0, &y), EMBER_ERR_INVALID_ARGUMENT, "smaller");
  EMBER_EXPECT_ERR(ember_tensor_pad(x.get(), nullptr, 2, EMBER_PAD_CONSTANT, 0, &y), EMBER_ERR_INVALID_ARGUMENT,
                   "pads is NULL");
}

TEST(CApiShapeOps, SliceStep) {
  auto x = i64({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {10});
  const int64_t start[] = {1}, end[] = {EMBER_SLICE_END}, step[] = {3};
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_tensor_slice_step(x.get(), start, end, step, 1, &y));
  Tensor a(y);
  EXPECT_EQ(ints(y), (std::vector<int64_t>{1, 4, 7}));
  Tensor f = leaf({0, 1, 2, 3, 4}, {5});
  const int64_t s0[] = {0}, two[] = {2};
  EMBER_ASSERT_OK(ember_tensor_slice_step(f.get(), s0, end, two, 1, &y));
  Tensor b(y);
  EXPECT_EQ(floats(y), (std::vector<float>{0, 2, 4}));
  EXPECT_EQ(grad_of_sum(y, f.get()), (std::vector<float>{1, 0, 1, 0, 1}));
  const int64_t zero[] = {0};
  EMBER_EXPECT_ERR(ember_tensor_slice_step(x.get(), start, end, zero, 1, &y), EMBER_ERR_INVALID_ARGUMENT,
                   "greater than zero");
  EMBER_EXPECT_ERR(ember_tensor_slice_step(x.get(), start, end, nullptr, 1, &y), EMBER_ERR_INVALID_ARGUMENT, "NULL");
}

TEST(CApiShapeOps, Baddbmm) {
  Tensor in = f32({1}, {1, 1, 1}), b1 = f32({1, 2}, {1, 1, 2}), b2 = f32({3, 4}, {1, 2, 1});
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_tensor_baddbmm(in.get(), b1.get(), b2.get(), 2.0, 0.5, &y));  // 2 * 1 + 0.5 * (3 + 8)
  Tensor a(y);
  EXPECT_EQ(floats(y), (std::vector<float>{7.5f}));
  EMBER_EXPECT_ERR(ember_tensor_baddbmm(in.get(), b1.get(), b1.get(), 1, 1, &y), EMBER_ERR_SHAPE, "do not multiply");
}

TEST(CApiShapeOps, Einsum) {
  Tensor m = f32({1, 2, 3, 4}, {2, 2});
  const ember_tensor* ops[] = {m.get()};
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_einsum("ij->ji", ops, 1, &y));
  Tensor a(y);
  EXPECT_EQ(floats(y), (std::vector<float>{1, 3, 2, 4}));
  EMBER_ASSERT_OK(ember_einsum("ii", ops, 1, &y));  // the trace, a rank-0 result
  Tensor b(y);
  EXPECT_EQ(shape_of(y), std::vector<int64_t>{});
  EXPECT_EQ(floats(y), (std::vector<float>{5}));
  const ember_tensor* two[] = {m.get(), m.get()};
  EMBER_ASSERT_OK(ember_einsum("ij,jk->ik", two, 2, &y));
  Tensor c(y);
  EXPECT_EQ(floats(y), (std::vector<float>{7, 10, 15, 22}));
  EMBER_EXPECT_ERR(ember_einsum("ij-", ops, 1, &y), EMBER_ERR_INVALID_ARGUMENT, "stray");
  EMBER_EXPECT_ERR(ember_einsum("ij,jk->ik", ops, 1, &y), EMBER_ERR_INVALID_ARGUMENT, "operand subscripts");
  EMBER_EXPECT_ERR(ember_einsum(nullptr, ops, 1, &y), EMBER_ERR_INVALID_ARGUMENT, "equation is NULL");
  EMBER_EXPECT_ERR(ember_einsum("i", ops, 0, &y), EMBER_ERR_INVALID_ARGUMENT, "no operands");
}

TEST(CApiShapeOps, LogsumexpAndStd) {
  Tensor x = f32({0, 0, 1000, 1000}, {2, 2});
  const int64_t d1[] = {1};
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_tensor_logsumexp(x.get(), d1, 1, 0, &y));
  Tensor a(y);
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{2}));
  const auto v = floats(y);
  EXPECT_NEAR(v[0], std::log(2.0), 1e-6);
  EXPECT_NEAR(v[1], 1000 + std::log(2.0), 1e-3);  // exp(1000) overflows: the shift keeps it finite
  EMBER_ASSERT_OK(ember_tensor_logsumexp(x.get(), nullptr, 0, 1, &y));
  Tensor b(y);
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{1, 1}));
  Tensor s = f32({1, 2, 3, 4}, {4});
  EMBER_ASSERT_OK(ember_tensor_std(s.get(), nullptr, 0, 1, 0, &y));
  Tensor c(y);
  EXPECT_EQ(shape_of(y), std::vector<int64_t>{});
  EXPECT_NEAR(floats(y)[0], std::sqrt(5.0 / 3.0), 1e-6);
  EMBER_ASSERT_OK(ember_tensor_std(s.get(), nullptr, 0, 0, 1, &y));
  Tensor d(y);
  EXPECT_NEAR(floats(y)[0], std::sqrt(1.25), 1e-6);
  const int64_t twice[] = {0, 0};
  EMBER_EXPECT_ERR(ember_tensor_std(x.get(), twice, 2, 1, 0, &y), EMBER_ERR_INVALID_ARGUMENT, "more than once");
  auto xi = i64({1, 2}, {2});
  EMBER_EXPECT_ERR(ember_tensor_logsumexp(xi.get(), nullptr, 0, 0, &y), EMBER_ERR_DTYPE, "float");
}

TEST(CApiShapeOps, InterpolateAndUpsample) {
  Tensor x = f32({1, 2, 3, 4}, {1, 1, 2, 2});
  const double two[] = {2.0};
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_interpolate(x.get(), nullptr, 0, two, 1, EMBER_INTERPOLATE_NEAREST, 0, &y));
  Tensor a(y);
  EXPECT_EQ(floats(y), (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  const int64_t three[] = {3, 3};
  EMBER_ASSERT_OK(ember_interpolate(x.get(), three, 2, nullptr, 0, EMBER_INTERPOLATE_BILINEAR, 1, &y));
  Tensor b(y);
  EXPECT_EQ(floats(y), (std::vector<float>{1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4}));
  EMBER_EXPECT_ERR(ember_interpolate(x.get(), three, 2, two, 1, EMBER_INTERPOLATE_NEAREST, 0, &y),
                   EMBER_ERR_INVALID_ARGUMENT, "exactly one");
  EMBER_EXPECT_ERR(ember_interpolate(x.get(), three, 2, nullptr, 0, EMBER_INTERPOLATE_NEAREST, 1, &y),
                   EMBER_ERR_INVALID_ARGUMENT, "align_corners");
  EMBER_EXPECT_ERR(ember_interpolate(x.get(), three, 2, nullptr, 0, 5, 0, &y), EMBER_ERR_INVALID_ARGUMENT,
                   "unknown interpolate mode");
  // The Upsample layer runs the same op.
  ember_layer_desc d = layer(EMBER_LAYER_UPSAMPLE);
  d.size[0] = d.size[1] = 3;
  d.interpolation = EMBER_INTERPOLATE_BILINEAR;
  d.align_corners = 1;
  Module m = sequential({d});
  Tensor u = forward(m.get(), x.get());
  EXPECT_EQ(floats(u.get()), floats(b.get()));
  ember_layer_desc none = layer(EMBER_LAYER_UPSAMPLE);  // neither size nor scale_factor
  ember_module* bad = nullptr;
  EMBER_EXPECT_ERR(ember_module_sequential(nullptr, &none, 1, &bad), EMBER_ERR_INVALID_ARGUMENT, "exactly one");
}

// Zero-element tensors with a huge dim ([0, 2^40] is valid and free): the ops build host index lists per output
// position, which must not be sized by that dim (hours, or an allocation failure, for an empty result).
TEST(CApiShapeOps, EmptyTensorsWithHugeDimsReturnAtOnce) {
  constexpr int64_t kHuge = int64_t{1} << 40;
  const int64_t shape[] = {0, kHuge};
  ember_tensor* raw = nullptr;
  EMBER_ASSERT_OK(ember_tensor_zeros(nullptr, EMBER_DTYPE_F32, shape, 2, &raw));
  Tensor x(raw);
  ember_tensor* y = nullptr;
  const int64_t p[] = {1, 2};
  EMBER_ASSERT_OK(ember_tensor_pad(x.get(), p, 2, EMBER_PAD_REPLICATE, 0, &y));
  Tensor a(y);
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{0, kHuge + 3}));
  const int64_t starts[] = {0, 1}, ends[] = {EMBER_SLICE_END, EMBER_SLICE_END}, steps[] = {1, 2};
  EMBER_ASSERT_OK(ember_tensor_slice_step(x.get(), starts, ends, steps, 2, &y));
  Tensor b(y);
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{0, kHuge / 2}));
  constexpr int64_t kBig = int64_t{1} << 29;  // a diagonal list of 2^29 entries would take 4 GiB
  const int64_t sq[] = {kBig, kBig, 0};
  EMBER_ASSERT_OK(ember_tensor_zeros(nullptr, EMBER_DTYPE_F32, sq, 3, &raw));
  Tensor z(raw);
  const ember_tensor* ops[] = {z.get()};
  EMBER_ASSERT_OK(ember_einsum("iij->ij", ops, 1, &y));
  Tensor c(y);
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{kBig, 0}));
}

}  // namespace
}  // namespace ember::capi_test
