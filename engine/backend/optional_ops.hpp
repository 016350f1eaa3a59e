#pragma once
// Optional backend ops: the one place that knows them.
//
// The Backend concept (backend.hpp) lists what every backend must provide. A backend may also provide an optional
// op: a fused or in-place version of something the engine can compose from required primitives. For each optional
// op this file holds
//   * a concept that detects it (Has...),
//   * the composed default, built only from required primitives (namespace `composed`), and
//   * a dispatcher that calls the backend's op when present and the default otherwise.
// Autodiff and the optimizers call the dispatchers; no other file detects an optional op, so adding one means
// adding it here (and hiding it in tests/support/hide_optional.hpp, whose static check lists HasAnyOptionalOp).
// A backend's op must compute what the default computes (same formulas, same operation order where the comment
// says so); it may differ only by rounding. Tests run every caller with the ops hidden as well.
#include <cmath>
#include <concepts>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include "engine/backend/backend.hpp"
// The composed unary backward is autodiff's per-op chain rule table. It is written against the inner backend's
// required primitives only (grad_ops.hpp), so depending on it here adds no cycle.
#include "engine/autodiff/elementwise_backward.hpp"
// The composed attention is written with Tensor ops on the backend it is given (tensor.hpp needs only backend.hpp).
#include "engine/backend/sdpa_composed.hpp"
// The composed cross entropy (log_softmax, gather, and its backward as a comparison with the class ids).
#include "engine/backend/cross_entropy_composed.hpp"
#include "engine/backend/layer_norm_types.hpp"
#include "engine/backend/linear_types.hpp"
// The op-by-op default of float_fused_chain (engine/fusion/, Fusion<B>).
#include "engine/fusion/replay.hpp"

namespace ember::optional_ops {

// ---------------------------------------------------------------- float_unary_backward
// B::float_unary_backward(op, x, y, g) -> std::optional<FloatPrimitive>: the gradient g * f'(x) of y = f(x) for
// one UnaryOp, in one pass (the composed rule runs 1-8 elementwise ops, each a full read and write). Return nullopt
// for ops the backend has no fused kernel for; the composed rule then runs. Worth providing for the activations
// that training spends its backward time in (relu, gelu, sigmoid, tanh, silu).
template <class B>
concept HasFusedUnaryBackward = requires(UnaryOp op, const typename B::FloatPrimitive& x) {
  { B::float_unary_backward(op, x, x, x) } -> std::same_as<std::optional<typename B::FloatPrimitive>>;
};

// ---------------------------------------------------------------- float_matmul_transposed
// B::float_matmul_transposed(a, b, trans_a, trans_b) -> FloatPrimitive: op(a) @ op(b), where op swaps the last two
// dims of an operand whose flag is set, batch dims broadcast like float_matmul. Provide it when the GEMM can read
// a transposed operand in place (BLAS / cuBLAS flags, a strided shader load): matmul's backward (dA = g @ B^T,
// dB = A^T @ g) then skips materializing the transposes.
template <class B>
concept HasMatmulTransposed = requires(const typename B::FloatPrimitive& a) {
  { B::float_matmul_transposed(a, a, true, false) } -> std::same_as<typename B::FloatPrimitive>;
};

// ---------------------------------------------------------------- float_adam_step
// B::float_adam_step(w, g, m, v, args) -> AdamStepResult: one Adam / AdamW update of a flat param w with gradient
// g and moments m, v (null before the param's first step: moments start at zero), returning the new param and
// moments. The formulas and their order are engine/optim/adam.hpp's (torch.optim.Adam / AdamW); args carries the
// per-param lr and weight decay and the bias corrections 1 - beta^t. Provide it when one fused pass is cheaper
// than the ~12 elementwise ops of the default (every backend with a custom kernel language).
template <class B>
concept HasFusedAdamStep = requires(const typename B::FloatPrimitive& w, const AdamStepArgs& a) {
  { B::float_adam_step(w, w, &w, &w, a) } -> std::same_as<AdamStepResult<typename B::FloatPrimitive>>;
};

// ---------------------------------------------------------------- select (kind-generic)
// B::select<K>(x, dim, index, to) -> Primitive<K>: x[index] along dim (index in range) with that dim dropped, `to`
// being the resulting shape. The default is a slice of one index and a reshape (two tensors and the ranges built
// per call); provide it when the backend can make the row in one step (the CPU: a view of x's storage), which is
// most of the C cost of a small x[i].
template <class B>
concept HasSelect = requires(const typename B::FloatPrimitive& f) {
  { B::template select<Float>(f, std::size_t{}, int64_t{}, Shape{}) } -> std::same_as<typename B::FloatPrimitive>;
};

// ---------------------------------------------------------------- float_sdpa (fused attention)
// B::float_sdpa(q, k, v, bias, opts) -> SdpaForward: softmax(q k^T * scale + bias [+ causal]) v and the row
// logsumexp (sdpa_types.hpp), q [B, H, L, E], k [B, H, S, E], v [B, H, S, Ev], bias null or broadcastable to
// [B, H, L, S] (its size-1 dims are read with stride 0). B::float_sdpa_backward(q, k, v, bias, out, lse, dout, opts)
// -> SdpaGrads with q, k, v filled (bias nullopt). Provide them as tiled kernels that never hold the [L, S] scores
// (flash attention: online softmax forward, per-tile recomputation in the backward from lse): the default
// materializes [B, H, L, S] several times.
template <class B>
concept HasFusedSdpa = requires(const typename B::FloatPrimitive& x, const SdpaOptions& o) {
  { B::float_sdpa(x, x, x, &x, o) } -> std::same_as<SdpaForward<typename B::FloatPrimitive>>;
  { B::float_sdpa_backward(x, x, x, &x, x, x, x, o) } -> std::same_as<SdpaGrads<typename B::FloatPrimitive>>;
};

// ---------------------------------------------------------------- float_sdpa_packed (attention on qkv rows)
// B::float_sdpa_packed(qkv, heads, opts) -> std::optional<SdpaForward>: attention without a bias on the output of one
// qkv Linear, qkv [N, T, 3 d] (d = heads * E; q, k, v the column blocks [0, d), [d, 2d), [2d, 3d), head h at
// columns h * E of each), out [N, T, d] with the heads merged the same way, lse [N, heads, T].
// B::float_sdpa_packed_backward(qkv, out, lse, dout, heads, opts) -> std::optional<FloatPrimitive>: dqkv [N, T, 3 d].
// Return nullopt where the backend has no kernel for the size (the composed default then runs). Provide them when
// the attention kernel can read and write heads through row strides: the default splits the heads with permute
// copies (three forward and one for the output; four backward) and concatenates the three gradients.
template <class B>
concept HasPackedSdpa = requires(const typename B::FloatPrimitive& x, const SdpaOptions& o) {
  { B::float_sdpa_packed(x, int64_t{}, o) } -> std::same_as<std::optional<SdpaForward<typename B::FloatPrimitive>>>;
  { B::float_sdpa_packed_backward(x, x, x, x, int64_t{}, o) } -> std::same_as<std::optional<typename B::FloatPrimitive>>;
};

// ---------------------------------------------------------------- float_layer_norm (fused LayerNorm)
// B::float_layer_norm(x, gamma, beta, eps) -> LayerNormForward: LayerNorm over x's last dim (gamma, beta [d]) with
// each row's mean and rstd; B::float_layer_norm_backward(x, gamma, mean, rstd, dout) -> LayerNormGrads. Provide them
// as one pass per row (statistics in registers or cache): the default runs ~8 full elementwise passes and two
// reductions forward and ~12 backward.
template <class B>
concept HasFusedLayerNorm = requires(const typename B::FloatPrimitive& x) {
  { B::float_layer_norm(x, x, x, 1e-5) } -> std::same_as<LayerNormForward<typename B::FloatPrimitive>>;
  { B::float_layer_norm_backward(x, x, x, x, x) } -> std::same_as<LayerNormGrads<typename B::FloatPrimitive>>;
};

// ---------------------------------------------------------------- float_cross_entropy (log_softmax + nll fused)
// B::float_cross_entropy(logits, targets) -> CrossEntropyForward: per row of logits [N, C] with class index
// targets [N] (Int), loss [N] = -log_softmax(logits)[i, t_i] and the row logsumexp lse [N];
// B::float_cross_entropy_backward(logits, targets, lse, g) -> d loss / d logits [N, C] for the per-row gradient g
// [N]: (softmax - one_hot(t)) * g. The forward throws IndexError for a target outside [0, C) (the default through
// its gather's index check; a kernel checks as it reads them); the default backward takes targets its forward
// checked (a target outside the classes adds no one-hot term), a kernel may check them again. Provide them as one
// pass per row: the default runs log_softmax's ~6 ops, a gather and a negation forward and ~7 elementwise ops
// backward.
template <class B>
concept HasFusedCrossEntropy = requires(const typename B::FloatPrimitive& x, const typename B::IntPrimitive& t) {
  { B::float_cross_entropy(x, t) } -> std::same_as<CrossEntropyForward<typename B::FloatPrimitive>>;
  { B::float_cross_entropy_backward(x, t, x, x) } -> std::same_as<typename B::FloatPrimitive>;
};

// ---------------------------------------------------------------- float_linear (GEMM with the bias fused)
// B::float_linear(x, w, bias) -> FloatPrimitive: x [M, K] @ w [K, N] + bias [N] (bias null: no bias). Provide it
// when the GEMM can start from the bias rows (BLAS beta = 1) or add it in its epilogue: the default's broadcast add
// is one more full pass and [M, N] allocation per Linear. The backward needs nothing new (Autodiff computes the
// matmul gradients through float_matmul_transposed and the bias's as the column sums of the output gradient).
template <class B>
concept HasFusedLinear = requires(const typename B::FloatPrimitive& x) {
  { B::float_linear(x, x, &x) } -> std::same_as<typename B::FloatPrimitive>;
};

// ---------------------------------------------------------------- float_linear_act (linear + transposed w + ReLU)
// B::float_linear_act(x, w, bias, trans_w, act) -> FloatPrimitive: act(x [M, K] @ op(w) + bias [N]), op(w) = w^T
// for an [N, K] w (PyTorch's Linear weight, ONNX Gemm's transB) when trans_w, else w [K, N]; bias null: none.
// Inference only (the ONNX importer's Gemm / Gemm + Relu under no_grad): Autodiff does not record it, so callers
// that need gradients compose it from recorded ops. Provide it when the GEMM reads a transposed operand in place and
// applies the bias and activation in its output pass (oneDNN post-ops, ONNX Runtime's MLAS): the default permutes
// the weight (a copy per call) and runs the add and the activation as passes of their own.
template <class B>
concept HasFusedLinearAct = requires(const typename B::FloatPrimitive& x) {
  { B::float_linear_act(x, x, &x, true, LinearActivation::Relu) } -> std::same_as<typename B::FloatPrimitive>;
};

// ---------------------------------------------------------------- float_fused_chain (Fusion<B>'s kernels)
// B::float_fused_chain(program, inputs) -> FloatPrimitive: a chain of elementwise ops recorded by Fusion<B>
// (engine/fusion/program.hpp), inputs[k] the tensor of the program's input k. Provide it as one pass over the
// output (each input read once, no intermediate tensor): the default runs the chain op by op (fusion::replay).
template <class B>
concept HasFusedChain = requires(const fusion::Program& p, const std::vector<fusion::OperandOf<B>>& in) {
  { B::float_fused_chain(p, in) } -> std::same_as<typename B::FloatPrimitive>;
};

// ---------------------------------------------------------------- float_conv2d_relu (conv2d + bias + ReLU)
// B::float_conv2d_relu(x, w, bias, o) -> FloatPrimitive: relu(conv2d(x, w, bias, o)). Inference only (the ONNX
// importer's Conv + Relu under no_grad, issue 19): Autodiff does not record it, so callers that need gradients
// compose it from recorded ops. Provide it when the convolution can apply the ReLU in its output pass (oneDNN's
// post-ops): the default's ReLU is one more full read and write and an allocation per layer.
template <class B>
concept HasFusedConv2dRelu = requires(const typename B::FloatPrimitive& x, const Conv2dOptions& o) {
  { B::float_conv2d_relu(x, x, &x, o) } -> std::same_as<typename B::FloatPrimitive>;
};

// B::float_conv2d_relu_max_pool(x, w, bias, o, pool) -> FloatPrimitive: max_pool2d(relu(conv2d(x, w, bias, o)),
// pool)'s values (no indices). Inference only, like float_conv2d_relu. Provide it when the pooling can run on the
// convolution's own (blocked) output layout, so only the pooled, smaller tensor goes back to the plain layout.
template <class B>
concept HasFusedConv2dReluMaxPool = requires(const typename B::FloatPrimitive& x, const Conv2dOptions& o,
                                             const Pool2dOptions& p) {
  { B::float_conv2d_relu_max_pool(x, x, &x, o, p) } -> std::same_as<typename B::FloatPrimitive>;
};

// True when B provides any optional op; a wrapper that hides them all must make this false.
template <class B>
concept HasAnyOptionalOp =
    HasFusedUnaryBackward<B> || HasMatmulTransposed<B> || HasFusedAdamStep<B> || HasSelect<B> || HasFusedSdpa<B> ||
    HasFusedLayerNorm<B> || HasFusedLinear<B> || HasPackedSdpa<B> || HasFusedLinearAct<B> || HasFusedChain<B> ||
    HasFusedConv2dRelu<B> || HasFusedConv2dReluMaxPool<B> || HasFusedCrossEntropy<B>;

// ---------------------------------------------------------------- the composed defaults
namespace composed {

template <Backend B>
typename B::FloatPrimitive float_unary_backward(UnaryOp op, const typename B::FloatPrimitive& x,
                                                const typename B::FloatPrimitive& y,
                                                const typename B::FloatPrimitive& g) {
  return autodiff::unary_backward<B>(op, x, y, g);
}

// The transposes are materialized by a permute of the last two dims, then the plain GEMM runs.
template <Backend B>
typename B::FloatPrimitive float_matmul_transposed(const typename B::FloatPrimitive& a,
                                                   const typename B::FloatPrimitive& b, bool trans_a, bool trans_b) {
  auto t = [](const typename B::FloatPrimitive& m) {
    std::vector<std::size_t> axes(B::template shape<Float>(m).rank());
    std::iota(axes.begin(), axes.end(), 0);
    std::swap(axes[axes.size() - 1], axes[axes.size() - 2]);
    return B::template permute<Float>(m, axes);
  };
  return B::float_matmul(trans_a ? t(a) : a, trans_b ? t(b) : b);
}

// adam.hpp's formulas, one elementwise primitive per step:
//   Adam:  g = g + wd * w          AdamW: w = w * (1 - lr * wd)
//   m = beta1 * m + (1 - beta1) * g  (m = (1 - beta1) * g on the first step)
//   v = beta2 * v + (1 - beta2) * g * g  (v = (1 - beta2) * g * g on the first step)
//   w = w - lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps)
template <Backend B>
AdamStepResult<typename B::FloatPrimitive> float_adam_step(typename B::FloatPrimitive w, typename B::FloatPrimitive g,
                                                           const typename B::FloatPrimitive* m,
                                                           const typename B::FloatPrimitive* v,
                                                           const AdamStepArgs& a) {
  using FP = typename B::FloatPrimitive;
  auto scale = [](const FP& x, double s) { return B::float_scalar(x, ScalarOp::Mul, s); };
  if (a.weight_decay != 0) {
    if (a.decoupled) w = scale(w, 1 - a.lr * a.weight_decay);
    else g = B::float_binary(g, scale(w, a.weight_decay), BinaryOp::Add);
  }
  FP m_new = m ? B::float_binary(scale(*m, a.beta1), scale(g, 1 - a.beta1), BinaryOp::Add) : scale(g, 1 - a.beta1);
  const FP gg = scale(B::float_binary(g, g, BinaryOp::Mul), 1 - a.beta2);
  FP v_new = v ? B::float_binary(scale(*v, a.beta2), gg, BinaryOp::Add) : gg;
  const FP denom = B::float_scalar(
      B::float_scalar(B::float_unary(v_new, UnaryOp::Sqrt), ScalarOp::Div, std::sqrt(a.bias_correction2)),
      ScalarOp::Add, a.eps);
  FP step = scale(B::float_binary(m_new, denom, BinaryOp::Div), a.lr / a.bias_correction1);
  FP w_new = B::float_binary(w, step, BinaryOp::Sub);
  return {std::move(w_new), std::move(m_new), std::move(v_new)};
}

template <Backend B, class K>
Primitive<B, K> select(const Primitive<B, K>& x, std::size_t dim, int64_t index, Shape to) {
  const Shape s = B::template shape<K>(x);
  std::vector<Range> r(s.rank());
  for (std::size_t d = 0; d < r.size(); ++d) r[d] = {0, s[d]};
  r[dim] = {index, index + 1};
  return B::template reshape<K>(B::template slice<K>(x, r), to);
}

// sdpa_composed.hpp on B's primitives; the logsumexp is returned as [B, H, L].
template <Backend B>
SdpaForward<typename B::FloatPrimitive> float_sdpa(const typename B::FloatPrimitive& q,
                                                   const typename B::FloatPrimitive& k,
                                                   const typename B::FloatPrimitive& v,
                                                   const typename B::FloatPrimitive* bias, const SdpaOptions& o) {
  using T4 = Tensor<B, 4>;
  const T4 tq(q), tk(k), tv(v);
  const std::optional<T4> tb = bias ? std::optional<T4>(T4(*bias)) : std::nullopt;
  const auto sm = sdpa::row_softmax(sdpa::masked_scores(tq, tk, tb ? &*tb : nullptr, o));
  const auto lse = sm.lse.template reshape<3>({tq.dim(0), tq.dim(1), tq.dim(2)});
  return {sm.p.matmul(tv).primitive(), lse.primitive()};
}

template <Backend B>
SdpaGrads<typename B::FloatPrimitive> float_sdpa_backward(
    const typename B::FloatPrimitive& q, const typename B::FloatPrimitive& k, const typename B::FloatPrimitive& v,
    const typename B::FloatPrimitive* bias, const typename B::FloatPrimitive& out,
    const typename B::FloatPrimitive& lse, const typename B::FloatPrimitive& dout, const SdpaOptions& o,
    bool want_bias_grad) {
  using T4 = Tensor<B, 4>;
  const T4 tq(q), tk(k), tv(v), to(out), tdo(dout);
  const std::optional<T4> tb = bias ? std::optional<T4>(T4(*bias)) : std::nullopt;
  const auto tl = Tensor<B, 3>(lse).template reshape<4>({tq.dim(0), tq.dim(1), tq.dim(2), 1});
  return sdpa::backward(tq, tk, tv, tb ? &*tb : nullptr, to, tl, tdo, o, want_bias_grad);
}

// nn::LayerNorm's former composition, on B's primitives (gamma and beta reshaped to [1, ..., 1, d] to broadcast):
//   mean = mean(x), c = x - mean, rstd = 1 / sqrt(mean(c * c) + eps), y = c * rstd * gamma + beta
template <Backend B>
LayerNormForward<typename B::FloatPrimitive> float_layer_norm(const typename B::FloatPrimitive& x,
                                                              const typename B::FloatPrimitive& gamma,
                                                              const typename B::FloatPrimitive& beta, double eps) {
  const Shape s = B::template shape<Float>(x);
  const std::size_t last = s.rank() - 1;
  std::vector<int64_t> row(s.rank(), 1);
  row[last] = s[last];
  const Shape row_shape(row);
  auto mean = B::float_reduce(x, ReduceOp::Mean, last);
  auto c = B::float_binary(x, mean, BinaryOp::Sub);
  auto var = B::float_reduce(B::float_binary(c, c, BinaryOp::Mul), ReduceOp::Mean, last);
  auto rstd = B::float_unary(B::float_unary(B::float_scalar(var, ScalarOp::Add, eps), UnaryOp::Sqrt), UnaryOp::Recip);
  auto normed = B::float_binary(c, rstd, BinaryOp::Mul);
  auto out = B::float_binary(B::float_binary(normed, B::template reshape<Float>(gamma, row_shape), BinaryOp::Mul),
                             B::template reshape<Float>(beta, row_shape), BinaryOp::Add);
  return {std::move(out), std::move(mean), std::move(rstd)};
}

// With xhat = (x - mean) * rstd and dxhat = dout * gamma (rows of d elements):
//   dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)), dgamma = sum_rows(dout * xhat),
//   dbeta = sum_rows(dout)
template <Backend B>
LayerNormGrads<typename B::FloatPrimitive> float_layer_norm_backward(const typename B::FloatPrimitive& x,
                                                                     const typename B::FloatPrimitive& gamma,
                                                                     const typename B::FloatPrimitive& mean,
                                                                     const typename B::FloatPrimitive& rstd,
                                                                     const typename B::FloatPrimitive& dout) {
  const Shape s = B::template shape<Float>(x);
  const std::size_t last = s.rank() - 1;
  const int64_t d = s[last];
  std::vector<int64_t> row(s.rank(), 1);
  row[last] = d;
  const Shape rows{s.num_elements() / d, d}, vec{d};
  auto sum_rows = [&](const typename B::FloatPrimitive& p) {
    return B::template reshape<Float>(B::float_reduce(B::template reshape<Float>(p, rows), ReduceOp::Sum, 0), vec);
  };
  auto xhat = B::float_binary(B::float_binary(x, mean, BinaryOp::Sub), rstd, BinaryOp::Mul);
  auto dgamma = sum_rows(B::float_binary(dout, xhat, BinaryOp::Mul));
  auto dbeta = sum_rows(dout);
  auto dxhat = B::float_binary(dout, B::template reshape<Float>(gamma, Shape(row)), BinaryOp::Mul);
  auto a = B::float_reduce(dxhat, ReduceOp::Mean, last);
  auto b = B::float_reduce(B::float_binary(dxhat, xhat, BinaryOp::Mul), ReduceOp::Mean, last);
  auto inner = B::float_binary(B::float_binary(dxhat, a, BinaryOp::Sub), B::float_binary(xhat, b, BinaryOp::Mul),
                               BinaryOp::Sub);
  return {B::float_binary(inner, rstd, BinaryOp::Mul), std::move(dgamma), std::move(dbeta)};
}

template <Backend B>
typename B::FloatPrimitive float_linear(const typename B::FloatPrimitive& x, const typename B::FloatPrimitive& w,
                                        const typename B::FloatPrimitive* bias) {
  auto y = B::float_matmul(x, w);
  if (!bias) return y;
  const int64_t n = B::template shape<Float>(*bias)[0];
  return B::float_binary(y, B::template reshape<Float>(*bias, Shape{1, n}), BinaryOp::Add);
}
}  // namespace composed

// ---------------------------------------------------------------- the dispatchers
template <Backend B>
typename B::FloatPrimitive float_unary_backward(UnaryOp op, const typename B::FloatPrimitive& x,
                                                const typename B::FloatPrimitive& y,
                                                const typename B::FloatPrimitive& g) {
  if constexpr (HasFusedUnaryBackward<B>) {
    if (auto fused = B::float_unary_backward(op, x, y, g)) return std::move(*fused);
  }
  return composed::float_unary_backward<B>(op, x, y, g);
}

template <Backend B>
typename B::FloatPrimitive float_matmul_transposed(const typename B::FloatPrimitive& a,
                                                   const typename B::FloatPrimitive& b, bool trans_a, bool trans_b) {
  if constexpr (HasMatmulTransposed<B>) return B::float_matmul_transposed(a, b, trans_a, trans_b);
  else return composed::float_matmul_transposed<B>(a, b, trans_a, trans_b);
}

template <Backend B>
AdamStepResult<typename B::FloatPrimitive> float_adam_step(const typename B::FloatPrimitive& w,
                                                           const typename B::FloatPrimitive& g,
                                                           const typename B::FloatPrimitive* m,
                                                           const typename B::FloatPrimitive* v,
                                                           const AdamStepArgs& a) {
  if constexpr (HasFusedAdamStep<B>) return B::float_adam_step(w, g, m, v, a);
  else return composed::float_adam_step<B>(w, g, m, v, a);
}

template <Backend B, class K>
Primitive<B, K> select(const Primitive<B, K>& x, std::size_t dim, int64_t index, Shape to) {
  if constexpr (HasSelect<B>) return B::template select<K>(x, dim, index, std::move(to));
  else return composed::select<B, K>(x, dim, index, std::move(to));
}

template <Backend B>
SdpaForward<typename B::FloatPrimitive> float_sdpa(const typename B::FloatPrimitive& q,
                                                   const typename B::FloatPrimitive& k,
                                                   const typename B::FloatPrimitive& v,
                                                   const typename B::FloatPrimitive* bias, const SdpaOptions& o) {
  if constexpr (HasFusedSdpa<B>) return B::float_sdpa(q, k, v, bias, o);
  else return composed::float_sdpa<B>(q, k, v, bias, o);
}

// want_bias_grad takes the composed backward even where B has the fused one (which does not compute it).
template <Backend B>
SdpaGrads<typename B::FloatPrimitive> float_sdpa_backward(
    const typename B::FloatPrimitive& q, const typename B::FloatPrimitive& k, const typename B::FloatPrimitive& v,
    const typename B::FloatPrimitive* bias, const typename B::FloatPrimitive& out,
    const typename B::FloatPrimitive& lse, const typename B::FloatPrimitive& dout, const SdpaOptions& o,
    bool want_bias_grad) {
  if constexpr (HasFusedSdpa<B>) {
    if (!(bias && want_bias_grad)) return B::float_sdpa_backward(q, k, v, bias, out, lse, dout, o);
  }
  return composed::float_sdpa_backward<B>(q, k, v, bias, out, lse, dout, o, want_bias_grad);
}

template <Backend B>
LayerNormForward<typename B::FloatPrimitive> float_layer_norm(const typename B::FloatPrimitive& x,
                                                              const typename B::FloatPrimitive& gamma,
                                                              const typename B::FloatPrimitive& beta, double eps) {
  if constexpr (HasFusedLayerNorm<B>) return B::float_layer_norm(x, gamma, beta, eps);
  else return composed::float_layer_norm<B>(x, gamma, beta, eps);
}

template <Backend B>
LayerNormGrads<typename B::FloatPrimitive> float_layer_norm_backward(const typename B::FloatPrimitive& x,
                                                                     const typename B::FloatPrimitive& gamma,
                                                                     const typename B::FloatPrimitive& mean,
                                                                     const typename B::FloatPrimitive& rstd,
                                                                     const typename B::FloatPrimitive& dout) {
  if constexpr (HasFusedLayerNorm<B>) return B::float_layer_norm_backward(x, gamma, mean, rstd, dout);
  else return composed::float_layer_norm_backward<B>(x, gamma, mean, rstd, dout);
}

template <Backend B>
CrossEntropyForward<typename B::FloatPrimitive> float_cross_entropy(const typename B::FloatPrimitive& x,
                                                                    const typename B::IntPrimitive& t) {
  if constexpr (HasFusedCrossEntropy<B>) return B::float_cross_entropy(x, t);
  else return composed::float_cross_entropy<B>(x, t);
}

template <Backend B>
typename B::FloatPrimitive float_cross_entropy_backward(const typename B::FloatPrimitive& x,
                                                        const typename B::IntPrimitive& t,
                                                        const typename B::FloatPrimitive& lse,
                                                        const typename B::FloatPrimitive& g) {
  if constexpr (HasFusedCrossEntropy<B>) return B::float_cross_entropy_backward(x, t, lse, g);
  else return composed::float_cross_entropy_backward<B>(x, t, lse, g);
}

template <Backend B>
typename B::FloatPrimitive float_linear(const typename B::FloatPrimitive& x, const typename B::FloatPrimitive& w,
                                        const typename B::FloatPrimitive* bias) {
  if constexpr (HasFusedLinear<B>) return B::float_linear(x, w, bias);
  else return composed::float_linear<B>(x, w, bias);
}

namespace composed {
// The weight's transpose materialized by a permute, then float_linear (B's fused one where it has it) and the
// activation as a unary pass.
template <Backend B>
typename B::FloatPrimitive float_linear_act(const typename B::FloatPrimitive& x, const typename B::FloatPrimitive& w,
                                            const typename B::FloatPrimitive* bias, bool trans_w,
                                            LinearActivation act) {
  auto y = optional_ops::float_linear<B>(x, trans_w ? B::template permute<Float>(w, {1, 0}) : w, bias);
  return act == LinearActivation::Relu ? B::float_unary(y, UnaryOp::Relu) : y;
}
}  // namespace composed

template <Backend B>
typename B::FloatPrimitive float_linear_act(const typename B::FloatPrimitive& x, const typename B::FloatPrimitive& w,
                                            const typename B::FloatPrimitive* bias, bool trans_w,
                                            LinearActivation act) {
  if constexpr (HasFusedLinearAct<B>) return B::float_linear_act(x, w, bias, trans_w, act);
  else return composed::float_linear_act<B>(x, w, bias, trans_w, act);
}

template <Backend B>
typename B::FloatPrimitive float_fused_chain(const fusion::Program& p, const std::vector<fusion::OperandOf<B>>& in,
                                             const typename B::Device& dev) {
  if constexpr (HasFusedChain<B>) {
    // A backend whose tensors name their device (Vulkan) takes `dev` for chains without inputs (constants).
    if constexpr (requires { B::float_fused_chain(p, in, dev); }) return B::float_fused_chain(p, in, dev);
    else return B::float_fused_chain(p, in);
  } else {
    return fusion::replay<B>(p, in, dev);
  }
}

// ---------------------------------------------------------------- float_sdpa_packed: default and dispatcher
// The default is written with the float_sdpa dispatchers above (B's fused attention where it has one).
namespace composed {
namespace packed_detail {

// Column block i (0 q, 1 k, 2 v) of qkv [N, T, 3 d] as heads [N, H, T, E].
template <Backend B>
typename B::FloatPrimitive block_heads(const typename B::FloatPrimitive& qkv, int64_t heads, int64_t i) {
  const Shape s = B::template shape<Float>(qkv);
  const int64_t d = s[2] / 3;
  const auto block = B::template slice<Float>(qkv, std::vector<Range>{{0, s[0]}, {0, s[1]}, {i * d, (i + 1) * d}});
  return B::template permute<Float>(B::template reshape<Float>(block, Shape{s[0], s[1], heads, d / heads}),
                                    std::vector<std::size_t>{0, 2, 1, 3});
}

// [N, T, d] -> [N, H, T, E]
template <Backend B>
typename B::FloatPrimitive split_heads(const typename B::FloatPrimitive& x, int64_t heads) {
  const Shape s = B::template shape<Float>(x);
  return B::template permute<Float>(B::template reshape<Float>(x, Shape{s[0], s[1], heads, s[2] / heads}),
                                    std::vector<std::size_t>{0, 2, 1, 3});
}

// [N, H, T, E] -> [N, T, H * E]
template <Backend B>
typename B::FloatPrimitive merge_heads(const typename B::FloatPrimitive& x) {
  const Shape s = B::template shape<Float>(x);
  return B::template reshape<Float>(B::template permute<Float>(x, std::vector<std::size_t>{0, 2, 1, 3}),
                                    Shape{s[0], s[2], s[1] * s[3]});
}

}  // namespace packed_detail

template <Backend B>
SdpaForward<typename B::FloatPrimitive> float_sdpa_packed(const typename B::FloatPrimitive& qkv, int64_t heads,
                                                          const SdpaOptions& o) {
  using namespace packed_detail;
  auto r = optional_ops::float_sdpa<B>(block_heads<B>(qkv, heads, 0), block_heads<B>(qkv, heads, 1),
                                       block_heads<B>(qkv, heads, 2), nullptr, o);
  return {merge_heads<B>(r.out), std::move(r.lse)};
}

template <Backend B>
typename B::FloatPrimitive float_sdpa_packed_backward(const typename B::FloatPrimitive& qkv,
                                                      const typename B::FloatPrimitive& out,
                                                      const typename B::FloatPrimitive& lse,
                                                      const typename B::FloatPrimitive& dout, int64_t heads,
                                                      const SdpaOptions& o) {
  using namespace packed_detail;
  auto g = optional_ops::float_sdpa_backward<B>(block_heads<B>(qkv, heads, 0), block_heads<B>(qkv, heads, 1),
                                                block_heads<B>(qkv, heads, 2), nullptr, split_heads<B>(out, heads),
                                                lse, split_heads<B>(dout, heads), o, false);
  return B::template cat<Float>(
      std::vector<typename B::FloatPrimitive>{merge_heads<B>(g.q), merge_heads<B>(g.k), merge_heads<B>(g.v)}, 2);
}

}  // namespace composed

template <Backend B>
SdpaForward<typename B::FloatPrimitive> float_sdpa_packed(const typename B::FloatPrimitive& qkv, int64_t heads,
                                                          const SdpaOptions& o) {
  if constexpr (HasPackedSdpa<B>) {
    if (auto r = B::float_sdpa_packed(qkv, heads, o)) return std::move(*r);
  }
  return composed::float_sdpa_packed<B>(qkv, heads, o);
}

template <Backend B>
typename B::FloatPrimitive float_sdpa_packed_backward(const typename B::FloatPrimitive& qkv,
                                                      const typename B::FloatPrimitive& out,
                                                      const typename B::FloatPrimitive& lse,
                                                      const typename B::FloatPrimitive& dout, int64_t heads,
                                                      const SdpaOptions& o) {
  if constexpr (HasPackedSdpa<B>) {
    if (auto r = B::float_sdpa_packed_backward(qkv, out, lse, dout, heads, o)) return std::move(*r);
  }
  return composed::float_sdpa_packed_backward<B>(qkv, out, lse, dout, heads, o);
}

// ---------------------------------------------------------------- float_conv2d_relu: default and dispatcher
namespace composed {
template <Backend B>
typename B::FloatPrimitive float_conv2d_relu(const typename B::FloatPrimitive& x, const typename B::FloatPrimitive& w,
                                             const typename B::FloatPrimitive* bias, const Conv2dOptions& o) {
  return B::float_unary(B::conv2d(x, w, bias, o), UnaryOp::Relu);
}
}  // namespace composed

template <Backend B>
typename B::FloatPrimitive float_conv2d_relu(const typename B::FloatPrimitive& x, const typename B::FloatPrimitive& w,
                                             const typename B::FloatPrimitive* bias, const Conv2dOptions& o) {
  if constexpr (HasFusedConv2dRelu<B>) return B::float_conv2d_relu(x, w, bias, o);
  else return composed::float_conv2d_relu<B>(x, w, bias, o);
}

namespace composed {
template <Backend B>
typename B::FloatPrimitive float_conv2d_relu_max_pool(const typename B::FloatPrimitive& x,
                                                      const typename B::FloatPrimitive& w,
                                                      const typename B::FloatPrimitive* bias, const Conv2dOptions& o,
                                                      const Pool2dOptions& pool) {
  return B::max_pool2d(optional_ops::float_conv2d_relu<B>(x, w, bias, o), pool).output;
}
}  // namespace composed

template <Backend B>
typename B::FloatPrimitive float_conv2d_relu_max_pool(const typename B::FloatPrimitive& x,
                                                      const typename B::FloatPrimitive& w,
                                                      const typename B::FloatPrimitive* bias, const Conv2dOptions& o,
                                                      const Pool2dOptions& pool) {
  if constexpr (HasFusedConv2dReluMaxPool<B>) return B::float_conv2d_relu_max_pool(x, w, bias, o, pool);
  else return composed::float_conv2d_relu_max_pool<B>(x, w, bias, o, pool);
}

}  // namespace ember::optional_ops
