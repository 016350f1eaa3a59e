// Thread-safety rules of ember.h: one module shared by 8 threads gives exactly the single-thread results; error
// messages and no-grad scopes are per thread; training with an optimizer while other threads run forward is safe.
#include <atomic>
#include <cmath>
#include <thread>

#include "tests/c_api/capi_support.hpp"

namespace ember::capi_test {
namespace {

constexpr int kThreads = 8;

std::vector<float> input(int i) {
  std::vector<float> v(16 * 12);
  for (size_t k = 0; k < v.size(); ++k) v[k] = std::sin(0.01f * static_cast<float>(k) + static_cast<float>(i));
  return v;
}

TEST(CApiConcurrency, EightThreadsForwardOneModuleLikeOneThread) {
  EMBER_ASSERT_OK(ember_seed(31));
  auto ln = layer(EMBER_LAYER_LAYER_NORM);
  ln.in_features = 32;
  auto m = sequential({linear(12, 32), ln, layer(EMBER_LAYER_GELU), layer(EMBER_LAYER_DROPOUT), linear(32, 4),
                       layer(EMBER_LAYER_SOFTMAX)});
  constexpr int kInputs = 6;
  std::vector<std::vector<float>> expected;
  for (int i = 0; i < kInputs; ++i) {
    auto x = f32(input(i), {16, 12});
    expected.push_back(floats(forward(m.get(), x.get(), EMBER_MODE_EVAL).get()));
  }
  std::atomic<int> mismatches{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int iter = 0; iter < 50; ++iter) {
        const int i = (t + iter) % kInputs;
        const auto v = input(i);
        const int64_t shape[] = {16, 12};
        ember_tensor *x = nullptr, *y = nullptr;
        if (ember_tensor_from_data(nullptr, EMBER_DTYPE_F32, v.data(), v.size() * sizeof(float), shape, 2, &x) !=
                EMBER_OK ||
            ember_module_forward(m.get(), x, EMBER_MODE_EVAL, &y) != EMBER_OK) {
          ++failures;
        } else {
          std::vector<float> out(expected[i].size());
          ember_tensor_copy_to(y, EMBER_DTYPE_F32, out.data(), out.size() * sizeof(float), nullptr);
          if (out != expected[i]) ++mismatches;
        }
        ember_tensor_free(y);
        ember_tensor_free(x);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(CApiConcurrency, ErrorsAndNoGradScopesArePerThread) {
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ember_tensor* out = nullptr;
      const int64_t dims[] = {-(t + 1)};
      for (int k = 0; k < 100; ++k) {
        if (ember_tensor_zeros(nullptr, EMBER_DTYPE_F32, dims, 1, &out) != EMBER_ERR_SHAPE) ++wrong;
        std::string want = "[";  // built in steps: GCC 12 warns (-Wrestrict) on "[" + std::to_string(...)
        want += std::to_string(-(t + 1));
        want += ']';
        if (std::string(ember_last_error()).find(want) == std::string::npos) ++wrong;
      }
      if (t % 2) ember_no_grad_enter();
      int32_t enabled = -1;
      ember_is_grad_enabled(&enabled);
      if (enabled != (t % 2 ? 0 : 1)) ++wrong;
      if (t % 2) ember_no_grad_exit();
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(CApiConcurrency, OptimizerStepsWhileOtherThreadsRunForward) {
  EMBER_ASSERT_OK(ember_seed(32));
  auto bn = layer(EMBER_LAYER_BATCH_NORM1D);
  bn.in_features = 8;
  auto m = sequential({linear(12, 8), bn, layer(EMBER_LAYER_RELU), linear(8, 1)});
  ember_optimizer_options o;
  EMBER_ASSERT_OK(ember_optimizer_options_init(&o, EMBER_OPTIM_ADAM));
  ember_optimizer* opt = nullptr;
  EMBER_ASSERT_OK(ember_optimizer_create(m.get(), &o, &opt));
  Optim optim(opt);
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < kThreads - 1; ++t) {
    readers.emplace_back([&, t] {
      auto x = f32(input(t), {16, 12});
      while (!stop) {
        ember_tensor* y = nullptr;
        // Train mode with batch norm: serialized by the module, racing with the optimizer's steps.
        if (ember_module_forward(m.get(), x.get(), t % 2 ? EMBER_MODE_TRAIN : EMBER_MODE_EVAL, &y) != EMBER_OK)
          ++failures;
        ember_tensor_free(y);
      }
    });
  }
  auto x = f32(input(0), {16, 12});
  for (int step = 0; step < 30; ++step) {
    auto y = forward(m.get(), x.get(), EMBER_MODE_TRAIN);
    ember_tensor *s = nullptr;
    EMBER_ASSERT_OK(ember_tensor_reduce_all(y.get(), EMBER_REDUCE_MEAN, &s));
    Tensor loss(s);
    ember_grads* g = nullptr;
    EMBER_ASSERT_OK(ember_tensor_backward(s, nullptr, &g));
    EMBER_ASSERT_OK(ember_optimizer_step(opt, Grads(g).get()));
  }
  stop = true;
  for (auto& th : readers) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace ember::capi_test
