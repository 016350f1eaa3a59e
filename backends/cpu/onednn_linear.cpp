// The fused linear through oneDNN's matmul primitive (onednn_linear.hpp).
#include "backends/cpu/onednn_linear.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <dnnl.hpp>
#include <map>
#include <memory>
#include <unordered_map>

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
};

// m, k, n, trans_w, has_bias, relu.
using Key = std::array<int64_t, 6>;

// Per thread: a primitive is not to be executed by two threads at once with the same memory objects. Bounded: an
// application that feeds ever new batch sizes rebuilds rather than grows without limit.
constexpr std::size_t kMaxPlans = 64;

Plan* plan(const Key& key) {
  thread_local std::map<Key, std::unique_ptr<Plan>> plans;
  auto it = plans.find(key);
  if (it != plans.end()) return it->second.get();
  if (plans.size() >= kMaxPlans) plans.clear();
  const auto [m, k, n, trans_w, has_bias, relu] = key;
  const memory::desc sd({m, k}, kF32, Tag::ab);
  // [K, N] weights read from an [N, K] buffer are the "ba" layout: no copy.
  const memory::desc wd({k, n}, kF32, trans_w ? Tag::ba : Tag::ab);
  const memory::desc bd({1, n}, kF32, Tag::ab);
  const memory::desc dd({m, n}, kF32, Tag::ab);
  dnnl::primitive_attr attr;
  if (relu) {
    dnnl::post_ops po;
    po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(po);
  }
  auto p = std::make_unique<Plan>();
  try {
    const dnnl::matmul::primitive_desc pd(has_bias ? dnnl::matmul::desc(sd, wd, bd, dd) : dnnl::matmul::desc(sd, wd, dd),
                                          attr, engine());
    p->prim = dnnl::matmul(pd);
  } catch (const dnnl::error&) {
    return nullptr;  // no kernel for this problem: the caller's GEMM runs
  }
  p->stream = dnnl::stream(engine());
  p->src = memory(sd, engine(), DNNL_MEMORY_NONE);
  p->wei = memory(wd, engine(), DNNL_MEMORY_NONE);
  p->bias = memory(bd, engine(), DNNL_MEMORY_NONE);
  p->dst = memory(dd, engine(), DNNL_MEMORY_NONE);
  return plans.emplace(key, std::move(p)).first->second.get();
}

// Rows [lo, hi) of the product on the calling thread, oneDNN held to one OpenMP thread (its OpenMP team measured
// far slower than Ember's pool on this shared VM: onednn_conv.cpp's over_batch).
bool run_rows(int64_t lo, int64_t hi, int64_t k, int64_t n, const float* x, const float* w, const float* bias,
              float* y, bool trans_w, bool relu) {
  Plan* p = plan({hi - lo, k, n, trans_w ? 1 : 0, bias ? 1 : 0, relu ? 1 : 0});
  if (!p) return false;
  p->src.set_data_handle(const_cast<float*>(x + lo * k));
  p->wei.set_data_handle(const_cast<float*>(w));
  p->dst.set_data_handle(y + lo * n);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, p->src}, {DNNL_ARG_WEIGHTS, p->wei}, {DNNL_ARG_DST, p->dst}};
  if (bias) {
    p->bias.set_data_handle(const_cast<float*>(bias));
    args.emplace(DNNL_ARG_BIAS, p->bias);
  }
  const int before = omp_get_max_threads();
  if (before != 1) omp_set_num_threads(1);
  p->prim.execute(p->stream, args);
  p->stream.wait();
  if (before != 1) omp_set_num_threads(before);
  return true;
}

// Where oneDNN measured faster than OpenBLAS (bench/README.md): one row is a GEMV, which OpenBLAS does in about a
// third of oneDNN's time, and below 64 output columns (the 10 logits) sgemm's small-matrix kernel wins.
bool worth_it(int64_t m, int64_t k, int64_t n) { return m >= 8 && n >= 64 && k >= 8; }

}  // namespace

std::optional<CpuTensor<float>> linear(const CpuTensor<float>& x, const CpuTensor<float>& w,
                                       const CpuTensor<float>* bias, bool trans_w, bool relu) {
  const int64_t m = x.shape[0], k = x.shape[1], n = trans_w ? w.shape[0] : w.shape[1];
  if (!enabled() || !worth_it(m, k, n)) return std::nullopt;
  CpuTensor<float> y(Shape{m, n});
  const float* px = x.data();
  const float* pw = w.data();
  const float* pb = bias ? bias->data() : nullptr;
  float* py = y.data();
  // Rows split over Ember's pool when the product is large enough to pay a fork (each slice its own plan).
  const int64_t parts = m * n * k >= (int64_t{1} << 21) ? std::min<int64_t>(num_threads(), m / 8) : 1;
  bool ok = true;
  if (parts <= 1) {
    ok = run_rows(0, m, k, n, px, pw, pb, py, trans_w, relu);
  } else {
    std::atomic<bool> all{true};
    parallel_for(m, (m + parts - 1) / parts, [&](int64_t lo, int64_t hi) {
      if (!run_rows(lo, hi, k, n, px, pw, pb, py, trans_w, relu)) all = false;
    });
    ok = all;
  }
  if (!ok) return std::nullopt;
  return y;
}

}  // namespace ember::cpu::onednn
