// The fused linear through oneDNN's matmul primitive (onednn_linear.hpp).
#include "backends/cpu/onednn_linear.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <dnnl.hpp>
#include <map>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <unordered_map>

#include "backends/cpu/blas_route.hpp"
#include "backends/cpu/onednn.hpp"
#include "backends/cpu/parallel.hpp"

namespace ember::cpu::onednn {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// One problem's primitive and the memory objects it runs on. The memory objects are made once and re-pointed at
// each call's buffers (set_data_handle): making them per call cost ~1 us each, a tenth of a [64 x 64 x 256] GEMM.
struct Plan {
  dnnl::matmul prim;
  dnnl::stream stream;
  memory src, wei, bias, dst;
  // The execute arguments, made once: memory objects are handles, so re-pointing them above re-points these (a map
  // built per call cost 3-4 allocations of each of the ~6 products of an MLP training step).
  std::unordered_map<int, memory> args;
};

// One product C [m, n] = op(A) [m, k] @ op(B) [k, n] (+ bias, ReLU) with A's and B's leading dims: the memory
// descriptors take strides, so a transposed operand is read in place ({1, ld} instead of {ld, 1}).
struct Problem {
  int64_t m, k, n;
  bool trans_a, trans_b;
  int64_t lda, ldb;
  bool has_bias, relu;
};

using Key = std::array<int64_t, 9>;
Key key_of(const Problem& p) {
  return {p.m, p.k, p.n, p.trans_a, p.trans_b, p.lda, p.ldb, p.has_bias, p.relu};
}

// Per thread: a primitive is not to be executed by two threads at once with the same memory objects. Bounded: an
// application that feeds ever new batch sizes rebuilds rather than grows without limit.
constexpr std::size_t kMaxPlans = 64;

Plan* plan(const Problem& q) {
  thread_local std::map<Key, std::unique_ptr<Plan>> plans;
  const Key key = key_of(q);
  auto it = plans.find(key);
  if (it != plans.end()) return it->second.get();
  if (plans.size() >= kMaxPlans) plans.clear();
  const memory::desc sd({q.m, q.k}, kF32, q.trans_a ? memory::dims{1, q.lda} : memory::dims{q.lda, 1});
  const memory::desc wd({q.k, q.n}, kF32, q.trans_b ? memory::dims{1, q.ldb} : memory::dims{q.ldb, 1});
  const memory::desc bd({1, q.n}, kF32, Tag::ab);
  const memory::desc dd({q.m, q.n}, kF32, Tag::ab);
  dnnl::primitive_attr attr;
  if (q.relu) {
    dnnl::post_ops po;
    po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(po);
  }
  auto p = std::make_unique<Plan>();
  try {
    const dnnl::matmul::primitive_desc pd(
        q.has_bias ? dnnl::matmul::desc(sd, wd, bd, dd) : dnnl::matmul::desc(sd, wd, dd), attr, engine());
    // Only a JIT kernel beats OpenBLAS: a reference ("ref:...") implementation for some layout would be far slower.
    if (std::string_view(pd.impl_info_str()).find("ref") != std::string_view::npos)
      throw dnnl::error(dnnl_unimplemented, "a reference kernel");
    p->prim = dnnl::matmul(pd);
  } catch (const dnnl::error&) {
    // No fast kernel for this problem: remembered as such (made once), and the caller's GEMM runs.
    return plans.emplace(key, nullptr).first->second.get();
  }
  p->stream = dnnl::stream(engine());
  p->src = memory(sd, engine(), DNNL_MEMORY_NONE);
  p->wei = memory(wd, engine(), DNNL_MEMORY_NONE);
  p->bias = memory(bd, engine(), DNNL_MEMORY_NONE);
  p->dst = memory(dd, engine(), DNNL_MEMORY_NONE);
  p->args = {{DNNL_ARG_SRC, p->src}, {DNNL_ARG_WEIGHTS, p->wei}, {DNNL_ARG_DST, p->dst}};
  if (q.has_bias) p->args.emplace(DNNL_ARG_BIAS, p->bias);
  return plans.emplace(key, std::move(p)).first->second.get();
}

// The product on the calling thread, oneDNN held to one OpenMP thread (its OpenMP team measured far slower than
// Ember's pool on this shared VM: onednn_conv.cpp's over_batch).
bool run(const Problem& q, const float* a, const float* b, const float* bias, float* c) {
  Plan* p = plan(q);
  if (!p) return false;
  p->src.set_data_handle(const_cast<float*>(a));
  p->wei.set_data_handle(const_cast<float*>(b));
  p->dst.set_data_handle(c);
  if (bias) p->bias.set_data_handle(const_cast<float*>(bias));  // the plan has a bias argument iff the problem has
  const int before = omp_get_max_threads();
  if (before != 1) omp_set_num_threads(1);
  p->prim.execute(p->stream, p->args);
  p->stream.wait();
  if (before != 1) omp_set_num_threads(before);
  return true;
}

// Where oneDNN measured faster than OpenBLAS (bench/README.md): one row is a GEMV, which OpenBLAS does in about a
// third of oneDNN's time, and below 64 output columns (the 10 logits) sgemm's small-matrix kernel wins. Up to
// 2^28 multiply-adds oneDNN's brgemm kernel ran 0.83-0.99 of OpenBLAS 0.3.21's time (384^3, 512^3, 512x1024x512,
// 2048x256x256, 64x4096x512, 1 thread); from 768^3 up OpenBLAS was as fast or faster (768^3 1.04-1.07, 2048^3
// 1.10), so the large squares stay on OpenBLAS (bench/README.md, "GEMM routing (h-gemm)").
// Where OpenBLAS's kernels lag the CPU (blas_route.hpp), a narrow product would run dnnl_sgemm instead of that
// small-matrix kernel, and the matmul primitive beats it with A read in rows (1 thread, 2026-11-29, Emerald Rapids):
// [256x256]@[256x10] 13.4 us against 15.7, [64x256]@[256x10] 3.7 against 4.2, and as a linear layer with its bias
// 13.7 us against 19 (the primitive adds the bias in its output pass). Read transposed (a weight gradient, X^T dY)
// dnnl_sgemm stays faster: [256x64]^T@[64x10] 4.9 us against 6.2.
constexpr int64_t kMaxOneDnnMacs = int64_t{1} << 28;
bool worth_it(int64_t m, int64_t k, int64_t n, bool trans_a) {
  const bool narrow_ok = !trans_a && blas::sgemm_route() == blas::Sgemm::OneDnn;
  return m >= 8 && n >= (narrow_ok ? 8 : 64) && k >= 8 && m * n * k <= kMaxOneDnnMacs;
}

// A fork pays from 2^19 multiply-adds: on 2 threads the [256x256]@[256x10] logits took 9-11 us against 13.7 on one
// (the pool's fork and join cost ~1.2 us; 2026-11-29).
constexpr int64_t kForkMacs = int64_t{1} << 19;
// ... and when each part keeps 64 rows or more. Every part packs all of B, and in a training step B is a weight
// Adam has just rewritten, so the second core reads it from the first's cache: in isolation a batch-64
// [64x64]@[64x256] + bias split in two took 9.1 us against 13.6, but the digits MLP's batch-64 epoch on 2 threads
// ran 7.44-8.98 ms with 32-row parts against 7.20-7.28 without the split (1 thread: 7.41; 2026-11-29).
constexpr int64_t kMinRowsPerPart = 64;

// C = op(A) op(B) (+ bias, ReLU) with the rows split over Ember's pool when the product is large enough to pay a
// fork (each slice its own plan); A's rows are contiguous slices only when A is not transposed.
bool product(Problem q, const float* a, const float* b, const float* bias, float* c) {
  const int64_t parts =
      !q.trans_a && q.m * q.n * q.k >= kForkMacs ? std::min<int64_t>(num_threads(), q.m / kMinRowsPerPart) : 1;
  if (parts <= 1) return run(q, a, b, bias, c);
  std::atomic<bool> all{true};
  const int64_t m = q.m;
  parallel_for(m, (m + parts - 1) / parts, [&](int64_t lo, int64_t hi) {
    Problem slice = q;
    slice.m = hi - lo;
    if (!run(slice, a + lo * q.lda, b, bias, c + lo * q.n)) all = false;
  });
  return all;
}

// One block of sgemm's product on the calling thread, oneDNN on one OpenMP thread as in run().
bool sgemm_block(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                 const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const int before = omp_get_max_threads();
  if (before != 1) omp_set_num_threads(1);
  const dnnl_status_t s =
      dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (before != 1) omp_set_num_threads(before);
  return s == dnnl_success;
}

}  // namespace

bool sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (!enabled()) return false;
  // A fork pays from 2^21 multiply-adds here (at 2^18 the MLP's 2-thread step moved within noise). Rows split when
  // each part keeps 8 or more (A's rows are columns of its storage when transposed), else columns when each keeps 64
  // or more, else one block.
  const int64_t threads = m * n * k >= (int64_t{1} << 21) ? num_threads() : 1;
  const bool by_rows = threads > 1 && m >= 8 * threads;
  const bool by_cols = !by_rows && threads > 1 && n >= 64 * threads;
  if (!by_rows && !by_cols) return sgemm_block(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  std::atomic<bool> all{true};
  const int64_t extent = by_rows ? m : n;
  parallel_for(extent, (extent + threads - 1) / threads, [&](int64_t lo, int64_t hi) {
    const bool ok =
        by_rows ? sgemm_block(trans_a, trans_b, hi - lo, n, k, alpha, trans_a ? a + lo : a + lo * lda, lda, b, ldb,
                              beta, c + lo * ldc, ldc)
                : sgemm_block(trans_a, trans_b, m, hi - lo, k, alpha, a, lda, trans_b ? b + lo * ldb : b + lo, ldb,
                              beta, c + lo, ldc);
    if (!ok) all = false;
  });
  // Only invalid arguments make oneDNN refuse, and the callers' are valid: a refused block after others wrote
  // C + beta C could not be redone from C.
  if (!all && beta != 0.0f) throw std::logic_error("oneDNN's sgemm refused a block of a product");
  return all;
}

std::optional<CpuTensor<float>> linear(const CpuTensor<float>& x, const CpuTensor<float>& w,
                                       const CpuTensor<float>* bias, bool trans_w, bool relu) {
  const int64_t m = x.shape[0], k = x.shape[1], n = trans_w ? w.shape[0] : w.shape[1];
  if (!enabled() || !worth_it(m, k, n, false)) return std::nullopt;
  CpuTensor<float> y(Shape{m, n});
  const Problem q{m, k, n, false, trans_w, k, trans_w ? k : n, bias != nullptr, relu};
  if (!product(q, x.data(), w.data(), bias ? bias->data() : nullptr, y.data())) return std::nullopt;
  return y;
}

bool gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
          int64_t ldb, float* c) {
  if (!enabled() || !worth_it(m, k, n, trans_a)) return false;
  return product(Problem{m, k, n, trans_a, trans_b, lda, ldb, false, false}, a, b, nullptr, c);
}

}  // namespace ember::cpu::onednn
