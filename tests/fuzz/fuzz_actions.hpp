#pragma once
// The fuzzer's action table (fuzz_actions.cpp): each input byte sequence is read as a list of rows to run.
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_context.hpp"

namespace ember_fuzz {

struct Action {
  const char* name;      // for the trace (EMBER_FUZZ_TRACE=1)
  void (*run)(Ctx& c);   // draws its arguments from c.in and makes the call(s)
};
extern const Action kActions[];
extern const std::size_t kActionCount;

// Issue 13's sort, scan and mask ops (fuzz_actions_sort.cpp).
void sort_scan(Ctx& c);

constexpr int32_t kDtypes = 8;  // ember_dtype's count (valid values are 0..7)

// The Vulkan rows (fuzz_actions_vulkan.cpp). The fuzz build has no Vulkan backend: each call that needs it must
// refuse cleanly (EMBER_ERR_UNSUPPORTED, or the argument error found first) whatever it is given.
void vulkan(Ctx& c);
void vulkan_timeline(Ctx& c);
void vulkan_embedding(Ctx& c);
void vulkan_memory(Ctx& c);
void vulkan_resource_states(Ctx& c);
void vulkan_device_lost(Ctx& c);
void vulkan_plan_build(Ctx& c);
void vulkan_plan_use(Ctx& c);
void vulkan_plan_free(Ctx& c);
void vulkan_readback(Ctx& c);
void vulkan_readback_free(Ctx& c);
void vulkan_floor(Ctx& c);
// issue 13's composed shape ops (fuzz_actions_shape.cpp).
void shape_ops(Ctx& c);

// issue 13 (fuzz_actions_norms.cpp): conv_transpose2d and the GROUP_NORM / RMS_NORM / CONV_TRANSPOSE2D layers.
void norms(Ctx& c);
// issue 13 (h-rnn): LSTM / GRU modules and ember_module_forward_rnn (fuzz_actions_rnn.cpp).
void rnn(Ctx& c);
// issue 13 (h-flash): scaled-dot-product attention (fuzz_actions_sdpa.cpp).
void sdpa(Ctx& c);

// issue 13 (h-mha): attention / transformer layer modules and their forwards (fuzz_actions_attention.cpp).
void attention(Ctx& c);

// issue 13 (h-rope): rotary position embedding (fuzz_actions_positional.cpp).
void rotary_embedding(Ctx& c);

// issue 19 (h-onnx-surface): ONNX import and forward (fuzz_actions_onnx.cpp).
void onnx(Ctx& c);

// issue 14: compiled forwards, ember_compile / ember_module_compile / ember_compiled_* (fuzz_actions_compile.cpp).
void compiled(Ctx& c);

}  // namespace ember_fuzz
