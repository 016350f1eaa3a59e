// The fuzzer's attention row (issue 13, h-flash; declared in fuzz_actions.hpp, placed in kActions by
// fuzz_actions.cpp): ember_scaled_dot_product_attention with any live / freed / wrong-type / NULL tensors (any
// ranks, dtypes, shapes), a NULL or fuzzed bias, any causal flag and scale (NaN: the default).
#include <limits>

#include "tests/fuzz/fuzz_actions.hpp"

namespace ember_fuzz {

void sdpa(Ctx& c) {
  ember_tensor* q = c.tensor();
  ember_tensor* k = c.flag() ? q : c.tensor();  // self-attention shapes often, so the kernels run
  ember_tensor* v = c.flag() ? k : c.tensor();
  ember_tensor* bias = c.flag() ? nullptr : c.tensor();
  const int32_t causal = c.flag() ? 1 : 0;
  const double scale = c.flag() ? std::numeric_limits<double>::quiet_NaN() : c.real();
  MAKE(ember_scaled_dot_product_attention, q, k, v, bias, causal, scale);
}

}  // namespace ember_fuzz
