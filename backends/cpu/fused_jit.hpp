#pragma once
// Fusion<Cpu<float>>'s chains compiled to AVX-512 machine code at run time (Xbyak), so that a chain is evaluated in
// vector registers: per 16 elements every instruction is a few register ops, the inputs are loaded once and only
// the result is stored. fused_chain.cpp keeps its tiles (it still finds each input's run of a tile: in place,
// gathered, converted from Int / Bool or a filled constant) and calls the compiled code on each tile instead of
// running every instruction over the tile through L1 scratch registers.
//
// Exact: each instruction is emitted as the very arithmetic the eager op runs (IEEE add / sub / mul / div / sqrt,
// the same comparisons and selects, GELU and its backward step as gelu_avx512.cpp's sequences with the same
// constants), so a compiled chain has the eager ops' bits, as the interpreter does (tests/fusion/fusion_test.cpp).
// A program with an instruction that has no such form here (exp, log, tanh, ... : their eager loops are what GCC
// makes of vec_math.hpp, which the generator does not reproduce), or with more live values than registers, is not
// compiled and runs in the interpreter.
#include <cstdint>
#include <memory>
#include <string>

#include "engine/fusion/program.hpp"

namespace ember::cpu {

// regs[k] points at instruction k's tile values for every Input instruction k (len floats; others unused). With lanes
// null the result goes to out (len floats); otherwise (len a multiple of 16) each 16-float vector of the result is
// added to lanes[0..16) in order, as a trailing sum's eager blocking adds its lanes, and nothing is stored.
using FusedJitFn = void (*)(const float* const* regs, float* out, int64_t len, float* lanes);

class FusedJitKernel {
 public:
  virtual ~FusedJitKernel() = default;
  virtual FusedJitFn fn() const = 0;
};

// The compiled code of p (cached by its instructions and scalars), or null when it runs in the interpreter: no
// Xbyak in this build, no AVX-512F on this CPU, turned off (set_fused_jit(false) or EMBER_FUSED_JIT=0), or an
// instruction the generator does not emit. The caller keeps the kernel alive while it runs it.
std::shared_ptr<const FusedJitKernel> fused_jit_kernel(const fusion::Program& p);

bool fused_jit_usable();
void set_fused_jit(bool on);

struct FusedJitStats {
  uint64_t compiled = 0;  // programs compiled
  uint64_t hits = 0;      // compiled programs found in the cache
  uint64_t declined = 0;  // programs left to the interpreter (each once; not counted without Xbyak or AVX-512)
  std::string last_declined;  // why, for the last one
};
FusedJitStats fused_jit_stats();

}  // namespace ember::cpu
