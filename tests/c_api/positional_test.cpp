// issue 13 (h-rope): positional embeddings from C against PyTorch 1.13 golden values
// (tests/reference/positional_reference.hpp, by gen_positional_reference.py).
// ember_tensor_rotary_embedding: the rotate_half convention on [N, H, L, D], rank 3 with partial rotary and an
// offset, rank 2 at a far position — forward and d sum(out * w) / dx (f32: 1e-4); the misuse cases name the problem.
// The learned positional embedding: ember.h documents it as an EMBEDDING module over ember_tensor_arange(offset,
// offset + T) added to x; this checks that composition gives torch's output and gradients for x and the weight.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "tests/c_api/capi_support.hpp"
#include "tests/reference/positional_reference.hpp"

namespace ember::capi_test {
namespace {

namespace ref = ember::test::ref::positional;

template <std::size_t N>
std::vector<float> as_f32(const double (&v)[N]) {
  return std::vector<float>(v, v + N);
}
template <std::size_t N>
::testing::AssertionResult near(const ember_tensor* got, const double (&want)[N]) {
  const auto v = floats(got);
  if (v.size() != N) return ::testing::AssertionFailure() << v.size() << " values, torch has " << N;
  for (std::size_t i = 0; i < N; ++i)
    if (!(std::abs(v[i] - want[i]) <= 1e-4 * std::max(1.0, std::abs(want[i]))))
      return ::testing::AssertionFailure() << "[" << i << "] = " << v[i] << ", torch " << want[i];
  return ::testing::AssertionSuccess();
}

// d sum(out * w) / d leaf, through ember_tensor_backward seeded with w.
Tensor grad_of(const ember_tensor* out, const ember_tensor* w, const ember_tensor* leaf) {
  ember_grads* g = nullptr;
  EXPECT_EQ(ember_tensor_backward(out, w, &g), EMBER_OK) << ember_last_error();
  ember_tensor* d = nullptr;
  EXPECT_EQ(ember_grads_get(g, leaf, &d), EMBER_OK) << ember_last_error();
  ember_grads_free(g);
  return Tensor(d);
}

#define ROPE_CASE(test_name, n)                                                                            \
  TEST(CApiPositional, test_name) {                                                                        \
    const std::vector<int64_t> shape(std::begin(ref::n##_shape), std::end(ref::n##_shape));               \
    const Tensor x = f32(as_f32(ref::n##_x), shape);                                                       \
    EMBER_ASSERT_OK(ember_tensor_set_requires_grad(x.get(), 1));                                           \
    ember_tensor* out = nullptr;                                                                           \
    EMBER_ASSERT_OK(ember_tensor_rotary_embedding(x.get(), ref::n##_dim, ref::n##_base, ref::n##_offset, &out)); \
    const Tensor y(out);                                                                                   \
    EXPECT_EQ(shape_of(y.get()), shape);                                                                   \
    EXPECT_TRUE(near(y.get(), ref::n##_out));                                                              \
    const Tensor w = f32(as_f32(ref::n##_w), shape);                                                       \
    const Tensor dx = grad_of(y.get(), w.get(), x.get());                                                  \
    ASSERT_NE(dx.get(), nullptr);                                                                          \
    EXPECT_TRUE(near(dx.get(), ref::n##_dx));                                                              \
  }
ROPE_CASE(RotaryFullHeadMatchesTorch, rope_full)
ROPE_CASE(RotaryPartialWithOffsetMatchesTorch, rope_partial)
ROPE_CASE(RotaryRank2FarPositionMatchesTorch, rope_rank2)

TEST(CApiPositional, RotaryF64KeepsItsDtype) {
  const std::vector<double> v(std::begin(ref::rope_partial_x), std::end(ref::rope_partial_x));
  const std::vector<int64_t> shape(std::begin(ref::rope_partial_shape), std::end(ref::rope_partial_shape));
  ember_tensor* x = nullptr;
  EMBER_ASSERT_OK(ember_tensor_from_data(nullptr, EMBER_DTYPE_F64, v.data(), v.size() * sizeof(double), shape.data(),
                                         shape.size(), &x));
  const Tensor xh(x);
  ember_tensor* out = nullptr;
  EMBER_ASSERT_OK(ember_tensor_rotary_embedding(x, ref::rope_partial_dim, ref::rope_partial_base,
                                                ref::rope_partial_offset, &out));
  const Tensor y(out);
  ember_dtype_t dt{};
  EMBER_ASSERT_OK(ember_tensor_dtype(out, &dt));
  EXPECT_EQ(dt, EMBER_DTYPE_F64);
  std::vector<double> got(v.size());
  EMBER_ASSERT_OK(ember_tensor_copy_to(out, EMBER_DTYPE_F64, got.data(), got.size() * sizeof(double), nullptr));
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], ref::rope_partial_out[i], 1e-12) << i;
}

TEST(CApiPositional, RotaryRefusesBadArguments) {
  const Tensor x = f32(std::vector<float>(24, 1.0f), {2, 3, 4});
  ember_tensor* out = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_rotary_embedding(x.get(), 3, 10000.0, 0, &out), EMBER_ERR_INVALID_ARGUMENT,
                   "must be even");
  EMBER_EXPECT_ERR(ember_tensor_rotary_embedding(x.get(), 6, 10000.0, 0, &out), EMBER_ERR_INVALID_ARGUMENT,
                   "<= D = 4");
  EMBER_EXPECT_ERR(ember_tensor_rotary_embedding(x.get(), 0, 10000.0, 0, &out), EMBER_ERR_INVALID_ARGUMENT,
                   "positive");
  EMBER_EXPECT_ERR(ember_tensor_rotary_embedding(x.get(), 4, 0.0, 0, &out), EMBER_ERR_INVALID_ARGUMENT,
                   "must be finite and > 0");
  EMBER_EXPECT_ERR(ember_tensor_rotary_embedding(x.get(), 4, std::numeric_limits<double>::quiet_NaN(), 0, &out),
                   EMBER_ERR_INVALID_ARGUMENT, "must be finite and > 0");
  EMBER_EXPECT_ERR(ember_tensor_rotary_embedding(x.get(), 4, 10000.0, -1, &out), EMBER_ERR_INVALID_ARGUMENT,
                   "offset -1");
  const Tensor row = f32({1, 2, 3, 4}, {4});
  EMBER_EXPECT_ERR(ember_tensor_rotary_embedding(row.get(), 4, 10000.0, 0, &out), EMBER_ERR_SHAPE, "[..., L, D]");
  const Tensor ids = i64({1, 2, 3, 4}, {2, 2});
  EMBER_EXPECT_ERR(ember_tensor_rotary_embedding(ids.get(), 2, 10000.0, 0, &out), EMBER_ERR_DTYPE, "float tensor");
  EMBER_EXPECT_ERR(ember_tensor_rotary_embedding(nullptr, 2, 10000.0, 0, &out), EMBER_ERR_NULL_HANDLE, "x is NULL");
  EMBER_EXPECT_ERR(ember_tensor_rotary_embedding(x.get(), 2, 10000.0, 0, nullptr), EMBER_ERR_INVALID_ARGUMENT, "out");
  EXPECT_EQ(out, nullptr);
}

// x + EMBEDDING(arange(offset, offset + T)) as ember.h documents for the learned positional embedding.
#define LEARNED_CASE(test_name, n)                                                                              \
  TEST(CApiPositional, test_name) {                                                                             \
    const int64_t max_len = ref::n##_dims[0], d_model = ref::n##_dims[1], T = ref::n##_dims[2],                 \
                  N = ref::n##_dims[3], offset = ref::n##_dims[4];                                              \
    auto d = layer(EMBER_LAYER_EMBEDDING);                                                                      \
    d.in_features = max_len;                                                                                    \
    d.out_features = d_model;                                                                                   \
    ember_module* m = nullptr;                                                                                  \
    EMBER_ASSERT_OK(ember_module_layer(nullptr, &d, &m));                                                       \
    const Module emb(m);                                                                                        \
    ASSERT_EQ(param_name(m, 0), "weight");                                                                      \
    const Tensor weight = f32(as_f32(ref::n##_weight), {max_len, d_model});                                     \
    EMBER_ASSERT_OK(ember_module_state_set(m, "weight", weight.get()));                                         \
    const std::vector<int64_t> xs =                                                                             \
        ref::n##_batch_first ? std::vector<int64_t>{N, T, d_model} : std::vector<int64_t>{T, N, d_model};       \
    const Tensor x = f32(as_f32(ref::n##_x), xs);                                                               \
    EMBER_ASSERT_OK(ember_tensor_set_requires_grad(x.get(), 1));                                                \
    ember_tensor* pos = nullptr;                                                                                \
    EMBER_ASSERT_OK(ember_tensor_arange(nullptr, EMBER_DTYPE_I64, offset, offset + T, 1, &pos));                \
    const Tensor positions(pos);                                                                                \
    const Tensor rows = forward(m, pos);                                                                        \
    const std::vector<int64_t> rs =                                                                             \
        ref::n##_batch_first ? std::vector<int64_t>{1, T, d_model} : std::vector<int64_t>{T, 1, d_model};       \
    ember_tensor* r = nullptr;                                                                                  \
    EMBER_ASSERT_OK(ember_tensor_reshape(rows.get(), rs.data(), rs.size(), &r));                                \
    const Tensor rows3(r);                                                                                      \
    ember_tensor* out = nullptr;                                                                                \
    EMBER_ASSERT_OK(ember_tensor_add(x.get(), r, &out));                                                        \
    const Tensor y(out);                                                                                        \
    EXPECT_EQ(shape_of(out), xs);                                                                               \
    EXPECT_TRUE(near(out, ref::n##_out));                                                                       \
    ember_tensor* wv = nullptr;                                                                                 \
    EMBER_ASSERT_OK(ember_module_param_value(m, 0, &wv));                                                       \
    const Tensor wleaf(wv);                                                                                     \
    const Tensor w = f32(as_f32(ref::n##_w), xs);                                                               \
    ember_grads* g = nullptr;                                                                                   \
    EMBER_ASSERT_OK(ember_tensor_backward(out, w.get(), &g));                                                   \
    ember_tensor *dx = nullptr, *dw = nullptr;                                                                  \
    EMBER_EXPECT_OK(ember_grads_get(g, x.get(), &dx));                                                          \
    EMBER_EXPECT_OK(ember_grads_get(g, wv, &dw));                                                               \
    ember_grads_free(g);                                                                                        \
    const Tensor dxh(dx), dwh(dw);                                                                              \
    ASSERT_NE(dx, nullptr);                                                                                     \
    ASSERT_NE(dw, nullptr);                                                                                     \
    EXPECT_TRUE(near(dx, ref::n##_dx));                                                                         \
    EXPECT_TRUE(near(dw, ref::n##_dweight));                                                                    \
  }
LEARNED_CASE(LearnedSeqFirstIsEmbeddingOverArangePlusX, learned_seq_first)
LEARNED_CASE(LearnedBatchFirstWithOffsetIsEmbeddingOverArangePlusX, learned_batch_first)

}  // namespace
}  // namespace ember::capi_test
