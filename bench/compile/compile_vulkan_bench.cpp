// ember_compile_vulkan_bench (issue 14): the same training steps as ember_compile_bench on the Vulkan backend:
// eager on Autodiff<Vulkan> against ember::compile on Autodiff<Capture<Vulkan>> (and Autodiff<Fusion<Capture<Vulkan>>>,
// whose plan holds Fusion's chains as one generated shader each), whose replays submit one vk::Plan
// per step (backends/vulkan/compiled_step_plan.cpp: forward, backward and the Adam updates recorded once) instead of
// recording every op's dispatch, descriptor set and barrier again. The digits MLP at batch 64 and 4, then the
// character transformer's AdamW step. Rows as bench/compile/compare.hpp; under each row the plan it replays, and the
// host thread's CPU time per step on each side (eager: the autodiff graph and recording every dispatch; compiled:
// one plan's submit), which is what a replay saves: on lavapipe the kernels themselves run on the CPU, on lavapipe's
// own threads, and take most of each step.
//
//   build/bench/ember_compile_vulkan_bench [steps] [eager|compiled|both] [batch]
//
// The host side runs on one thread; the device is whatever Vulkan device Ember picks (lavapipe here, whose compute
// work runs on its own worker threads: LP_NUM_THREADS=1 keeps it to one).
#include <cstdlib>
#include <string>

#include "backends/vulkan/vulkan_backend.hpp"
#include "bench/compile/compare.hpp"

int main(int argc, char** argv) {
  using namespace ember;
  using namespace ember::compile_bench;
  using Eager = Autodiff<Vulkan>;
  using Cap = Autodiff<Capture<Vulkan>>;
  using FusedCap = Autodiff<Fusion<Capture<Vulkan>>>;  // Fusion's chains recorded as one dispatch each
  const int steps = argc > 1 ? std::atoi(argv[1]) : 200;
  const std::string only = argc > 2 && std::string(argv[2]) != "both" ? argv[2] : "";
  const int64_t only_batch = argc > 3 ? std::atoll(argv[3]) : 0;
  try {
    std::printf("Vulkan device: %s\n", VulkanDevice{}.name().c_str());
    print_header("digits MLP 64-256-256-10, cross entropy, Adam, on Vulkan", steps);
    for (const int64_t batch : {int64_t{64}, int64_t{4}})
      if (only_batch == 0 || batch == only_batch) {
        compare<Eager, Cap>(batch, steps, only, true);
        compare<Eager, FusedCap>(batch, steps, only, true);
      }
    if (only_batch == 0 || only_batch == lm_bench::kBatch) {
      compare_lm<Eager, Cap>(std::max(3, steps / 20), only, "transformer LM, capture<vulkan<f32>>", true);
      compare_lm<Eager, FusedCap>(std::max(3, steps / 20), only, "transformer LM, fusion<capture<vk>>", true);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ember_compile_vulkan_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
