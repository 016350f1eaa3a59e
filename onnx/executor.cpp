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

const Converter& Executor::converter_of(const Node& node) const {
  const Converter* fn = nullptr;
  if (table_) {
    auto it = table_->find(&node);
    if (it != table_->end()) fn = it->second;
  }
  // Not in the table: a graph a converter made itself, or no table given.
  if (!fn && (node.domain.empty() || node.domain == "ai.onnx")) fn = op_registry().find(node.op_type, opset_);
  if (!fn)
    throw UnsupportedOperatorError(fmt::format("{} has no Ember converter at opset {}", node.describe(), opset_));
  return *fn;
}

std::vector<std::optional<DynTensor>> Executor::convert(const Converter& fn, OpContext& ctx, const Scope& scope) {
  const Node& node = ctx.node;
  ScopeGuard guard(current_, &scope);
  try {
    return fn(ctx);
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

void Executor::run_node(const Node& node, Scope& scope) {
  const Converter& fn = converter_of(node);
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
  std::vector<std::optional<DynTensor>> results = convert(fn, ctx, scope);
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

namespace ember::onnx_import {

std::optional<SlotPlan> plan_slots(const Graph& g, const ConverterTable& table) {
  SlotPlan plan;
  plan.graph = &g;
  std::unordered_map<std::string, std::size_t> slot_of;
  const auto define = [&](const std::string& name) {
    auto [it, fresh] = slot_of.emplace(name, plan.slots);
    if (fresh) ++plan.slots;
    return it->second;
  };
  for (const ValueInfo& v : g.inputs) plan.input_slots.push_back(define(v.name));
  for (const auto& [name, data] : g.initializers) plan.initializer_slots.push_back(define(name));
  // last[slot]: the last step that reads or writes it (SIZE_MAX: a graph output, kept to the end).
  std::vector<std::size_t> last(plan.slots, 0);
  const auto touch = [&](std::size_t slot, std::size_t step) {
    if (slot >= last.size()) last.resize(slot + 1, 0);
    if (last[slot] != SlotPlan::kNone) last[slot] = step;
  };
  for (const Node& n : g.nodes) {
    for (const auto& [key, a] : n.attrs)
      if (a.type == Attribute::Type::Graph) return std::nullopt;
    auto fn = table.find(&n);
    if (fn == table.end()) return std::nullopt;
    SlotPlan::Step step{&n, fn->second, {}, {}, {}};
    const std::size_t index = plan.steps.size();
    for (const std::string& name : n.inputs) {
      if (name.empty()) {
        step.inputs.push_back(SlotPlan::kNone);
        continue;
      }
      auto it = slot_of.find(name);
      if (it == slot_of.end()) return std::nullopt;
      step.inputs.push_back(it->second);
      touch(it->second, index);
    }
    for (const std::string& name : n.outputs) {
      step.outputs.push_back(name.empty() ? SlotPlan::kNone : define(name));
      if (!name.empty()) touch(step.outputs.back(), index);
    }
    plan.steps.push_back(std::move(step));
  }
  last.resize(plan.slots, 0);
  for (const ValueInfo& v : g.outputs) {
    auto it = slot_of.find(v.name);
    if (it == slot_of.end()) return std::nullopt;
    plan.output_slots.push_back(it->second);
    last[it->second] = SlotPlan::kNone;
  }
  // Inputs and initializers nothing reads are dropped after the first step (or never held, without steps).
  for (std::size_t slot = 0; slot < plan.slots; ++slot)
    if (last[slot] != SlotPlan::kNone && !plan.steps.empty()) plan.steps[last[slot]].release.push_back(slot);
  return plan;
}

std::vector<DynTensor> Executor::run_planned(const SlotPlan& plan, const std::vector<DynTensor>& inputs,
                                             const std::vector<std::pair<std::string, DynTensor>>& initializers) {
  if (inputs.size() != plan.input_slots.size())
    throw OnnxError(fmt::format("graph {} takes {} input(s), got {}", quote_file_text(plan.graph->name, 96),
                                plan.input_slots.size(), inputs.size()));
  if (initializers.size() != plan.initializer_slots.size())
    throw OnnxError(fmt::format("graph has {} initializer(s), got {} values", plan.initializer_slots.size(),
                                initializers.size()));
  std::vector<std::optional<DynTensor>> slots(plan.slots);
  for (std::size_t i = 0; i < inputs.size(); ++i) slots[plan.input_slots[i]] = inputs[i];
  // After the inputs, as run() does: an initializer named like an input is its value.
  for (std::size_t i = 0; i < initializers.size(); ++i) slots[plan.initializer_slots[i]] = initializers[i].second;
  const Scope none;  // run_subgraph's outer scope: planned graphs have no subgraph nodes
  for (const SlotPlan::Step& step : plan.steps) {
    const Node& node = *step.node;
    OpContext ctx{node, opset_, device_, training_, {}, this};
    ctx.inputs.reserve(step.inputs.size());
    for (std::size_t i = 0; i < step.inputs.size(); ++i) {
      const std::size_t slot = step.inputs[i];
      if (slot == SlotPlan::kNone) {
        ctx.inputs.emplace_back(std::nullopt);
        continue;
      }
      if (!slots[slot])
        throw OnnxError(fmt::format("{}: input {} has no value", node.describe(), quote_file_text(node.inputs[i], 96)));
      ctx.inputs.emplace_back(*slots[slot]);
    }
    std::vector<std::optional<DynTensor>> results = convert(*step.converter, ctx, none);
    if (results.size() > node.outputs.size())
      throw OnnxError(fmt::format("{}: the converter returned {} outputs for {}", node.describe(), results.size(),
                                  node.outputs.size()));
    for (std::size_t i = 0; i < step.outputs.size(); ++i) {
      if (step.outputs[i] == SlotPlan::kNone) continue;
      if (i >= results.size() || !results[i])
        throw OnnxError(fmt::format("{}: output {} ({}) is not computed by Ember's converter", node.describe(), i,
                                    quote_file_text(node.outputs[i], 96)));
      slots[step.outputs[i]] = std::move(*results[i]);
    }
    ctx.inputs.clear();  // its copies would keep released values alive to the next step
    for (std::size_t slot : step.release) slots[slot].reset();
  }
  std::vector<DynTensor> out;
  out.reserve(plan.output_slots.size());
  for (std::size_t i = 0; i < plan.output_slots.size(); ++i) {
    const std::optional<DynTensor>& v = slots[plan.output_slots[i]];
    if (!v)
      throw OnnxError(
          fmt::format("graph output {} was not computed", quote_file_text(plan.graph->outputs[i].name, 96)));
    out.push_back(*v);
  }
  return out;
}

}  // namespace ember::onnx_import
