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

// The attribute a Conv + Relu carries when a MaxPool was fused into it too (Ints: kernel h, w, strides h, w, pads
// h, w): its result is max pooled (onnx/ops/nn_conv.cpp, the runtime's conv2d_relu_max_pool).
inline constexpr std::string_view kConvFusedMaxPoolAttr = "ember.conv_fused_max_pool";

// A Conv of the default domain whose single output is read only by one Relu (not a graph output, read by no other
// node) becomes one Conv marked kConvFusedReluAttr that writes the Relu's output; the Relu is dropped. Then such a
// Conv whose output is read only by one 2-D MaxPool that the runtime's max_pool2d computes as it is (no Indices
// output, no auto_pad, ceil_mode or dilation, symmetric pads of at most half the kernel) also takes the MaxPool
// (kConvFusedMaxPoolAttr). Graphs with subgraphs (If / Loop / Scan bodies may read any outer value by name) are
// left as they are.
void fuse_conv_relu(Graph& g);

}  // namespace ember::onnx_import
