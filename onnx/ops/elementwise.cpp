// ONNX operators of the elementwise family: math, comparisons, logic, activations, Cast, Clip, Where, Softmax family, Einsum, CumSum (h-onnx-math).
#include "onnx/op_registry.hpp"

namespace ember::onnx_import {

void register_elementwise_ops(OpRegistry& r) { (void)r; }

}  // namespace ember::onnx_import
