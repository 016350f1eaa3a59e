// Conv + Relu -> one marked Conv (onnx/fuse_conv.hpp).
#include "onnx/fuse_conv.hpp"

#include <string>
#include <unordered_map>
#include <vector>

namespace ember::onnx_import {
namespace {

bool default_domain(const Node& n) { return n.domain.empty() || n.domain == "ai.onnx"; }

bool has_subgraph(const Graph& g) {
  for (const Node& n : g.nodes)
    for (const auto& [key, a] : n.attrs)
      if (a.type == Attribute::Type::Graph) return true;
  return false;
}

// Readers of each value; a graph output counts as readers enough that the writer's own result must stay.
std::unordered_map<std::string, int> readers_of(const Graph& g) {
  std::unordered_map<std::string, int> readers;
  for (const Node& n : g.nodes)
    for (const std::string& in : n.inputs)
      if (!in.empty()) ++readers[in];
  for (const ValueInfo& v : g.outputs) readers[v.name] += 2;
  return readers;
}

// The MaxPool as [kh, kw, sh, sw, ph, pw] when the runtime's max_pool2d computes it unchanged; empty otherwise.
std::vector<int64_t> plain_max_pool(const Node& n) {
  if (n.outputs.size() != 1 && !(n.outputs.size() == 2 && n.outputs[1].empty())) return {};
  const auto ints = [&](const char* key) {
    const auto it = n.attrs.find(key);
    return it == n.attrs.end() || it->second.type != Attribute::Type::Ints ? std::vector<int64_t>{} : it->second.ints;
  };
  for (const auto& [key, a] : n.attrs) {
    const bool known = key == "kernel_shape" || key == "strides" || key == "pads" || key == "dilations" ||
                       key == "ceil_mode" || key == "auto_pad" || key == "storage_order";
    if (!known) return {};
  }
  const auto attr_is = [&](const char* key, auto check) {
    const auto it = n.attrs.find(key);
    return it == n.attrs.end() || check(it->second);
  };
  if (!attr_is("ceil_mode", [](const Attribute& a) { return a.type == Attribute::Type::Int && a.i == 0; }) ||
      !attr_is("auto_pad", [](const Attribute& a) { return a.type == Attribute::Type::String && a.s == "NOTSET"; }) ||
      !attr_is("dilations", [](const Attribute& a) {
        return a.type == Attribute::Type::Ints && a.ints == std::vector<int64_t>{1, 1};
      }))
    return {};
  const std::vector<int64_t> k = ints("kernel_shape");
  std::vector<int64_t> s = ints("strides"), p = ints("pads");
  if (s.empty() && !n.attrs.count("strides")) s = {1, 1};
  if (p.empty() && !n.attrs.count("pads")) p = {0, 0, 0, 0};
  if (k.size() != 2 || s.size() != 2 || p.size() != 4 || p[0] != p[2] || p[1] != p[3]) return {};
  for (int i = 0; i < 2; ++i)
    if (k[i] < 1 || k[i] > (int64_t{1} << 31) || s[i] < 1 || s[i] > (int64_t{1} << 31) || p[i] < 0 || p[i] > k[i] / 2)
      return {};
  return {k[0], k[1], s[0], s[1], p[0], p[1]};
}

// A Conv marked with a fused Relu whose output only one plain MaxPool reads takes the MaxPool.
void fuse_max_pools(Graph& g) {
  std::unordered_map<std::string, int> readers = readers_of(g);
  std::unordered_map<std::string, std::size_t> conv_of;
  std::vector<bool> drop(g.nodes.size(), false);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    if (!default_domain(n)) continue;
    if (n.op_type == "Conv" && n.has_attr(kConvFusedReluAttr) && !n.has_attr(kConvFusedMaxPoolAttr)) {
      conv_of[n.outputs[0]] = i;
      continue;
    }
    if (n.op_type != "MaxPool" || n.inputs.size() != 1 || n.outputs.empty() || n.outputs[0].empty()) continue;
    auto it = conv_of.find(n.inputs[0]);
    if (it == conv_of.end() || readers[n.inputs[0]] != 1) continue;
    const std::vector<int64_t> pool = plain_max_pool(n);
    if (pool.empty()) continue;
    Node& conv = g.nodes[it->second];
    Attribute mark;
    mark.type = Attribute::Type::Ints;
    mark.ints = pool;
    conv.attrs.emplace(std::string(kConvFusedMaxPoolAttr), mark);
    conv.outputs[0] = n.outputs[0];
    conv_of.erase(it);
    drop[i] = true;
  }
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

}  // namespace

void fuse_conv_relu(Graph& g) {
  if (has_subgraph(g)) return;
  std::unordered_map<std::string, int> readers = readers_of(g);
  std::unordered_map<std::string, std::size_t> conv_of;  // output name -> index of the Conv that writes it
  std::vector<bool> drop(g.nodes.size(), false);
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    if (!default_domain(n)) continue;
    if (n.op_type == "Conv" && n.outputs.size() == 1 && !n.outputs[0].empty()) {
      conv_of[n.outputs[0]] = i;
      continue;
    }
    if (n.op_type != "Relu" || n.inputs.size() != 1 || n.outputs.size() != 1 || n.outputs[0].empty()) continue;
    auto it = conv_of.find(n.inputs[0]);
    if (it == conv_of.end() || readers[n.inputs[0]] != 1) continue;
    Node& conv = g.nodes[it->second];
    if (conv.has_attr(kConvFusedReluAttr)) continue;
    Attribute mark;
    mark.type = Attribute::Type::Int;
    mark.i = 1;
    conv.attrs.emplace(std::string(kConvFusedReluAttr), mark);
    conv.outputs[0] = n.outputs[0];
    conv_of.erase(it);
    drop[i] = true;
  }
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (std::size_t i = 0; i < g.nodes.size(); ++i)
    if (!drop[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
  fuse_max_pools(g);
}

}  // namespace ember::onnx_import
