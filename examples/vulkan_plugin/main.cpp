// vulkan_plugin: a headless host in the shape of a Unity / Godot native-plugin integration. The host (a "game
// engine", examples/vulkan_game_loop/game_vulkan.*) owns the instance, device, queue and buffers and records one
// command buffer per frame; the plugin (namespace plugin below: ember.h only, as a plugin .so would be) builds two
// Ember plans at load time (a digits MLP and a small CNN) and, in its render-event callback, records them into the
// frame's command buffer. Per frame:
//   1. the host's pass: copies this frame's sensor data (written by the CPU into a staging buffer) to the inputs,
//   2. the plugin's render event: binds the host's buffers to the plans and records both (no submit, no wait),
//   3. the host's consume pass reads both networks' logits (argmax + softmax probability per row),
//   4. one vkQueueSubmit, the host waits for its fence (end of frame) and checks every row against the CPU.
// Exit codes: 0 ok, 1 mismatch / validation message / error, 77 no Vulkan device (meson: skipped).
//
// Usage: vulkan_plugin [--frames N] [--batch B] [--validate]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "../vulkan_game_loop/game_vulkan.hpp"
#include "ember.h"

namespace {

constexpr int64_t kPixels = 64, kClasses = 10;

void ok(ember_status s, const char* what) {
  if (s != EMBER_OK) throw std::runtime_error(std::string(what) + ": " + ember_last_error());
}

// ---------------------------------------------------------------- the plugin (ember.h only)
namespace plugin {

// What the engine hands a plugin (Unity: IUnityGraphicsVulkan::Instance() at load, the frame's
// UnityVulkanRecordingState::commandBuffer in the render-event callback).
struct EngineDevice {
  VkInstance instance;
  VkPhysicalDevice physical;
  VkDevice device;
  uint32_t queue_family;
  void (*lock_queue)(void*);
  void (*unlock_queue)(void*);
  void* user;
};

struct Network {
  ember_module* module = nullptr;
  ember_vulkan_plan* plan = nullptr;
};

struct State {
  ember_device* device = nullptr;
  Network mlp, cnn;
};
State g;

ember_layer_desc layer(int32_t kind) {
  ember_layer_desc d;
  ok(ember_layer_init(&d, kind), "ember_layer_init");
  return d;
}
ember_layer_desc linear(int64_t in, int64_t out) {
  ember_layer_desc d = layer(EMBER_LAYER_LINEAR);
  d.in_features = in;
  d.out_features = out;
  return d;
}
ember_layer_desc conv(int64_t in, int64_t out) {
  ember_layer_desc d = layer(EMBER_LAYER_CONV2D);
  d.in_features = in;
  d.out_features = out;
  d.kernel_size[0] = d.kernel_size[1] = 3;
  d.padding[0] = d.padding[1] = 1;
  return d;
}

}  // namespace plugin

// The two networks' layers (shared by the plugin and the CPU reference).
std::vector<ember_layer_desc> mlp_layers() {
  using namespace plugin;
  return {linear(kPixels, 256), layer(EMBER_LAYER_RELU), linear(256, 256), layer(EMBER_LAYER_RELU),
          linear(256, kClasses)};
}
std::vector<ember_layer_desc> cnn_layers() {
  using namespace plugin;
  return {conv(1, 4), layer(EMBER_LAYER_RELU), layer(EMBER_LAYER_MAX_POOL2D), conv(4, 8), layer(EMBER_LAYER_RELU),
          layer(EMBER_LAYER_MAX_POOL2D), layer(EMBER_LAYER_FLATTEN), linear(8 * 2 * 2, kClasses)};
}

namespace plugin {

// Load time (Unity: UnityPluginLoad + a loading screen): adopt the engine's device, load the weights, build the
// plans. Building a plan compiles every pipeline it needs, so frame 0 does not.
void load(const EngineDevice& e, const ember_module* mlp_weights, const ember_module* cnn_weights, int64_t batch) {
  ember_vulkan_device_desc desc{};
  desc.struct_size = sizeof desc;
  desc.instance = e.instance;
  desc.physical_device = e.physical;
  desc.device = e.device;
  desc.queue_family = e.queue_family;
  desc.lock_queue = e.lock_queue;
  desc.unlock_queue = e.unlock_queue;
  desc.user = e.user;
  ok(ember_vulkan_device_adopt(&desc, &g.device), "ember_vulkan_device_adopt");
  auto build = [&](Network& n, const std::vector<ember_layer_desc>& layers, const ember_module* weights,
                   std::vector<int64_t> shape) {
    ok(ember_module_sequential(g.device, layers.data(), layers.size(), &n.module), "ember_module_sequential");
    ember_record* r = nullptr;
    ok(ember_module_to_record(weights, &r), "ember_module_to_record");
    ember_load_report* report = nullptr;
    const ember_status s = ember_module_load_record(n.module, r, EMBER_LOAD_STRICT, &report);
    ember_record_free(r);
    ember_load_report_free(report);
    ok(s, "ember_module_load_record");
    ok(ember_vulkan_plan_create(n.module, g.device, EMBER_DTYPE_F32, shape.data(), shape.size(), &n.plan),
       "ember_vulkan_plan_create");
  };
  build(g.mlp, mlp_layers(), mlp_weights, {batch, kPixels});
  build(g.cnn, cnn_layers(), cnn_weights, {batch, 1, 8, 8});
}

// The render-event callback: the frame's command buffer is recording; the plugin appends its work and returns.
void on_render_event(VkCommandBuffer cb, VkBuffer inputs, VkDeviceSize cnn_input_offset, VkBuffer logits,
                     VkDeviceSize cnn_logits_offset) {
  const auto in = reinterpret_cast<uint64_t>(inputs), out = reinterpret_cast<uint64_t>(logits);
  ok(ember_vulkan_plan_bind_input(g.mlp.plan, 0, in, 0), "bind mlp input");
  ok(ember_vulkan_plan_bind_output(g.mlp.plan, 0, out, 0), "bind mlp output");
  ok(ember_vulkan_plan_bind_input(g.cnn.plan, 0, in, cnn_input_offset), "bind cnn input");
  ok(ember_vulkan_plan_bind_output(g.cnn.plan, 0, out, cnn_logits_offset), "bind cnn output");
  ok(ember_vulkan_plan_record(g.mlp.plan, cb), "record mlp");
  ok(ember_vulkan_plan_record(g.cnn.plan, cb), "record cnn");
}

// Unload (after the engine's last frame using the plans has completed).
void unload() {
  for (Network* n : {&g.mlp, &g.cnn}) {
    ember_vulkan_plan_free(n->plan);
    ember_module_free(n->module);
  }
  ember_device_free(g.device);
  g = {};
}

}  // namespace plugin

// ---------------------------------------------------------------- the host
using Clock = std::chrono::steady_clock;

struct Options {
  int frames = 300;
  int64_t batch = 16;
  bool validate = false;
};

void lock_queue(void* user) { static_cast<game::GameVulkan*>(user)->queue_mutex.lock(); }
void unlock_queue(void* user) { static_cast<game::GameVulkan*>(user)->queue_mutex.unlock(); }

// This frame's sensor values in [0, 1].
void write_inputs(float* dst, int64_t n, int frame) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] = 0.5f + 0.5f * std::sin(0.37f * static_cast<float>(frame) + 0.013f * static_cast<float>(i * (i % 7 + 1)));
}

std::vector<float> cpu_forward(ember_module* m, const float* x, std::vector<int64_t> shape) {
  int64_t n = 1;
  for (auto d : shape) n *= d;
  ember_tensor *tx = nullptr, *ty = nullptr;
  ok(ember_tensor_from_data(nullptr, EMBER_DTYPE_F32, x, static_cast<size_t>(n) * sizeof(float), shape.data(),
                            shape.size(), &tx),
     "ember_tensor_from_data");
  ok(ember_module_forward(m, tx, EMBER_MODE_EVAL, &ty), "ember_module_forward (cpu)");
  int64_t numel = 0;
  ember_tensor_numel(ty, &numel);
  std::vector<float> v(static_cast<std::size_t>(numel));
  ok(ember_tensor_copy_to(ty, EMBER_DTYPE_F32, v.data(), v.size() * sizeof(float), nullptr), "ember_tensor_copy_to");
  ember_tensor_free(tx);
  ember_tensor_free(ty);
  return v;
}

int run(const Options& o) {
  ember_vulkan_requirements reqs{};
  reqs.struct_size = sizeof reqs;
  ok(ember_vulkan_requirements_query(&reqs), "ember_vulkan_requirements_query");
  game::GameVulkan host(o.validate, reqs.api_version);
  host.create_device(reqs.shader_int64 != 0, reqs.timeline_semaphore != 0);
  host.create_consume_pipeline();
  std::printf("host device: %s (validation %s)\n", host.device_name.c_str(),
              o.validate ? "on, with synchronization validation" : "off");

  // The weights, made on the CPU (the reference) and handed to the plugin.
  ok(ember_seed(2026), "ember_seed");
  ember_module *cpu_mlp = nullptr, *cpu_cnn = nullptr;
  const auto ml = mlp_layers(), cl = cnn_layers();
  ok(ember_module_sequential(nullptr, ml.data(), ml.size(), &cpu_mlp), "cpu mlp");
  ok(ember_module_sequential(nullptr, cl.data(), cl.size(), &cpu_cnn), "cpu cnn");

  const int64_t rows = o.batch;
  const VkDeviceSize in_bytes = static_cast<VkDeviceSize>(rows * kPixels) * sizeof(float);
  const VkDeviceSize logit_bytes = static_cast<VkDeviceSize>(rows * kClasses) * sizeof(float);
  // The MLP reads rows of 64 values, the CNN the same frame's images of 8x8 from the second half of `inputs`.
  game::HostBuffer staging = host.create_buffer(2 * in_bytes), inputs = host.create_buffer(2 * in_bytes);
  game::HostBuffer logits = host.create_buffer(2 * logit_bytes);  // MLP rows, then CNN rows
  game::HostBuffer decisions = host.create_buffer(static_cast<VkDeviceSize>(2 * rows) * 2 * sizeof(float));

  int mismatches = 0;
  std::vector<double> plugin_us;
  const auto t_load = Clock::now();
  plugin::load({host.instance, host.physical, host.device, host.queue_family, lock_queue, unlock_queue, &host},
               cpu_mlp, cpu_cnn, rows);
  std::printf("plugin load (adopt + 2 plans, pipelines compiled): %.1f ms\n",
              std::chrono::duration<double, std::milli>(Clock::now() - t_load).count());

  for (int f = 0; f < o.frames; ++f) {
    auto* cpu_in = static_cast<float*>(staging.mapped);
    write_inputs(cpu_in, 2 * rows * kPixels, f);
    VkCommandBuffer cb = host.begin_frame();
    // 1. the host's own pass: upload this frame's inputs.
    const VkBufferCopy region{0, 0, 2 * in_bytes};
    vkCmdCopyBuffer(cb, staging.buffer, inputs.buffer, 1, &region);
    // 2. the plugin's render event (its plans' leading barrier orders them after the host's copy).
    const auto t0 = Clock::now();
    plugin::on_render_event(cb, inputs.buffer, in_bytes, logits.buffer, logit_bytes);
    plugin_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    // 3. the host's consume pass over both networks' logits (the plans' trailing barrier makes them visible).
    host.record_consume(cb, logits.buffer, 0, logits.size, decisions, static_cast<uint32_t>(2 * rows),
                        static_cast<uint32_t>(kClasses));
    // 4. one submit; the end of the frame.
    host.end_frame();

    const auto ref_mlp = cpu_forward(cpu_mlp, cpu_in, {rows, kPixels});
    const auto ref_cnn = cpu_forward(cpu_cnn, cpu_in + rows * kPixels, {rows, 1, 8, 8});
    const auto* got_logits = static_cast<const float*>(logits.mapped);
    const auto* got = static_cast<const float*>(decisions.mapped);
    for (int64_t r = 0; r < 2 * rows; ++r) {
      const float* ref = r < rows ? ref_mlp.data() + r * kClasses : ref_cnn.data() + (r - rows) * kClasses;
      bool same = true;
      for (int64_t c = 0; c < kClasses; ++c)
        same = same && std::fabs(got_logits[r * kClasses + c] - ref[c]) <= 1e-4f + 1e-4f * std::fabs(ref[c]);
      const auto best = std::max_element(ref, ref + kClasses) - ref;
      double z = 0;
      for (int64_t c = 0; c < kClasses; ++c) z += std::exp(static_cast<double>(ref[c] - ref[best]));
      const auto got_best = static_cast<int64_t>(got[2 * r]);
      same = same && (got_best == best || std::fabs(ref[got_best] - ref[best]) < 1e-4f) &&
             std::fabs(got[2 * r + 1] - 1.0 / z) <= 1e-4;
      if (!same && mismatches++ < 5)
        std::printf("frame %d row %lld (%s): class %lld p=%.6f, cpu class %lld p=%.6f\n", f,
                    static_cast<long long>(r % rows), r < rows ? "mlp" : "cnn", static_cast<long long>(got_best),
                    got[2 * r + 1], static_cast<long long>(best), 1.0 / z);
    }
  }
  plugin::unload();
  ember_module_free(cpu_mlp);
  ember_module_free(cpu_cnn);
  for (auto* b : {&staging, &inputs, &logits, &decisions}) host.destroy_buffer(*b);

  std::vector<double> sorted(plugin_us.begin() + 1, plugin_us.end());
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.empty() ? plugin_us[0] : sorted[sorted.size() / 2];
  std::printf("%d frames x (%lld MLP rows + %lld CNN images): plugin render event (bind + record 2 plans) frame 0 "
              "%.1f us, median %.1f us\n",
              o.frames, static_cast<long long>(rows), static_cast<long long>(rows), plugin_us[0], median);
  std::printf("mismatches vs CPU: %d, validation messages: %u\n", mismatches, host.validation_messages);
  return mismatches == 0 && host.validation_messages == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--frames" && i + 1 < argc) o.frames = std::max(1, std::stoi(argv[++i]));
    else if (a == "--batch" && i + 1 < argc) o.batch = std::max<int64_t>(1, std::stoll(argv[++i]));
    else if (a == "--validate") o.validate = true;
    else {
      std::fprintf(stderr, "usage: vulkan_plugin [--frames N] [--batch B] [--validate]\n");
      return 2;
    }
  }
  try {
    ember_backend_info info{};
    info.struct_size = sizeof info;
    if (ember_backend_query(EMBER_BACKEND_VULKAN, &info) != EMBER_OK || !info.compiled || !info.usable) {
      std::printf("no Vulkan device (or no Vulkan backend): skipping\n");
      return 77;
    }
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vulkan_plugin: %s\n", e.what());
    return 1;
  }
}
