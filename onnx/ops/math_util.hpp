#pragma once
// Helpers shared by the math converters (onnx/ops/elementwise*.cpp, onnx/ops/reduce.cpp): scalars made on an
// operand's device and dtype, axis normalisation, ONNX element types, and the sub-registers that
// register_elementwise_ops calls (one per file, each file one concern).
#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "onnx/op_registry.hpp"

namespace ember::onnx_import::math {

using Outs = std::vector<std::optional<DynTensor>>;

inline Outs one(DynTensor t) { return Outs{std::optional<DynTensor>(std::move(t))}; }

inline bool is_float(const DynTensor& t) { return dtype_is_float(capi::dtype(t)); }
inline bool is_bool(const DynTensor& t) { return capi::dtype(t) == DType::Bool; }

// A rank-0 tensor of `like`'s device and dtype holding v: broadcasts against any operand of like's kind, and lives
// on the same runtime (float32 or float64 on the CPU, the GPU's context elsewhere) so the op needs no copy.
inline DynTensor scalar_like(const DynTensor& like, double v) {
  return capi::full(capi::device(like), capi::dtype(like), Shape{}, v);
}

// `axis` of an operand of rank `rank` in [-rank, rank) as [0, rank), or an OnnxError naming the node.
inline int64_t norm_axis(const OpContext& ctx, int64_t axis, std::size_t rank, const char* what = "axis") {
  const auto r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= std::max<int64_t>(r, 1))
    ctx.fail(fmt::format("{} {} is out of range for rank {}", what, axis, rank));
  return axis < 0 ? axis + r : axis;
}

// Sub-registers of the elementwise and reduce families (called once by register_elementwise_ops /
// register_reduce_ops).
void register_activation_ops(OpRegistry& r);   // onnx/ops/elementwise_activation.cpp
void register_tensor_math_ops(OpRegistry& r);  // onnx/ops/elementwise_misc.cpp: Cast, Where, Softmax, CumSum, ...
void register_quant_ops(OpRegistry& r);        // onnx/ops/elementwise_quant.cpp: uint8 (de)quantization
void register_fft_ops(OpRegistry& r);          // onnx/ops/elementwise_fft.cpp: DFT, STFT
void register_grid_sample_ops(OpRegistry& r);  // onnx/ops/elementwise_grid_sample.cpp
void register_nms_ops(OpRegistry& r);          // onnx/ops/reduce_nms.cpp (called by register_reduce_ops)
void register_unpool_ops(OpRegistry& r);       // onnx/ops/reduce_unpool.cpp (called by register_reduce_ops)
void register_det_ops(OpRegistry& r);          // onnx/ops/reduce_det.cpp (called by register_reduce_ops)
void register_loss_ops(OpRegistry& r);         // onnx/ops/reduce_loss.cpp (called by register_reduce_ops)

}  // namespace ember::onnx_import::math
