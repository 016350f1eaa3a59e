// record_from_torch / record_to_torch (torch_names.hpp).
#include "records/torch_names.hpp"

#include <cstring>
#include <map>
#include <set>

namespace ember {
namespace {

// [a, b] -> [b, a], any dtype (element bytes moved as they are).
TensorData transposed(const TensorData& d) {
  const auto rows = static_cast<std::size_t>(d.shape.dims[0]), cols = static_cast<std::size_t>(d.shape.dims[1]);
  const std::size_t es = dtype_size(d.dtype);
  std::vector<std::byte> out(d.bytes.size());
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) std::memcpy(&out[(c * rows + r) * es], &d.bytes[(r * cols + c) * es], es);
  return TensorData(std::move(out), Shape{d.shape.dims[1], d.shape.dims[0]}, d.dtype);
}

ParamRecord relaid(ParamRecord pr, bool transpose) {
  // Only a rank-2 tensor can be transposed; anything else is left for load_record to report as a shape mismatch.
  if (transpose && pr.data.shape.rank() == 2) pr.data = transposed(pr.data);
  return pr;
}

}  // namespace

void add_torch_param(TorchNameMap& map, TorchLayer layer, const std::string& ember_prefix,
                     const std::string& torch_prefix, const std::string& leaf, uint64_t id) {
  const bool norm = layer == TorchLayer::BatchNorm || layer == TorchLayer::LayerNorm;
  const std::string torch_leaf = norm && leaf == "gamma" ? "weight" : norm && leaf == "beta" ? "bias" : leaf;
  auto join = [](const std::string& prefix, const std::string& name) {
    return prefix.empty() ? name : prefix + "." + name;
  };
  if (layer == TorchLayer::Rnn) {
    // A path the RNN does not name (none today) keeps its own name, so load_record reports it.
    const std::optional<std::string> name = nn::rnn_torch_name(leaf);
    const bool weight = leaf.size() > 9 && (leaf.ends_with("weight_ih") || leaf.ends_with("weight_hh"));
    map.names.push_back({join(ember_prefix, leaf), join(torch_prefix, name ? *name : leaf), name && weight, id});
    return;
  }
  map.names.push_back(
      {join(ember_prefix, leaf), join(torch_prefix, torch_leaf), layer == TorchLayer::Linear && leaf == "weight", id});
}

void add_torch_layer(TorchNameMap& map, TorchLayer layer, const std::string& torch_prefix) {
  if (layer == TorchLayer::BatchNorm)
    map.torch_only.push_back(torch_prefix.empty() ? "num_batches_tracked" : torch_prefix + ".num_batches_tracked");
}

Record record_from_torch(const Record& torch, const TorchNameMap& map, std::vector<std::string>* dropped) {
  Record out;
  out.scalars = torch.scalars;
  std::set<std::string> used;
  for (const TorchName& n : map.names) {
    auto it = torch.params.find(n.torch);
    if (it == torch.params.end()) continue;  // load_record reports the Ember path as missing
    ParamRecord pr = relaid(it->second, n.transpose);
    pr.id = n.id;
    out.params.emplace(n.ember, std::move(pr));
    used.insert(n.torch);
  }
  const std::set<std::string> torch_only(map.torch_only.begin(), map.torch_only.end());
  for (const auto& [key, pr] : torch.params) {
    if (used.count(key)) continue;
    if (torch_only.count(key)) {
      if (dropped) dropped->push_back(key);
      continue;
    }
    // Unknown to the map: kept under its own name, so load_record lists it as unexpected (unless it collides with an
    // Ember path already filled, which the map's own entry wins).
    out.params.emplace(key, pr);
  }
  return out;
}

Record record_to_torch(const Record& ember, const TorchNameMap& map) {
  Record out;
  out.scalars = ember.scalars;
  std::map<std::string, const TorchName*> by_ember;
  for (const TorchName& n : map.names) by_ember.emplace(n.ember, &n);
  for (const auto& [path, pr] : ember.params) {
    auto it = by_ember.find(path);
    if (it == by_ember.end()) {
      out.params.emplace(path, pr);
      continue;
    }
    out.params.emplace(it->second->torch, relaid(pr, it->second->transpose));
  }
  for (const std::string& key : map.torch_only)
    out.params.emplace(key, ParamRecord{0, ParamKind::Int, ParamRole::Buffer,
                                        TensorData(std::vector<std::byte>(8), Shape{}, DType::I64)});
  return out;
}

}  // namespace ember
