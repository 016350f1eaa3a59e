// ember_bench entry point. Ember (and OpenBLAS) run on ONE thread unless told otherwise, so that results are
// stable on a shared machine and comparable between runs:
//   ember_bench [--threads=N] [Google Benchmark flags...]     (or EMBER_NUM_THREADS=N ember_bench ...)
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/parallel.hpp"

int main(int argc, char** argv) {
  int threads = 1;
  if (const char* env = std::getenv("EMBER_NUM_THREADS")) {
    if (std::atoi(env) > 0) threads = std::atoi(env);
  }
  // Strip our own flag before Google Benchmark sees the arguments.
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && std::strncmp(argv[i], "--threads=", 10) == 0) {
      if (std::atoi(argv[i] + 10) > 0) threads = std::atoi(argv[i] + 10);
      continue;
    }
    args.push_back(argv[i]);
  }
  ember::cpu::set_num_threads(threads);  // also sets OpenBLAS's thread count
  benchmark::AddCustomContext("ember_threads", std::to_string(ember::cpu::num_threads()));
  if (const char* core = std::getenv("OPENBLAS_CORETYPE")) benchmark::AddCustomContext("OPENBLAS_CORETYPE", core);

  int n = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
