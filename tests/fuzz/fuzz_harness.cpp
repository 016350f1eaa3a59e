// libFuzzer entry point of the C ABI call-sequence fuzzer: an input is a sequence of rows of the action table
// (fuzz_actions.cpp), each with the arguments it draws from the following bytes. Every handle made is kept in a
// small pool (fuzz_context.hpp) and everything is freed at the end of the input, so LeakSanitizer reports any leak
// inside libember. EMBER_FUZZ_TRACE=1 prints the rows as they run (to replay a crash by hand).
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "tests/fuzz/fuzz_actions.hpp"

namespace {

// Inputs run in one process: the state outside the handles must not carry over from one input to the next, so
// that a crash artifact replays alone. Files saved by the previous input are removed, the error message cleared.
void reset_process_state() {
  std::error_code ec;
  for (const char* f : {"a.rec", "b.rec"}) std::filesystem::remove(ember_fuzz::scratch_dir() + "/" + f, ec);
  ember_clear_error();
  ember_seed(0);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // One CPU thread: kernels stay deterministic and cheap under ASan (the fuzzer may still ask for 2).
  ember_set_num_threads(1);
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(ember_fuzz::scratch_dir(), ec);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool trace = std::getenv("EMBER_FUZZ_TRACE") != nullptr;
  reset_process_state();
  FuzzedDataProvider in(data, size);
  {
    ember_fuzz::Ctx c(in);
    // At most 64 calls per input: sequences long enough to build a model, train a step and save it, short enough
    // that one input stays well under a second under ASan.
    for (int i = 0; i < 64 && in.remaining_bytes() > 0; ++i) {
      const auto& a = ember_fuzz::kActions[in.ConsumeIntegralInRange<std::size_t>(0, ember_fuzz::kActionCount - 1)];
      if (trace) std::fprintf(stderr, "ember_fuzz: %s\n", a.name);
      a.run(c);
    }
  }  // ~Ctx frees every handle and leaves the no-grad scopes
  ember_set_num_threads(1);
  return 0;
}
