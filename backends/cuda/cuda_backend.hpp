#pragma once
// Cuda: the NVIDIA GPU backend. Float tensors hold f32, Int int64_t and Bool uint8_t, like Cpu<float>, and every
// op produces the same values (int64 wrapping, truncating integer division, NaN-propagating max/min, ...). Each op
// is a thin forward to a host entry point in kernels.hpp, which queues device work on the device's stream
// (cuda_api.hpp) and returns without waiting; only into_data waits. This header is plain C++: CUDA types appear
// only in the .cu files and their private .cuh headers.
#include <memory>
#include <string>
#include <type_traits>

#include "backends/cuda/cuda_api.hpp"
#include "backends/cuda/attention.hpp"
#include "backends/cuda/fused_chain.hpp"  // issue 14: Fusion<Cuda>
#include "backends/cuda/kernels.hpp"
#include "engine/backend/backend.hpp"
#include "engine/backend/optional_ops.hpp"  // fusion::replay

namespace ember {

namespace compile_detail {
struct StepPlanParts;
class StepPlan;
}  // namespace compile_detail

struct Cuda {
  using Device = cuda::CudaDevice;
  using FloatElem = float;
  using IntElem = int64_t;
  using BoolElem = uint8_t;
  using FloatPrimitive = cuda::CudaTensor<float>;
  using IntPrimitive = cuda::CudaTensor<int64_t>;
  using BoolPrimitive = cuda::CudaTensor<uint8_t>;

  template <class K>
  using Elem = std::conditional_t<std::is_same_v<K, Float>, float,
                                  std::conditional_t<std::is_same_v<K, Int>, int64_t, uint8_t>>;
  template <class K>
  using Prim = cuda::CudaTensor<Elem<K>>;

  static const char* name() { return "cuda<f32>"; }

  template <class K>
  static constexpr DType dtype() {
    if constexpr (std::is_same_v<K, Float>) return DType::F32;
    else if constexpr (std::is_same_v<K, Int>) return DType::I64;
    else return DType::Bool;
  }

  // ---- kind-generic ----
  template <class K> static Prim<K> from_data(const TensorData& d, const Device& dev) {
    return cuda::from_data<Elem<K>>(d, dtype<K>(), dev.index);
  }
  template <class K> static TensorData into_data(const Prim<K>& x) { return cuda::into_data(x, dtype<K>()); }
  template <class K> static Shape shape(const Prim<K>& x) { return x.shape; }
  template <class K> static Device device(const Prim<K>& x) { return {x.device()}; }
  template <class K> static Prim<K> to_device(const Prim<K>& x, const Device& dev) {
    return cuda::to_device(x, dev.index);
  }
  // Float Bernoulli tensors (dropout's masks) made on the device from their counter-based words
  // (layout.cu's bernoulli_kernel; engine/tensor/host_random.hpp's HasBernoulliKernel): no host draw, no upload.
  static FloatPrimitive float_bernoulli(const Shape& s, uint64_t key, uint64_t threshold, double hit, const Device& dev) {
    return cuda::bernoulli(s, key, threshold, static_cast<float>(hit), dev.index);
  }
  template <class K> static Prim<K> full(const Shape& s, double v, const Device& dev) {
    return cuda::full<Elem<K>>(s, static_cast<Elem<K>>(v), dev.index);
  }
  template <class K> static Prim<K> reshape(const Prim<K>& x, const Shape& s) { return cuda::reshape(x, s); }
  template <class K> static Prim<K> permute(const Prim<K>& x, const std::vector<std::size_t>& a) {
    return cuda::permute(x, a);
  }
  template <class K> static Prim<K> expand(const Prim<K>& x, const Shape& s) { return cuda::expand(x, s); }
  template <class K> static Prim<K> slice(const Prim<K>& x, const std::vector<Range>& r) { return cuda::slice(x, r); }
  template <class K>
  static Prim<K> slice_assign(const Prim<K>& x, const std::vector<Range>& r, const Prim<K>& v) {
    return cuda::slice_assign(x, r, v);
  }
  template <class K> static Prim<K> cat(const std::vector<Prim<K>>& xs, std::size_t dim) {
    return cuda::cat(xs, dim);
  }
  template <class K> static Prim<K> flip(const Prim<K>& x, const std::vector<std::size_t>& d) {
    return cuda::flip(x, d);
  }
  template <class K> static Prim<K> gather(std::size_t dim, const Prim<K>& x, const IntPrimitive& i) {
    return cuda::gather(dim, x, i);
  }
  template <class K>
  static Prim<K> scatter_add(std::size_t dim, const Prim<K>& x, const IntPrimitive& i, const Prim<K>& v) {
    return cuda::scatter_add(dim, x, i, v);
  }
  template <class K> static Prim<K> index_select(const Prim<K>& x, std::size_t dim, const IntPrimitive& i) {
    return cuda::index_select(x, dim, i);
  }
  template <class K>
  static Prim<K> index_select_add(const Prim<K>& x, std::size_t dim, const IntPrimitive& i, const Prim<K>& v) {
    return cuda::index_select_add(x, dim, i, v);
  }
  template <class K> static Prim<K> where(const BoolPrimitive& c, const Prim<K>& a, const Prim<K>& b) {
    return cuda::where(c, a, b);
  }
  template <class K> static Prim<K> mask_fill(const Prim<K>& x, const BoolPrimitive& m, double v) {
    return cuda::mask_fill(x, m, static_cast<Elem<K>>(v));
  }
  template <class From, class To> static Prim<To> cast(const Prim<From>& x) {
    if constexpr (std::is_same_v<To, Bool> && !std::is_same_v<From, Bool>) {
      return cuda::compare_scalar(x, CompareOp::Ne, 0.0);
    } else {
      return cuda::cast<Elem<From>, Elem<To>>(x);
    }
  }
  static IntPrimitive int_arange(int64_t start, int64_t end, const Device& dev) {
    return cuda::arange(start, end, dev.index);
  }

  // ---- float ----
  static FloatPrimitive float_unary(const FloatPrimitive& x, UnaryOp op) { return cuda::unary(x, op); }
  // Optional op (engine/backend/optional_ops.hpp, HasFusedSdpa): flash attention (backends/cuda/attention.cu).
  static SdpaForward<FloatPrimitive> float_sdpa(const FloatPrimitive& q, const FloatPrimitive& k,
                                                const FloatPrimitive& v, const FloatPrimitive* bias,
                                                const SdpaOptions& o) {
    return cuda::sdpa_forward(q, k, v, bias, o);
  }
  static SdpaGrads<FloatPrimitive> float_sdpa_backward(const FloatPrimitive& q, const FloatPrimitive& k,
                                                       const FloatPrimitive& v, const FloatPrimitive* bias,
                                                       const FloatPrimitive& out, const FloatPrimitive& lse,
                                                       const FloatPrimitive& dout, const SdpaOptions& o) {
    return cuda::sdpa_backward(q, k, v, bias, out, lse, dout, o);
  }
  // Optional op (engine/backend/optional_ops.hpp): one fused Adam/AdamW update.
  static AdamStepResult<FloatPrimitive> float_adam_step(const FloatPrimitive& w, const FloatPrimitive& g,
                                                        const FloatPrimitive* m, const FloatPrimitive* v,
                                                        const AdamStepArgs& a) {
    return cuda::adam_step(w, g, m, v, a);
  }
  // Optional op (engine/backend/optional_ops.hpp, HasFusedChain): Fusion<Cuda>'s elementwise chains as one kernel
  // generated per chain structure and compiled by NVRTC (backends/cuda/fused_chain_cuda.cu); a chain it cannot
  // compile or launch as one kernel runs op by op. dev: for chains without inputs.
  static FloatPrimitive float_fused_chain(const fusion::Program& p, const std::vector<cuda::FusedOperand>& in,
                                          const Device& dev = {}) {
    int device = dev.index;
    if (!in.empty()) device = in[0].f ? in[0].f->device() : in[0].i ? in[0].i->device() : in[0].b->device();
    if (auto y = cuda::fused_chain(p, in, device)) return std::move(*y);
    return fusion::replay<Cuda>(p, in, Device{device});
  }
  // Optional op (engine/backend/optional_ops.hpp): a fused backward step of a unary op (nullopt: composed).
  static std::optional<FloatPrimitive> float_unary_backward(UnaryOp op, const FloatPrimitive& x,
                                                            const FloatPrimitive& y, const FloatPrimitive& g) {
    return cuda::unary_backward(op, x, y, g);
  }
  // ember::compile (engine/compile/step_plan.hpp): a captured training step captured once more into a CUDA graph
  // and replayed by one launch (backends/cuda/compiled_step_graph.cpp); null with `why` when declined.
  static std::unique_ptr<compile_detail::StepPlan> build_step_plan(compile_detail::StepPlanParts& parts,
                                                                   std::string& why);
  static FloatPrimitive float_scalar(const FloatPrimitive& x, ScalarOp op, double s) {
    return cuda::scalar(x, op, s);
  }
  static FloatPrimitive float_binary(const FloatPrimitive& a, const FloatPrimitive& b, BinaryOp op) {
    return cuda::binary(a, b, op);
  }
  static BoolPrimitive float_compare(const FloatPrimitive& a, const FloatPrimitive& b, CompareOp op) {
    return cuda::compare(a, b, op);
  }
  static BoolPrimitive float_compare_scalar(const FloatPrimitive& a, CompareOp op, double s) {
    return cuda::compare_scalar(a, op, s);
  }
  static BoolPrimitive float_predicate(const FloatPrimitive& x, PredicateOp op) { return cuda::predicate(x, op); }
  static FloatPrimitive float_reduce(const FloatPrimitive& x, ReduceOp op, std::size_t dim) {
    return cuda::reduce(x, op, dim);
  }
  static FloatPrimitive float_reduce_all(const FloatPrimitive& x, ReduceOp op) { return cuda::reduce_all(x, op); }
  static IntPrimitive float_arg_reduce(const FloatPrimitive& x, ArgReduceOp op, std::size_t dim) {
    return cuda::arg_reduce(x, op, dim);
  }
  static IntPrimitive float_argsort(const FloatPrimitive& x, std::size_t dim, bool descending) {
    return cuda::argsort(x, dim, descending);
  }
  static FloatPrimitive float_cumsum(const FloatPrimitive& x, std::size_t dim) { return cuda::cumsum(x, dim); }
  static FloatPrimitive float_matmul(const FloatPrimitive& a, const FloatPrimitive& b) { return cuda::matmul(a, b); }
  // Optional op (engine/backend/optional_ops.hpp), for matmul's backward: cuBLAS reads a transposed operand in place.
  static FloatPrimitive float_matmul_transposed(const FloatPrimitive& a, const FloatPrimitive& b, bool trans_a,
                                                bool trans_b) {
    return cuda::matmul(a, b, trans_a, trans_b);
  }
  static FloatPrimitive float_fft(const FloatPrimitive& x, FftOp op, int64_t n) { return cuda::fft(x, op, n); }

  // ---- int ----
  static IntPrimitive int_unary(const IntPrimitive& x, UnaryOp op) { return cuda::unary(x, op); }
  static IntPrimitive int_scalar(const IntPrimitive& x, ScalarOp op, double s) { return cuda::scalar(x, op, s); }
  static IntPrimitive int_binary(const IntPrimitive& a, const IntPrimitive& b, BinaryOp op) {
    return cuda::binary(a, b, op);
  }
  static BoolPrimitive int_compare(const IntPrimitive& a, const IntPrimitive& b, CompareOp op) {
    return cuda::compare(a, b, op);
  }
  static BoolPrimitive int_compare_scalar(const IntPrimitive& a, CompareOp op, double s) {
    return cuda::compare_scalar(a, op, s);
  }
  static IntPrimitive int_reduce(const IntPrimitive& x, ReduceOp op, std::size_t dim) {
    return cuda::reduce(x, op, dim);
  }
  static IntPrimitive int_reduce_all(const IntPrimitive& x, ReduceOp op) { return cuda::reduce_all(x, op); }
  static IntPrimitive int_arg_reduce(const IntPrimitive& x, ArgReduceOp op, std::size_t dim) {
    return cuda::arg_reduce(x, op, dim);
  }

  // ---- bool ----
  static BoolPrimitive bool_not(const BoolPrimitive& x) { return cuda::logical_not(x); }
  static BoolPrimitive bool_logic(const BoolPrimitive& a, const BoolPrimitive& b, LogicOp op) {
    return cuda::logic(a, b, op);
  }

  // ---- module ops ----
  static FloatPrimitive conv2d(const FloatPrimitive& x, const FloatPrimitive& w, const FloatPrimitive* bias,
                               const Conv2dOptions& o) {
    return cuda::conv2d(x, w, bias, o);
  }
  static Conv2dGrads<FloatPrimitive> conv2d_backward(const FloatPrimitive& x, const FloatPrimitive& w,
                                                     const FloatPrimitive& grad, bool has_bias,
                                                     const Conv2dOptions& o) {
    return cuda::conv2d_backward(x, w, grad, has_bias, o);
  }
  static MaxPoolResult<FloatPrimitive, IntPrimitive> max_pool2d(const FloatPrimitive& x, const Pool2dOptions& o) {
    return cuda::max_pool2d(x, o);
  }
  static FloatPrimitive max_pool2d_backward(const FloatPrimitive& x, const FloatPrimitive& grad,
                                            const IntPrimitive& indices) {
    return cuda::max_pool2d_backward(x, grad, indices);
  }
  static FloatPrimitive avg_pool2d(const FloatPrimitive& x, const Pool2dOptions& o) { return cuda::avg_pool2d(x, o); }
  static FloatPrimitive avg_pool2d_backward(const FloatPrimitive& x, const FloatPrimitive& grad,
                                            const Pool2dOptions& o) {
    return cuda::avg_pool2d_backward(x, grad, o);
  }
  static FloatPrimitive adaptive_avg_pool2d(const FloatPrimitive& x, std::array<int64_t, 2> out_hw) {
    return cuda::adaptive_avg_pool2d(x, out_hw);
  }
  static FloatPrimitive adaptive_avg_pool2d_backward(const FloatPrimitive& x, const FloatPrimitive& grad) {
    return cuda::adaptive_avg_pool2d_backward(x, grad);
  }
};

static_assert(Backend<Cuda>);

}  // namespace ember
