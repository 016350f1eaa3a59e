// ember_vulkan_frame_bench: per-frame host time of the digits MLP (64-256-256-10, batch 64) on a host-owned Vulkan
// device, through ember.h as a game's plugin would run it, planned and eager in the same run (issue 17):
//  * planned: ember_vulkan_plan_bind_input + _bind_output + ember_vulkan_plan_record into the host's frame command
//    buffer (what the render-event callback costs the game thread);
//  * eager: ember_vulkan_tensor_wrap_buffer + ember_module_forward + ember_vulkan_tensor_buffer +
//    ember_vulkan_submit (the interop path of examples/vulkan_game_loop).
// Frame 0 is timed separately, after warm-up (plan: built at load; eager: ember_vulkan_warmup on a fresh device),
// and against the median of the steady frames. Each frame is submitted and waited for outside the timed region.
//
// Usage: ember_vulkan_frame_bench [--frames N] [--reps R]   (a Markdown table; exits 77 without a Vulkan device)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ember.h"
#include "examples/vulkan_game_loop/game_vulkan.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kBatch = 64, kPixels = 64, kClasses = 10;

void ok(ember_status s, const char* what) {
  if (s != EMBER_OK) throw std::runtime_error(std::string(what) + ": " + ember_last_error());
}

ember_layer_desc linear(int64_t in, int64_t out) {
  ember_layer_desc d;
  ok(ember_layer_init(&d, EMBER_LAYER_LINEAR), "ember_layer_init");
  d.in_features = in;
  d.out_features = out;
  return d;
}
ember_layer_desc relu() {
  ember_layer_desc d;
  ok(ember_layer_init(&d, EMBER_LAYER_RELU), "ember_layer_init");
  return d;
}

void lock_queue(void* user) { static_cast<game::GameVulkan*>(user)->queue_mutex.lock(); }
void unlock_queue(void* user) { static_cast<game::GameVulkan*>(user)->queue_mutex.unlock(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Figures {
  double frame0_us = 0, median_us = 0;
};

class Bench {
 public:
  explicit Bench(int frames) : frames_(frames), host_(false, VK_API_VERSION_1_2) {
    host_.create_device(true, true);
    host_.create_consume_pipeline();  // also makes the frame command buffer and its fence
    in_ = host_.create_buffer(kBatch * kPixels * sizeof(float));
    out_ = host_.create_buffer(kBatch * kClasses * sizeof(float));
    auto* x = static_cast<float*>(in_.mapped);
    for (int64_t i = 0; i < kBatch * kPixels; ++i) x[i] = 0.5f + 0.5f * std::sin(0.1f * static_cast<float>(i));
  }
  ~Bench() {
    host_.destroy_buffer(in_);
    host_.destroy_buffer(out_);
  }
  const std::string& device_name() const { return host_.device_name; }

  ember_device* adopt() {
    ember_vulkan_device_desc desc{};
    desc.struct_size = sizeof desc;
    desc.instance = host_.instance;
    desc.physical_device = host_.physical;
    desc.device = host_.device;
    desc.queue_family = host_.queue_family;
    desc.lock_queue = lock_queue;
    desc.unlock_queue = unlock_queue;
    desc.user = &host_;
    ember_device* d = nullptr;
    ok(ember_vulkan_device_adopt(&desc, &d), "ember_vulkan_device_adopt");
    return d;
  }
  ember_module* mlp(ember_device* d) {
    const ember_layer_desc layers[] = {linear(kPixels, 256), relu(), linear(256, 256), relu(), linear(256, kClasses)};
    ember_module* m = nullptr;
    ok(ember_module_sequential(d, layers, 5, &m), "ember_module_sequential");
    return m;
  }

  Figures planned() {
    ember_device* d = adopt();
    ember_module* m = mlp(d);
    const int64_t shape[] = {kBatch, kPixels};
    ember_vulkan_plan* plan = nullptr;
    ok(ember_vulkan_plan_create(m, d, EMBER_DTYPE_F32, shape, 2, &plan), "ember_vulkan_plan_create");
    std::vector<double> us;
    for (int f = 0; f < frames_; ++f) {
      VkCommandBuffer cb = host_.begin_frame();
      const auto t0 = Clock::now();
      ok(ember_vulkan_plan_bind_input(plan, 0, reinterpret_cast<uint64_t>(in_.buffer), 0), "bind input");
      ok(ember_vulkan_plan_bind_output(plan, 0, reinterpret_cast<uint64_t>(out_.buffer), 0), "bind output");
      ok(ember_vulkan_plan_record(plan, cb), "ember_vulkan_plan_record");
      us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      host_.end_frame();
    }
    ember_vulkan_plan_free(plan);
    ember_module_free(m);
    ember_device_free(d);
    return summarize(us);
  }

  Figures eager(bool warm) {
    ember_device* d = adopt();
    ember_module* m = mlp(d);
    const int64_t shape[] = {kBatch, kPixels};
    if (warm) ok(ember_vulkan_warmup(m, d, EMBER_DTYPE_F32, shape, 2), "ember_vulkan_warmup");
    std::vector<double> us;
    for (int f = 0; f < frames_; ++f) {
      const auto t0 = Clock::now();
      ember_tensor *x = nullptr, *y = nullptr;
      ok(ember_vulkan_tensor_wrap_buffer(d, reinterpret_cast<uint64_t>(in_.buffer), 0, EMBER_DTYPE_F32, shape, 2, &x),
         "wrap");
      ok(ember_module_forward(m, x, EMBER_MODE_EVAL, &y), "forward");
      uint64_t buffer = 0, value = 0;
      ok(ember_vulkan_tensor_buffer(y, &buffer, nullptr, nullptr), "tensor_buffer");
      ok(ember_vulkan_submit(d, &value), "submit");
      us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      ok(ember_vulkan_host_wait(d, value), "host_wait");
      ember_tensor_free(x);
      ember_tensor_free(y);
    }
    ember_module_free(m);
    ember_device_free(d);
    return summarize(us);
  }

  // Medians over `reps` runs of f (each on a fresh device) of frame 0 and of the steady median.
  template <class F>
  Figures repeat(int reps, F&& f) {
    std::vector<double> first, steady;
    for (int r = 0; r < reps; ++r) {
      const Figures x = f();
      first.push_back(x.frame0_us);
      steady.push_back(x.median_us);
    }
    return {median(first), median(steady)};
  }

 private:
  static Figures summarize(const std::vector<double>& us) {
    return {us[0], median(std::vector<double>(us.begin() + 1, us.end()))};
  }
  int frames_;
  game::GameVulkan host_;
  game::HostBuffer in_, out_;
};

}  // namespace

int main(int argc, char** argv) {
  int frames = 300, reps = 5;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--frames" && i + 1 < argc) frames = std::max(2, std::stoi(argv[++i]));
    else if (std::string(argv[i]) == "--reps" && i + 1 < argc) reps = std::max(1, std::stoi(argv[++i]));
    else {
      std::fprintf(stderr, "usage: ember_vulkan_frame_bench [--frames N] [--reps R]\n");
      return 2;
    }
  }
  ember_backend_info info{};
  info.struct_size = sizeof info;
  if (ember_backend_query(EMBER_BACKEND_VULKAN, &info) != EMBER_OK || !info.compiled || !info.usable) {
    std::printf("no Vulkan device (or no Vulkan backend): skipping\n");
    return 77;
  }
  try {
    Bench b(frames);
    // Each path runs `reps` times on a fresh adopted device (so frame 0 is a real first frame each time: pipelines
    // compiled by the plan's build or the warm-up, or not at all); the figures are medians over the repetitions,
    // which keeps one preempted frame 0 on a busy machine from deciding the result.
    const Figures plan = b.repeat(reps, [&] { return b.planned(); });
    const Figures cold = b.repeat(reps, [&] { return b.eager(false); });
    const Figures warm = b.repeat(reps, [&] { return b.eager(true); });
    std::printf("digits MLP 64-256-256-10, batch %lld, %d frames x %d fresh devices per path, device: %s\n",
                static_cast<long long>(kBatch), frames, reps, b.device_name().c_str());
    std::printf("| path | frame 0 (us) | steady median (us) | frame 0 / steady |\n|---|---|---|---|\n");
    auto row = [](const char* name, const Figures& f) {
      std::printf("| %s | %.1f | %.1f | %.2f |\n", name, f.frame0_us, f.median_us, f.frame0_us / f.median_us);
    };
    row("planned: bind + record into the host's command buffer (plan built at load)", plan);
    row("eager: wrap + forward + submit, no warm-up", cold);
    row("eager: wrap + forward + submit, after ember_vulkan_warmup", warm);
    std::printf("planned median / eager median: %.3f (eager is %.1fx the planned cost)\n",
                plan.median_us / warm.median_us, warm.median_us / plan.median_us);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ember_vulkan_frame_bench: %s\n", e.what());
    return 1;
  }
}
