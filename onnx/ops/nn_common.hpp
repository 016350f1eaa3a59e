#pragma once
// Shared pieces of the nn family's converters (onnx/ops/nn*.cpp): the per-part register functions that
// register_nn_ops calls, and small compositions of runtime ops (reductions over several dims, per-channel
// broadcasting, ONNX's window geometry) that convolutions, pools and norms all need.
#include <cstdint>
#include <string>
#include <vector>

#include "onnx/op_registry.hpp"

namespace ember::onnx_import::nn_ops {

using Outputs = std::vector<std::optional<DynTensor>>;

void register_conv(OpRegistry& r);    // Conv, ConvTranspose (nn_conv.cpp)
void register_pool(OpRegistry& r);    // MaxPool, AveragePool, LpPool, Global*Pool (nn_pool.cpp)
void register_norm(OpRegistry& r);    // BatchNormalization, LayerNormalization, InstanceNormalization, ... (nn_norm.cpp)
void register_resize(OpRegistry& r);  // Resize, Upsample (nn_resize.cpp)
void register_quant(OpRegistry& r);   // QLinearConv, QLinearMatMul (nn_quant.cpp)

// Conv's computation on float x, w (and bias) with the node's attributes (nn_conv.cpp); QLinearConv reuses it on
// zero-point-shifted values. relu: a Relu fused into the Conv at load (onnx/fuse_conv.hpp) follows it.
DynTensor conv_forward(const OpContext& ctx, const DynTensor& x, const DynTensor& w, const DynTensor* bias,
                       bool relu = false);

inline int64_t rank_of(const DynTensor& t) { return static_cast<int64_t>(capi::shape(t).rank()); }
inline std::vector<int64_t> dims_of(const DynTensor& t) {
  return capi::shape(t).dims;
}

// A float input (the runtime's conv / pool / norm ops are float-only); an OnnxError naming the dtype otherwise.
const DynTensor& float_input(const OpContext& ctx, std::size_t i);

// A small float or integer input (ratio, scales, roi) read to the host as doubles, converted there: F64 tensors
// exist on the CPU only, so no cast runs on the device. At most `max` values (an OnnxError beyond).
std::vector<double> host_doubles(const OpContext& ctx, std::size_t i, int64_t max = 64);
// The float type that holds integer inputs exactly where it can: F64 on the CPU, F32 on GPU backends.
DType exact_float_for(const DynTensor& x);

// x reduced by `op` over `axes` (wrapped, any order), keeping them as size-1 dims.
DynTensor reduce_keep(const DynTensor& x, ReduceOp op, std::vector<int64_t> axes);
// Mean and population variance over `axes`, kept as size-1 dims.
struct Moments {
  DynTensor mean, var;
};
Moments moments(const DynTensor& x, const std::vector<int64_t>& axes);

// A [C] tensor as [1, C, 1, ..., 1] for an input of `rank` (per-channel parameters of NCHW layouts).
DynTensor per_channel(const DynTensor& v, int64_t rank);

// The spatial geometry of a windowed op (Conv, pools) along each spatial dim, from the node's kernel_shape /
// strides / dilations / pads / auto_pad / ceil_mode: begin and end padding and the output size.
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pad_begin, pad_end, out;
};
// in: the input's spatial sizes; kernel: the kernel's (from the weight, or kernel_shape for pools).
Window window_geometry(const OpContext& ctx, const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                       bool ceil_mode);

// The node's int-list attribute `key` with one value per spatial dim (default `def` for each), checked.
std::vector<int64_t> spatial_attr(const OpContext& ctx, const char* key, std::size_t n, int64_t def);

// Pads the last spatial dims of an N, C, spatial... tensor: begin/end per spatial dim (negative crops).
DynTensor pad_spatial(const DynTensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                      double value);

}  // namespace ember::onnx_import::nn_ops
