// Fusion<Cpu>'s kernel: a chain of elementwise ops (engine/fusion/program.hpp) in one pass over the output.
//
// The output is cut into tiles of kTile elements. Per tile every instruction computes its register (kTile
// elements, in L1) from the registers before it, through the same flat-array arithmetic the eager ops run
// (elementwise.cpp's *_span), and the last one is written to the output: each input is read once and nothing
// between is stored in memory. Inputs with the output's shape are read in place, and so are broadcast ones where a
// tile reads one contiguous run of them (a bias row under a tile within one output row); other broadcast ones (a
// column, a row the tile crosses the end of) are gathered into their register; constants (Fill, a one-element
// input) are filled once per thread. A trailing sum / mean (Program::reduce_all) adds up each tile instead of
// storing it, in the order of the eager reduction (reduce.cpp's sum_contig: 16 lanes per block of 4096 elements,
// blocks and the tail in double), so on one thread the fused loss is bit-identical to the eager one.
//
// A float program the code generator compiles (fused_jit.hpp: Xbyak, AVX-512) skips the per-instruction passes:
// per tile only its inputs are found as above, then one call of the compiled code evaluates every instruction in
// vector registers, 16 elements at a time, and stores the result. The passes above remain for what it declines.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "backends/cpu/fused_jit.hpp"
#include "backends/cpu/kernels.hpp"
#include "backends/cpu/parallel.hpp"
#include "backends/cpu/vector_clones.hpp"
#include "engine/tensor/error.hpp"

namespace ember::cpu {
namespace {

using fusion::InputKind;
using fusion::InstrKind;
using fusion::Program;

// 512 floats per register: a chain of ~30 live registers stays within L1 + L2 on any x86-64 of the last decade.
constexpr int64_t kTile = 512;

template <class T, class From>
void convert(const From* src, T* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(src[i]);
}

// How one input is read at the output's flat positions.
struct InputView {
  InputKind kind = InputKind::Float;
  const void* data = nullptr;
  bool same = false;      // same shape as the output: positions map 1:1
  bool constant = false;  // one element
  std::vector<int64_t> strides;  // broadcast strides over the output's dims otherwise
};

// The eager sum's blocking (reduce.cpp sum_contig), kept across tiles: positions below `full` go through 16 lanes in
// T per block of kSumBlock, each block's lanes folded into the double total; the tail adds to the total one by one.
constexpr int64_t kSumBlock = 4096, kSumLanes = 16;
static_assert(kSumBlock % kTile == 0 && kTile % kSumLanes == 0);

// acc[l] += v[j + l] over len elements (a multiple of kSumLanes), on a local copy of the lanes: on SumState's member
// array the compiler could not prove that v does not alias the lanes and added them one scalar at a time, with a store
// each (half of Chain::run's samples in perf of a fused linear + GELU step). Multi-versioned like the eager sum
// (reduce.cpp's sum_contig_float), with the same additions in the same order in every clone.
template <class T>
[[gnu::always_inline]] inline void add_lanes_body(T* __restrict acc, const T* __restrict v, int64_t len) {
  T a[kSumLanes];
  for (int64_t l = 0; l < kSumLanes; ++l) a[l] = acc[l];
  for (int64_t j = 0; j < len; j += kSumLanes)
    for (int64_t l = 0; l < kSumLanes; ++l) a[l] += v[j + l];
  for (int64_t l = 0; l < kSumLanes; ++l) acc[l] = a[l];
}
EMBER_CPU_CLONES void add_lanes(float* __restrict acc, const float* __restrict v, int64_t len) {
  add_lanes_body(acc, v, len);
}
EMBER_CPU_CLONES void add_lanes(double* __restrict acc, const double* __restrict v, int64_t len) {
  add_lanes_body(acc, v, len);
}

template <class T>
struct SumState {
  int64_t full = 0;  // end of the last whole block of the whole output
  double total = 0;
  T acc[kSumLanes] = {};

  // One tile at position s (a multiple of kTile): tiles never straddle `full`, a multiple of kSumBlock.
  void add(const T* v, int64_t s, int64_t len) {
    if (s >= full) {
      for (int64_t j = 0; j < len; ++j) total += v[j];
      return;
    }
    add_lanes(acc, v, len);
    block_end(s, len);
  }

  // After a tile's values went into the lanes: at a block's end they are folded into the total.
  void block_end(int64_t s, int64_t len) {
    if ((s + len) % kSumBlock == 0) {
      T b = 0;
      for (auto& a : acc) {
        b += a;
        a = 0;
      }
      total += b;
    }
  }
};

template <class T>
class Chain {
 public:
  Chain(const Program& p, const std::vector<const void*>& data) : p_(p) {
    const Shape& out = p.shape;
    for (std::size_t k = 0; k < p.inputs.size(); ++k) {
      InputView v;
      v.kind = p.inputs[k].kind;
      v.data = data[k];
      v.same = p.inputs[k].shape == out;
      v.constant = !v.same && p.inputs[k].shape.num_elements() == 1;
      if (!v.same && !v.constant) v.strides = broadcast_strides(p.inputs[k].shape, out);
      views_.push_back(std::move(v));
    }
    if constexpr (std::is_same_v<T, float>) jit_ = fused_jit_kernel(p);
  }

  // Output positions [begin, end), tile by tile, with this thread's registers: stored at out + position, or, with
  // out null, added into `sum` (begin a multiple of kSumBlock).
  void run(T* out, int64_t begin, int64_t end, SumState<T>* sum = nullptr) const {
    if (jit_) return run_compiled(out, begin, end, sum);
    const std::size_t n = p_.instrs.size();
    std::vector<T> scratch(n * kTile);
    std::vector<const T*> reg(n);
    std::vector<bool> filled(n, false);  // constant registers, filled on the first tile
    for (int64_t s = begin; s < end; s += kTile) {
      const int64_t len = std::min(kTile, end - s);
      for (std::size_t k = 0; k < n; ++k) {
        const fusion::Instr& i = p_.instrs[k];
        // The last instruction writes straight into the output.
        const bool store = out && k + 1 == n;
        T* dst = store ? out + s : scratch.data() + k * kTile;
        reg[k] = dst;
        switch (i.kind) {
          case InstrKind::Input: load(views_[static_cast<std::size_t>(i.op)], s, len, dst, reg[k], filled, k, store); break;
          case InstrKind::Fill:
            if (store || !filled[k]) std::fill(dst, dst + (store ? len : kTile), static_cast<T>(i.s));
            filled[k] = true;
            break;
          case InstrKind::Unary: unary_span(static_cast<UnaryOp>(i.op), reg[i.a], dst, len); break;
          case InstrKind::Scalar: scalar_span(static_cast<ScalarOp>(i.op), i.s, reg[i.a], dst, len); break;
          case InstrKind::Binary: binary_span(static_cast<BinaryOp>(i.op), reg[i.a], reg[i.b], dst, len); break;
          case InstrKind::Where: {
            const T *c = reg[i.a], *x = reg[i.b], *y = reg[i.c];
            for (int64_t j = 0; j < len; ++j) dst[j] = c[j] != T(0) ? x[j] : y[j];
            break;
          }
          case InstrKind::MaskFill: {
            const T *x = reg[i.a], *m = reg[i.b];
            const T v = static_cast<T>(i.s);
            for (int64_t j = 0; j < len; ++j) dst[j] = m[j] != T(0) ? v : x[j];
            break;
          }
          case InstrKind::GeluBackward: gelu_backward_span(reg[i.a], reg[i.b], dst, len); break;
          case InstrKind::ReluBackward: relu_backward_span(reg[i.a], reg[i.b], dst, len); break;
          case InstrKind::Cast:  // Int and Bool inputs are loaded as T already (Cpu's cast: static_cast, 0 / 1)
          case InstrKind::Expand:  // every register is read at the output's positions already
            if (store) std::copy(reg[i.a], reg[i.a] + len, dst);
            else reg[k] = reg[i.a];
            break;
        }
      }
      if (sum) sum->add(reg[n - 1], s, len);
    }
  }

 private:
  const Program& p_;
  std::vector<InputView> views_;
  std::shared_ptr<const FusedJitKernel> jit_;  // the program as machine code (fused_jit.hpp), when it compiled

  // run() through the compiled program: per tile only the inputs are found (in place, or gathered / converted /
  // filled into their scratch register as the interpreter does), then one call evaluates every instruction in
  // vector registers and stores the result.
  void run_compiled(T* out, int64_t begin, int64_t end, SumState<T>* sum) const {
    const std::size_t n = p_.instrs.size();
    std::vector<T> scratch(n * kTile);
    std::vector<const T*> reg(n, nullptr);
    std::vector<bool> filled(n, false);
    std::vector<T> result(out ? 0 : kTile);  // a reduced tile's values, for the sum
    const FusedJitFn fn = jit_->fn();
    for (int64_t s = begin; s < end; s += kTile) {
      const int64_t len = std::min(kTile, end - s);
      for (std::size_t k = 0; k < n; ++k) {
        const fusion::Instr& i = p_.instrs[k];
        if (i.kind != InstrKind::Input) continue;
        T* dst = scratch.data() + k * kTile;
        reg[k] = dst;
        load(views_[static_cast<std::size_t>(i.op)], s, len, dst, reg[k], filled, k, false);
      }
      if constexpr (std::is_same_v<T, float>) {  // jit_ is only ever set for float
        if (sum && s < sum->full) {
          // Whole vectors (the tile is a whole one, below the last whole block): the compiled code adds them to the
          // lanes itself, in add_lanes' order.
          fn(reg.data(), nullptr, len, sum->acc);
          sum->block_end(s, len);
          continue;
        }
        T* dst = out ? out + s : result.data();
        fn(reg.data(), dst, len, nullptr);
        if (sum) sum->add(dst, s, len);
      }
    }
  }

  // The source offset of flat output position pos.
  static int64_t source_offset(const InputView& v, const Shape& out, int64_t pos) {
    int64_t off = 0;
    for (std::size_t d = out.rank(); d-- > 0;) {
      off += (pos % out.dims[d]) * v.strides[d];
      pos /= out.dims[d];
    }
    return off;
  }

  // A broadcast input whose positions [s, s + len) are one contiguous run of the source (a bias row under a tile
  // that does not cross the end of an output row): its start, read in place like a same-shape input instead of
  // copied into the register; null otherwise.
  template <class From>
  static const From* contiguous_run(const From* src, const InputView& v, const Shape& out, int64_t s, int64_t len) {
    const std::size_t r = out.rank();
    const int64_t last = out.dims[r - 1];
    if (v.strides[r - 1] != 1 || s % last + len > last) return nullptr;
    return src + source_offset(v, out, s);
  }

  template <class From>
  static void gather(const From* src, const InputView& v, const Shape& out, int64_t s, int64_t len, T* dst) {
    const std::size_t r = out.rank();
    const int64_t last = out.dims[r - 1];
    const int64_t st = v.strides[r - 1];
    int64_t pos = s;
    while (pos < s + len) {
      // The source offset of flat output position pos, then a run along the last dim.
      const int64_t off = source_offset(v, out, pos);
      const int64_t run = std::min(s + len - pos, last - pos % last);
      T* o = dst + (pos - s);
      if (st == 0) std::fill(o, o + run, static_cast<T>(src[off]));
      else if (st == 1) convert(src + off, o, run);
      else for (int64_t j = 0; j < run; ++j) o[j] = static_cast<T>(src[off + j * st]);
      pos += run;
    }
  }

  template <class From>
  void load_as(const From* src, const InputView& v, int64_t s, int64_t len, T* dst, const T*& reg,
               std::vector<bool>& filled, std::size_t k, bool last) const {
    // Read in place where the tile's source elements are one contiguous run already of type T (a same-shape
    // input, or a broadcast one under a tile within one of its runs), unless this instruction writes the output.
    if constexpr (std::is_same_v<From, T>) {
      if (!last && !v.constant) {
        if (const T* run = v.same ? src + s : contiguous_run(src, v, p_.shape, s, len)) {
          reg = run;
          return;
        }
      }
    }
    if (v.same) {
      convert(src + s, dst, len);
    } else if (v.constant) {
      if (last || !filled[k]) std::fill(dst, dst + (last ? len : kTile), static_cast<T>(src[0]));
      filled[k] = true;
    } else {
      gather(src, v, p_.shape, s, len, dst);
    }
  }

  void load(const InputView& v, int64_t s, int64_t len, T* dst, const T*& reg, std::vector<bool>& filled,
            std::size_t k, bool last) const {
    switch (v.kind) {
      case InputKind::Float: return load_as(static_cast<const T*>(v.data), v, s, len, dst, reg, filled, k, last);
      case InputKind::Int: return load_as(static_cast<const int64_t*>(v.data), v, s, len, dst, reg, filled, k, last);
      case InputKind::Bool: return load_as(static_cast<const uint8_t*>(v.data), v, s, len, dst, reg, filled, k, last);
    }
  }
};

}  // namespace

template <class T>
CpuTensor<T> fused_chain(const Program& p, const std::vector<const void*>& inputs) {
  if (p.instrs.empty() || p.out != static_cast<int32_t>(p.instrs.size() - 1))
    throw ArgumentError(fmt::format("fused_chain: the output must be the last of {} instructions", p.instrs.size()));
  const Chain<T> chain(p, inputs);
  if (p.reduce_all) {
    const ReduceOp op = *p.reduce_all;
    if (op != ReduceOp::Sum && op != ReduceOp::Mean)
      throw ArgumentError(fmt::format("fused_chain: no fused {} reduction", op_name(op)));
    const int64_t n = p.shape.num_elements();
    CpuTensor<T> r(Shape{1});
    // Whole blocks per thread; partial totals combined in double like the eager reduction's threads.
    const int64_t blocks = (n + kSumBlock - 1) / kSumBlock;
    std::vector<double> totals(static_cast<std::size_t>(blocks), 0.0);
    parallel_for(blocks, std::max<int64_t>(1, kParallelThreshold / kSumBlock), [&](int64_t b, int64_t e) {
      SumState<T> sum;
      sum.full = n / kSumBlock * kSumBlock;
      chain.run(nullptr, b * kSumBlock, std::min(n, e * kSumBlock), &sum);
      totals[static_cast<std::size_t>(b)] = sum.total;
    });
    double total = 0;
    for (double t : totals) total += t;
    if (op == ReduceOp::Mean) r.data()[0] = n == 0 ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(total / static_cast<double>(n));
    else r.data()[0] = static_cast<T>(total);
    return r;
  }
  CpuTensor<T> y(p.shape);
  const int64_t n = y.numel();
  if (n == 0) return y;
  T* out = y.data();
  // Whole tiles per thread; the grain keeps small chains on the calling thread like the eager ops.
  const int64_t tiles = (n + kTile - 1) / kTile;
  parallel_for(tiles, std::max<int64_t>(1, kParallelThreshold / kTile), [&](int64_t b, int64_t e) {
    chain.run(out, b * kTile, std::min(n, e * kTile));
  });
  return y;
}

template CpuTensor<float> fused_chain<float>(const Program&, const std::vector<const void*>&);
template CpuTensor<double> fused_chain<double>(const Program&, const std::vector<const void*>&);

}  // namespace ember::cpu
