// ONNX operators of the core family: Constant, Identity, If, Loop, Scan (h-onnx-core).
#include "onnx/op_registry.hpp"

namespace ember::onnx_import {

void register_core_ops(OpRegistry& r) { (void)r; }

}  // namespace ember::onnx_import
