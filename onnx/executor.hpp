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

// A main graph resolved at load to numbered value slots (issue 19's per-node overhead): each node's inputs and
// outputs as slot numbers and its converter, so a call looks no name up, builds no map, and drops each value after
// its last reader (its buffer goes back to the allocator's cache while the rest of the graph runs, instead of all
// of them at the end). At batch 1 the name maps of the Scope path were ~10 % of the digits CNN's inference.
struct SlotPlan {
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);  // an omitted optional input ("")
  struct Step {
    const Node* node = nullptr;
    const Converter* converter = nullptr;
    std::vector<std::size_t> inputs;   // kNone where the input is omitted
    std::vector<std::size_t> outputs;  // kNone where the output is not wanted
    std::vector<std::size_t> release;  // slots no later step or graph output reads
  };
  const Graph* graph = nullptr;  // the graph planned (for names in errors)
  std::size_t slots = 0;
  std::vector<std::size_t> input_slots;        // g.inputs in order
  std::vector<std::size_t> initializer_slots;  // g.initializers in order
  std::vector<Step> steps;
  std::vector<std::size_t> output_slots;  // g.outputs in order
};
// nullopt where the Scope path must run `g`: a node with a subgraph (its body reads outer values by name), a node
// without a converter in `table`, or a name nothing defines (the Scope path reports it as it always has).
std::optional<SlotPlan> plan_slots(const Graph& g, const ConverterTable& table);

class Executor {
 public:
  // `opsets` as in Model::opsets ("" = ai.onnx).
  Executor(const DynDevice& device, std::map<std::string, int64_t, std::less<>> opsets, bool training);

  // Runs the main graph: `inputs` bind g.inputs in order, `preset` (the model's initializers as current params)
  // is looked up before g.initializers, which are uploaded when not preset.
  std::vector<DynTensor> run(const Graph& g, const std::vector<DynTensor>& inputs,
                             const std::unordered_map<std::string, DynTensor>& preset = {});

  // Runs the graph `plan` was made from: `inputs` bind its inputs in order, `initializers` (the model's current
  // params, in g.initializers' order) its initializers. The same results and errors as run().
  std::vector<DynTensor> run_planned(const SlotPlan& plan, const std::vector<DynTensor>& inputs,
                                     const std::vector<std::pair<std::string, DynTensor>>& initializers);

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
  const Converter& converter_of(const Node& node) const;
  // fn(ctx) with the node named in its errors, `scope` the current one for run_subgraph.
  std::vector<std::optional<DynTensor>> convert(const Converter& fn, OpContext& ctx, const Scope& scope);

  DynDevice device_;
  std::map<std::string, int64_t, std::less<>> opsets_;
  int64_t opset_ = 0;
  bool training_ = false;
  const ConverterTable* table_ = nullptr;
  const Scope* current_ = nullptr;  // the scope of the node being converted (for run_subgraph)
  int depth_ = 0;
};

}  // namespace ember::onnx_import
