#pragma once
// The load-time rewrite Conv + Relu -> one Conv (issue 19), as ONNX Runtime's graph optimizer does: the converter
// of the marked Conv calls the runtime's conv2d_relu, which under no_grad applies the ReLU in the convolution's
// output pass (oneDNN post-op on the CPU) instead of a second full pass over the activations.
#include <string_view>

#include "onnx/ir.hpp"

namespace ember::onnx_import {

// The attribute a fused Conv carries (Int 1): its result goes through ReLU (onnx/ops/nn_conv.cpp). The prefix
// keeps it apart from ONNX's own attribute names.
inline constexpr std::string_view kConvFusedReluAttr = "ember.conv_fused_relu";

// A Conv of the default domain whose single output is read only by one Relu (not a graph output, read by no other
// node) becomes one Conv marked kConvFusedReluAttr that writes the Relu's output; the Relu is dropped. Graphs with
// subgraphs (If / Loop / Scan bodies may read any outer value by name) are left as they are.
void fuse_conv_relu(Graph& g);

}  // namespace ember::onnx_import
