// Load-time graph rewrites (onnx/fuse.hpp).
#include "onnx/fuse.hpp"

#include <string>
#include <unordered_map>
#include <vector>

namespace ember::onnx_import {

namespace {
bool default_domain(const Node& n) { return n.domain.empty() || n.domain == "ai.onnx"; }
}  // namespace

void fuse_gemm_relu(Graph& g) {
  for (const Node& n : g.nodes)
    for (const auto& [key, a] : n.attrs)
      if (a.type == Attribute::Type::Graph) return;
  // Readers of each value; a graph output counts as a reader that must see the Gemm's own result.
  std::unordered_map<std::string, int> readers;
  for (const Node& n : g.nodes)
    for (const std::string& in : n.inputs)
      if (!in.empty()) ++readers[in];
  for (const ValueInfo& v : g.outputs) readers[v.name] += 2;
  std::unordered_map<std::string, std::size_t> gemm_of;  // output name -> index of the Gemm that writes it
  std::vector<bool> drop(g.nodes.size(), false);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    if (!default_domain(n)) continue;
    if (n.op_type == "Gemm" && n.outputs.size() == 1 && !n.outputs[0].empty()) {
      gemm_of[n.outputs[0]] = i;
      continue;
    }
    if (n.op_type != "Relu" || n.inputs.size() != 1 || n.outputs.size() != 1 || n.outputs[0].empty()) continue;
    auto it = gemm_of.find(n.inputs[0]);
    if (it == gemm_of.end() || readers[n.inputs[0]] != 1) continue;
    Node& gemm = g.nodes[it->second];
    if (gemm.has_attr(kFusedReluAttr)) continue;
    Attribute mark;
    mark.type = Attribute::Type::Int;
    mark.i = 1;
    gemm.attrs.emplace(std::string(kFusedReluAttr), mark);
    gemm.outputs[0] = n.outputs[0];
    gemm_of.erase(it);
    drop[i] = true;
  }
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

}  // namespace ember::onnx_import
