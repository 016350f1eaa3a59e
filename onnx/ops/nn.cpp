// ONNX operators of the nn family: Conv, pools, norms, Gemm/MatMul, Dropout, Resize (h-onnx-nn).
#include "onnx/op_registry.hpp"

namespace ember::onnx_import {

void register_nn_ops(OpRegistry& r) { (void)r; }

}  // namespace ember::onnx_import
