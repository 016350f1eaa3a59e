#pragma once
// Cpu<E>: the embedded default backend. E is the float element (float or double); Int tensors hold int64_t and
// Bool tensors uint8_t. Every op is a thin forward to a kernel in kernels.hpp.
#include <optional>
#include <type_traits>

#include "backends/cpu/attention.hpp"
#include "backends/cpu/attention_geometry.hpp"
#include "backends/cpu/cross_entropy.hpp"
#include "backends/cpu/layer_norm.hpp"
#include "backends/cpu/linear.hpp"
#include "backends/cpu/kernels.hpp"
#include "backends/cpu/parallel.hpp"
#include "engine/backend/backend.hpp"
#include "engine/backend/linear_types.hpp"
#include "engine/fusion/operand.hpp"

namespace ember {

template <class E>
struct Cpu {
  static_assert(std::is_same_v<E, float> || std::is_same_v<E, double>, "Cpu<E>: E is float or double");
  using Device = cpu::CpuDevice;
  using FloatElem = E;
  using IntElem = int64_t;
  using BoolElem = uint8_t;
  using FloatPrimitive = cpu::CpuTensor<E>;
  using IntPrimitive = cpu::CpuTensor<int64_t>;
  using BoolPrimitive = cpu::CpuTensor<uint8_t>;

  template <class K>
  using Elem = std::conditional_t<std::is_same_v<K, Float>, E,
                                  std::conditional_t<std::is_same_v<K, Int>, int64_t, uint8_t>>;
  template <class K>
  using Prim = cpu::CpuTensor<Elem<K>>;

  static const char* name() { return std::is_same_v<E, float> ? "cpu<f32>" : "cpu<f64>"; }

  template <class K>
  static constexpr DType dtype() {
    if constexpr (std::is_same_v<K, Float>) return dtype_of<E>();
    else if constexpr (std::is_same_v<K, Int>) return DType::I64;
    else return DType::Bool;
  }

  // ---- kind-generic ----
  template <class K> static Prim<K> from_data(const TensorData& d, const Device&) {
    return cpu::from_data<Elem<K>>(d, dtype<K>());
  }
  template <class K> static TensorData into_data(const Prim<K>& x) { return cpu::into_data(x, dtype<K>()); }
  template <class K> static Shape shape(const Prim<K>& x) { return x.shape; }
  template <class K> static Device device(const Prim<K>&) { return {}; }
  template <class K> static Prim<K> to_device(const Prim<K>& x, const Device&) { return x; }
  template <class K> static Prim<K> full(const Shape& s, double v, const Device&) {
    return cpu::full<Elem<K>>(s, static_cast<Elem<K>>(v));
  }
  // Float Bernoulli tensors (dropout's masks) computed in place from their counter-based words (random.cpp,
  // engine/tensor/host_random.hpp's HasBernoulliKernel).
  static FloatPrimitive float_bernoulli(const Shape& s, uint64_t key, uint64_t threshold, double hit, const Device&) {
    return cpu::bernoulli<E>(s, key, threshold, static_cast<E>(hit));
  }
  template <class K> static Prim<K> reshape(const Prim<K>& x, const Shape& s) { return cpu::reshape(x, s); }
  template <class K> static Prim<K> permute(const Prim<K>& x, const std::vector<std::size_t>& a) {
    return cpu::permute(x, a);
  }
  template <class K> static Prim<K> expand(const Prim<K>& x, const Shape& s) { return cpu::expand(x, s); }
  template <class K> static Prim<K> slice(const Prim<K>& x, const std::vector<Range>& r) { return cpu::slice(x, r); }
  // Optional op (engine/backend/optional_ops.hpp, HasSelect): x[index] in one step, a view of x's storage where
  // slice + reshape make two tensors (issue 11's x[i] from C and Python).
  template <class K> static Prim<K> select(const Prim<K>& x, std::size_t dim, int64_t index, Shape to) {
    return cpu::select(x, dim, index, std::move(to));
  }
  template <class K>
  static Prim<K> slice_assign(const Prim<K>& x, const std::vector<Range>& r, const Prim<K>& v) {
    return cpu::slice_assign(x, r, v);
  }
  template <class K> static Prim<K> cat(const std::vector<Prim<K>>& xs, std::size_t dim) { return cpu::cat(xs, dim); }
  template <class K> static Prim<K> flip(const Prim<K>& x, const std::vector<std::size_t>& d) {
    return cpu::flip(x, d);
  }
  template <class K> static Prim<K> gather(std::size_t dim, const Prim<K>& x, const IntPrimitive& i) {
    return cpu::gather(dim, x, i);
  }
  template <class K>
  static Prim<K> scatter_add(std::size_t dim, const Prim<K>& x, const IntPrimitive& i, const Prim<K>& v) {
    return cpu::scatter_add(dim, x, i, v);
  }
  template <class K> static Prim<K> index_select(const Prim<K>& x, std::size_t dim, const IntPrimitive& i) {
    return cpu::index_select(x, dim, i);
  }
  template <class K>
  static Prim<K> index_select_add(const Prim<K>& x, std::size_t dim, const IntPrimitive& i, const Prim<K>& v) {
    return cpu::index_select_add(x, dim, i, v);
  }
  template <class K> static Prim<K> where(const BoolPrimitive& c, const Prim<K>& a, const Prim<K>& b) {
    return cpu::where(c, a, b);
  }
  template <class K> static Prim<K> mask_fill(const Prim<K>& x, const BoolPrimitive& m, double v) {
    return cpu::mask_fill(x, m, static_cast<Elem<K>>(v));
  }
  template <class From, class To> static Prim<To> cast(const Prim<From>& x) {
    if constexpr (std::is_same_v<To, Bool> && !std::is_same_v<From, Bool>) {
      return cpu::compare_scalar(x, CompareOp::Ne, 0.0);
    } else {
      return cpu::cast<Elem<From>, Elem<To>>(x);
    }
  }
  static IntPrimitive int_arange(int64_t start, int64_t end, const Device&) { return cpu::arange(start, end); }

  // ---- float ----
  static FloatPrimitive float_unary(const FloatPrimitive& x, UnaryOp op) { return cpu::unary(x, op); }
  // Optional op (engine/backend/optional_ops.hpp): one fused Adam/AdamW update.
  static AdamStepResult<FloatPrimitive> float_adam_step(const FloatPrimitive& w, const FloatPrimitive& g,
                                                        const FloatPrimitive* m, const FloatPrimitive* v,
                                                        const AdamStepArgs& a) {
    return cpu::adam_step(w, g, m, v, a);
  }
  // Optional op (engine/backend/optional_ops.hpp): a fused backward step of a unary op (nullopt: composed).
  static std::optional<FloatPrimitive> float_unary_backward(UnaryOp op, const FloatPrimitive& x,
                                                            const FloatPrimitive& y, const FloatPrimitive& g) {
    return cpu::unary_backward(op, x, y, g);
  }
  // Optional op (engine/backend/optional_ops.hpp, HasFusedChain): Fusion<Cpu>'s elementwise chains in one pass over
  // cache-sized tiles (backends/cpu/fused_chain.cpp).
  static FloatPrimitive float_fused_chain(
      const fusion::Program& p, const std::vector<fusion::Operand<FloatPrimitive, IntPrimitive, BoolPrimitive>>& in) {
    std::vector<const void*> data;
    data.reserve(in.size());
    for (const auto& o : in)
      data.push_back(o.f ? static_cast<const void*>(o.f->data())
                         : o.i ? static_cast<const void*>(o.i->data()) : static_cast<const void*>(o.b->data()));
    return cpu::fused_chain<E>(p, data);
  }
  static FloatPrimitive float_scalar(const FloatPrimitive& x, ScalarOp op, double s) { return cpu::scalar(x, op, s); }
  static FloatPrimitive float_binary(const FloatPrimitive& a, const FloatPrimitive& b, BinaryOp op) {
    return cpu::binary(a, b, op);
  }
  static BoolPrimitive float_compare(const FloatPrimitive& a, const FloatPrimitive& b, CompareOp op) {
    return cpu::compare(a, b, op);
  }
  static BoolPrimitive float_compare_scalar(const FloatPrimitive& a, CompareOp op, double s) {
    return cpu::compare_scalar(a, op, s);
  }
  static BoolPrimitive float_predicate(const FloatPrimitive& x, PredicateOp op) { return cpu::predicate(x, op); }
  static FloatPrimitive float_reduce(const FloatPrimitive& x, ReduceOp op, std::size_t dim) {
    return cpu::reduce(x, op, dim);
  }
  static FloatPrimitive float_reduce_all(const FloatPrimitive& x, ReduceOp op) { return cpu::reduce_all(x, op); }
  static IntPrimitive float_arg_reduce(const FloatPrimitive& x, ArgReduceOp op, std::size_t dim) {
    return cpu::arg_reduce(x, op, dim);
  }
  static IntPrimitive float_argsort(const FloatPrimitive& x, std::size_t dim, bool descending) {
    return cpu::argsort(x, dim, descending);
  }
  static FloatPrimitive float_cumsum(const FloatPrimitive& x, std::size_t dim) { return cpu::cumsum(x, dim); }
  static FloatPrimitive float_matmul(const FloatPrimitive& a, const FloatPrimitive& b) { return cpu::matmul(a, b); }
  // Optional op (engine/backend/optional_ops.hpp): op(a) @ op(b) with the last two dims of a stored operand
  // transposed when its flag is set, without materializing the transpose.
  static FloatPrimitive float_matmul_transposed(const FloatPrimitive& a, const FloatPrimitive& b, bool trans_a,
                                                bool trans_b) {
    return cpu::matmul(a, b, trans_a, trans_b);
  }
  static FloatPrimitive float_fft(const FloatPrimitive& x, FftOp op, int64_t n) { return cpu::fft(x, op, n); }
  // Optional op (engine/backend/optional_ops.hpp, HasFusedSdpa): flash attention, tiled (backends/cpu/attention.cpp).
  static SdpaForward<FloatPrimitive> float_sdpa(const FloatPrimitive& q, const FloatPrimitive& k,
                                                const FloatPrimitive& v, const FloatPrimitive* bias,
                                                const SdpaOptions& o) {
    return cpu::sdpa_forward(q, k, v, bias, o);
  }
  static SdpaGrads<FloatPrimitive> float_sdpa_backward(const FloatPrimitive& q, const FloatPrimitive& k,
                                                       const FloatPrimitive& v, const FloatPrimitive* bias,
                                                       const FloatPrimitive& out, const FloatPrimitive& lse,
                                                       const FloatPrimitive& dout, const SdpaOptions& o) {
    return cpu::sdpa_backward(q, k, v, bias, out, lse, dout, o);
  }
  // Optional op (engine/backend/optional_ops.hpp, HasPackedSdpa): the GEMM attention path reading the heads in
  // place from the qkv rows (backends/cpu/attention_matmul.cpp); long sequences take the default (flash tiles).
  static std::optional<SdpaForward<FloatPrimitive>> float_sdpa_packed(const FloatPrimitive& qkv, int64_t heads,
                                                                      const SdpaOptions& o) {
    if (!cpu::sdpa_detail::uses_matmul_path(qkv.shape[1], qkv.shape[1])) return std::nullopt;
    return cpu::sdpa_packed_forward(qkv, heads, o);
  }
  static std::optional<FloatPrimitive> float_sdpa_packed_backward(const FloatPrimitive& qkv, const FloatPrimitive& out,
                                                                  const FloatPrimitive& lse, const FloatPrimitive& dout,
                                                                  int64_t heads, const SdpaOptions& o) {
    if (!cpu::sdpa_detail::uses_matmul_path(qkv.shape[1], qkv.shape[1])) return std::nullopt;
    return cpu::sdpa_packed_backward(qkv, out, lse, dout, heads, o);
  }
  // Optional op (engine/backend/optional_ops.hpp, HasFusedLinear): the GEMM accumulates onto the bias rows.
  static FloatPrimitive float_linear(const FloatPrimitive& x, const FloatPrimitive& w, const FloatPrimitive* bias) {
    return cpu::linear(x, w, bias);
  }
  // Optional op (engine/backend/optional_ops.hpp, HasFusedLinearAct): the weight read in place, bias and ReLU in the
  // GEMM's output pass where oneDNN runs it (backends/cpu/linear.cpp).
  static FloatPrimitive float_linear_act(const FloatPrimitive& x, const FloatPrimitive& w, const FloatPrimitive* bias,
                                         bool trans_w, LinearActivation act) {
    return cpu::linear(x, w, bias, trans_w, act == LinearActivation::Relu);
  }
  // Optional op (engine/backend/optional_ops.hpp, HasFusedLayerNorm): one pass per row (backends/cpu/layer_norm.cpp).
  static LayerNormForward<FloatPrimitive> float_layer_norm(const FloatPrimitive& x, const FloatPrimitive& gamma,
                                                           const FloatPrimitive& beta, double eps) {
    return cpu::layer_norm_forward(x, gamma, beta, eps);
  }
  static LayerNormGrads<FloatPrimitive> float_layer_norm_backward(const FloatPrimitive& x, const FloatPrimitive& gamma,
                                                                  const FloatPrimitive& mean,
                                                                  const FloatPrimitive& rstd,
                                                                  const FloatPrimitive& dout) {
    return cpu::layer_norm_backward(x, gamma, mean, rstd, dout);
  }
  // Optional op (engine/backend/optional_ops.hpp, HasFusedCrossEntropy): two reads of each row forward, one
  // backward (backends/cpu/cross_entropy.cpp).
  static CrossEntropyForward<FloatPrimitive> float_cross_entropy(const FloatPrimitive& logits,
                                                                 const IntPrimitive& targets) {
    return cpu::cross_entropy_forward(logits, targets);
  }
  static FloatPrimitive float_cross_entropy_backward(const FloatPrimitive& logits, const IntPrimitive& targets,
                                                     const FloatPrimitive& lse, const FloatPrimitive& g) {
    return cpu::cross_entropy_backward(logits, targets, lse, g);
  }

  // ---- int ----
  static IntPrimitive int_unary(const IntPrimitive& x, UnaryOp op) { return cpu::unary(x, op); }
  static IntPrimitive int_scalar(const IntPrimitive& x, ScalarOp op, double s) { return cpu::scalar(x, op, s); }
  static IntPrimitive int_binary(const IntPrimitive& a, const IntPrimitive& b, BinaryOp op) {
    return cpu::binary(a, b, op);
  }
  static BoolPrimitive int_compare(const IntPrimitive& a, const IntPrimitive& b, CompareOp op) {
    return cpu::compare(a, b, op);
  }
  static BoolPrimitive int_compare_scalar(const IntPrimitive& a, CompareOp op, double s) {
    return cpu::compare_scalar(a, op, s);
  }
  static IntPrimitive int_reduce(const IntPrimitive& x, ReduceOp op, std::size_t dim) {
    return cpu::reduce(x, op, dim);
  }
  static IntPrimitive int_reduce_all(const IntPrimitive& x, ReduceOp op) { return cpu::reduce_all(x, op); }
  static IntPrimitive int_arg_reduce(const IntPrimitive& x, ArgReduceOp op, std::size_t dim) {
    return cpu::arg_reduce(x, op, dim);
  }

  // ---- bool ----
  static BoolPrimitive bool_not(const BoolPrimitive& x) { return cpu::logical_not(x); }
  static BoolPrimitive bool_logic(const BoolPrimitive& a, const BoolPrimitive& b, LogicOp op) {
    return cpu::logic(a, b, op);
  }

  // ---- module ops ----
  static FloatPrimitive conv2d(const FloatPrimitive& x, const FloatPrimitive& w, const FloatPrimitive* bias,
                               const Conv2dOptions& o) {
    return cpu::conv2d(x, w, bias, o);
  }
  // Optional (optional_ops.hpp): conv2d + ReLU, the ReLU applied in oneDNN's output pass (issue 19).
  static FloatPrimitive float_conv2d_relu(const FloatPrimitive& x, const FloatPrimitive& w, const FloatPrimitive* bias,
                                          const Conv2dOptions& o) {
    return cpu::conv2d_relu(x, w, bias, o);
  }
  // Optional: max_pool2d(conv2d + ReLU)'s values, oneDNN pooling the convolution's blocked output (issue 19).
  static FloatPrimitive float_conv2d_relu_max_pool(const FloatPrimitive& x, const FloatPrimitive& w,
                                                   const FloatPrimitive* bias, const Conv2dOptions& o,
                                                   const Pool2dOptions& pool) {
    return cpu::conv2d_relu_max_pool(x, w, bias, o, pool);
  }
  static Conv2dGrads<FloatPrimitive> conv2d_backward(const FloatPrimitive& x, const FloatPrimitive& w,
                                                     const FloatPrimitive& grad, bool has_bias,
                                                     const Conv2dOptions& o) {
    return cpu::conv2d_backward(x, w, grad, has_bias, o);
  }
  static MaxPoolResult<FloatPrimitive, IntPrimitive> max_pool2d(const FloatPrimitive& x, const Pool2dOptions& o) {
    return cpu::max_pool2d(x, o);
  }
  static FloatPrimitive max_pool2d_backward(const FloatPrimitive& x, const FloatPrimitive& grad,
                                            const IntPrimitive& indices) {
    return cpu::max_pool2d_backward(x, grad, indices);
  }
  static FloatPrimitive avg_pool2d(const FloatPrimitive& x, const Pool2dOptions& o) { return cpu::avg_pool2d(x, o); }
  static FloatPrimitive avg_pool2d_backward(const FloatPrimitive& x, const FloatPrimitive& grad,
                                            const Pool2dOptions& o) {
    return cpu::avg_pool2d_backward(x, grad, o);
  }
  static FloatPrimitive adaptive_avg_pool2d(const FloatPrimitive& x, std::array<int64_t, 2> out_hw) {
    return cpu::adaptive_avg_pool2d(x, out_hw);
  }
  static FloatPrimitive adaptive_avg_pool2d_backward(const FloatPrimitive& x, const FloatPrimitive& grad) {
    return cpu::adaptive_avg_pool2d_backward(x, grad);
  }
};

static_assert(Backend<Cpu<float>>);
static_assert(Backend<Cpu<double>>);

}  // namespace ember
