// Graph validation and topological sorting, and the load-time check for unsupported operators (onnx/parse.hpp).
// Plain IR work, no protobuf: the parser calls it on what it read, OnnxModel on hand-built IR.
#include <fmt/format.h>

#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "onnx/op_registry.hpp"
#include "onnx/parse.hpp"
#include "records/tensor_name.hpp"

namespace ember::onnx_import {

namespace {

constexpr int kMaxDepth = 64;  // hand-built IR; the parser bounds depth far lower (ParseLimits::max_graph_depth)

// Names a graph uses but does not define (its subgraphs' included): what it reads from enclosing graphs.
void collect_free_names(const Graph& g, std::unordered_set<std::string>& out, int depth) {
  if (depth > kMaxDepth) throw OnnxError(fmt::format("subgraphs nested deeper than {}", kMaxDepth));
  std::unordered_set<std::string> defined;
  for (const ValueInfo& v : g.inputs) defined.insert(v.name);
  for (const auto& [name, t] : g.initializers) defined.insert(name);
  for (const Node& n : g.nodes)
    for (const std::string& o : n.outputs) defined.insert(o);
  for (const Node& n : g.nodes) {
    for (const std::string& in : n.inputs)
      if (!in.empty() && !defined.count(in)) out.insert(in);
    for (const auto& [key, a] : n.attrs) {
      if (a.type != Attribute::Type::Graph || !a.g) continue;
      std::unordered_set<std::string> inner;
      collect_free_names(*a.g, inner, depth + 1);
      for (const std::string& name : inner)
        if (!defined.count(name)) out.insert(name);
    }
  }
  for (const ValueInfo& v : g.outputs)
    if (!defined.count(v.name)) out.insert(v.name);
}

void sort_and_check(Graph& g, const std::unordered_set<std::string>& outer, int depth) {
  if (depth > kMaxDepth) throw OnnxError(fmt::format("subgraphs nested deeper than {}", kMaxDepth));
  const std::string where = g.name.empty() ? std::string("graph") : "graph " + quote_file_text(g.name, 96);
  // name -> producing node (-1: a graph input or initializer)
  std::unordered_map<std::string, int64_t> producer;
  auto define = [&](const std::string& name, int64_t by, const std::string& what) {
    if (name.empty()) throw OnnxError(fmt::format("{}: {} has an empty name", where, what));
    if (!producer.emplace(name, by).second)
      throw OnnxError(fmt::format("{}: value {} is defined twice (again by {})", where, quote_file_text(name, 96),
                                  what));
  };
  for (const ValueInfo& v : g.inputs) define(v.name, -1, "an input");
  for (const auto& [name, t] : g.initializers) define(name, -1, "an initializer");
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& o : g.nodes[i].outputs)
      if (!o.empty()) define(o, static_cast<int64_t>(i), g.nodes[i].describe());

  // What a subgraph may read: everything this graph or an enclosing one defines.
  std::unordered_set<std::string> visible = outer;
  for (const auto& [name, by] : producer) visible.insert(name);

  const std::size_t n = g.nodes.size();
  std::vector<std::vector<std::size_t>> users(n);
  std::vector<std::size_t> pending(n, 0);
  auto depend = [&](std::size_t i, const std::string& name) {
    auto it = producer.find(name);
    if (it == producer.end()) {
      if (outer.count(name)) return;
      throw OnnxError(fmt::format("{}: input {} of {} is not defined by any node, input or initializer", where,
                                  quote_file_text(name, 96), g.nodes[i].describe()));
    }
    if (it->second < 0) return;
    users[static_cast<std::size_t>(it->second)].push_back(i);
    ++pending[i];
  };
  for (std::size_t i = 0; i < n; ++i) {
    Node& node = g.nodes[i];
    for (const std::string& in : node.inputs)
      if (!in.empty()) depend(i, in);
    for (auto& [key, a] : node.attrs) {
      if (a.type != Attribute::Type::Graph || !a.g) continue;
      // The IR shares subgraphs as const; sorting happens once, here, before anyone else holds them.
      auto sub = std::make_shared<Graph>(*a.g);
      sort_and_check(*sub, visible, depth + 1);
      std::unordered_set<std::string> free;
      collect_free_names(*sub, free, depth + 1);
      for (const std::string& name : free) depend(i, name);
      a.g = std::move(sub);
    }
  }
  for (const ValueInfo& v : g.outputs)
    if (!producer.count(v.name) && !outer.count(v.name))
      throw OnnxError(fmt::format("{}: output {} is not defined by any node, input or initializer", where,
                                  quote_file_text(v.name, 96)));

  // Kahn's algorithm, taking the lowest file position first so that a sorted file keeps its order.
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<std::size_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    const std::size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (std::size_t u : users[i])
      if (--pending[u] == 0) ready.push(u);
  }
  if (order.size() != n) {
    for (std::size_t i = 0; i < n; ++i)
      if (pending[i] != 0)
        throw OnnxError(fmt::format("{}: the nodes form a cycle ({} depends on its own output)", where,
                                    g.nodes[i].describe()));
  }
  std::vector<Node> sorted;
  sorted.reserve(n);
  for (std::size_t i : order) sorted.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(sorted);
}

void collect_unsupported(const Graph& g, const Model& m, std::vector<std::string>& out, int depth) {
  if (depth > kMaxDepth) throw OnnxError(fmt::format("subgraphs nested deeper than {}", kMaxDepth));
  for (const Node& node : g.nodes) {
    const bool default_domain = node.domain.empty() || node.domain == "ai.onnx";
    if (!default_domain) {
      out.push_back(fmt::format("{} (domain {})", node.describe(), quote_file_text(node.domain, 64)));
    } else {
      auto it = m.opsets.find("");
      const int64_t opset = it == m.opsets.end() ? 0 : it->second;
      if (!op_registry().find(node.op_type, opset)) out.push_back(fmt::format("{} at opset {}", node.describe(), opset));
    }
    for (const auto& [key, a] : node.attrs)
      if (a.type == Attribute::Type::Graph && a.g) collect_unsupported(*a.g, m, out, depth + 1);
  }
}

}  // namespace

void sort_and_check_graph(Graph& g, const std::vector<std::string>& outer) {
  sort_and_check(g, std::unordered_set<std::string>(outer.begin(), outer.end()), 0);
}

void check_supported(const Model& model) {
  std::vector<std::string> missing;
  collect_unsupported(model.graph, model, missing, 0);
  if (missing.empty()) return;
  constexpr std::size_t kListed = 40;
  std::string list;
  for (std::size_t i = 0; i < missing.size() && i < kListed; ++i) list += (i ? "; " : "") + missing[i];
  if (missing.size() > kListed) list += fmt::format("; and {} more", missing.size() - kListed);
  throw UnsupportedOperatorError(
      fmt::format("{} node(s) have no Ember converter: {}", missing.size(), list));
}

}  // namespace ember::onnx_import
