// The fuzzer's positional-embedding row (issue 13, h-rope; declared in fuzz_actions.hpp, placed in kActions by
// fuzz_actions.cpp): ember_tensor_rotary_embedding with any live / freed / wrong-type / NULL tensor (any rank, dtype,
// shape), any rotary_dim (often a small even one, so the rotation runs), base and offset.
#include "tests/fuzz/fuzz_actions.hpp"

namespace ember_fuzz {

void rotary_embedding(Ctx& c) {
  ember_tensor* x = c.tensor();
  const int64_t rotary_dim = c.flag() ? 2 * (c.dim() % 4 + 1) : c.dim();
  const double base = c.flag() ? 10000.0 : c.real();
  const int64_t offset = c.flag() ? c.dim() % 8 : c.dim();
  MAKE(ember_tensor_rotary_embedding, x, rotary_dim, base, offset);
}

}  // namespace ember_fuzz
