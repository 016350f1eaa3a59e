#pragma once
// into_record / load_record for any reflected module, with PyTorch-style strict and partial loading.
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/module/module.hpp"
#include "records/precision.hpp"

namespace ember {

// Everything that did not match when loading, reported together.
struct LoadReport {
  std::vector<std::string> missing;     // in the module, not in the record
  std::vector<std::string> unexpected;  // in the record, not in the module
  std::vector<std::string> mismatched;  // present in both, with another shape or kind ("path: why")
  bool ok() const { return missing.empty() && unexpected.empty() && mismatched.empty(); }
  std::string to_string() const {
    std::string out;
    auto list = [&](const char* what, const std::vector<std::string>& v) {
      if (v.empty()) return;
      fmt::format_to(std::back_inserter(out), "{} ({}):", what, v.size());
      for (const auto& s : v) fmt::format_to(std::back_inserter(out), "\n  {}", s);
      out += '\n';
    };
    list("missing keys", missing);
    list("unexpected keys", unexpected);
    list("mismatched", mismatched);
    return out;
  }
};

class LoadError : public Error {
 public:
  LoadError(const std::string& what, LoadReport r) : Error(what), report(std::move(r)) {}
  LoadReport report;
};

// The module's params as a path-keyed record, converted to the element types of Settings (materializes lazy params:
// saving needs values). Recorders convert to their own policy on save, so Settings matters for in-memory records.
template <PrecisionSettings Settings = FullPrecisionSettings, class M>
Record into_record(const M& m) {
  Record r;
  visit_params(m, [&](const std::string& path, const auto& p) {
    using P = std::decay_t<decltype(p)>;
    r.params.emplace(path, ParamRecord{p.id().value, P::kind, p.role(), p.val().into_data()});
  });
  return convert_record<Settings>(r);
}

enum class LoadMode { Strict, Partial };

// Why a record entry cannot load into a param of kind `kind` and shape `shape`; empty when it can.
inline std::string load_mismatch(const ParamRecord& pr, ParamKind kind, const Shape& shape) {
  if (pr.kind != kind)
    return fmt::format("kind {} in record, {} in module", param_kind_name(pr.kind), param_kind_name(kind));
  if (!(pr.data.shape == shape))
    return fmt::format("shape {} in record, {} in module", pr.data.shape.to_string(), shape.to_string());
  if ((kind == ParamKind::Float) != dtype_is_float(pr.data.dtype) ||
      (kind == ParamKind::Bool) != (pr.data.dtype == DType::Bool))
    return fmt::format("dtype {} cannot hold a {} param", dtype_name(pr.data.dtype), param_kind_name(kind));
  return {};
}

// Loads `record` into `m` without ever running an initializer for a param the record provides. Strict: any
// missing, unexpected or mismatched key throws LoadError listing all of them, and nothing is loaded. Partial:
// loads what matches, keeps the rest of `m` as it was, and fills `report`.
template <class M>
M load_record(M m, const Record& record, LoadMode mode = LoadMode::Strict, LoadReport* report = nullptr) {
  LoadReport rep;
  std::set<std::string> seen, skip;
  visit_params(m, [&](const std::string& path, const auto& p) {
    using P = std::decay_t<decltype(p)>;
    seen.insert(path);
    auto it = record.params.find(path);
    if (it == record.params.end()) {
      rep.missing.push_back(path);
      return;
    }
    const std::string why = load_mismatch(it->second, P::kind, p.shape());
    if (!why.empty()) {
      rep.mismatched.push_back(fmt::format("{}: {}", path, why));
      skip.insert(path);
    }
  });
  for (const auto& [key, pr] : record.params)
    if (!seen.count(key)) rep.unexpected.push_back(key);
  // ParamIds key optimizer state and gradients: two loaded params sharing one (a crafted or hand-edited record)
  // would silently mix their updates, so that is an error whatever the mode.
  std::map<uint64_t, std::string> ids;
  for (const auto& [key, pr] : record.params) {
    if (!seen.count(key) || skip.count(key)) continue;  // not loaded
    auto [it, fresh] = ids.emplace(pr.id, key);
    if (!fresh)
      throw LoadError(fmt::format("load_record: params '{}' and '{}' share ParamId {}", it->second, key, pr.id), rep);
  }
  if (mode == LoadMode::Strict && !rep.ok())
    throw LoadError(fmt::format("load_record: the record does not match the module\n{}", rep.to_string()), rep);
  m = map_params(std::move(m), [&](const std::string& path, auto p) {
    using P = decltype(p);
    auto it = record.params.find(path);
    if (it == record.params.end() || skip.count(path)) return p;
    using T = typename P::Value;
    return P::initialized(ParamId{it->second.id}, T::from_data(it->second.data, p.device()), p.require_grad(),
                          p.role());
  });
  if (report) *report = std::move(rep);
  return m;
}

}  // namespace ember
