// ONNX operators of the reduce family: Reduce*, ArgMax/ArgMin (h-onnx-math).
#include "onnx/op_registry.hpp"

namespace ember::onnx_import {

void register_reduce_ops(OpRegistry& r) { (void)r; }

}  // namespace ember::onnx_import
