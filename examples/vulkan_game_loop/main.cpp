// vulkan_game_loop: a headless "game" that owns its Vulkan instance, device and queue, hands them to Ember, and
// for a few hundred frames
//   1. writes this frame's inputs into its own buffer (8x8 "sensor images", host-visible memory),
//   2. runs a small network's forward pass with Ember on the shared queue, reading that buffer in place,
//   3. consumes Ember's output buffer in its own compute pass (argmax + softmax probability per row), ordered after
//      Ember's work by Ember's timeline semaphore on the GPU: no host round trip between Ember and the game,
// then prints per-frame times and checks every frame's decisions against the CPU backend running the same weights.
//
// Two ways to run the network, both on every frame of one run (--mode both, the default), same inputs:
//   eager     wrap the input buffer, model.forward, submit (Ember records every op each frame);
//   compiled  the model compiled at load (ember::vulkan::compile_forward, a vk::Plan) and recorded ONCE per input
//             slot into a command buffer of the game's, together with the consume pass: each frame the game only
//             submits that pre-recorded buffer (issue 14: the game-loop bar is the host time per frame).
// "host" below is what the game thread spends per frame on the network: wrap + forward + submit (eager), the
// vkQueueSubmit of the pre-recorded frame (compiled).
//
// Usage: vulkan_game_loop [--frames N] [--batch B] [--mode eager|compiled|both] [--validate] [--verbose]
// Exit codes: 0 ok, 1 mismatch / validation message / error, 77 no Vulkan device (meson: skipped).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/vulkan/compiled_forward.hpp"
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
  bool eager = true, compiled = true;
  bool validate = false;
  bool verbose = false;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--frames" && i + 1 < argc) o.frames = std::stoi(argv[++i]);
    else if (a == "--batch" && i + 1 < argc) o.batch = std::stoll(argv[++i]);
    else if (a == "--mode" && i + 1 < argc) {
      const std::string m = argv[++i];
      if (m != "eager" && m != "compiled" && m != "both") throw std::runtime_error("unknown mode " + m);
      o.eager = m != "compiled";
      o.compiled = m != "eager";
    } else if (a == "--validate") o.validate = true;
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

// Per-frame times of one way of running the network, and its decisions that disagreed with the CPU's.
struct Path {
  const char* name;
  std::vector<double> host_ms, frame_ms;
  int mismatches = 0;

  void report() const {
    std::printf("%-8s host (record + submit) p50 %.4f ms p95 %.4f ms; inference + consume p50 %.3f ms p95 %.3f ms "
                "max %.3f ms; mismatches vs CPU %d\n",
                name, percentile(host_ms, 0.5), percentile(host_ms, 0.95), percentile(frame_ms, 0.5),
                percentile(frame_ms, 0.95), percentile(frame_ms, 1.0), mismatches);
  }
};

// The CPU's logits for this frame's inputs.
std::vector<float> reference(const DigitsMlp<ember::Cpu<float>>& cpu_model, const float* in, int64_t batch) {
  const auto x = ember::Tensor<ember::Cpu<float>, 2>::from_values(std::vector<float>(in, in + batch * kPixels),
                                                                  {batch, kPixels});
  return cpu_model.forward(x).into_data().to_vec<float>();
}

// Compares the game's decisions (argmax, softmax probability per row) with the CPU's logits.
void check_decisions(Path& path, int frame, const std::vector<float>& ref, const float* got, int64_t batch) {
  for (int64_t r = 0; r < batch; ++r) {
    const float* row = ref.data() + r * kClasses;
    const auto best = std::max_element(row, row + kClasses) - row;
    double z = 0;
    for (int64_t c = 0; c < kClasses; ++c) z += std::exp(static_cast<double>(row[c] - row[best]));
    const double prob = 1.0 / z;
    const auto got_best = static_cast<int64_t>(got[2 * r]);
    // A different argmax is only acceptable when the two logits tie within f32 rounding.
    const bool same_class = got_best == best || std::fabs(row[got_best] - row[best]) < 1e-4f;
    if (!same_class || std::fabs(got[2 * r + 1] - prob) > 1e-4) {
      if (path.mismatches++ < 5)
        std::printf("%s frame %d row %lld: got class %lld p=%.6f, cpu class %lld p=%.6f\n", path.name, frame,
                    static_cast<long long>(r), static_cast<long long>(got_best), got[2 * r + 1],
                    static_cast<long long>(best), prob);
    }
  }
}

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
  Path eager{"eager"}, compiled{"compiled"};
  {
    const ember::VulkanDevice dev = ember::vulkan::adopt(ext);

    // One set of weights on both backends: built on the CPU, moved to the shared device through a record.
    ember::seed(2026);
    const auto cpu_model = DigitsMlp<ember::Cpu<float>>::init();
    const auto gpu_model = ember::load_record(DigitsMlp<ember::Vulkan>::init(dev), ember::into_record(cpu_model));

    const auto rows = static_cast<uint32_t>(o.batch), classes = static_cast<uint32_t>(kClasses);
    const VkDeviceSize in_bytes = static_cast<VkDeviceSize>(o.batch * kPixels) * sizeof(float);
    const VkDeviceSize logit_bytes = static_cast<VkDeviceSize>(o.batch * kClasses) * sizeof(float);
    game::HostBuffer inputs[2] = {g.create_buffer(in_bytes), g.create_buffer(in_bytes)};
    game::HostBuffer logits = g.create_buffer(logit_bytes);  // the compiled frames' output, in the game's memory
    game::HostBuffer decisions = g.create_buffer(static_cast<VkDeviceSize>(o.batch) * 2 * sizeof(float));
    uint64_t submitted[2] = {0, 0};

    // Load time: compile the forward, then record each input slot's whole frame (the network's replay reading
    // that slot, the consume pass reading the game's logits buffer) into a command buffer the game keeps.
    VkCommandBuffer prerecorded[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};
    std::optional<ember::vulkan::CompiledForward> net;
    if (o.compiled) {
      const auto t0 = Clock::now();
      net = ember::vulkan::compile_forward<2>(dev, {o.batch, kPixels}, [&](const auto& x) { return gpu_model.forward(x); });
      for (int slot = 0; slot < 2; ++slot) {
        prerecorded[slot] = g.allocate_frame();
        net->bind_input(0, inputs[slot].buffer, 0);
        net->bind_output(0, logits.buffer, 0);
        net->record(prerecorded[slot]);
        g.record_consume(prerecorded[slot], logits.buffer, 0, logit_bytes, decisions, rows, classes,
                         game::GameVulkan::kFixedSet);
        g.finish_frame(prerecorded[slot]);
      }
      std::printf("compiled at load in %.1f ms: %zu dispatches, recorded once into 2 frames\n", ms(Clock::now() - t0),
                  net->dispatches());
    }

    const auto* got = static_cast<const float*>(decisions.mapped);
    for (int f = 0; f < o.frames; ++f) {
      const int slot = f % 2;
      // The input slot is free once Ember's eager work of two frames ago has executed (compiled frames are
      // waited for below).
      if (submitted[slot]) ember::vulkan::host_wait(dev, submitted[slot]);
      auto* in = static_cast<float*>(inputs[slot].mapped);
      write_inputs(in, o.batch, f);
      const auto ref = reference(cpu_model, in, o.batch);

      if (o.eager) {
        const auto t0 = Clock::now();
        const auto x = ember::vulkan::wrap_buffer<ember::Float, 2>(dev, inputs[slot].buffer, 0, {o.batch, kPixels});
        const auto y = gpu_model.forward(x);
        const auto view = ember::vulkan::buffer_of(y);
        submitted[slot] = ember::vulkan::submit(dev);
        const auto t1 = Clock::now();
        g.submit_consume(view.buffer, view.offset, view.size, decisions, rows, classes, ember::vulkan::timeline(dev),
                         submitted[slot]);
        g.wait_consume();  // end of frame: the game has its decisions
        const auto t2 = Clock::now();
        eager.host_ms.push_back(ms(t1 - t0));
        eager.frame_ms.push_back(ms(t2 - t0));
        check_decisions(eager, f, ref, got, o.batch);
      }
      if (o.compiled) {
        const auto t0 = Clock::now();
        g.submit_frame(prerecorded[slot]);
        const auto t1 = Clock::now();
        g.wait_consume();
        const auto t2 = Clock::now();
        compiled.host_ms.push_back(ms(t1 - t0));
        compiled.frame_ms.push_back(ms(t2 - t0));
        check_decisions(compiled, f, ref, got, o.batch);
      }
      if (o.verbose || f % 50 == 0 || f == o.frames - 1) {
        std::printf("frame %4d:", f);
        for (const Path* p : {&eager, &compiled})
          if (!p->host_ms.empty())
            std::printf("  %s host %.4f ms, inference + consume %.3f ms", p->name, p->host_ms.back(),
                        p->frame_ms.back());
        std::printf("\n");
      }
    }
    ember::vulkan::synchronize(dev);
    for (auto& b : inputs) g.destroy_buffer(b);
    g.destroy_buffer(logits);
    g.destroy_buffer(decisions);
  }  // Ember's context goes first; the game's device outlives it (Ember never destroys it)

  std::printf("%d frames x %lld rows:\n", o.frames, static_cast<long long>(o.batch));
  for (const Path* p : {&eager, &compiled})
    if (!p->host_ms.empty()) p->report();
  if (o.eager && o.compiled)
    std::printf("compiled / eager host time p50: %.3f\n",
                percentile(compiled.host_ms, 0.5) / percentile(eager.host_ms, 0.5));
  std::printf("validation messages: %u\n", g.validation_messages);
  return eager.mismatches == 0 && compiled.mismatches == 0 && g.validation_messages == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\nusage: vulkan_game_loop [--frames N] [--batch B] [--mode eager|compiled|both] [--validate] [--verbose]\n",
                 e.what());
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
