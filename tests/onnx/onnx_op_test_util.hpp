#pragma once
// Runs one ONNX operator's converter on hand-made inputs, without a model file or the ONNX library: what the
// per-family converter tests (tests/onnx/*_ops_test.cpp) build on. Inputs and outputs are host TensorData.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "onnx/op_registry.hpp"

namespace ember::onnx_import::test {

inline Attribute int_attr(int64_t v) {
  Attribute a;
  a.type = Attribute::Type::Int;
  a.i = v;
  return a;
}
inline Attribute float_attr(double v) {
  Attribute a;
  a.type = Attribute::Type::Float;
  a.f = v;
  return a;
}
inline Attribute ints_attr(std::vector<int64_t> v) {
  Attribute a;
  a.type = Attribute::Type::Ints;
  a.ints = std::move(v);
  return a;
}
inline Attribute string_attr(std::string v) {
  Attribute a;
  a.type = Attribute::Type::String;
  a.s = std::move(v);
  return a;
}

// A node with the given input / output names (for graphs built by hand: executor, OnnxModel, control flow).
inline Node node(std::string op, std::vector<std::string> ins, std::vector<std::string> outs,
                 std::map<std::string, Attribute, std::less<>> attrs = {}) {
  Node n;
  n.op_type = std::move(op);
  n.inputs = std::move(ins);
  n.outputs = std::move(outs);
  n.attrs = std::move(attrs);
  return n;
}
inline Attribute tensor_attr(TensorData d) {
  Attribute a;
  a.type = Attribute::Type::Tensor;
  a.t = std::make_shared<const TensorData>(std::move(d));
  return a;
}
inline Attribute graph_attr(Graph g) {
  Attribute a;
  a.type = Attribute::Type::Graph;
  a.g = std::make_shared<const Graph>(std::move(g));
  return a;
}

// A node of `op_type` with inputs in0.., outputs out0.. (an empty optional input stays "").
inline Node make_node(std::string op_type, std::size_t num_inputs, std::size_t num_outputs,
                      std::map<std::string, Attribute, std::less<>> attrs = {}) {
  Node n;
  n.op_type = std::move(op_type);
  for (std::size_t i = 0; i < num_inputs; ++i) n.inputs.push_back("in" + std::to_string(i));
  for (std::size_t i = 0; i < num_outputs; ++i) n.outputs.push_back("out" + std::to_string(i));
  n.attrs = std::move(attrs);
  return n;
}

// Runs `node` at `opset` on the CPU; nullopt inputs are omitted optional inputs.
inline std::vector<std::optional<TensorData>> run_op(const Node& node, int64_t opset,
                                                     const std::vector<std::optional<TensorData>>& inputs,
                                                     bool training = false) {
  const Converter* fn = op_registry().find(node.op_type, opset);
  if (!fn) throw OnnxError(node.op_type + " is not registered at opset " + std::to_string(opset));
  OpContext ctx{node, opset, capi::cpu_device(), training, {}, nullptr};
  for (const auto& in : inputs) {
    if (in) ctx.inputs.emplace_back(capi::from_data(capi::cpu_device(), *in));
    else ctx.inputs.emplace_back(std::nullopt);
  }
  std::vector<std::optional<TensorData>> out;
  for (const auto& t : (*fn)(ctx)) {
    if (t) out.emplace_back(capi::to_data(*t));
    else out.emplace_back(std::nullopt);
  }
  return out;
}

}  // namespace ember::onnx_import::test
