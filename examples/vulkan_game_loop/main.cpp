// vulkan_game_loop: a headless "game" that owns its Vulkan instance, device and queue, hands them to Ember, and
// for a few hundred frames
//   1. writes this frame's inputs into its own buffer (8x8 "sensor images", host-visible memory),
//   2. runs a small network's forward pass with Ember on the shared queue, reading that buffer in place,
//   3. consumes Ember's output buffer in its own compute pass (argmax + softmax probability per row), ordered after
//      Ember's work by Ember's timeline semaphore on the GPU: no host round trip between Ember and the game,
// then prints per-frame times and checks every frame's decisions against the CPU backend running the same weights.
//
// Usage: vulkan_game_loop [--frames N] [--batch B] [--validate] [--verbose]
// Exit codes: 0 ok, 1 mismatch / validation message / error, 77 no Vulkan device (meson: skipped).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/vulkan/interop.hpp"
#include "engine/ember.hpp"
#include "game_vulkan.hpp"
#include "records/module_record.hpp"
#include "tools/ember/models.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using ember::tools::DigitsMlp;

constexpr int64_t kPixels = 64, kClasses = 10;

struct Options {
  int frames = 300;
  int64_t batch = 64;
  bool validate = false;
  bool verbose = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--frames" && i + 1 < argc) o.frames = std::stoi(argv[++i]);
    else if (a == "--batch" && i + 1 < argc) o.batch = std::stoll(argv[++i]);
    else if (a == "--validate") o.validate = true;
    else if (a == "--verbose") o.verbose = true;
    else throw std::runtime_error("unknown argument " + a);
  }
  return o;
}

// This frame's inputs: smooth, frame-dependent patterns in [0, 1] (what a game's sensors might produce).
void write_inputs(float* dst, int64_t batch, int frame) {
  for (int64_t r = 0; r < batch; ++r)
    for (int64_t p = 0; p < kPixels; ++p)
      dst[r * kPixels + p] = 0.5f + 0.5f * std::sin(0.37f * static_cast<float>(frame) + 0.11f * static_cast<float>(r) +
                                                    0.23f * static_cast<float>(p * (r % 5 + 1)));
}

double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

void lock_queue(void* user) { static_cast<game::GameVulkan*>(user)->queue_mutex.lock(); }
void unlock_queue(void* user) { static_cast<game::GameVulkan*>(user)->queue_mutex.unlock(); }

int run(const Options& o) {
  const auto reqs = ember::vulkan::requirements();
  game::GameVulkan g(o.validate, reqs.api_version);
  g.create_device(reqs.shader_int64, reqs.timeline_semaphore);
  g.create_consume_pipeline();
  std::printf("game device: %s (validation %s)\n", g.device_name.c_str(), o.validate ? "on" : "off");

  ember::vulkan::ExternalDevice ext;
  ext.instance = g.instance;
  ext.physical_device = g.physical;
  ext.device = g.device;
  ext.queue_family = g.queue_family;
  ext.queue_index = 0;
  ext.get_instance_proc_addr = vkGetInstanceProcAddr;
  ext.lock_queue = lock_queue;
  ext.unlock_queue = unlock_queue;
  ext.user = &g;
  int mismatches = 0;
  std::vector<double> record_ms, frame_ms;
  {
    const ember::VulkanDevice dev = ember::vulkan::adopt(ext);

    // One set of weights on both backends: built on the CPU, moved to the shared device through a record.
    ember::seed(2026);
    const auto cpu_model = DigitsMlp<ember::Cpu<float>>::init();
    const auto gpu_model = ember::load_record(DigitsMlp<ember::Vulkan>::init(dev), ember::into_record(cpu_model));

    const VkDeviceSize in_bytes = static_cast<VkDeviceSize>(o.batch * kPixels) * sizeof(float);
    game::HostBuffer inputs[2] = {g.create_buffer(in_bytes), g.create_buffer(in_bytes)};
    game::HostBuffer decisions = g.create_buffer(static_cast<VkDeviceSize>(o.batch) * 2 * sizeof(float));
    uint64_t submitted[2] = {0, 0};

    for (int f = 0; f < o.frames; ++f) {
      const int slot = f % 2;
      // The input slot is free once Ember's work of two frames ago has executed.
      if (submitted[slot]) ember::vulkan::host_wait(dev, submitted[slot]);
      auto* in = static_cast<float*>(inputs[slot].mapped);
      write_inputs(in, o.batch, f);

      const auto t0 = Clock::now();
      const auto x = ember::vulkan::wrap_buffer<ember::Float, 2>(dev, inputs[slot].buffer, 0, {o.batch, kPixels});
      const auto logits = gpu_model.forward(x);
      const auto view = ember::vulkan::buffer_of(logits);
      submitted[slot] = ember::vulkan::submit(dev);
      const auto t1 = Clock::now();
      g.submit_consume(view.buffer, view.offset, view.size, decisions, static_cast<uint32_t>(o.batch),
                       static_cast<uint32_t>(kClasses), ember::vulkan::timeline(dev), submitted[slot]);
      g.wait_consume();  // end of frame: the game has its decisions
      const auto t2 = Clock::now();
      record_ms.push_back(ms(t1 - t0));
      frame_ms.push_back(ms(t2 - t0));

      // Check against the CPU backend on the same inputs.
      const auto cpu_x = ember::Tensor<ember::Cpu<float>, 2>::from_values(
          std::vector<float>(in, in + o.batch * kPixels), {o.batch, kPixels});
      const auto ref = cpu_model.forward(cpu_x).into_data().to_vec<float>();
      const auto* got = static_cast<const float*>(decisions.mapped);
      for (int64_t r = 0; r < o.batch; ++r) {
        const float* row = ref.data() + r * kClasses;
        const auto best = std::max_element(row, row + kClasses) - row;
        double z = 0;
        for (int64_t c = 0; c < kClasses; ++c) z += std::exp(static_cast<double>(row[c] - row[best]));
        const double prob = 1.0 / z;
        const auto got_best = static_cast<int64_t>(got[2 * r]);
        // A different argmax is only acceptable when the two logits tie within f32 rounding.
        const bool same_class = got_best == best || std::fabs(row[got_best] - row[best]) < 1e-4f;
        if (!same_class || std::fabs(got[2 * r + 1] - prob) > 1e-4) {
          if (mismatches++ < 5)
            std::printf("frame %d row %lld: got class %lld p=%.6f, cpu class %lld p=%.6f\n", f,
                        static_cast<long long>(r), static_cast<long long>(got_best), got[2 * r + 1],
                        static_cast<long long>(best), prob);
        }
      }
      if (o.verbose || f % 50 == 0 || f == o.frames - 1)
        std::printf("frame %4d: record %.3f ms, inference + consume %.3f ms\n", f, record_ms.back(), frame_ms.back());
    }
    ember::vulkan::synchronize(dev);
    for (auto& b : inputs) g.destroy_buffer(b);
    g.destroy_buffer(decisions);
  }  // Ember's context goes first; the game's device outlives it (Ember never destroys it)

  std::printf("%d frames x %lld rows: record p50 %.3f ms, inference+consume p50 %.3f ms p95 %.3f ms max %.3f ms\n",
              o.frames, static_cast<long long>(o.batch), percentile(record_ms, 0.5), percentile(frame_ms, 0.5),
              percentile(frame_ms, 0.95), percentile(frame_ms, 1.0));
  std::printf("mismatches vs CPU: %d, validation messages: %u\n", mismatches, g.validation_messages);
  return mismatches == 0 && g.validation_messages == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\nusage: vulkan_game_loop [--frames N] [--batch B] [--validate] [--verbose]\n", e.what());
    return 2;
  }
  try {
    uint32_t n = 0;
    VkInstanceCreateInfo probe_ci{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    VkInstance probe = VK_NULL_HANDLE;
    if (vkCreateInstance(&probe_ci, nullptr, &probe) != VK_SUCCESS ||
        (vkEnumeratePhysicalDevices(probe, &n, nullptr), n == 0)) {
      if (probe) vkDestroyInstance(probe, nullptr);
      std::printf("no Vulkan device: skipping the game loop\n");
      return 77;
    }
    vkDestroyInstance(probe, nullptr);
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vulkan_game_loop: %s\n", e.what());
    return 1;
  }
}
