// The fuzzer's compiled-forward row (issue 14; declared in fuzz_actions.hpp, placed in kActions by fuzz_actions.cpp):
// ember_compile over any state list (live / freed / wrong-type / NULL handles) with a forward that fails, leaves
// its outputs NULL or runs an op on its inputs, or ember_module_compile over any module; then calls with any
// inputs, mode and output count (captures, replays, fallbacks), the last call's kind and reason, and the free.
#include <vector>

#include "tests/fuzz/fuzz_actions.hpp"

namespace ember_fuzz {
namespace {

ember_status EMBER_CALL compiled_forward(void* user, ember_mode_t mode, const ember_tensor* const* inputs,
                                         size_t n_inputs, ember_tensor** outputs, size_t n_outputs) {
  if (mode != EMBER_MODE_EVAL && mode != EMBER_MODE_TRAIN)
    violation("ember_compiled_call", "called the forward with an unknown mode");
  switch (*static_cast<int32_t*>(user)) {
    case 0: return EMBER_ERR_SHAPE;  // a forward that fails by itself
    case 1: return EMBER_OK;         // one that leaves its outputs NULL
    default:
      for (size_t i = 0; i < n_outputs; ++i) {
        const ember_status s =
            ember_tensor_unary(n_inputs ? inputs[i % n_inputs] : nullptr, EMBER_UNARY_RELU, &outputs[i]);
        if (s != EMBER_OK) return s;
      }
      return EMBER_OK;
  }
}

}  // namespace

void compiled(Ctx& c) {
  std::vector<ember_tensor*> state = c.tensors();
  int32_t behaviour = c.choice(3);
  ember_compiled* h = nullptr;
  if (c.flag())
    CALL(ember_compile, state.empty() ? nullptr : state.data(), state.size(), c.flag() ? compiled_forward : nullptr,
         static_cast<void*>(&behaviour), c.flag() ? &h : nullptr);
  else
    CALL(ember_module_compile, c.module(), c.flag() ? &h : nullptr);
  if (!h) return;
  for (int k = 0, n = static_cast<int>(c.size() & 3); k < n; ++k) {
    std::vector<ember_tensor*> inputs = c.tensors();
    std::vector<ember_tensor*> outputs(static_cast<size_t>(c.size() & 3), reinterpret_cast<ember_tensor*>(1));
    const ember_status s = CALL(ember_compiled_call, h, c.choice(2), inputs.empty() ? nullptr : inputs.data(),
                                inputs.size(), outputs.empty() ? nullptr : outputs.data(), outputs.size());
    for (ember_tensor* out : outputs) {
      if (s != EMBER_OK && out) violation("ember_compiled_call", "failed without setting every output to NULL");
      if (s == EMBER_OK && !out) violation("ember_compiled_call", "returned EMBER_OK and a NULL output");
      if (s == EMBER_OK) c.keep(out, "ember_compiled_call");
    }
    int32_t kind = -1;
    CALL(ember_compiled_last_call, h, c.flag() ? &kind : nullptr);
    std::vector<char> buf(c.capacity());
    size_t length = 0;
    CALL(ember_compiled_fallback_reason, h, buf.empty() ? nullptr : buf.data(), buf.size(), c.flag() ? &length : nullptr);
  }
  CALL(ember_compiled_free, h);
}

}  // namespace ember_fuzz
