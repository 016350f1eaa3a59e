// The fuzzer's rows for issue 13's sort, scan and mask ops (declared in fuzz_actions.hpp, placed in kActions by
// fuzz_actions.cpp): any tensor handle (live of any kind and rank, NULL, freed, wrong type), any dim / k / diagonal
// / num_classes, flags outside 0..1. sort and topk make two handles: on success both must be set, on failure both
// must be NULL (neither leaks).
#include "tests/fuzz/fuzz_actions.hpp"

namespace ember_fuzz {
namespace {

// A flag argument: mostly 0 or 1, sometimes a value that must be refused.
int32_t flag32(Ctx& c) { return c.in.ConsumeIntegralInRange<int32_t>(-1, 2); }

// Calls fn(args..., values, indices) for a two-result op and keeps both handles; either out may be NULL (refused).
template <class F, class... A>
void make_pair(Ctx& c, const char* name, F fn, A... args) {
  const bool null_values = c.in.ConsumeIntegralInRange<int>(0, 31) == 0;
  const bool null_indices = c.in.ConsumeIntegralInRange<int>(0, 31) == 0;
  auto* unset = reinterpret_cast<ember_tensor*>(uintptr_t{1});  // must be overwritten
  ember_tensor* values = unset;
  ember_tensor* indices = unset;
  const ember_status s =
      c.call(name, fn, std::tuple{args..., null_values ? nullptr : &values, null_indices ? nullptr : &indices});
  if (null_values || null_indices) {
    if (s == EMBER_OK) violation(name, "accepted a NULL out pointer");
    return;
  }
  if (s != EMBER_OK) {
    if (values || indices) violation(name, "failed without setting both outs to NULL");
    return;
  }
  if (!values || !indices) violation(name, "returned EMBER_OK and a NULL handle");
  c.keep(values, name);
  c.keep(indices, name);
}

}  // namespace

void sort_scan(Ctx& c) {
  switch (c.in.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: make_pair(c, "ember_tensor_sort", ember_tensor_sort, c.tensor(), c.dim(), flag32(c), flag32(c)); break;
    case 1: MAKE(ember_tensor_argsort, c.tensor(), c.dim(), flag32(c), flag32(c)); break;
    case 2:
      make_pair(c, "ember_tensor_topk", ember_tensor_topk, c.tensor(), c.flag() ? c.size() : c.dim(), c.dim(),
                flag32(c), flag32(c));
      break;
    case 3: MAKE(ember_tensor_cumsum, c.tensor(), c.dim()); break;
    case 4: MAKE(ember_tensor_tril, c.tensor(), c.flag() ? c.dim() : c.size()); break;
    case 5: MAKE(ember_tensor_triu, c.tensor(), c.flag() ? c.dim() : c.size()); break;
    case 6: MAKE(ember_tensor_masked_select, c.tensor(), c.tensor()); break;
    default: MAKE(ember_tensor_one_hot, c.tensor(), c.flag() ? c.dim() : c.size());
  }
}

}  // namespace ember_fuzz
