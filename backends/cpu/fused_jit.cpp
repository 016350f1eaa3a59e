// The fused chains' code generator (fused_jit.hpp): Xbyak emits one AVX-512 function per program.
//
// The function walks its tile 16 floats at a time (the last partial vector under a lane mask). Each instruction's
// value lives in a zmm register from its definition to its last use (zmm9-zmm31, handed out in program order and given
// back after the last use; zmm0-zmm6 are the temporaries of GELU's sequences, zmm7 holds zero, zmm8 a trailing sum's
// lanes). An Input instruction loads its tile values from the pointer the caller passes for it; the last
// instruction's register is stored to the output, or added to the sum's lanes. Scalars and coefficients are read
// from a constant pool after the code, broadcast.
#include "backends/cpu/fused_jit.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "backends/cpu/cpu_features.hpp"
#include "backends/cpu/gelu_avx512.hpp"
#include "backends/cpu/gelu_constants.hpp"
#include "engine/fusion/instr_operands.hpp"

#if defined(EMBER_HAVE_XBYAK) && defined(__x86_64__)
#define XBYAK_NO_OP_NAMES
#include <xbyak/xbyak.h>
#define EMBER_FUSED_JIT 1
#endif

namespace ember::cpu {
namespace {

bool env_on() {
  const char* v = std::getenv("EMBER_FUSED_JIT");
  return !(v && std::strcmp(v, "0") == 0);
}

std::atomic<bool> g_on{env_on()};

struct Cache {
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<const FusedJitKernel>> kernels;
  FusedJitStats stats;
};

Cache& cache() {
  static Cache c;
  return c;
}

}  // namespace

bool fused_jit_usable() {
#ifdef EMBER_FUSED_JIT
  return g_on.load(std::memory_order_relaxed) && cpu_has_avx512f();
#else
  return false;  // built without Xbyak
#endif
}
void set_fused_jit(bool on) { g_on.store(on, std::memory_order_relaxed); }

FusedJitStats fused_jit_stats() {
  std::lock_guard lock(cache().mutex);
  return cache().stats;
}

#ifdef EMBER_FUSED_JIT
namespace {

using fusion::Instr;
using fusion::instr_operands;
using fusion::InstrKind;
using fusion::Program;
using Xbyak::Zmm;

constexpr int kFirstValueReg = 9;  // zmm9..zmm31 hold values
constexpr int kSumReg = 8;         // the lanes of a trailing sum
constexpr int kZeroReg = 7;
constexpr int kMaxInstrs = 64;  // Fusion's chains stay below kMaxChain (32) ops plus their inputs

// GELU and its step are emitted as gelu_avx512.cpp computes them, which is the eager op only while those kernels are
// on (set_gelu_avx512(false) runs the portable formula; the cache key carries the switch).
std::string gelu_unsupported() {
  return gelu_avx512_usable() ? std::string() : "GELU (the eager op runs the portable formula here)";
}

// Why an instruction has no exact emitted form here; empty when it has one.
std::string unsupported(const Instr& i) {
  switch (i.kind) {
    case InstrKind::Input:
    case InstrKind::Fill:
    case InstrKind::Where:
    case InstrKind::MaskFill:
    case InstrKind::Cast:
    case InstrKind::Expand:
    case InstrKind::ReluBackward: return {};
    case InstrKind::GeluBackward: return gelu_unsupported();
    case InstrKind::Unary:
      switch (static_cast<UnaryOp>(i.op)) {
        case UnaryOp::Neg:
        case UnaryOp::Abs:
        case UnaryOp::Sqrt:
        case UnaryOp::Recip:
        case UnaryOp::Relu:
        case UnaryOp::Floor:
        case UnaryOp::Ceil:
        case UnaryOp::Round: return {};
        case UnaryOp::Gelu: return gelu_unsupported();
        default:
          return fmt::format("unary {} (its eager loop is GCC's vectorization of vec_math.hpp or a libm call)",
                             op_name(static_cast<UnaryOp>(i.op)));
      }
    case InstrKind::Binary:
      switch (static_cast<BinaryOp>(i.op)) {
        case BinaryOp::Add:
        case BinaryOp::Sub:
        case BinaryOp::Mul:
        case BinaryOp::Div:
        case BinaryOp::Max:
        case BinaryOp::Min: return {};
        default: return fmt::format("binary {} (a libm call per element)", op_name(static_cast<BinaryOp>(i.op)));
      }
    case InstrKind::Scalar:
      switch (static_cast<ScalarOp>(i.op)) {
        case ScalarOp::Add:
        case ScalarOp::Sub:
        case ScalarOp::Mul:
        case ScalarOp::Div:
        case ScalarOp::RSub:
        case ScalarOp::RDiv:
        case ScalarOp::ClampMin:
        case ScalarOp::ClampMax: return {};
        case ScalarOp::Pow:
          if (i.s == 2.0 || i.s == 0.5 || i.s == -1.0) return {};  // scalar_span's exact special cases
          return fmt::format("pow by {} (a libm call per element)", i.s);
        default: return fmt::format("scalar {} (a libm call per element)", op_name(static_cast<ScalarOp>(i.op)));
      }
  }
  return "unknown instruction";
}

// Each instruction's register. Cast and Expand change nothing of a tile's values (the caller loads Int / Bool inputs
// as floats, every register is at the output's positions), so they share their operand's register.
std::string plan_registers(const Program& p, std::vector<int>& reg) {
  const auto n = static_cast<int32_t>(p.instrs.size());
  std::vector<int32_t> root(static_cast<std::size_t>(n)), last(static_cast<std::size_t>(n));
  for (int32_t k = 0; k < n; ++k) {
    const Instr& i = p.instrs[static_cast<std::size_t>(k)];
    const bool alias = i.kind == InstrKind::Cast || i.kind == InstrKind::Expand;
    root[static_cast<std::size_t>(k)] = alias ? root[static_cast<std::size_t>(i.a)] : k;
    last[static_cast<std::size_t>(k)] = k;
    for (int32_t o : instr_operands(i)) {
      if (o < 0 || o >= k) return "an operand that is not an earlier instruction";
      last[static_cast<std::size_t>(root[static_cast<std::size_t>(o)])] = k;
    }
  }
  last[static_cast<std::size_t>(root[static_cast<std::size_t>(n - 1)])] = n;  // the output stays to the store
  std::vector<int> free_regs;
  for (int r = 31; r >= kFirstValueReg; --r) free_regs.push_back(r);
  reg.assign(static_cast<std::size_t>(n), -1);
  for (int32_t k = 0; k < n; ++k) {
    const Instr& i = p.instrs[static_cast<std::size_t>(k)];
    const auto rk = static_cast<std::size_t>(root[static_cast<std::size_t>(k)]);
    if (rk != static_cast<std::size_t>(k)) {
      reg[static_cast<std::size_t>(k)] = reg[rk];
    } else {
      if (free_regs.empty()) return fmt::format("more than {} values live at once", 32 - kFirstValueReg);
      reg[static_cast<std::size_t>(k)] = free_regs.back();
      free_regs.pop_back();
    }
    // Registers whose value is read for the last time here go back after this instruction's own was taken, so an
    // instruction never writes a register it still reads.
    std::vector<int32_t> done = instr_operands(i);
    done.push_back(k);
    for (int32_t o : done) {
      const auto ro = static_cast<std::size_t>(root[static_cast<std::size_t>(o)]);
      if (last[ro] == k) {
        free_regs.push_back(reg[ro]);
        last[ro] = -1;  // given back once, however many operands name it
      }
    }
  }
  return {};
}

uint32_t float_bits(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return u;
}

class Generator final : public Xbyak::CodeGenerator, public FusedJitKernel {
 public:
  Generator(const Program& p, const std::vector<int>& reg)
      : Xbyak::CodeGenerator(4096 + p.instrs.size() * 2048, Xbyak::DontSetProtectRWE), p_(p), reg_(reg) {
    using namespace Xbyak::util;
    // rdi: the input pointers by instruction, rsi: the output, rdx: the length, rcx: the sum's 16 lanes or null;
    // r8: the position.
    Xbyak::Label loop, tail, done, sum_loop, sum_done;
    vpxord(Zmm(kZeroReg), Zmm(kZeroReg), Zmm(kZeroReg));
    xor_(r8, r8);
    test(rcx, rcx);
    jnz(sum_loop, T_NEAR);
    mov(r9, rdx);
    and_(r9, -16);
    L(loop);
    cmp(r8, r9);
    jge(tail, T_NEAR);
    body(Mode::Store);
    add(r8, 16);
    jmp(loop, T_NEAR);
    L(tail);
    cmp(r8, rdx);
    jge(done, T_NEAR);
    mov(rcx, rdx);  // rcx was null here (no sum): free for the shift count
    sub(rcx, r8);   // 1..15 elements left: lanes below that many
    mov(eax, 1);
    shl(eax, cl);
    sub(eax, 1);
    kmovw(k7, eax);
    body(Mode::StoreTail);
    L(done);
    vzeroupper();
    ret();
    // The trailing sum's tiles (whole vectors): each value vector is added to the 16 lanes in order, what the eager
    // reduction's add_lanes does, instead of being stored.
    L(sum_loop);
    vmovups(Zmm(kSumReg), ptr[rcx]);
    Xbyak::Label sum_next;
    L(sum_next);
    cmp(r8, rdx);
    jge(sum_done, T_NEAR);
    body(Mode::Sum);
    add(r8, 16);
    jmp(sum_next, T_NEAR);
    L(sum_done);
    vmovups(ptr[rcx], Zmm(kSumReg));
    vzeroupper();
    ret();
    align(64);
    L(pool_);
    for (uint32_t c : pool_words_) dd(c);
    setProtectModeRE();
    fn_ = getCode<FusedJitFn>();
  }

  FusedJitFn fn() const override { return fn_; }

 private:
  const Program& p_;             // read while generating only (the constructor)
  const std::vector<int>& reg_;  // likewise
  Xbyak::Label pool_;
  std::vector<uint32_t> pool_words_;
  FusedJitFn fn_ = nullptr;

  // A pool word, as a broadcast operand (ptr_b) or a scalar one (ptr: vbroadcastss).
  Xbyak::RegRip word(uint32_t bits) {
    std::size_t k = 0;
    while (k < pool_words_.size() && pool_words_[k] != bits) ++k;
    if (k == pool_words_.size()) pool_words_.push_back(bits);
    return Xbyak::util::rip + pool_ + static_cast<int>(4 * k);
  }
  Xbyak::Address bcast(float v) { return ptr_b[word(float_bits(v))]; }
  Xbyak::Address bcast_bits(uint32_t bits) { return ptr_b[word(bits)]; }
  void splat(const Zmm& z, float v) { vbroadcastss(z, dword[word(float_bits(v))]); }

  Zmm value(int32_t k) const { return Zmm(reg_[static_cast<std::size_t>(k)]); }

  // erf of zmm0 (clamped to [-4, 4]) into zmm2, as gelu_avx512.cpp's erf_clamped; uses zmm0-zmm3.
  void erf_of_z0() {
    using namespace gelu_constants;
    const Zmm u(0), x2(1), p(2), q(3);
    splat(x2, -kErfClamp);
    vmaxps(x2, x2, u);  // max(-4, u): u where it is NaN
    splat(u, kErfClamp);
    vminps(u, u, x2);  // xc = min(4, .)
    vmulps(x2, u, u);
    splat(p, kErfP[0]);
    for (int i = 1; i < 7; ++i) vfmadd213ps(p, x2, bcast(kErfP[i]));
    vmulps(p, p, u);
    splat(q, kErfQ[0]);
    for (int i = 1; i < 5; ++i) vfmadd213ps(q, x2, bcast(kErfQ[i]));
    vdivps(p, p, q);
  }

  void gelu(const Zmm& d, const Zmm& x) {
    using namespace gelu_constants;
    vmulps(Zmm(0), x, bcast(kSqrtHalf));
    erf_of_z0();
    vmulps(Zmm(4), x, bcast(0.5f));
    vaddps(Zmm(2), Zmm(2), bcast(1.0f));
    vmulps(d, Zmm(4), Zmm(2));
  }

  // g * (Phi(x) + x phi(x)), as gelu_avx512.cpp's gelu_step_of; uses zmm0-zmm6 and k1.
  void gelu_step(const Zmm& d, const Zmm& x, const Zmm& g) {
    using namespace gelu_constants;
    const Zmm t(0), tc(1), cdf(2), n(3), r(4), e(5), s(6);
    vmulps(Zmm(0), x, bcast(kSqrtHalf));
    erf_of_z0();
    vaddps(cdf, cdf, bcast(1.0f));
    vmulps(cdf, cdf, bcast(0.5f));
    vmulps(t, x, bcast(-0.5f));
    vmulps(t, t, x);
    vcmpps(k1, t, bcast(kExpLo), 0x11);  // _CMP_LT_OQ: below exp's range, 0
    splat(tc, kExpLo);
    vmaxps(tc, tc, t);
    vmulps(n, tc, bcast(kLog2e));
    vrndscaleps(n, n, 0x08);  // nearest, no exceptions
    vmovaps(r, tc);
    vfnmadd231ps(r, n, bcast(kLn2Hi));
    vfnmadd231ps(r, n, bcast(kLn2Lo));
    splat(e, kExpP[0]);
    for (int i = 1; i < 6; ++i) vfmadd213ps(e, r, bcast(kExpP[i]));
    vmulps(e, e, r);
    vaddps(s, r, bcast(1.0f));
    vfmadd213ps(e, r, s);
    vscalefps(e, e, n);
    vmovaps(e | k1, Zmm(kZeroReg));
    vmulps(e, e, bcast(kInvSqrt2Pi));
    vfmadd231ps(cdf, x, e);
    vmulps(d, g, cdf);
  }

  void unary(const Zmm& d, const Zmm& a, UnaryOp op) {
    switch (op) {
      case UnaryOp::Neg: vpxord(d, a, bcast_bits(0x80000000u)); return;
      case UnaryOp::Abs: vpandd(d, a, bcast_bits(0x7fffffffu)); return;
      case UnaryOp::Sqrt: vsqrtps(d, a); return;
      case UnaryOp::Recip:
        splat(d, 1.0f);
        vdivps(d, d, a);
        return;
      case UnaryOp::Relu: vmaxps(d, Zmm(kZeroReg), a); return;  // x < 0 ? 0 : x, NaN and -0 kept
      case UnaryOp::Floor: vrndscaleps(d, a, 0x09); return;
      case UnaryOp::Ceil: vrndscaleps(d, a, 0x0A); return;
      case UnaryOp::Round: vrndscaleps(d, a, 0x08); return;  // nearest even, as nearbyint in the default mode
      case UnaryOp::Gelu: gelu(d, a); return;
      default: break;
    }
    throw std::logic_error("fused_jit: unary op not planned");
  }

  void binary(const Zmm& d, const Zmm& a, const Zmm& b, BinaryOp op) {
    switch (op) {
      case BinaryOp::Add: vaddps(d, a, b); return;
      case BinaryOp::Sub: vsubps(d, a, b); return;
      case BinaryOp::Mul: vmulps(d, a, b); return;
      case BinaryOp::Div: vdivps(d, a, b); return;
      case BinaryOp::Max:
      case BinaryOp::Min:
        // (a != a || a > b) ? a : b (Min: a < b), elementwise.cpp's rule: a NaN a wins, then b.
        vcmpps(k2, a, b, op == BinaryOp::Max ? 0x1E : 0x11);  // _CMP_GT_OQ / _CMP_LT_OQ
        vcmpps(k3, a, a, 0x03);                               // _CMP_UNORD_Q
        korw(k2, k2, k3);
        vblendmps(d | k2, b, a);
        return;
      default: break;
    }
    throw std::logic_error("fused_jit: binary op not planned");
  }

  void scalar(const Zmm& d, const Zmm& a, ScalarOp op, double s) {
    const auto c = static_cast<float>(s);
    switch (op) {
      case ScalarOp::Add: vaddps(d, a, bcast(c)); return;
      case ScalarOp::Sub: vsubps(d, a, bcast(c)); return;
      case ScalarOp::Mul: vmulps(d, a, bcast(c)); return;
      case ScalarOp::Div: vdivps(d, a, bcast(c)); return;
      case ScalarOp::RSub:
        splat(d, c);
        vsubps(d, d, a);
        return;
      case ScalarOp::RDiv:
        splat(d, c);
        vdivps(d, d, a);
        return;
      case ScalarOp::ClampMin:  // v < c ? c : v: (c > v) ? c : v, NaN v kept
        splat(d, c);
        vmaxps(d, d, a);
        return;
      case ScalarOp::ClampMax:
        splat(d, c);
        vminps(d, d, a);
        return;
      case ScalarOp::Pow:
        if (s == 2.0) return vmulps(d, a, a);
        if (s == 0.5) return vsqrtps(d, a);
        if (s == -1.0) return unary(d, a, UnaryOp::Recip);
        break;
      default: break;
    }
    throw std::logic_error("fused_jit: scalar op not planned");
  }

  enum class Mode { Store, StoreTail, Sum };

  void body(Mode mode) {
    using namespace Xbyak::util;
    const bool masked = mode == Mode::StoreTail;
    const auto n = p_.instrs.size();
    for (std::size_t k = 0; k < n; ++k) {
      const Instr& i = p_.instrs[k];
      const Zmm d = value(static_cast<int32_t>(k));
      switch (i.kind) {
        case InstrKind::Input:
          mov(rax, ptr[rdi + static_cast<int>(8 * k)]);
          if (masked) vmovups(d | k7 | T_z, ptr[rax + r8 * 4]);
          else vmovups(d, ptr[rax + r8 * 4]);
          break;
        case InstrKind::Fill: splat(d, static_cast<float>(i.s)); break;
        case InstrKind::Cast:
        case InstrKind::Expand: break;  // same register as the operand
        case InstrKind::Unary: unary(d, value(i.a), static_cast<UnaryOp>(i.op)); break;
        case InstrKind::Binary: binary(d, value(i.a), value(i.b), static_cast<BinaryOp>(i.op)); break;
        case InstrKind::Scalar: scalar(d, value(i.a), static_cast<ScalarOp>(i.op), i.s); break;
        case InstrKind::Where:  // c != 0 ? x : y
          vcmpps(k2, value(i.a), Zmm(kZeroReg), 0x04);  // _CMP_NEQ_UQ
          vblendmps(d | k2, value(i.c), value(i.b));
          break;
        case InstrKind::MaskFill:  // m != 0 ? s : x
          vcmpps(k2, value(i.b), Zmm(kZeroReg), 0x04);
          splat(Zmm(0), static_cast<float>(i.s));
          vblendmps(d | k2, value(i.a), Zmm(0));
          break;
        case InstrKind::GeluBackward: gelu_step(d, value(i.a), value(i.b)); break;
        case InstrKind::ReluBackward:  // x > 0 ? g : +0
          vcmpps(k2, value(i.a), Zmm(kZeroReg), 0x1E);  // _CMP_GT_OQ
          vmovaps(d | k2 | T_z, value(i.b));
          break;
      }
    }
    const Zmm out = value(static_cast<int32_t>(n - 1));
    if (mode == Mode::Sum) vaddps(Zmm(kSumReg), Zmm(kSumReg), out);
    else if (masked) vmovups(ptr[rsi + r8 * 4] | k7, out);
    else vmovups(ptr[rsi + r8 * 4], out);
  }
};

std::string key_of(const Program& p) {
  std::string key;
  key.reserve(p.instrs.size() * 28 + 1);
  key.push_back(gelu_avx512_usable() ? 'G' : 'g');
  for (const Instr& i : p.instrs) {
    const int32_t w[5] = {static_cast<int32_t>(i.kind), i.op, i.a, i.b, i.c};
    key.append(reinterpret_cast<const char*>(w), sizeof w);
    key.append(reinterpret_cast<const char*>(&i.s), sizeof i.s);
  }
  return key;
}

// Why p cannot be compiled, or empty (with reg planned).
std::string check(const Program& p, std::vector<int>& reg) {
  if (p.instrs.empty()) return "no instructions";
  if (p.instrs.size() > static_cast<std::size_t>(kMaxInstrs)) return fmt::format("over {} instructions", kMaxInstrs);
  for (const Instr& i : p.instrs)
    if (std::string why = unsupported(i); !why.empty()) return why;
  return plan_registers(p, reg);
}

}  // namespace

std::shared_ptr<const FusedJitKernel> fused_jit_kernel(const Program& p) {
  if (!fused_jit_usable()) return nullptr;
  Cache& c = cache();
  const std::string key = key_of(p);
  std::lock_guard lock(c.mutex);
  // A declined program is cached too (as null): the next call of the same chain does not check it again.
  if (auto it = c.kernels.find(key); it != c.kernels.end()) {
    if (it->second) ++c.stats.hits;
    return it->second;
  }
  // A bound on the cache: a step's chains are a few dozen programs; a model that keeps making new ones (other
  // scalars every call) starts over rather than growing. Kernels in use live on in their callers' handles.
  if (c.kernels.size() >= 512) c.kernels.clear();
  std::vector<int> reg;
  std::string why = check(p, reg);
  if (why.empty()) {
    try {
      std::shared_ptr<const FusedJitKernel> kernel = std::make_shared<const Generator>(p, reg);
      c.kernels.emplace(key, kernel);
      ++c.stats.compiled;
      return kernel;
    } catch (const std::exception& e) {
      why = fmt::format("the code generator failed: {}", e.what());
    }
  }
  c.kernels.emplace(key, nullptr);
  ++c.stats.declined;
  c.stats.last_declined = why;
  return nullptr;
}

#else

std::shared_ptr<const FusedJitKernel> fused_jit_kernel(const fusion::Program&) { return nullptr; }

#endif

}  // namespace ember::cpu
