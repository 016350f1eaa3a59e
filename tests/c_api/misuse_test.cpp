// The C ABI misuse suite: every bad input returns a status and a useful message, and the process carries on.
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#include <gtest/gtest-spi.h>

#include "tests/c_api/capi_support.hpp"

namespace ember::capi_test {
namespace {

TEST(CApiMisuse, NullHandlesAreReported) {
  auto a = f32({1, 2}, {2});
  ember_tensor* out = reinterpret_cast<ember_tensor*>(0x1);  // must be cleared on failure
  EMBER_EXPECT_ERR(ember_tensor_add(nullptr, a.get(), &out), EMBER_ERR_NULL_HANDLE, "ember_tensor_add: a is NULL");
  EXPECT_EQ(out, nullptr);
  EMBER_EXPECT_ERR(ember_tensor_add(a.get(), nullptr, &out), EMBER_ERR_NULL_HANDLE, "b is NULL");
  EMBER_EXPECT_ERR(ember_module_forward(nullptr, a.get(), EMBER_MODE_EVAL, &out), EMBER_ERR_NULL_HANDLE,
                   "module is NULL");
  EMBER_EXPECT_ERR(ember_optimizer_step(nullptr, nullptr), EMBER_ERR_NULL_HANDLE, "optimizer is NULL");
  EMBER_EXPECT_ERR(ember_grads_get(nullptr, a.get(), &out), EMBER_ERR_NULL_HANDLE, "grads is NULL");
  EMBER_EXPECT_ERR(ember_record_write_file(nullptr, "x", nullptr), EMBER_ERR_NULL_HANDLE, "record is NULL");
  // A NULL out pointer is an argument error, not a crash.
  EMBER_EXPECT_ERR(ember_tensor_add(a.get(), a.get(), nullptr), EMBER_ERR_INVALID_ARGUMENT, "out is NULL");
  EMBER_EXPECT_ERR(ember_tensor_rank(a.get(), nullptr), EMBER_ERR_INVALID_ARGUMENT, "rank is NULL");
  EMBER_EXPECT_ERR(ember_module_save(nullptr, nullptr, nullptr), EMBER_ERR_NULL_HANDLE, "module is NULL");
}

TEST(CApiMisuse, FreeNullIsANoOp) {
  EXPECT_EQ(ember_tensor_free(nullptr), EMBER_OK);
  EXPECT_EQ(ember_device_free(nullptr), EMBER_OK);
  EXPECT_EQ(ember_grads_free(nullptr), EMBER_OK);
  EXPECT_EQ(ember_module_free(nullptr), EMBER_OK);
  EXPECT_EQ(ember_optimizer_free(nullptr), EMBER_OK);
  EXPECT_EQ(ember_record_free(nullptr), EMBER_OK);
  EXPECT_EQ(ember_load_report_free(nullptr), EMBER_OK);
}

TEST(CApiMisuse, FreedAndForeignHandlesAreDetected) {
  auto a = f32({1, 2}, {2});
  ember_tensor* dead = f32({3, 4}, {2}).release();
  EMBER_ASSERT_OK(ember_tensor_free(dead));
  ember_tensor* out = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_add(a.get(), dead, &out), EMBER_ERR_INVALID_HANDLE, "already freed");
  EMBER_EXPECT_ERR(ember_tensor_free(dead), EMBER_ERR_INVALID_HANDLE,
                   "handle is an ember_tensor that was already freed");  // no double free
  // A module passed where a tensor is expected (possible through casts or a binding's void pointers).
  auto m = sequential({linear(2, 2)});
  EMBER_EXPECT_ERR(ember_tensor_add(a.get(), reinterpret_cast<ember_tensor*>(m.get()), &out),
                   EMBER_ERR_INVALID_HANDLE, "is an ember_module, expected an ember_tensor");
  EMBER_EXPECT_ERR(ember_tensor_free(reinterpret_cast<ember_tensor*>(m.get())), EMBER_ERR_INVALID_HANDLE,
                   "handle is an ember_module, expected an ember_tensor");
  // A pointer that was never a handle.
  int local = 0;
  EMBER_EXPECT_ERR(ember_tensor_numel(reinterpret_cast<ember_tensor*>(&local), nullptr), EMBER_ERR_INVALID_HANDLE,
                   "tensor is not an ember_tensor (not a value Ember issued)");
  // Freed modules and optimizers, and an optimizer that outlives its module's handle.
  ember_optimizer_options o;
  EMBER_ASSERT_OK(ember_optimizer_options_init(&o, EMBER_OPTIM_SGD));
  ember_optimizer* opt = nullptr;
  EMBER_ASSERT_OK(ember_optimizer_create(m.get(), &o, &opt));
  ember_module* raw = m.release();
  EMBER_ASSERT_OK(ember_module_free(raw));
  EMBER_EXPECT_ERR(ember_module_free(raw), EMBER_ERR_INVALID_HANDLE, "already freed");
  EMBER_EXPECT_OK(ember_optimizer_step(opt, nullptr));  // the optimizer keeps the module alive
  EMBER_ASSERT_OK(ember_optimizer_free(opt));
  EMBER_EXPECT_ERR(ember_optimizer_step(opt, nullptr), EMBER_ERR_INVALID_HANDLE, "already freed");
}

TEST(CApiMisuse, WrongShapes) {
  auto a = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  auto b = f32({1, 2, 3, 4}, {4});
  ember_tensor* out = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_add(a.get(), b.get(), &out), EMBER_ERR_SHAPE, "not broadcastable");
  EMBER_EXPECT_ERR(ember_tensor_matmul(a.get(), a.get(), &out), EMBER_ERR_SHAPE, "inner dims");
  EMBER_EXPECT_ERR(ember_tensor_matmul(b.get(), b.get(), &out), EMBER_ERR_SHAPE, "rank >= 2");
  const int64_t bad[] = {4, 2};
  EMBER_EXPECT_ERR(ember_tensor_reshape(a.get(), bad, 2, &out), EMBER_ERR_SHAPE, "cannot reshape [2, 3]");
  const float v[3] = {1, 2, 3};
  const int64_t s[] = {2, 2};
  EMBER_EXPECT_ERR(ember_tensor_from_data(nullptr, EMBER_DTYPE_F32, v, sizeof v, s, 2, &out), EMBER_ERR_SHAPE,
                   "12 bytes of data for shape [2, 2]");
  const ember_tensor* xs[] = {a.get(), b.get()};
  EMBER_EXPECT_ERR(ember_tensor_cat(xs, 2, 0, &out), EMBER_ERR_SHAPE,
                   "cat: shapes [2, 3] and [4] differ outside dim 0");
  // A module given the wrong feature count says which layer failed.
  auto m = sequential({linear(4, 3), layer(EMBER_LAYER_RELU), linear(3, 2)});
  EMBER_EXPECT_ERR(ember_module_forward(m.get(), a.get(), EMBER_MODE_EVAL, &out), EMBER_ERR_SHAPE,
                   "layer 0: Linear: input [2, 3] has last dim 3, expected d_input 4");
  // backward with an upstream gradient of another shape.
  auto x = f32({1, 2, 3}, {3});
  EMBER_ASSERT_OK(ember_tensor_set_requires_grad(x.get(), 1));
  ember_grads* g = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_backward(x.get(), b.get(), &g), EMBER_ERR_SHAPE, "grad of shape [4]");
  EXPECT_EQ(g, nullptr);
  // conv2d on a 2-D input.
  EMBER_EXPECT_ERR(ember_tensor_conv2d(a.get(), a.get(), nullptr, nullptr, &out), EMBER_ERR_SHAPE, "must be rank 4");
}

// Sizes that would overflow int64 are refused before any kernel runs (review findings: a zero-element
// [0, 2^32, 2^32, 2] reduced to a shape larger than its buffer; a wrapped pool span read far out of bounds).
TEST(CApiMisuse, OverflowingSizesAreRefused) {
  ember_tensor* out = nullptr;
  const int64_t huge[] = {0, int64_t(1) << 32, int64_t(1) << 32, 2};
  EMBER_EXPECT_ERR(ember_tensor_zeros(nullptr, EMBER_DTYPE_F32, huge, 4, &out), EMBER_ERR_SHAPE, "too many elements");
  EXPECT_EQ(out, nullptr);
  auto img = f32({1}, {1, 1, 1, 1});
  ember_pool2d_options p;
  EMBER_ASSERT_OK(ember_pool2d_options_init(&p));
  p.kernel_size[0] = p.kernel_size[1] = 3;
  p.stride[0] = p.stride[1] = 1;
  p.padding[0] = p.padding[1] = (int64_t(1) << 62) + 1;
  p.dilation[0] = p.dilation[1] = (int64_t(1) << 62) + 1;
  EMBER_EXPECT_ERR(ember_tensor_max_pool2d(img.get(), &p, &out), EMBER_ERR_INVALID_ARGUMENT,
                   "max_pool2d: kernel, stride and dilation must be at most 2^31");
  EXPECT_EQ(out, nullptr);
}

TEST(CApiMisuse, WrongDtypes) {
  auto f = f32({1, 2, 3}, {3});
  auto i = i64({1, 2, 3}, {3});
  ember_tensor* out = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_add(f.get(), i.get(), &out), EMBER_ERR_DTYPE, "operands are f32 and i64");
  EMBER_EXPECT_ERR(ember_tensor_unary(i.get(), EMBER_UNARY_EXP, &out), EMBER_ERR_DTYPE, "not defined for i64");
  EMBER_EXPECT_ERR(ember_tensor_set_requires_grad(i.get(), 1), EMBER_ERR_DTYPE, "must be a float tensor");
  EMBER_EXPECT_ERR(ember_tensor_logical_not(f.get(), &out), EMBER_ERR_DTYPE, "must be a bool tensor");
  auto logits = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  auto ftargets = f32({0, 1}, {2});
  EMBER_EXPECT_ERR(ember_loss_cross_entropy(logits.get(), ftargets.get(), EMBER_REDUCTION_MEAN, &out), EMBER_ERR_DTYPE,
                   "targets must be an int tensor");
  EMBER_EXPECT_ERR(ember_tensor_index_select(f.get(), 0, f.get(), &out), EMBER_ERR_DTYPE, "indices must be an int");
  auto m = sequential({layer(EMBER_LAYER_RELU)});
  EMBER_EXPECT_ERR(ember_module_forward(m.get(), i.get(), EMBER_MODE_EVAL, &out), EMBER_ERR_DTYPE, "relu: input");
}

TEST(CApiMisuse, UndersizedOutputBuffers) {
  auto a = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  float small[4];
  size_t written = 0;
  EMBER_EXPECT_ERR(ember_tensor_copy_to(a.get(), EMBER_DTYPE_F32, small, sizeof small, &written),
                   EMBER_ERR_BUFFER_TOO_SMALL, "buffer of 16 bytes for 24 bytes");
  EXPECT_EQ(written, 24u);
  double d6[6];  // the same elements as f64 need 48 bytes
  EMBER_EXPECT_ERR(ember_tensor_copy_to(a.get(), EMBER_DTYPE_F64, d6, 40, &written), EMBER_ERR_BUFFER_TOO_SMALL,
                   "buffer of 40 bytes for 48 bytes of f64");
  EMBER_EXPECT_ERR(ember_tensor_copy_to(a.get(), EMBER_DTYPE_F32, nullptr, 24, &written), EMBER_ERR_INVALID_ARGUMENT,
                   "buffer is NULL");
  int64_t dims[1];
  size_t rank = 0;
  EMBER_EXPECT_ERR(ember_tensor_shape(a.get(), dims, 1, &rank), EMBER_ERR_BUFFER_TOO_SMALL, "rank 2");
  EXPECT_EQ(rank, 2u);
  auto m = sequential({linear(2, 2)});
  char name[5];
  size_t len = 0;
  EMBER_EXPECT_ERR(ember_module_param_name(m.get(), 0, name, sizeof name, &len), EMBER_ERR_BUFFER_TOO_SMALL,
                   "buffer of 5 bytes");
  EXPECT_EQ(len, std::strlen("layers.0.weight"));
  EXPECT_STREQ(name, "laye");  // truncated, still terminated
  ember_record* rec = nullptr;
  EMBER_ASSERT_OK(ember_module_to_record(m.get(), &rec));
  RecordH r(rec);
  size_t size = 0;
  char bytes[3];
  EMBER_EXPECT_ERR(ember_record_to_bytes(rec, nullptr, bytes, sizeof bytes, &size), EMBER_ERR_BUFFER_TOO_SMALL,
                   "buffer of 3");
  EXPECT_GT(size, 3u);
  size_t count = 0;
  int32_t first = -1;  // capacity 1: too small once a GPU backend is compiled in (capacity 0 is a length query)
  const ember_status listed = ember_backend_list(&first, 1, &count);
  EXPECT_EQ(listed, count > 1 ? EMBER_ERR_BUFFER_TOO_SMALL : EMBER_OK) << ember_last_error();
  EXPECT_EQ(first, EMBER_BACKEND_CPU);  // the CPU is always first, written even when more did not fit
}

TEST(CApiMisuse, UnknownEnumValues) {
  auto a = f32({1, 2}, {2});
  ember_tensor* out = nullptr;
  const int64_t s[] = {2};
  EMBER_EXPECT_ERR(ember_tensor_zeros(nullptr, 99, s, 1, &out), EMBER_ERR_INVALID_ARGUMENT, "unknown dtype 99");
  // One past the last dtype, where the boundary's own check is the only one (the element size comes next).
  const float two[] = {1, 2};
  EMBER_EXPECT_ERR(ember_tensor_from_data(nullptr, 8, two, sizeof two, s, 1, &out), EMBER_ERR_INVALID_ARGUMENT,
                   "unknown dtype 8");
  EMBER_EXPECT_ERR(ember_tensor_unary(a.get(), -1, &out), EMBER_ERR_INVALID_ARGUMENT, "unknown unary op -1");
  EMBER_EXPECT_ERR(ember_tensor_binary(a.get(), a.get(), 9, &out), EMBER_ERR_INVALID_ARGUMENT, "unknown binary op 9");
  EMBER_EXPECT_ERR(ember_tensor_unary(a.get(), 27, &out), EMBER_ERR_INVALID_ARGUMENT, "unknown unary op 27");
  EMBER_EXPECT_ERR(ember_tensor_predicate(a.get(), 2, &out), EMBER_ERR_INVALID_ARGUMENT, "unknown predicate op 2");
  EMBER_EXPECT_ERR(ember_tensor_predicate(nullptr, EMBER_PREDICATE_ISNAN, &out), EMBER_ERR_NULL_HANDLE,
                   "x is NULL (expected an ember_tensor)");
  EMBER_EXPECT_ERR(ember_tensor_reduce(a.get(), 5, 0, 1, &out), EMBER_ERR_INVALID_ARGUMENT, "unknown reduce op 5");
  EMBER_EXPECT_ERR(ember_tensor_scalar(a.get(), 100, 1.0, &out), EMBER_ERR_INVALID_ARGUMENT, "unknown scalar op");
  EMBER_EXPECT_ERR(ember_tensor_compare(a.get(), a.get(), 6, &out), EMBER_ERR_INVALID_ARGUMENT, "unknown compare op");
  EMBER_EXPECT_ERR(ember_tensor_cast(a.get(), 8, &out), EMBER_ERR_INVALID_ARGUMENT, "unknown dtype 8");
  EMBER_EXPECT_ERR(ember_tensor_random(nullptr, 3, 0, 1, 1, s, 1, &out), EMBER_ERR_INVALID_ARGUMENT,
                   "unknown distribution 3");
  EMBER_EXPECT_ERR(ember_loss_mse(a.get(), a.get(), 2, &out), EMBER_ERR_INVALID_ARGUMENT, "unknown reduction 2");
  ember_layer_desc d;
  EMBER_EXPECT_ERR(ember_layer_init(&d, 99), EMBER_ERR_INVALID_ARGUMENT, "unknown layer kind 99");
  d = layer(EMBER_LAYER_RELU);
  d.kind = 77;
  ember_module* m = nullptr;
  EMBER_EXPECT_ERR(ember_module_sequential(nullptr, &d, 1, &m), EMBER_ERR_INVALID_ARGUMENT, "unknown layer kind 77");
  d = layer(EMBER_LAYER_GELU);
  d.approximate = 3;
  EMBER_EXPECT_ERR(ember_module_sequential(nullptr, &d, 1, &m), EMBER_ERR_INVALID_ARGUMENT, "gelu approximate 3");
  auto mod = sequential({linear(2, 2)});
  EMBER_EXPECT_ERR(ember_module_forward(mod.get(), a.get(), 2, &out), EMBER_ERR_INVALID_ARGUMENT, "unknown mode 2");
  ember_optimizer_options o;
  EMBER_EXPECT_ERR(ember_optimizer_options_init(&o, 5), EMBER_ERR_INVALID_ARGUMENT, "unknown optimizer kind 5");
  EMBER_ASSERT_OK(ember_optimizer_options_init(&o, EMBER_OPTIM_ADAM));
  o.kind = 9;
  ember_optimizer* opt = nullptr;
  EMBER_EXPECT_ERR(ember_optimizer_create(mod.get(), &o, &opt), EMBER_ERR_INVALID_ARGUMENT, "unknown optimizer kind 9");
  ember_record_options ro;
  EMBER_ASSERT_OK(ember_record_options_init(&ro));
  ro.recorder = 9;
  EMBER_EXPECT_ERR(ember_module_save(mod.get(), "unused.emr", &ro), EMBER_ERR_INVALID_ARGUMENT, "unknown recorder 9");
  ro.recorder = EMBER_RECORDER_BINARY;
  ro.precision = -4;
  EMBER_EXPECT_ERR(ember_module_save(mod.get(), "unused.emr", &ro), EMBER_ERR_INVALID_ARGUMENT, "unknown precision -4");
  EMBER_EXPECT_ERR(ember_module_load(mod.get(), "unused.emr", 7, nullptr), EMBER_ERR_INVALID_ARGUMENT,
                   "unknown load mode 7");
  ember_device* dev = nullptr;
  EMBER_EXPECT_ERR(ember_device_create(42, 0, &dev), EMBER_ERR_INVALID_ARGUMENT, "unknown backend 42");
  // A backend with no usable device here (CUDA without a GPU, or not compiled) is UNSUPPORTED, naming the backend
  // (vulkan_interop_test.cpp and cuda_from_c_test.cpp cover the GPU backends' devices).
  ember_backend_info cuda{};
  cuda.struct_size = sizeof cuda;
  EMBER_ASSERT_OK(ember_backend_query(EMBER_BACKEND_CUDA, &cuda));
  if (cuda.device_count == 0)
    EMBER_EXPECT_ERR(ember_device_create(EMBER_BACKEND_CUDA, 0, &dev), EMBER_ERR_UNSUPPORTED,
                     cuda.compiled ? "cuda" : "backend cuda is not compiled into this library");
  EMBER_EXPECT_ERR(ember_device_create(EMBER_BACKEND_CPU, 1, &dev), EMBER_ERR_INDEX, "one device");
  EXPECT_STREQ(ember_status_name(12345), "EMBER_ERR_UNKNOWN");
}

TEST(CApiMisuse, OutOfRangeDimsAndIndices) {
  auto a = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  ember_tensor* out = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_reduce(a.get(), EMBER_REDUCE_SUM, 2, 1, &out), EMBER_ERR_INDEX,
                   "dim 2 out of range for rank 2");
  EMBER_EXPECT_ERR(ember_tensor_transpose(a.get(), 0, -3, &out), EMBER_ERR_INDEX, "dim -3");
  EMBER_EXPECT_ERR(ember_tensor_softmax(a.get(), 5, &out), EMBER_ERR_INDEX, "dim 5");
  EMBER_EXPECT_ERR(ember_tensor_argmax(a.get(), -9, 0, &out), EMBER_ERR_INDEX, "dim -9");
  auto idx = i64({0, 7}, {2});
  EMBER_EXPECT_ERR(ember_tensor_index_select(a.get(), 1, idx.get(), &out), EMBER_ERR_INDEX, "index 7 out of range");
  auto targets = i64({0, 3}, {2});
  EMBER_EXPECT_ERR(ember_loss_cross_entropy(a.get(), targets.get(), EMBER_REDUCTION_MEAN, &out), EMBER_ERR_INDEX,
                   "target class out of range");
  auto m = sequential({linear(3, 2)});
  ember_param_info info;
  info.struct_size = sizeof info;
  EMBER_EXPECT_ERR(ember_module_param_info(m.get(), 2, &info), EMBER_ERR_INDEX, "index 2 out of range for 2 params");
  EMBER_EXPECT_ERR(ember_module_param_value(m.get(), 99, &out), EMBER_ERR_INDEX, "index 99");
  // Embedding lookups out of the table.
  ember_layer_desc e = layer(EMBER_LAYER_EMBEDDING);
  e.in_features = 4;
  e.out_features = 3;
  auto emb = sequential({e});
  auto tokens = i64({1, 4}, {2});
  EMBER_EXPECT_ERR(ember_module_forward(emb.get(), tokens.get(), EMBER_MODE_EVAL, &out), EMBER_ERR_INDEX, "index 4");
}

TEST(CApiMisuse, HostileSizesAndValues) {
  ember_tensor* out = nullptr;
  const int64_t huge[] = {int64_t(1) << 40, int64_t(1) << 40};
  EMBER_EXPECT_ERR(ember_tensor_zeros(nullptr, EMBER_DTYPE_F32, huge, 2, &out), EMBER_ERR_SHAPE, "too many elements");
  const int64_t neg[] = {2, -1};
  EMBER_EXPECT_ERR(ember_tensor_zeros(nullptr, EMBER_DTYPE_F32, neg, 2, &out), EMBER_ERR_SHAPE, "negative dim");
  const int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  EMBER_EXPECT_ERR(ember_tensor_zeros(nullptr, EMBER_DTYPE_F32, nine, 9, &out), EMBER_ERR_SHAPE, "rank 9");
  EMBER_EXPECT_ERR(ember_tensor_zeros(nullptr, EMBER_DTYPE_F32, nullptr, 2, &out), EMBER_ERR_INVALID_ARGUMENT,
                   "shape is NULL");
  EMBER_EXPECT_ERR(ember_tensor_arange(nullptr, EMBER_DTYPE_I64, std::numeric_limits<int64_t>::min(),
                                       std::numeric_limits<int64_t>::max(), 1, &out),
                   EMBER_ERR_SHAPE, "too many elements");
  EMBER_EXPECT_ERR(ember_tensor_arange(nullptr, EMBER_DTYPE_I64, 0, 5, 0, &out), EMBER_ERR_INVALID_ARGUMENT,
                   "arange: step must not be 0");
  EMBER_EXPECT_ERR(ember_tensor_full(nullptr, EMBER_DTYPE_I64, neg, 1, std::nan(""), &out), EMBER_ERR_INVALID_ARGUMENT,
                   "not representable");
  // Zero-element inputs whose product would overflow: [2^31, 0] @ [0, 2^31].
  const int64_t s1[] = {int64_t(1) << 31, 0}, s2[] = {0, int64_t(1) << 31};
  ember_tensor *z1 = nullptr, *z2 = nullptr;
  EMBER_ASSERT_OK(ember_tensor_zeros(nullptr, EMBER_DTYPE_F32, s1, 2, &z1));
  EMBER_ASSERT_OK(ember_tensor_zeros(nullptr, EMBER_DTYPE_F32, s2, 2, &z2));
  Tensor t1(z1), t2(z2);
  EMBER_EXPECT_ERR(ember_tensor_matmul(z1, z2, &out), EMBER_ERR_SHAPE, "too many elements");
  const int64_t reshaped[] = {int64_t(1) << 40, int64_t(1) << 40, 0};
  EMBER_EXPECT_ERR(ember_tensor_reshape(z1, reshaped, 3, &out), EMBER_ERR_SHAPE, "too many elements");
  // INT64_MIN / -1 traps (SIGFPE) if done naively; it wraps to INT64_MIN, as in the typed engine and PyTorch.
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  auto mn = i64({kMin, 4}, {2});
  auto m1 = i64({-1, 2}, {2});
  EMBER_ASSERT_OK(ember_tensor_div(mn.get(), m1.get(), &out));
  EXPECT_EQ(ints(out), (std::vector<int64_t>{kMin, 2}));
  ember_tensor_free(out);
  EMBER_ASSERT_OK(ember_tensor_scalar(mn.get(), EMBER_SCALAR_DIV, -1.0, &out));
  EXPECT_EQ(ints(out), (std::vector<int64_t>{kMin, -4}));
  ember_tensor_free(out);
  out = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_scalar(m1.get(), EMBER_SCALAR_DIV, 0.0, &out), EMBER_ERR_INVALID_ARGUMENT,
                   "division by zero");
  // Layers with absurd sizes fail at construction, before any allocation.
  auto big = linear(int64_t(1) << 40, int64_t(1) << 40);
  ember_module* m = nullptr;
  EMBER_EXPECT_ERR(ember_module_sequential(nullptr, &big, 1, &m), EMBER_ERR_SHAPE, "too many elements");
  auto zero = linear(0, 3);
  EMBER_EXPECT_ERR(ember_module_sequential(nullptr, &zero, 1, &m), EMBER_ERR_INVALID_ARGUMENT,
                   "layer 0: LinearConfig: d_input must be positive");
  auto drop = layer(EMBER_LAYER_DROPOUT);
  drop.p = 1.5;
  EMBER_EXPECT_ERR(ember_module_sequential(nullptr, &drop, 1, &m), EMBER_ERR_INVALID_ARGUMENT, "prob must be in [0, 1]");
  EMBER_EXPECT_ERR(ember_set_num_threads(0), EMBER_ERR_INVALID_ARGUMENT, "n must be in 1..4096, got 0");
}

TEST(CApiMisuse, VersionedStructs) {
  // struct_size missing (0) or too small: refused, never read past the caller's struct.
  ember_layer_desc d = linear(2, 2);
  d.struct_size = 0;
  ember_module* m = nullptr;
  EMBER_EXPECT_ERR(ember_module_sequential(nullptr, &d, 1, &m), EMBER_ERR_INVALID_ARGUMENT, "struct_size 0");
  // Elements of differing struct_size in one array.
  ember_layer_desc two[2] = {linear(2, 2), linear(2, 2)};
  two[1].struct_size = 8;
  EMBER_EXPECT_ERR(ember_module_sequential(nullptr, two, 2, &m), EMBER_ERR_INVALID_ARGUMENT, "layers[1].struct_size 8");
  auto mod = sequential({linear(3, 2)});
  ember_param_info info;
  info.struct_size = 4;
  EMBER_EXPECT_ERR(ember_module_param_info(mod.get(), 0, &info), EMBER_ERR_INVALID_ARGUMENT, "struct_size 4");
  // A caller compiled against a newer ember.h (a larger struct): accepted, and only its size is written.
  struct Newer {
    ember_param_info v1;
    int64_t future;
  } newer;
  newer.v1.struct_size = sizeof newer;
  newer.future = 1234;
  EMBER_ASSERT_OK(ember_module_param_info(mod.get(), 0, &newer.v1));
  EXPECT_EQ(newer.future, 1234);
  EXPECT_EQ(newer.v1.struct_size, sizeof newer);
  EXPECT_EQ(newer.v1.rank, 2u);
  // An array of larger descriptors is walked with the caller's stride.
  struct BigDesc {
    ember_layer_desc d;
    double future[3];
  } bigs[2];
  for (auto& b : bigs) {
    std::memset(&b, 0, sizeof b);
    b.d = linear(3, 3);
    b.d.struct_size = sizeof(BigDesc);
  }
  bigs[1].d.out_features = 5;
  EMBER_ASSERT_OK(ember_module_sequential(nullptr, &bigs[0].d, 2, &m));
  Module mm(m);
  EXPECT_EQ(param_name(m, 3), "layers.1.bias");
  ember_param_info last;
  last.struct_size = sizeof last;
  EMBER_ASSERT_OK(ember_module_param_info(m, 3, &last));
  EXPECT_EQ(last.shape[0], 5);
}

TEST(CApiMisuse, CorruptAndMismatchedRecords) {
  auto m = sequential({linear(3, 4), layer(EMBER_LAYER_RELU), linear(4, 2)});
  TempPath file("corrupt.emr");
  EMBER_ASSERT_OK(ember_module_save(m.get(), file.path.c_str(), nullptr));
  std::string bytes;
  {
    std::ifstream in(file.path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(bytes.size(), 100u);
  auto write = [&](const std::string& b) { std::ofstream(file.path, std::ios::binary | std::ios::trunc) << b; };
  // One flipped payload byte: the checksum catches it.
  std::string flipped = bytes;
  flipped[flipped.size() - 3] ^= 0x40;
  write(flipped);
  ember_load_report* rep = nullptr;
  EMBER_EXPECT_ERR(ember_module_load(m.get(), file.path.c_str(), EMBER_LOAD_STRICT, &rep), EMBER_ERR_RECORD,
                   "checksum mismatch");
  EXPECT_EQ(rep, nullptr);
  write(bytes.substr(0, bytes.size() / 2));
  EMBER_EXPECT_ERR(ember_module_load(m.get(), file.path.c_str(), EMBER_LOAD_STRICT, nullptr), EMBER_ERR_RECORD,
                   "truncated: the preamble announces");
  write("not a record at all");
  EMBER_EXPECT_ERR(ember_module_load(m.get(), file.path.c_str(), EMBER_LOAD_PARTIAL, nullptr), EMBER_ERR_RECORD,
                   "not an Ember record (wrong magic; expected \"EMBERREC\")");
  EMBER_EXPECT_ERR(ember_module_load(m.get(), "/nonexistent/dir/x.emr", EMBER_LOAD_STRICT, nullptr), EMBER_ERR_IO,
                   "record /nonexistent/dir/x.emr: cannot read: No such file or directory");
  ember_record* r = nullptr;
  const char junk[] = "EMBERREC garbage";
  EMBER_EXPECT_ERR(ember_record_from_bytes(junk, sizeof junk, &r), EMBER_ERR_RECORD,
                   "record <memory>: truncated: 17 bytes, the preamble alone is 61");
  EMBER_EXPECT_ERR(ember_record_from_bytes(nullptr, 10, &r), EMBER_ERR_INVALID_ARGUMENT, "data is NULL");
  // A valid record of another architecture: strict fails with a report and changes nothing; partial loads.
  write(bytes);
  auto other = sequential({linear(3, 5), layer(EMBER_LAYER_RELU), linear(5, 2), linear(2, 2)});
  auto x = f32({1, 2, 3}, {1, 3});
  const auto before = floats(forward(other.get(), x.get()).get());
  EMBER_EXPECT_ERR(ember_module_load(other.get(), file.path.c_str(), EMBER_LOAD_STRICT, &rep), EMBER_ERR_RECORD,
                   "does not match the module");
  ASSERT_NE(rep, nullptr);
  Report report(rep);
  size_t missing = 0, unexpected = 0, mismatched = 0;
  EMBER_ASSERT_OK(ember_load_report_counts(rep, &missing, &unexpected, &mismatched));
  EXPECT_EQ(missing, 2u);     // layers.3.*
  EXPECT_EQ(unexpected, 0u);
  EXPECT_EQ(mismatched, 3u);  // layers.0.weight, layers.0.bias, layers.2.weight
  char text[1024];
  size_t len = 0;
  EMBER_ASSERT_OK(ember_load_report_text(rep, text, sizeof text, &len));
  EXPECT_NE(std::string(text).find("layers.0.weight: shape [3, 4] in record, [3, 5] in module"), std::string::npos)
      << text;
  EXPECT_EQ(floats(forward(other.get(), x.get()).get()), before);
  ember_load_report* prep = nullptr;
  EMBER_ASSERT_OK(ember_module_load(other.get(), file.path.c_str(), EMBER_LOAD_PARTIAL, &prep));
  Report partial(prep);
  EMBER_ASSERT_OK(ember_load_report_counts(prep, &missing, &unexpected, &mismatched));
  EXPECT_EQ(mismatched, 3u);
  // Loading a module record as optimizer state is refused.
  ember_optimizer_options o;
  EMBER_ASSERT_OK(ember_optimizer_options_init(&o, EMBER_OPTIM_ADAM));
  ember_optimizer* opt = nullptr;
  EMBER_ASSERT_OK(ember_optimizer_create(m.get(), &o, &opt));
  Optim optim(opt);
  EMBER_EXPECT_ERR(ember_optimizer_load(opt, file.path.c_str()), EMBER_ERR_INVALID_ARGUMENT,
                   "load_state: key 'layers.0.bias' is not '<param id>.<name>'");
}

TEST(CApiMisuse, AutodiffMisuse) {
  auto x = f32({1, 2, 3}, {3});
  ember_grads* g = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_backward(x.get(), nullptr, &g), EMBER_ERR_INVALID_ARGUMENT, "does not require grad");
  EMBER_ASSERT_OK(ember_tensor_set_requires_grad(x.get(), 1));
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_tensor_mul(x.get(), x.get(), &y));
  Tensor yy(y);
  auto ones = f32({1, 1, 1}, {3});  // y has 3 elements: no implicit seed (PyTorch's rule)
  EMBER_ASSERT_OK(ember_tensor_backward(y, ones.get(), &g));
  Grads first(g);
  EMBER_EXPECT_ERR(ember_tensor_backward(y, ones.get(), &g), EMBER_ERR_INVALID_ARGUMENT, "already freed");
  EMBER_EXPECT_ERR(ember_no_grad_exit(), EMBER_ERR_INVALID_ARGUMENT, "no open no-grad scope");
}

TEST(CApiMisuse, MessagesAreKeptUntilTheNextFailure) {
  auto a = f32({1}, {1});
  ember_tensor* out = nullptr;
  EXPECT_NE(ember_tensor_add(nullptr, a.get(), &out), EMBER_OK);
  const std::string msg = ember_last_error();
  EMBER_ASSERT_OK(ember_tensor_add(a.get(), a.get(), &out));
  Tensor keep(out);
  EXPECT_EQ(msg, ember_last_error());
  ember_clear_error();
  EXPECT_STREQ(ember_last_error(), "");
}


// The error helper itself: it checks this call's message, not one left by an earlier call; it matches whole phrases
// only; and it wants the message to name the function called.
TEST(CApiMisuse, ErrorHelperChecksOnlyThisCallsWholeMessage) {
  auto a = f32({1, 2, 3}, {3});
  ember_tensor* out = nullptr;
  ASSERT_NE(ember_tensor_unary(a.get(), 27, &out), EMBER_OK);  // leaves "... unknown unary op 27"
  // A failure that sets no message of its own: the stale one must not satisfy the needle.
  auto silent_failure = [] { return EMBER_ERR_INVALID_ARGUMENT; };
  EXPECT_NONFATAL_FAILURE(EMBER_EXPECT_ERR(silent_failure(), EMBER_ERR_INVALID_ARGUMENT, "unknown unary op 27"),
                          "lacks the phrase \"unknown unary op 27\"");
  // Whole phrases: a prefix of a longer number or word does not match, an empty needle matches nothing.
  EXPECT_NONFATAL_FAILURE(EMBER_EXPECT_ERR(ember_tensor_unary(a.get(), 27, &out), EMBER_ERR_INVALID_ARGUMENT,
                                           "unknown unary op 2"),
                          "lacks the phrase");
  EXPECT_NONFATAL_FAILURE(EMBER_EXPECT_ERR(ember_tensor_unary(a.get(), 27, &out), EMBER_ERR_INVALID_ARGUMENT, "ary"),
                          "lacks the phrase");
  EXPECT_NONFATAL_FAILURE(EMBER_EXPECT_ERR(ember_tensor_unary(a.get(), 27, &out), EMBER_ERR_INVALID_ARGUMENT, ""),
                          "lacks the phrase");
  EXPECT_TRUE(has_phrase("x: rank 2, expected", "rank 2") && !has_phrase("x: rank 25", "rank 2") &&
              has_phrase("max_pool2d: kernel", "max_pool2d") && !has_phrase("max is NULL", "x"));
  // The status and the function's name: the message of another function fails.
  EXPECT_NONFATAL_FAILURE(
      EMBER_EXPECT_ERR(ember_tensor_unary(a.get(), 27, &out), EMBER_ERR_SHAPE, "unknown unary op 27"),
      "gave EMBER_ERR_INVALID_ARGUMENT, expected EMBER_ERR_SHAPE");
  EXPECT_FALSE(failed_with("ember_tensor_add(a, b, &out)", EMBER_ERR_SHAPE, EMBER_ERR_SHAPE,
                           "ember_tensor_sub: shapes [2] and [3] are not broadcastable", "not broadcastable"));
  EMBER_EXPECT_ERR(ember_tensor_unary(a.get(), 27, &out), EMBER_ERR_INVALID_ARGUMENT, "unknown unary op 27");
}

// ---------------------------------------------------------------- found by the C ABI fuzzer (tests/fuzz)
// Each input that crashed libember is kept in tests/fuzz/corpus (named after the bug); these tests pin the fix.

// Float to int of NaN, inf or an out-of-range value was undefined behaviour (UBSan: "inf is outside the range of
// representable values"). Now defined: truncation toward 0, the integer's minimum when it does not fit (as x86
// gives for int32 / int64), through int64 and modulo 2^8 for uint8.
TEST(CApiFuzzFound, FloatToIntOfNanInfAndHugeValuesIsDefined) {
  const float inf = std::numeric_limits<float>::infinity();
  auto x = f32({inf, -inf, std::nanf(""), 1e30f, -2.7f, 2.7f}, {6});
  ember_tensor* cast = nullptr;
  EMBER_ASSERT_OK(ember_tensor_cast(x.get(), EMBER_DTYPE_I64, &cast));
  Tensor keep(cast);
  constexpr int64_t kMin64 = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(ints(cast), (std::vector<int64_t>{kMin64, kMin64, kMin64, kMin64, -2, 2}));
  int32_t i32[6] = {};
  EMBER_ASSERT_OK(ember_tensor_copy_to(x.get(), EMBER_DTYPE_I32, i32, sizeof i32, nullptr));
  constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(std::vector<int32_t>(i32, i32 + 6), (std::vector<int32_t>{kMin32, kMin32, kMin32, kMin32, -2, 2}));
  uint8_t u8[6] = {};
  EMBER_ASSERT_OK(ember_tensor_copy_to(x.get(), EMBER_DTYPE_U8, u8, sizeof u8, nullptr));
  EXPECT_EQ(std::vector<uint8_t>(u8, u8 + 6), (std::vector<uint8_t>{0, 0, 0, 0, 254, 2}));
}

// exp of NaN converted NaN to int32 inside the vectorized kernel (UB, though the result was then discarded).
TEST(CApiFuzzFound, ExpOfNanAndInfinities) {
  const float inf = std::numeric_limits<float>::infinity();
  auto x = f32({std::nanf(""), -inf, inf, 0.0f}, {4});
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_tensor_unary(x.get(), EMBER_UNARY_EXP, &y));
  Tensor keep(y);
  const auto v = floats(y);
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 0.0f);
  EXPECT_EQ(v[2], inf);
  EXPECT_EQ(v[3], 1.0f);
}

// A scalar op on an int tensor converted the double scalar to int64 whatever it was (UB for NaN, inf, 1e300).
TEST(CApiFuzzFound, IntTensorScalarMustFitInt64) {
  auto x = i64({1, 2}, {2});
  ember_tensor* y = nullptr;
  for (double s : {std::nan(""), std::numeric_limits<double>::infinity(), -1e300, 0x1p63})
    EMBER_EXPECT_ERR(ember_tensor_scalar(x.get(), EMBER_SCALAR_ADD, s, &y), EMBER_ERR_INVALID_ARGUMENT,
                     "is not representable");
  EMBER_ASSERT_OK(ember_tensor_scalar(x.get(), EMBER_SCALAR_ADD, -2.9, &y));  // truncated toward 0, as before
  Tensor keep(y);
  EXPECT_EQ(ints(y), (std::vector<int64_t>{-1, 0}));
}

// Int sums and products overflowed int64 (UB); they wrap modulo 2^64 now, as PyTorch's do.
TEST(CApiFuzzFound, IntReductionsWrapOnOverflow) {
  constexpr int64_t kBig = int64_t{1} << 62;
  auto x = i64({kBig, kBig, 3}, {3});
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_tensor_reduce_all(x.get(), EMBER_REDUCE_SUM, &y));
  Tensor sum(y);
  EXPECT_EQ(ints(y), (std::vector<int64_t>{std::numeric_limits<int64_t>::min() + 3}));
  EMBER_ASSERT_OK(ember_tensor_reduce_all(x.get(), EMBER_REDUCE_PROD, &y));
  Tensor prod(y);
  EXPECT_EQ(ints(y), (std::vector<int64_t>{0}));  // 2^124 * 3 mod 2^64
  auto m = i64({kBig, 4, kBig, 4}, {2, 2});  // along dim 0: the strided (inner > 1) path
  EMBER_ASSERT_OK(ember_tensor_reduce(m.get(), EMBER_REDUCE_PROD, 0, 0, &y));
  Tensor rows(y);
  EXPECT_EQ(ints(y), (std::vector<int64_t>{0, 16}));
  EMBER_ASSERT_OK(ember_tensor_reduce(m.get(), EMBER_REDUCE_SUM, 0, 0, &y));
  Tensor sums(y);
  EXPECT_EQ(ints(y), (std::vector<int64_t>{std::numeric_limits<int64_t>::min(), 8}));
}

// Int add / sub / mul overflowed int64 (UB); they wrap modulo 2^64 now, as PyTorch's do.
TEST(CApiFuzzFound, IntArithmeticWrapsOnOverflow) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  auto a = i64({kMax, kMin, int64_t{1} << 62}, {3});
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_tensor_add(a.get(), a.get(), &y));
  Tensor sum(y);
  EXPECT_EQ(ints(y), (std::vector<int64_t>{-2, 0, kMin}));
  EMBER_ASSERT_OK(ember_tensor_mul(a.get(), a.get(), &y));
  Tensor prod(y);
  EXPECT_EQ(ints(y), (std::vector<int64_t>{1, 0, 0}));
  EMBER_ASSERT_OK(ember_tensor_scalar(a.get(), EMBER_SCALAR_ADD, 1.0, &y));
  Tensor plus1(y);
  EXPECT_EQ(ints(y), (std::vector<int64_t>{kMin, kMin + 1, (int64_t{1} << 62) + 1}));
  EMBER_ASSERT_OK(ember_tensor_scalar(a.get(), EMBER_SCALAR_RSUB, -2.0, &y));  // -2 - x
  Tensor rsub(y);
  EXPECT_EQ(ints(y), (std::vector<int64_t>{kMax, kMax - 1, -2 - (int64_t{1} << 62)}));
}

// A reduction with no output elements walked the whole reduced dim anyway: [2^40, 0] over dim 0 ran for hours.
TEST(CApiFuzzFound, EmptyReductionOverAHugeDimReturnsAtOnce) {
  const int64_t shape[] = {int64_t{1} << 40, 0};
  ember_tensor* x = nullptr;
  EMBER_ASSERT_OK(ember_tensor_zeros(nullptr, EMBER_DTYPE_F32, shape, 2, &x));
  Tensor keep_x(x);
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_tensor_reduce(x, EMBER_REDUCE_SUM, 0, 0, &y));
  Tensor keep_y(y);
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{0}));
}

// The same for argmax / argmin: [2^40, 4, 2, 0] over dim 2 has no output elements but 2^42 outer rows.
TEST(CApiFuzzFound, EmptyArgReduceWithHugeOuterDimsReturnsAtOnce) {
  const int64_t shape[] = {int64_t{1} << 40, 4, 2, 0};
  ember_tensor* x = nullptr;
  EMBER_ASSERT_OK(ember_tensor_zeros(nullptr, EMBER_DTYPE_F32, shape, 4, &x));
  Tensor keep_x(x);
  ember_tensor* y = nullptr;
  EMBER_ASSERT_OK(ember_tensor_argmax(x, 2, 0, &y));
  Tensor keep_y(y);
  EXPECT_EQ(shape_of(y), (std::vector<int64_t>{int64_t{1} << 40, 4, 0}));
}

}  // namespace
}  // namespace ember::capi_test
