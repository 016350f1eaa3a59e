// The graph executor (onnx/executor.hpp).
#include "onnx/executor.hpp"

#include <fmt/format.h>

#include <exception>

#include "records/tensor_name.hpp"

namespace ember::onnx_import {

namespace {

// Loop bodies may run If nodes that run Loops...: a bound on run_subgraph's recursion, far above real models.
constexpr int kMaxRunDepth = 64;

// Restores the executor's current scope when a node's conversion ends, however it ends.
class ScopeGuard {
 public:
  ScopeGuard(const Scope*& slot, const Scope* value) : slot_(slot), saved_(slot) { slot_ = value; }
  ~ScopeGuard() { slot_ = saved_; }
  ScopeGuard(const ScopeGuard&) = delete;
  ScopeGuard& operator=(const ScopeGuard&) = delete;

 private:
  const Scope*& slot_;
  const Scope* saved_;
};

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

namespace {
void fill_table(const Graph& g, int64_t opset, ConverterTable& table) {
  for (const Node& n : g.nodes) {
    if (n.domain.empty() || n.domain == "ai.onnx")
      if (const Converter* fn = op_registry().find(n.op_type, opset)) table.emplace(&n, fn);
    for (const auto& [key, a] : n.attrs)
      if (a.type == Attribute::Type::Graph && a.g) fill_table(*a.g, opset, table);
  }
}
}  // namespace

ConverterTable converter_table(const Graph& g, int64_t opset) {
  ConverterTable table;
  fill_table(g, opset, table);
  return table;
}

const DynTensor* Scope::find(const std::string& name) const {
  for (const Scope* s = this; s; s = s->parent) {
    auto it = s->values.find(name);
    if (it != s->values.end()) return &it->second;
  }
  return nullptr;
}

Executor::Executor(const DynDevice& device, std::map<std::string, int64_t, std::less<>> opsets, bool training)
    : device_(device), opsets_(std::move(opsets)), training_(training) {
  auto it = opsets_.find("");
  opset_ = it == opsets_.end() ? 0 : it->second;
}

std::vector<DynTensor> Executor::run(const Graph& g, const std::vector<DynTensor>& inputs,
                                     const std::unordered_map<std::string, DynTensor>& preset) {
  Scope scope;
  return run_in(g, inputs, scope, preset);
}

std::vector<DynTensor> Executor::run_subgraph(const Graph& body, const std::vector<DynTensor>& inputs) {
  if (!current_) throw OnnxError("run_subgraph: called outside a node's conversion");
  if (depth_ >= kMaxRunDepth) throw OnnxError(fmt::format("subgraphs run nested deeper than {}", kMaxRunDepth));
  Scope scope;
  scope.parent = current_;
  ++depth_;
  struct Depth {
    int& d;
    ~Depth() { --d; }
  } restore{depth_};
  return run_in(body, inputs, scope, {});
}

std::vector<DynTensor> Executor::run_in(const Graph& g, const std::vector<DynTensor>& inputs, Scope& scope,
                                        const std::unordered_map<std::string, DynTensor>& preset) {
  if (inputs.size() != g.inputs.size())
    throw OnnxError(fmt::format("graph {} takes {} input(s), got {}", quote_file_text(g.name, 96), g.inputs.size(),
                                inputs.size()));
  for (std::size_t i = 0; i < inputs.size(); ++i) scope.values.insert_or_assign(g.inputs[i].name, inputs[i]);
  for (const auto& [name, data] : g.initializers) {
    auto it = preset.find(name);
    scope.values.insert_or_assign(name, it != preset.end() ? it->second : upload(device_, data));
  }
  for (const Node& node : g.nodes) run_node(node, scope);
  std::vector<DynTensor> out;
  out.reserve(g.outputs.size());
  for (const ValueInfo& v : g.outputs) {
    const DynTensor* t = scope.find(v.name);
    if (!t) throw OnnxError(fmt::format("graph output {} was not computed", quote_file_text(v.name, 96)));
    out.push_back(*t);
  }
  return out;
}

void Executor::run_node(const Node& node, Scope& scope) {
  const Converter* fn = nullptr;
  if (table_) {
    auto it = table_->find(&node);
    if (it != table_->end()) fn = it->second;
  }
  // Not in the table: a graph a converter made itself, or no table given.
  if (!fn && (node.domain.empty() || node.domain == "ai.onnx")) fn = op_registry().find(node.op_type, opset_);
  if (!fn)
    throw UnsupportedOperatorError(fmt::format("{} has no Ember converter at opset {}", node.describe(), opset_));
  OpContext ctx{node, opset_, device_, training_, {}, this};
  ctx.inputs.reserve(node.inputs.size());
  for (const std::string& name : node.inputs) {
    if (name.empty()) {
      ctx.inputs.emplace_back(std::nullopt);
      continue;
    }
    const DynTensor* t = scope.find(name);
    if (!t) throw OnnxError(fmt::format("{}: input {} has no value", node.describe(), quote_file_text(name, 96)));
    ctx.inputs.emplace_back(*t);
  }
  std::vector<std::optional<DynTensor>> results;
  {
    ScopeGuard guard(current_, &scope);
    try {
      results = (*fn)(ctx);
    } catch (const OnnxError&) {
      throw;
    } catch (const capi::UnsupportedError& e) {
      // Valid, but not available on this backend or build: keeps its type (ember.h: UNSUPPORTED), names the node.
      if (starts_with(e.what(), node.describe())) throw;
      throw capi::UnsupportedError(fmt::format("{}: {}", node.describe(), e.what()));
    } catch (const Error& e) {
      throw OnnxError(fmt::format("{}: {}", node.describe(), e.what()));
    }
  }
  if (results.size() > node.outputs.size())
    throw OnnxError(fmt::format("{}: the converter returned {} outputs for {}", node.describe(), results.size(),
                                node.outputs.size()));
  for (std::size_t i = 0; i < node.outputs.size(); ++i) {
    const std::string& name = node.outputs[i];
    if (name.empty()) continue;
    if (i >= results.size() || !results[i])
      throw OnnxError(fmt::format("{}: output {} ({}) is not computed by Ember's converter", node.describe(), i,
                                  quote_file_text(name, 96)));
    scope.values.insert_or_assign(name, std::move(*results[i]));
  }
}

}  // namespace ember::onnx_import
