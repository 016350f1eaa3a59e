#pragma once
// Vulkan: the Vulkan compute backend (f32 Float, int64 Int, Bool as 32-bit words). Every op records GPU work on
// its tensors' context (context.hpp) and returns at once; the host waits only in into_data. Ops are in
// kernels.hpp, one file per family; this header maps the Backend interface onto them.
#include <memory>
#include <string>
#include <type_traits>

#include "backends/vulkan/attention.hpp"
#include "backends/vulkan/fused_chain.hpp"  // issue 14 (h-fusvk)
#include "backends/vulkan/kernels.hpp"
#include "engine/backend/backend.hpp"

namespace ember {

namespace compile_detail {
struct StepPlanParts;
class StepPlan;
}  // namespace compile_detail

struct Vulkan {
  using Device = VulkanDevice;
  using FloatElem = float;
  using IntElem = int64_t;
  using BoolElem = uint32_t;
  using FloatPrimitive = vk::VulkanTensor<float>;
  using IntPrimitive = vk::VulkanTensor<int64_t>;
  using BoolPrimitive = vk::VulkanTensor<uint32_t>;

  template <class K>
  using Elem = std::conditional_t<std::is_same_v<K, Float>, float,
                                  std::conditional_t<std::is_same_v<K, Int>, int64_t, uint32_t>>;
  template <class K>
  using Prim = vk::VulkanTensor<Elem<K>>;

  static const char* name() { return "vulkan<f32>"; }

  template <class K>
  static constexpr DType dtype() {
    if constexpr (std::is_same_v<K, Float>) return DType::F32;
    else if constexpr (std::is_same_v<K, Int>) return DType::I64;
    else return DType::Bool;
  }

  // ---- kind-generic ----
  template <class K> static Prim<K> from_data(const TensorData& d, const Device& dev) {
    return vk::from_data<Elem<K>>(d, dev.get());
  }
  template <class K> static TensorData into_data(const Prim<K>& x) { return vk::into_data(x, dtype<K>()); }
  template <class K> static Shape shape(const Prim<K>& x) { return x.shape; }
  template <class K> static Device device(const Prim<K>& x) { return Device{x.ctx}; }
  template <class K> static Prim<K> to_device(const Prim<K>& x, const Device& d) {
    return vk::to_context(x, d.get());
  }
  template <class K> static Prim<K> full(const Shape& s, double v, const Device& dev) {
    return vk::full<Elem<K>>(dev.get(), s, v);
  }
  // Float Bernoulli tensors (dropout's masks) made on the device from their counter-based words
  // (shaders/bernoulli.comp; engine/tensor/host_random.hpp's HasBernoulliKernel): no host draw, no upload.
  static FloatPrimitive float_bernoulli(const Shape& s, uint64_t key, uint64_t threshold, double hit, const Device& dev) {
    return vk::bernoulli(dev.get(), s, key, threshold, static_cast<float>(hit));
  }
  template <class K> static Prim<K> reshape(const Prim<K>& x, const Shape& s) { return vk::reshape(x, s); }
  template <class K> static Prim<K> permute(const Prim<K>& x, const std::vector<std::size_t>& a) {
    return vk::permute(x, a);
  }
  template <class K> static Prim<K> expand(const Prim<K>& x, const Shape& s) { return vk::expand(x, s); }
  template <class K> static Prim<K> slice(const Prim<K>& x, const std::vector<Range>& r) { return vk::slice(x, r); }
  template <class K>
  static Prim<K> slice_assign(const Prim<K>& x, const std::vector<Range>& r, const Prim<K>& v) {
    return vk::slice_assign(x, r, v);
  }
  template <class K> static Prim<K> cat(const std::vector<Prim<K>>& xs, std::size_t dim) { return vk::cat(xs, dim); }
  template <class K> static Prim<K> flip(const Prim<K>& x, const std::vector<std::size_t>& d) {
    return vk::flip(x, d);
  }
  template <class K> static Prim<K> gather(std::size_t dim, const Prim<K>& x, const IntPrimitive& i) {
    return vk::gather(dim, x, i);
  }
  template <class K>
  static Prim<K> scatter_add(std::size_t dim, const Prim<K>& x, const IntPrimitive& i, const Prim<K>& v) {
    return vk::scatter_add(dim, x, i, v);
  }
  template <class K> static Prim<K> index_select(const Prim<K>& x, std::size_t dim, const IntPrimitive& i) {
    return vk::index_select(x, dim, i);
  }
  template <class K>
  static Prim<K> index_select_add(const Prim<K>& x, std::size_t dim, const IntPrimitive& i, const Prim<K>& v) {
    return vk::index_select_add(x, dim, i, v);
  }
  template <class K> static Prim<K> where(const BoolPrimitive& c, const Prim<K>& a, const Prim<K>& b) {
    return vk::where(c, a, b);
  }
  template <class K> static Prim<K> mask_fill(const Prim<K>& x, const BoolPrimitive& m, double v) {
    return vk::mask_fill(x, m, v);
  }
  template <class From, class To> static Prim<To> cast(const Prim<From>& x) {
    return vk::cast<Elem<From>, Elem<To>>(x);
  }
  static IntPrimitive int_arange(int64_t start, int64_t end, const Device& dev) {
    return vk::arange(dev.get(), start, end);
  }

  // ---- float ----
  static FloatPrimitive float_unary(const FloatPrimitive& x, UnaryOp op) { return vk::unary(x, op); }
  static FloatPrimitive float_scalar(const FloatPrimitive& x, ScalarOp op, double s) { return vk::scalar(x, op, s); }
  static FloatPrimitive float_binary(const FloatPrimitive& a, const FloatPrimitive& b, BinaryOp op) {
    return vk::binary(a, b, op);
  }
  static BoolPrimitive float_compare(const FloatPrimitive& a, const FloatPrimitive& b, CompareOp op) {
    return vk::compare(a, b, op);
  }
  static BoolPrimitive float_compare_scalar(const FloatPrimitive& a, CompareOp op, double s) {
    return vk::compare_scalar(a, op, s);
  }
  static BoolPrimitive float_predicate(const FloatPrimitive& x, PredicateOp op) { return vk::predicate(x, op); }
  static FloatPrimitive float_reduce(const FloatPrimitive& x, ReduceOp op, std::size_t dim) {
    return vk::reduce(x, op, dim);
  }
  static FloatPrimitive float_reduce_all(const FloatPrimitive& x, ReduceOp op) { return vk::reduce_all(x, op); }
  static IntPrimitive float_arg_reduce(const FloatPrimitive& x, ArgReduceOp op, std::size_t dim) {
    return vk::arg_reduce(x, op, dim);
  }
  static IntPrimitive float_argsort(const FloatPrimitive& x, std::size_t dim, bool descending) {
    return vk::argsort(x, dim, descending);
  }
  static FloatPrimitive float_cumsum(const FloatPrimitive& x, std::size_t dim) { return vk::cumsum(x, dim); }
  static FloatPrimitive float_matmul(const FloatPrimitive& a, const FloatPrimitive& b) { return vk::matmul(a, b); }
  // Optional op (engine/backend/optional_ops.hpp), for matmul's backward: the GEMM reads transposed operands in
  // place.
  static FloatPrimitive float_matmul_transposed(const FloatPrimitive& a, const FloatPrimitive& b, bool trans_a,
                                                bool trans_b) {
    return vk::matmul(a, b, trans_a, trans_b);
  }
  static FloatPrimitive float_fft(const FloatPrimitive& x, FftOp op, int64_t n) { return vk::fft(x, op, n); }

  // ---- int ----
  static IntPrimitive int_unary(const IntPrimitive& x, UnaryOp op) { return vk::unary(x, op); }
  static IntPrimitive int_scalar(const IntPrimitive& x, ScalarOp op, double s) { return vk::scalar(x, op, s); }
  static IntPrimitive int_binary(const IntPrimitive& a, const IntPrimitive& b, BinaryOp op) {
    return vk::binary(a, b, op);
  }
  static BoolPrimitive int_compare(const IntPrimitive& a, const IntPrimitive& b, CompareOp op) {
    return vk::compare(a, b, op);
  }
  static BoolPrimitive int_compare_scalar(const IntPrimitive& a, CompareOp op, double s) {
    return vk::compare_scalar(a, op, s);
  }
  static IntPrimitive int_reduce(const IntPrimitive& x, ReduceOp op, std::size_t dim) {
    return vk::reduce(x, op, dim);
  }
  static IntPrimitive int_reduce_all(const IntPrimitive& x, ReduceOp op) { return vk::reduce_all(x, op); }
  static IntPrimitive int_arg_reduce(const IntPrimitive& x, ArgReduceOp op, std::size_t dim) {
    return vk::arg_reduce(x, op, dim);
  }

  // ---- bool ----
  static BoolPrimitive bool_not(const BoolPrimitive& x) { return vk::logical_not(x); }
  static BoolPrimitive bool_logic(const BoolPrimitive& a, const BoolPrimitive& b, LogicOp op) {
    return vk::logic(a, b, op);
  }

  // Optional op (engine/backend/optional_ops.hpp, HasFusedSdpa): flash attention (backends/vulkan/attention.cpp).
  static SdpaForward<FloatPrimitive> float_sdpa(const FloatPrimitive& q, const FloatPrimitive& k,
                                                const FloatPrimitive& v, const FloatPrimitive* bias,
                                                const SdpaOptions& o) {
    return vk::sdpa_forward(q, k, v, bias, o);
  }
  static SdpaGrads<FloatPrimitive> float_sdpa_backward(const FloatPrimitive& q, const FloatPrimitive& k,
                                                       const FloatPrimitive& v, const FloatPrimitive* bias,
                                                       const FloatPrimitive& out, const FloatPrimitive& lse,
                                                       const FloatPrimitive& dout, const SdpaOptions& o) {
    return vk::sdpa_backward(q, k, v, bias, out, lse, dout, o);
  }

  // Optional op (engine/backend/optional_ops.hpp, HasFusedChain): Fusion<Vulkan>'s elementwise chains as one
  // shader generated per chain and cached (backends/vulkan/fused_chain.cpp). dev: for chains without inputs.
  static FloatPrimitive float_fused_chain(const fusion::Program& p, const std::vector<vk::FusedOperand>& in,
                                          const Device& dev = {}) {
    return vk::fused_chain(p, in, dev.get());
  }

  // Optional op (engine/backend/optional_ops.hpp, HasFusedAdamStep): one dispatch per param instead of ~12, and
  // the update a compiled training step can replay from a plan with its per-step scalars rewritten
  // (backends/vulkan/compiled_step_plan.cpp).
  static AdamStepResult<FloatPrimitive> float_adam_step(const FloatPrimitive& w, const FloatPrimitive& g,
                                                        const FloatPrimitive* m, const FloatPrimitive* v,
                                                        const AdamStepArgs& a) {
    return vk::adam_step(w, g, m, v, a);
  }

  // ember::compile (engine/compile/step_plan.hpp): a captured training step recorded once into a vk::Plan and
  // replayed as one command buffer (backends/vulkan/compiled_step_plan.cpp); null with `why` when declined.
  static std::unique_ptr<compile_detail::StepPlan> build_step_plan(compile_detail::StepPlanParts& parts,
                                                                   std::string& why);

  // ---- module ops ----
  static FloatPrimitive conv2d(const FloatPrimitive& x, const FloatPrimitive& w, const FloatPrimitive* bias,
                               const Conv2dOptions& o) {
    return vk::conv2d(x, w, bias, o);
  }
  static Conv2dGrads<FloatPrimitive> conv2d_backward(const FloatPrimitive& x, const FloatPrimitive& w,
                                                     const FloatPrimitive& grad, bool has_bias,
                                                     const Conv2dOptions& o) {
    return vk::conv2d_backward(x, w, grad, has_bias, o);
  }
  static MaxPoolResult<FloatPrimitive, IntPrimitive> max_pool2d(const FloatPrimitive& x, const Pool2dOptions& o) {
    return vk::max_pool2d(x, o);
  }
  static FloatPrimitive max_pool2d_backward(const FloatPrimitive& x, const FloatPrimitive& grad,
                                            const IntPrimitive& indices) {
    return vk::max_pool2d_backward(x, grad, indices);
  }
  static FloatPrimitive avg_pool2d(const FloatPrimitive& x, const Pool2dOptions& o) { return vk::avg_pool2d(x, o); }
  static FloatPrimitive avg_pool2d_backward(const FloatPrimitive& x, const FloatPrimitive& grad,
                                            const Pool2dOptions& o) {
    return vk::avg_pool2d_backward(x, grad, o);
  }
  static FloatPrimitive adaptive_avg_pool2d(const FloatPrimitive& x, std::array<int64_t, 2> out_hw) {
    return vk::adaptive_avg_pool2d(x, out_hw);
  }
  static FloatPrimitive adaptive_avg_pool2d_backward(const FloatPrimitive& x, const FloatPrimitive& grad) {
    return vk::adaptive_avg_pool2d_backward(x, grad);
  }
};

static_assert(Backend<Vulkan>);

}  // namespace ember
