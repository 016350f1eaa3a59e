#pragma once
// The fuzzer's action table (fuzz_actions.cpp): each input byte sequence is read as a list of rows to run.
#include <cstddef>

#include "tests/fuzz/fuzz_context.hpp"

namespace ember_fuzz {

struct Action {
  const char* name;      // for the trace (EMBER_FUZZ_TRACE=1)
  void (*run)(Ctx& c);   // draws its arguments from c.in and makes the call(s)
};
extern const Action kActions[];
extern const std::size_t kActionCount;

}  // namespace ember_fuzz
