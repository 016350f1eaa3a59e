#pragma once
// ONNX's control-flow operators (If, Loop, Scan; onnx/ops/control_flow.cpp), registered with the rnn family
// (register_rnn_ops) so that op_registry.cpp's list of families stays as it is.
#include "onnx/op_registry.hpp"

namespace ember::onnx_import {

void register_control_flow_ops(OpRegistry& r);

}  // namespace ember::onnx_import
