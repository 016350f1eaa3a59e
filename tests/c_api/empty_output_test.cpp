// CApiFuzzFound: CPU kernels whose work is sized by a product of dims that can be huge while the tensors they write
// have no elements ([2^40, 4, 0, 3] is a valid, free tensor): such a kernel walks 2^40+ empty iterations (hours; the
// fuzzer's timeouts) or sizes a scratch buffer by them; each now returns at once. Every call runs under bounded(): it
// fails the test and ends the process after a few seconds instead of hanging the suite.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <thread>

#include "tests/c_api/capi_support.hpp"

namespace ember::capi_test {
namespace {

constexpr int64_t kHuge = int64_t{1} << 40;

// Runs fn on a thread and waits at most `seconds` for it. A hang cannot be cancelled, so on timeout this reports
// the failure and exits the process (the suite fails in seconds rather than at the meson timeout).
void bounded(const char* what, const std::function<void()>& fn, int seconds = 20) {
  std::packaged_task<void()> task(fn);
  std::future<void> done = task.get_future();
  std::thread(std::move(task)).detach();
  if (done.wait_for(std::chrono::seconds(seconds)) == std::future_status::timeout) {
    std::fprintf(stderr, "FAILED: %s did not return within %d s (a loop over empty rows)\n", what, seconds);
    std::fflush(stderr);
    std::_Exit(1);
  }
  done.get();
}

Tensor zeros(const std::vector<int64_t>& shape, bool requires_grad = false) {
  ember_tensor* t = nullptr;
  EXPECT_EQ(ember_tensor_zeros(nullptr, EMBER_DTYPE_F32, shape.data(), shape.size(), &t), EMBER_OK)
      << ember_last_error();
  if (requires_grad) {
    EXPECT_EQ(ember_tensor_set_requires_grad(t, 1), EMBER_OK) << ember_last_error();
  }
  return Tensor(t);
}

// conv2d with no output channels over a huge empty batch (H = 0, padded to 2): the forward returned at once, but
// its backward sized im2col's column buffer by N * Ho * Wo (2^40 * 6 rows) and failed with EMBER_ERR_OUT_OF_MEMORY
// (or, where the allocation succeeds, walked every image per channel and tap) for gradients that are all empty.
TEST(CApiFuzzFound, ConvBackwardWithNoOutputElementsReturnsAtOnce) {
  Tensor x = zeros({kHuge, 4, 0, 3}, true);
  Tensor w = zeros({0, 4, 1, 1}, true);
  Tensor b = zeros({0}, true);
  ember_conv2d_options o;
  EMBER_ASSERT_OK(ember_conv2d_options_init(&o));
  o.padding[0] = 1;
  bounded("conv2d backward over [2^40, 4, 0, 3] with 0 output channels", [&] {
    ember_tensor* y = nullptr;
    EMBER_ASSERT_OK(ember_tensor_conv2d(x.get(), w.get(), b.get(), &o, &y));
    Tensor keep_y(y);
    EXPECT_EQ(shape_of(y), (std::vector<int64_t>{kHuge, 0, 2, 3}));
    ember_tensor* s = nullptr;
    EMBER_ASSERT_OK(ember_tensor_reduce_all(y, EMBER_REDUCE_SUM, &s));
    Tensor keep_s(s);
    ember_grads* g = nullptr;
    EMBER_ASSERT_OK(ember_tensor_backward(s, nullptr, &g));
    Grads keep_g(g);
    ember_tensor* gx = nullptr;
    EMBER_ASSERT_OK(ember_grads_get(g, x.get(), &gx));
    Tensor keep_gx(gx);
    ASSERT_NE(gx, nullptr);
    EXPECT_EQ(shape_of(gx), (std::vector<int64_t>{kHuge, 4, 0, 3}));
    ember_tensor* gw = nullptr;
    EMBER_ASSERT_OK(ember_grads_get(g, w.get(), &gw));
    Tensor keep_gw(gw);
    ASSERT_NE(gw, nullptr);
    EXPECT_EQ(shape_of(gw), (std::vector<int64_t>{0, 4, 1, 1}));
  });
}

// The early return's values: over an empty batch the weight and bias gradients are sums over no images, zeros of
// their shapes (not uninitialized memory).
TEST(CApiFuzzFound, ConvBackwardOverAnEmptyBatchGivesZeroWeightAndBiasGradients) {
  Tensor x = zeros({0, 2, 3, 3}, true);
  Tensor w = zeros({5, 2, 3, 3}, true);
  Tensor b = zeros({5}, true);
  bounded("conv2d backward over an empty batch", [&] {
    ember_tensor* y = nullptr;
    EMBER_ASSERT_OK(ember_tensor_conv2d(x.get(), w.get(), b.get(), nullptr, &y));
    Tensor keep_y(y);
    EXPECT_EQ(shape_of(y), (std::vector<int64_t>{0, 5, 1, 1}));
    ember_tensor* s = nullptr;
    EMBER_ASSERT_OK(ember_tensor_reduce_all(y, EMBER_REDUCE_SUM, &s));
    Tensor keep_s(s);
    ember_grads* g = nullptr;
    EMBER_ASSERT_OK(ember_tensor_backward(s, nullptr, &g));
    Grads keep_g(g);
    ember_tensor* gb = nullptr;
    EMBER_ASSERT_OK(ember_grads_get(g, b.get(), &gb));
    Tensor keep_gb(gb);
    ASSERT_NE(gb, nullptr);
    EXPECT_EQ(floats(gb), std::vector<float>(5, 0.0f));
    ember_tensor* gw = nullptr;
    EMBER_ASSERT_OK(ember_grads_get(g, w.get(), &gw));
    Tensor keep_gw(gw);
    ASSERT_NE(gw, nullptr);
    EXPECT_EQ(floats(gw), std::vector<float>(5 * 2 * 3 * 3, 0.0f));
  });
}

// The audit's other kernels with an output of no elements over 2^40-row inputs (reductions, arg reductions, cat,
// index_select, gather, scatter_add, softmax, matmul, flip, repeat, expand, masked_fill, var, permute and the
// backward of a chain of them): each returns at once today; this keeps a new kernel loop over empty rows from
// coming back unnoticed.
TEST(CApiFuzzFound, OpsWithEmptyOutputsOverHugeDimsReturnAtOnce) {
  Tensor x = zeros({kHuge, 0}, true);
  Tensor x3 = zeros({kHuge, 2, 0});
  auto idx = i64({0}, {1});
  ember_tensor* idx0_h = nullptr;
  const int64_t idx0_shape[] = {kHuge, 0};
  EMBER_ASSERT_OK(ember_tensor_zeros(nullptr, EMBER_DTYPE_I64, idx0_shape, 2, &idx0_h));
  Tensor idx0(idx0_h);
  ember_tensor* y = nullptr;
  auto ok = [&](ember_status s, const char* what) {
    EXPECT_EQ(s, EMBER_OK) << what << ": " << ember_last_error();
    if (s == EMBER_OK) ember_tensor_free(y);
  };
  bounded("ops over [2^40, 0]", [&] {
    ok(ember_tensor_reduce(x3.get(), EMBER_REDUCE_SUM, 1, 0, &y), "reduce over dim 1");
    ok(ember_tensor_argmax(x3.get(), 1, 0, &y), "argmax over dim 1");
    ember_tensor* pair[] = {x.get(), x.get()};
    ok(ember_tensor_cat(pair, 2, 1, &y), "cat along dim 1");
    ok(ember_tensor_index_select(x3.get(), 1, idx.get(), &y), "index_select");
    ok(ember_tensor_gather(x.get(), 1, idx0.get(), &y), "gather");
    ok(ember_tensor_scatter_add(x.get(), 1, idx0.get(), x.get(), &y), "scatter_add");
    ok(ember_tensor_softmax(x.get(), 0, &y), "softmax over dim 0");
    Tensor w = zeros({0, 0});
    ok(ember_tensor_matmul(x.get(), w.get(), &y), "matmul with zero inner and outer dims");
    const int64_t flip_dims[] = {0, 1};
    ok(ember_tensor_flip(x.get(), flip_dims, 2, &y), "flip");
    const int64_t times[] = {1, 3};
    ok(ember_tensor_repeat(x.get(), times, 2, &y), "repeat");
    Tensor row = zeros({1, 0});
    const int64_t to[] = {kHuge, 0};
    ok(ember_tensor_expand(row.get(), to, 2, &y), "expand");
    const int64_t axes[] = {1, 0};
    ok(ember_tensor_permute(x.get(), axes, 2, &y), "permute");
    ok(ember_tensor_var(x.get(), 0, 1, 0, &y), "var over dim 0");
    // The backward of softmax -> flip -> sum to x.
    ember_tensor* sm = nullptr;
    EMBER_ASSERT_OK(ember_tensor_softmax(x.get(), 0, &sm));
    Tensor keep_sm(sm);
    ember_tensor* fl = nullptr;
    EMBER_ASSERT_OK(ember_tensor_flip(sm, flip_dims, 2, &fl));
    Tensor keep_fl(fl);
    ember_tensor* s = nullptr;
    EMBER_ASSERT_OK(ember_tensor_reduce_all(fl, EMBER_REDUCE_SUM, &s));
    Tensor keep_s(s);
    ember_grads* g = nullptr;
    EMBER_ASSERT_OK(ember_tensor_backward(s, nullptr, &g));
    Grads keep_g(g);
  });
}

}  // namespace
}  // namespace ember::capi_test
