#pragma once
// Runs an importer graph (onnx/ir.hpp) on a device: each node's converter (onnx/op_registry.hpp) in the parser's
// topological order, over a value map of runtime tensors. Graphs are checked at load (onnx/parse.hpp), so a name
// missing here is a programming error reported as an OnnxError, not a crash.
//
// Subgraphs (If / Loop / Scan): a converter calls ctx.executor->run_subgraph(body, inputs); the body sees, besides its
// own inputs and initializers, every value of the scopes that enclose the node being converted (ONNX's outer-scope
// references), and returns its outputs in order.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "onnx/op_registry.hpp"

namespace ember::onnx_import {

// Values by name in one graph's run; `parent` is the scope of the node whose subgraph runs.
struct Scope {
  std::unordered_map<std::string, DynTensor> values;
  const Scope* parent = nullptr;
  const DynTensor* find(const std::string& name) const;
};

// Each node's converter, looked up once per model (OnnxModel) rather than once per node and call.
using ConverterTable = std::unordered_map<const Node*, const Converter*>;
// The table of `g` and its subgraphs at `opset` (nodes without a converter are left out).
ConverterTable converter_table(const Graph& g, int64_t opset);

class Executor {
 public:
  // `opsets` as in Model::opsets ("" = ai.onnx).
  Executor(const DynDevice& device, std::map<std::string, int64_t, std::less<>> opsets, bool training);

  // Runs the main graph: `inputs` bind g.inputs in order, `preset` (the model's initializers as current params)
  // is looked up before g.initializers, which are uploaded when not preset.
  std::vector<DynTensor> run(const Graph& g, const std::vector<DynTensor>& inputs,
                             const std::unordered_map<std::string, DynTensor>& preset = {});

  // For the converters of If / Loop / Scan, while their node runs: `body` with its inputs bound in order (the count
  // must match body.inputs) inside the scope of that node. Returns body.outputs in order.
  std::vector<DynTensor> run_subgraph(const Graph& body, const std::vector<DynTensor>& inputs);

  // Converters from `table` (which must outlive the executor) instead of registry lookups.
  void use_converters(const ConverterTable* table) { table_ = table; }

  const DynDevice& device() const { return device_; }
  bool training() const { return training_; }
  // The model's opset of the default domain.
  int64_t opset() const { return opset_; }

 private:
  std::vector<DynTensor> run_in(const Graph& g, const std::vector<DynTensor>& inputs, Scope& scope,
                                const std::unordered_map<std::string, DynTensor>& preset);
  void run_node(const Node& node, Scope& scope);

  DynDevice device_;
  std::map<std::string, int64_t, std::less<>> opsets_;
  int64_t opset_ = 0;
  bool training_ = false;
  const ConverterTable* table_ = nullptr;
  const Scope* current_ = nullptr;  // the scope of the node being converted (for run_subgraph)
  int depth_ = 0;
};

}  // namespace ember::onnx_import
