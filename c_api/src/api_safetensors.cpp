// ember.h: safetensors files as records, and PyTorch state_dicts through the name map (records/torch_names.hpp)
// for both kinds of C modules: ember_module_sequential's (paths "layers.<i>.<name>", PyTorch's nn.Sequential
// "<i>.<name>") and trees of ember_module_create / ember_module_layer (the same paths in both).
#include <algorithm>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "c_api/src/boundary.hpp"
#include "c_api/src/module_tree.hpp"
#include "c_api/src/runtime/layer_kind.hpp"
#include "records/safetensors.hpp"
#include "records/torch_names.hpp"

using namespace ember;
using namespace ember::capi;

namespace {

TorchLayer torch_layer(int32_t kind) {
  switch (static_cast<LayerKind>(kind)) {
    case LayerKind::Linear: return TorchLayer::Linear;
    case LayerKind::BatchNorm1d:
    case LayerKind::BatchNorm2d: return TorchLayer::BatchNorm;
    case LayerKind::LayerNorm: return TorchLayer::LayerNorm;
    case LayerKind::Lstm:
    case LayerKind::Gru: return TorchLayer::Rnn;  // issue 13 (h-rnn)
    default: return TorchLayer::Other;
  }
}

std::pair<std::string, std::string> split_leaf(const std::string& path) {
  const std::size_t dot = path.rfind('.');
  if (dot == std::string::npos) return {"", path};
  return {path.substr(0, dot), path.substr(dot + 1)};
}

// Nested layers (issue 13): their params lie below the layer's own path, deeper than one leaf. An LSTM / GRU's
// ("layers.0.forward_dir.weight_ih") map as one Rnn layer; attention and transformer layers hold Linear and
// LayerNorm sublayers ("self_attn.out_proj.weight", "norm1.gamma"), and each of those params maps as its sublayer's
// would (named by the component before the leaf), the rest (in_proj_weight, ...) keeping its name: these layers
// already use PyTorch's names.
bool is_nested_kind(int32_t kind) {
  const auto k = static_cast<LayerKind>(kind);
  return k == LayerKind::Lstm || k == LayerKind::Gru || k == LayerKind::MultiheadAttention ||
         k == LayerKind::TransformerEncoderLayer || k == LayerKind::TransformerDecoderLayer;
}
void add_nested_param(TorchNameMap& map, int32_t kind, const std::string& ember_prefix,
                      const std::string& torch_prefix, const std::string& sub_path, uint64_t id) {
  if (torch_layer(kind) == TorchLayer::Rnn) return add_torch_param(map, TorchLayer::Rnn, ember_prefix, torch_prefix,
                                                                   sub_path, id);
  const std::size_t dot = sub_path.rfind('.');
  const std::string sub = dot == std::string::npos ? "" : sub_path.substr(0, dot);
  const std::string leaf = sub_path.substr(dot == std::string::npos ? 0 : dot + 1);
  const std::string owner = sub.substr(sub.rfind('.') == std::string::npos ? 0 : sub.rfind('.') + 1);
  const TorchLayer layer = owner == "out_proj" || owner == "linear1" || owner == "linear2" ? TorchLayer::Linear
                           : owner.rfind("norm", 0) == 0                                  ? TorchLayer::LayerNorm
                                                                                          : TorchLayer::Other;
  auto join = [](const std::string& a, const std::string& b) { return a.empty() ? b : b.empty() ? a : a + "." + b; };
  add_torch_param(map, layer, join(ember_prefix, sub), join(torch_prefix, sub), leaf, id);
}

TorchNameMap torch_names_of(const ModuleState& m) {
  TorchNameMap map;
  if (m.tree) {
    // The layer modules of the tree by path: their params are named by their kind; a container's by the caller.
    std::map<std::string, TorchLayer> layers;
    std::vector<std::pair<std::string, int32_t>> nested;  // path and kind of each nested layer
    const std::shared_ptr<ModuleState> root(std::shared_ptr<ModuleState>{}, const_cast<ModuleState*>(&m));
    for (const auto& [path, node] : tree_modules(root)) {
      std::lock_guard lock(node->tree->mu);
      if (!node->tree->is_layer) continue;
      const TorchLayer layer = torch_layer(node->tree->spec.kind);
      if (layers.emplace(path, layer).second) add_torch_layer(map, layer, path);
      if (is_nested_kind(node->tree->spec.kind)) nested.emplace_back(path, node->tree->spec.kind);
    }
    for (const auto& e : tree_params(m)) {
      const auto under = [&](const auto& n) { return n.first.empty() || e.path.rfind(n.first + ".", 0) == 0; };
      const auto n = std::find_if(nested.begin(), nested.end(), under);
      if (n != nested.end()) {
        const std::string& p = n->first;
        add_nested_param(map, n->second, p, p, p.empty() ? e.path : e.path.substr(p.size() + 1), e.param->id);
        continue;
      }
      const auto [prefix, leaf] = split_leaf(e.path);
      auto it = layers.find(prefix);
      add_torch_param(map, it == layers.end() ? TorchLayer::Other : it->second, prefix, prefix, leaf, e.param->id);
    }
    return map;
  }
  for (std::size_t i = 0; i < m.layer_kinds.size(); ++i) add_torch_layer(map, torch_layer(m.layer_kinds[i]),
                                                                          std::to_string(i));
  for (const ParamDesc& d : parameters(m)) {
    // "layers.<i>.<path below the layer>" of a nested layer (issue 13).
    const std::size_t first = d.info.path.find('.'), second = d.info.path.find('.', first + 1);
    if (first != std::string::npos && second != std::string::npos) {
      const std::string index = d.info.path.substr(first + 1, second - first - 1);
      const std::size_t i = std::stoul(index);
      if (i < m.layer_kinds.size() && is_nested_kind(m.layer_kinds[i])) {
        add_nested_param(map, m.layer_kinds[i], d.info.path.substr(0, second), index, d.info.path.substr(second + 1),
                         d.info.id.value);
        continue;
      }
    }
    // "layers.<i>.<leaf>": the layer's kind from ember_module_sequential's descs.
    const auto [prefix, leaf] = split_leaf(d.info.path);
    const std::string index = prefix.substr(prefix.find('.') + 1);
    const std::size_t i = std::stoul(index);
    const TorchLayer layer = i < m.layer_kinds.size() ? torch_layer(m.layer_kinds[i]) : TorchLayer::Other;
    add_torch_param(map, layer, prefix, index, leaf, d.info.id.value);
  }
  return map;
}

const char* path_arg(const char* path) {
  if (!path) throw ArgumentError("path is NULL");
  if (!*path) throw ArgumentError("path is empty");
  return path;
}

}  // namespace

extern "C" {

ember_status ember_record_read_safetensors(const char* path, ember_record** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    o = make_handle<ember_record>(SafetensorsFile::open(path_arg(path)).to_record());
  });
}

ember_status ember_record_write_safetensors(const ember_record* record, const char* path) {
  return guard(__func__, [&] {
    const Record& r = use(record, "record");
    write_safetensors(r, path_arg(path), {{"format", "pt"}});
  });
}

ember_status ember_module_load_torch_state_dict(ember_module* module, const ember_record* state_dict,
                                                ember_load_mode_t mode, ember_load_report** report) {
  if (report) *report = nullptr;
  return guard(__func__, [&] {
    ModuleState& m = *use(module, "module");
    const Record& torch = use(state_dict, "state_dict");
    if (mode != EMBER_LOAD_STRICT && mode != EMBER_LOAD_PARTIAL)
      throw ArgumentError(fmt::format("unknown load mode {}", mode));
    const LoadMode lm = mode == EMBER_LOAD_STRICT ? LoadMode::Strict : LoadMode::Partial;
    const Record r = record_from_torch(torch, torch_names_of(m));
    try {
      LoadReport rep = m.tree ? tree_load_record(m, r, lm) : load_module_record(m, r, lm);
      if (report) *report = make_handle<ember_load_report>(std::move(rep));
    } catch (const LoadError& e) {
      if (report) *report = make_handle<ember_load_report>(e.report);
      throw;
    }
  });
}

ember_status ember_module_to_torch_state_dict(const ember_module* module, ember_record** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const ModuleState& m = *use(module, "module");
    o = make_handle<ember_record>(record_to_torch(m.tree ? tree_record(m) : module_record(m), torch_names_of(m)));
  });
}

}  // extern "C"
