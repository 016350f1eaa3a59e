// ONNX operators of the shape family: Reshape, Transpose, Gather, Slice, Concat, Split, ..., Pad, TopK (h-onnx-shape).
#include "onnx/op_registry.hpp"

namespace ember::onnx_import {

void register_shape_ops(OpRegistry& r) { (void)r; }

}  // namespace ember::onnx_import
