// ember_vulkan_f16_bench: GPU time of a planned, weight-bound forward with f32 weights against f16 weight copies
// (issue 17 part 6, f16 storage). The model is an MLP of `layers` Linear(width, width) + ReLU over a batch of
// `batch` rows: at a small batch each GEMM streams its weight matrix once per replay, so the weight bytes dominate.
// The plan runs on Ember's own Vulkan device (ember_vulkan_plan_submit + ember_vulkan_host_wait, timed together);
// which weights the plan reads follows EMBER_VULKAN_FLOAT16 (unset: f32; storage: f16 copies; auto: f16 copies
// and f16 arithmetic where the device has them), so run it once per setting:
//
//   EMBER_VULKAN_FLOAT16=0 ember_vulkan_f16_bench [--width W] [--layers L] [--batch B] [--reps R]
//   EMBER_VULKAN_FLOAT16=storage ember_vulkan_f16_bench ...
//
// Prints one Markdown table row (exits 77 without a Vulkan device).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "ember.h"

namespace {

using Clock = std::chrono::steady_clock;

void ok(ember_status s, const char* what) {
  if (s != EMBER_OK) throw std::runtime_error(std::string(what) + ": " + ember_last_error());
}

int64_t arg(int argc, char** argv, const char* name, int64_t fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::atoll(argv[i + 1]);
  return fallback;
}

int run(int argc, char** argv) {
  const int64_t width = arg(argc, argv, "--width", 1024), layers = arg(argc, argv, "--layers", 4);
  const int64_t batch = arg(argc, argv, "--batch", 1), reps = arg(argc, argv, "--reps", 30);
  ember_backend_info info;
  ok(ember_backend_info_init(&info), "ember_backend_info_init");
  ok(ember_backend_query(EMBER_BACKEND_VULKAN, &info), "ember_backend_query");
  if (!info.compiled || !info.usable) {
    std::printf("no Vulkan device\n");
    return 77;
  }
  ember_device* dev = nullptr;
  ok(ember_device_create(EMBER_BACKEND_VULKAN, 0, &dev), "ember_device_create");
  std::vector<ember_layer_desc> desc;
  for (int64_t l = 0; l < layers; ++l) {
    ember_layer_desc lin, relu;
    ok(ember_layer_init(&lin, EMBER_LAYER_LINEAR), "ember_layer_init");
    lin.in_features = lin.out_features = width;
    ok(ember_layer_init(&relu, EMBER_LAYER_RELU), "ember_layer_init");
    desc.push_back(lin);
    desc.push_back(relu);
  }
  ember_module* model = nullptr;
  ok(ember_module_sequential(dev, desc.data(), desc.size(), &model), "ember_module_sequential");
  const int64_t shape[] = {batch, width};
  ember_vulkan_plan* plan = nullptr;
  ok(ember_vulkan_plan_create(model, dev, EMBER_DTYPE_F32, shape, 2, &plan), "ember_vulkan_plan_create");
  size_t f16_count = 0;
  uint64_t f16_bytes = 0;
  ok(ember_vulkan_plan_f16_weights(plan, &f16_count, &f16_bytes), "ember_vulkan_plan_f16_weights");
  uint32_t variants = 0;
  ok(ember_vulkan_float16_query(dev, &variants), "ember_vulkan_float16_query");

  // The plan's input and output live in tensors of the device (their buffers are bound like a host's).
  ember_tensor *x = nullptr, *y = nullptr;
  ok(ember_tensor_zeros(dev, EMBER_DTYPE_F32, shape, 2, &x), "ember_tensor_zeros");
  const int64_t out_shape[] = {batch, width};
  ok(ember_tensor_zeros(dev, EMBER_DTYPE_F32, out_shape, 2, &y), "ember_tensor_zeros");
  uint64_t xb = 0, xo = 0, xs = 0, yb = 0, yo = 0, ys = 0;
  ok(ember_vulkan_tensor_buffer(x, &xb, &xo, &xs), "ember_vulkan_tensor_buffer");
  ok(ember_vulkan_tensor_buffer(y, &yb, &yo, &ys), "ember_vulkan_tensor_buffer");
  ok(ember_vulkan_plan_bind_input(plan, 0, xb, xo), "ember_vulkan_plan_bind_input");
  ok(ember_vulkan_plan_bind_output(plan, 0, yb, yo), "ember_vulkan_plan_bind_output");

  std::vector<double> ms;
  for (int64_t r = 0; r < reps + 3; ++r) {  // 3 unmeasured replays first
    const auto t0 = Clock::now();
    uint64_t value = 0;
    ok(ember_vulkan_plan_submit(plan, &value), "ember_vulkan_plan_submit");
    ok(ember_vulkan_host_wait(dev, value), "ember_vulkan_host_wait");
    if (r >= 3) ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  const char* env = std::getenv("EMBER_VULKAN_FLOAT16");
  const uint64_t f32_bytes = static_cast<uint64_t>(layers * width * width) * 4;
  std::printf("| %s | %s%s | %lld x Linear(%lld) batch %lld | %zu (%.1f MiB; f32: %.1f MiB) | %.3f | %.3f |\n",
              env && *env ? env : "(unset)", (variants & EMBER_VULKAN_FEATURE_FLOAT16) ? "arith " : "",
              (variants & EMBER_VULKAN_FEATURE_STORAGE_16BIT) ? "storage" : "",
              static_cast<long long>(layers), static_cast<long long>(width), static_cast<long long>(batch), f16_count,
              f16_bytes / 1048576.0, f32_bytes / 1048576.0, ms[ms.size() / 2], ms.front());
  ember_tensor_free(x);
  ember_tensor_free(y);
  ember_vulkan_plan_free(plan);
  ember_module_free(model);
  ember_device_free(dev);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ember_vulkan_f16_bench: %s\n", e.what());
    return 1;
  }
}
