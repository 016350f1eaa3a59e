// ember_compile_bench (issue 14): the digits MLP's training step (64 -> 256 -> 256 -> 10, ReLU, cross entropy,
// Adam), compiled (ember::compile on Autodiff<Capture<Cpu<float>>>, and over Fusion on
// Autodiff<Capture<Fusion<Cpu<float>>>>, and with Fusion's chains recorded on Autodiff<Fusion<Capture<Cpu<float>>>>)
// against eager (Autodiff<Cpu<float>>) in the same run, on one thread. The
// issue's figure is batch 64; batch 4 is the same step where the host work a replay skips is a larger part (an
// online learner, a game's per-frame update). Last, the character transformer's AdamW step (bench/lm's shape),
// compiled on Autodiff<Capture<Cpu<float>>>, for steps / 20 steps.
//
//   build/bench/ember_compile_bench [steps] [eager|compiled|both] [batch]
//
// A second argument other than "both" runs only that side (for perf record), a third only that batch size; the
// default runs both, interleaved step by step (eager, compiled, eager, ...) so both see the same machine load.
// The rows: bench/compile/compare.hpp.
#include <cstdlib>
#include <string>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/parallel.hpp"
#include "bench/compile/compare.hpp"

namespace {

using namespace ember;
using namespace ember::compile_bench;
using Eager = Autodiff<Cpu<float>>;
using CapCpu = Autodiff<Capture<Cpu<float>>>;
using CapFusion = Autodiff<Capture<Fusion<Cpu<float>>>>;  // the tape records Fusion's ops (chains fused on replay)
using FusionCap = Autodiff<Fusion<Capture<Cpu<float>>>>;  // the tape records the fused chains Fusion materializes

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 400;
  const std::string only = argc > 2 && std::string(argv[2]) != "both" ? argv[2] : "";
  const int64_t only_batch = argc > 3 ? std::atoll(argv[3]) : 0;
  cpu::set_num_threads(1);
  print_header("digits MLP 64-256-256-10, cross entropy, Adam, 1 thread", steps);
  for (const int64_t batch : {int64_t{64}, int64_t{4}})
    if (only_batch == 0 || batch == only_batch) {
      compare<Eager, CapCpu>(batch, steps, only);
      compare<Eager, CapFusion>(batch, steps, only);
      compare<Eager, FusionCap>(batch, steps, only);
    }
  if (only_batch == 0 || only_batch == lm_bench::kBatch) {
    compare_lm<Eager, CapCpu>(std::max(3, steps / 20), only, "transformer LM, capture<cpu<f32>>");
    compare_lm<Eager, FusionCap>(std::max(3, steps / 20), only, "transformer LM, fusion<capture<cpu>>");
  }
  return 0;
}
