#pragma once
// Load-time rewrites of an importer graph that let one converter do the work of two nodes (ONNX Runtime's graph
// optimizations do the same). Each keeps the graph's results; the converters of the rewritten nodes read the marks
// that a rewrite leaves.
#include <string_view>

#include "onnx/ir.hpp"

namespace ember::onnx_import {

// The attribute a fused Gemm carries (Int 1): its result goes through ReLU (onnx/ops/nn.cpp gemm). The prefix
// keeps it apart from ONNX's own attribute names.
inline constexpr std::string_view kFusedReluAttr = "ember.fused_relu";

// A Gemm of the default domain whose single output is read only by one Relu (not a graph output, read by no other
// node) becomes one Gemm marked kFusedReluAttr that writes the Relu's output; the Relu is dropped. Graphs with
// subgraphs (If / Loop / Scan bodies may read any outer value by name) are left as they are.
void fuse_gemm_relu(Graph& g);

}  // namespace ember::onnx_import
