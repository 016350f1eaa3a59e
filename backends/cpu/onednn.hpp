#pragma once
// oneDNN (Debian's libdnnl-dev) for the CPU backend's f32 convolutions, when Ember is built with it
// (EMBER_HAVE_ONEDNN, meson finds dnnl optionally). oneDNN's JIT kernels run a convolution directly on channel-
// blocked data (nChw16c), about 1.5x faster here than im2col + OpenBLAS GEMM (bench/README.md: "Convolutions
// through oneDNN"). conv.cpp asks these first and falls back to im2col + GEMM when they decline (f64, no oneDNN,
// empty tensors, oneDNN turned off).
#include <optional>

#include "backends/cpu/cpu_tensor.hpp"
#include "engine/backend/ops.hpp"

namespace ember::cpu::onednn {

// True when Ember was built with oneDNN and it is turned on (the default; EMBER_ONEDNN=0 in the environment or
// set_enabled(false) turns it off, so tests can compare both paths in one process).
bool enabled();
void set_enabled(bool on);

// How many times a forward reordered a weight tensor into oneDNN's blocked layout since the process started: the
// blocked copy is cached per problem and thread while the weight's buffer lives, so inference with unchanged
// weights reorders each once (tests check the cache through this count).
int64_t forward_weight_reorders();

// How many forward slices took their source from the blocked output a previous convolution on the same thread
// kept for the tensor it returned (conv -> conv without reordering that tensor back; onednn_conv.cpp's
// BlockedOutput). Tests check the reuse and its limits through this count.
int64_t forward_blocked_inputs_reused();

// Whether 3x3 stride-1 convolutions with enough channels and pixels run oneDNN's Winograd F(4x4, 3x3) kernels
// (onednn_conv.cpp's winograd_pays says where it pays): on by default, off with EMBER_CONV_WINOGRAD=0 in the
// environment or set_winograd(false). Each setting keeps its own plans, so tests can compare both in one process.
bool winograd();
void set_winograd(bool on);
// How many plans (one per problem, batch slice and thread) chose Winograd since the process started.
int64_t winograd_plans();
// How many forwards on the pool's threads ran as parts of the output channels over the whole batch instead of as
// batch slices (where Winograd's weight transform outweighs its input's, onednn_conv.cpp's channel_parts).
int64_t forward_channel_parts();

// What the forward applies to its output in the same pass (oneDNN's post-ops).
enum class PostOp { None, Relu };

// nullopt: not handled here, the caller runs its own kernel.
std::optional<CpuTensor<float>> conv2d(const CpuTensor<float>& x, const CpuTensor<float>& w,
                                       const CpuTensor<float>* bias, const Conv2dOptions& o,
                                       PostOp post = PostOp::None);
std::optional<Conv2dGrads<CpuTensor<float>>> conv2d_backward(const CpuTensor<float>& x, const CpuTensor<float>& w,
                                                             const CpuTensor<float>& grad, bool has_bias,
                                                             const Conv2dOptions& o);
// conv2d_backward's route for few input channels per group (a first layer: 1 or 3), where oneDNN's backward
// kernels are slower than im2col + GEMM and its weight sums less accurate (onednn_conv.cpp): im2col + GEMM per
// batch slice, the slices spread over Ember's pool with oneDNN's sgemm on one thread each (one thread: OpenBLAS's
// GEMM over the whole batch, as conv.cpp runs it). nullopt for grouped convolutions (conv.cpp's path).
std::optional<Conv2dGrads<CpuTensor<float>>> conv2d_backward_im2col(const CpuTensor<float>& x,
                                                                    const CpuTensor<float>& w,
                                                                    const CpuTensor<float>& grad, bool has_bias,
                                                                    const Conv2dOptions& o);
// max_pool2d(post(conv2d(x, w, bias, o)), pool)'s values, with the pooling run by oneDNN on the convolution's
// blocked output (no indices: inference), so only the pooled, smaller tensor is reordered back to NCHW.
std::optional<CpuTensor<float>> conv2d_max_pool(const CpuTensor<float>& x, const CpuTensor<float>& w,
                                                const CpuTensor<float>* bias, const Conv2dOptions& o, PostOp post,
                                                const Pool2dOptions& pool);

// f64 has no oneDNN kernels: always the caller's.
inline std::optional<CpuTensor<double>> conv2d(const CpuTensor<double>&, const CpuTensor<double>&,
                                               const CpuTensor<double>*, const Conv2dOptions&,
                                               PostOp = PostOp::None) {
  return std::nullopt;
}
inline std::optional<CpuTensor<double>> conv2d_max_pool(const CpuTensor<double>&, const CpuTensor<double>&,
                                                        const CpuTensor<double>*, const Conv2dOptions&, PostOp,
                                                        const Pool2dOptions&) {
  return std::nullopt;
}
inline std::optional<Conv2dGrads<CpuTensor<double>>> conv2d_backward(const CpuTensor<double>&,
                                                                     const CpuTensor<double>&,
                                                                     const CpuTensor<double>&, bool,
                                                                     const Conv2dOptions&) {
  return std::nullopt;
}

}  // namespace ember::cpu::onednn
