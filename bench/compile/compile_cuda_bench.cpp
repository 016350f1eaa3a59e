// ember_compile_cuda_bench (issue 14): the same training steps as ember_compile_bench on the CUDA backend: eager on
// Autodiff<Cuda> against ember::compile on Autodiff<Capture<Cuda>> (and Autodiff<Fusion<Capture<Cuda>>>, whose graph
// launches Fusion's chains as one NVRTC kernel each), whose replays launch one CUDA graph per step
// (backends/cuda/compiled_step_graph.cpp: forward, backward and the Adam updates captured once) instead of issuing
// every op's launch again. The digits MLP at batch 64 and 4, then the character transformer's AdamW step. Rows as
// bench/compile/compare.hpp; under each row the graph it replays and the host thread's CPU time per step on each
// side. On a GPU the kernels of these small steps take microseconds, so the host work a replay removes is most of
// the step.
//
//   build/bench/ember_compile_cuda_bench [steps] [eager|compiled|both] [batch]
#include <cstdlib>
#include <string>

#include "backends/cuda/cuda_api.hpp"
#include "backends/cuda/cuda_backend.hpp"
#include "bench/compile/compare.hpp"

int main(int argc, char** argv) {
  using namespace ember;
  using namespace ember::compile_bench;
  using Eager = Autodiff<Cuda>;
  using Cap = Autodiff<Capture<Cuda>>;
  using FusedCap = Autodiff<Fusion<Capture<Cuda>>>;  // Fusion's chains launched as one kernel each
  if (cuda::device_count() == 0) {
    std::printf("ember_compile_cuda_bench: no CUDA device (%s): nothing to measure\n",
                cuda::unavailable_reason().c_str());
    return 0;
  }
  const int steps = argc > 1 ? std::atoi(argv[1]) : 200;
  const std::string only = argc > 2 && std::string(argv[2]) != "both" ? argv[2] : "";
  const int64_t only_batch = argc > 3 ? std::atoll(argv[3]) : 0;
  try {
    print_header("digits MLP 64-256-256-10, cross entropy, Adam, on CUDA", steps);
    for (const int64_t batch : {int64_t{64}, int64_t{4}})
      if (only_batch == 0 || batch == only_batch) {
        compare<Eager, Cap>(batch, steps, only, true);
        compare<Eager, FusedCap>(batch, steps, only, true);
      }
    if (only_batch == 0 || only_batch == lm_bench::kBatch) {
      compare_lm<Eager, Cap>(std::max(3, steps / 20), only, "transformer LM, capture<cuda<f32>>", true);
      compare_lm<Eager, FusedCap>(std::max(3, steps / 20), only, "transformer LM, fusion<capture<cuda>>", true);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ember_compile_cuda_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
