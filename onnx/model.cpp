// OnnxModel (onnx/model.hpp): loading, input checks, params and records.
#include "onnx/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "onnx/executor.hpp"
#include "onnx/fuse.hpp"
#include "onnx/fuse_conv.hpp"
#include "records/module_record.hpp"
#include "records/tensor_name.hpp"

namespace ember::onnx_import {

namespace {

enum class ValueKind { Float, Int, Bool };

ValueKind kind_of(DType d) {
  if (dtype_is_float(d)) return ValueKind::Float;
  if (d == DType::Bool) return ValueKind::Bool;
  return ValueKind::Int;
}
const char* kind_name(ValueKind k) { return k == ValueKind::Float ? "float" : k == ValueKind::Int ? "int" : "bool"; }

ParamKind param_kind(DType d) {
  switch (kind_of(d)) {
    case ValueKind::Float: return ParamKind::Float;
    case ValueKind::Int: return ParamKind::Int;
    case ValueKind::Bool: return ParamKind::Bool;
  }
  return ParamKind::Float;
}

// The graph's nodes must all have converters; names and order are the parser's checks, repeated for hand-built IR.
std::shared_ptr<const Model> prepared(Model m, bool sort) {
  if (sort) sort_and_check_graph(m.graph);
  check_supported(m);
  fuse_gemm_relu(m.graph);
  fuse_conv_relu(m.graph);
  return std::make_shared<const Model>(std::move(m));
}

}  // namespace

OnnxModel::OnnxModel(std::shared_ptr<const Model> model, const DynDevice& device)
    : model_(std::move(model)), device_(device) {
  auto it = model_->opsets.find("");
  converters_ = std::make_shared<const ConverterTable>(
      converter_table(model_->graph, it == model_->opsets.end() ? 0 : it->second));
  if (std::optional<SlotPlan> plan = plan_slots(model_->graph, *converters_))
    slots_ = std::make_shared<const SlotPlan>(std::move(*plan));
  params_.reserve(model_->graph.initializers.size());
  for (const auto& [name, data] : model_->graph.initializers) {
    DynTensor t = upload(device_, data);
    if (dtype_is_float(data.dtype)) t = capi::set_requires_grad(t, true);
    params_.emplace_back(name, std::move(t));
  }
}

OnnxModel OnnxModel::load(const std::filesystem::path& path, const DynDevice& device, const ParseLimits& limits) {
  return OnnxModel(prepared(parse_model_file(path, limits), false), device);
}

OnnxModel OnnxModel::from_bytes(std::span<const std::byte> bytes, const DynDevice& device,
                                const std::filesystem::path& base_dir, const ParseLimits& limits) {
  return OnnxModel(prepared(parse_model_bytes(bytes, base_dir, limits), false), device);
}

OnnxModel OnnxModel::from_ir(Model model, const DynDevice& device) {
  return OnnxModel(prepared(std::move(model), true), device);
}

int64_t OnnxModel::opset() const {
  auto it = model_->opsets.find("");
  return it == model_->opsets.end() ? 0 : it->second;
}

void OnnxModel::check_inputs(const std::vector<DynTensor>& inputs) const {
  const auto& decl = model_->graph.inputs;
  if (inputs.size() != decl.size())
    throw OnnxError(fmt::format("the model takes {} input(s), got {}", decl.size(), inputs.size()));
  // dim_param -> size of this call. A few entries at most: a vector, and names quoted only for a message, since
  // this runs on every forward (at batch 1 its map and strings showed in the profile).
  std::vector<std::pair<const std::string*, int64_t>> dim_values;
  for (std::size_t i = 0; i < decl.size(); ++i) {
    const ValueInfo& v = decl[i];
    const auto name = [&] { return quote_file_text(v.name, 96); };
    if (!v.non_tensor_kind.empty())
      throw UnsupportedDTypeError(fmt::format("input {} ({}) is not a tensor ({})", i, name(), v.non_tensor_kind));
    const DType got = capi::dtype(inputs[i]);
    if (v.dtype && kind_of(*v.dtype) != kind_of(got))
      throw OnnxError(fmt::format("input {} ({}) must be a {} tensor ({}), got {}", i, name(),
                                  kind_name(kind_of(*v.dtype)), dtype_name(*v.dtype), dtype_name(got)));
    if (!v.dims) continue;
    const Shape s = capi::shape(inputs[i]);
    if (s.rank() != v.dims->size())
      throw OnnxError(fmt::format("input {} ({}) must have rank {}, got shape {}", i, name(), v.dims->size(),
                                  s.to_string()));
    for (std::size_t d = 0; d < s.rank(); ++d) {
      const int64_t want = (*v.dims)[d];
      if (want >= 0 && want != s[d])
        throw OnnxError(fmt::format("input {} ({}) must have size {} in dim {}, got shape {}", i, name(), want, d,
                                    s.to_string()));
      if (want >= 0 || d >= v.dim_params.size() || v.dim_params[d].empty()) continue;
      const std::string& param = v.dim_params[d];
      auto it = std::find_if(dim_values.begin(), dim_values.end(), [&](const auto& e) { return *e.first == param; });
      if (it == dim_values.end()) {
        dim_values.emplace_back(&param, s[d]);
      } else if (it->second != s[d]) {
        throw OnnxError(fmt::format("input {} ({}) has {} = {} in dim {}, but an earlier input has {} = {}", i,
                                    name(), quote_file_text(param, 64), s[d], d, quote_file_text(param, 64),
                                    it->second));
      }
    }
  }
}

std::vector<DynTensor> OnnxModel::forward(const std::vector<DynTensor>& inputs, bool training) const {
  check_inputs(inputs);
  Executor exec(device_, model_->opsets, training);
  exec.use_converters(converters_.get());
  // params_ holds every initializer in g.initializers' order (the constructor made it so).
  if (slots_) return exec.run_planned(*slots_, inputs, params_);
  std::unordered_map<std::string, DynTensor> preset;
  for (const auto& [name, t] : params_) preset.emplace(name, t);
  return exec.run(model_->graph, inputs, preset);
}

void OnnxModel::set_param(std::string_view name, DynTensor value) {
  for (auto& [pname, t] : params_) {
    if (pname != name) continue;
    const Shape want = capi::shape(t), got = capi::shape(value);
    if (want != got)
      throw OnnxError(fmt::format("set_param {}: shape {} expected, got {}", quote_file_text(name, 96),
                                  want.to_string(), got.to_string()));
    if (kind_of(capi::dtype(t)) != kind_of(capi::dtype(value)))
      throw OnnxError(fmt::format("set_param {}: a {} tensor expected, got {}", quote_file_text(name, 96),
                                  kind_name(kind_of(capi::dtype(t))), dtype_name(capi::dtype(value))));
    t = std::move(value);
    return;
  }
  throw OnnxError(fmt::format("set_param: the model has no initializer {}", quote_file_text(name, 96)));
}

Record OnnxModel::record() const {
  Record r;
  uint64_t id = 1;
  for (const auto& [name, t] : params_) {
    TensorData d = capi::to_data(t);
    const ParamKind kind = param_kind(d.dtype);
    const ParamRole role = kind == ParamKind::Float ? ParamRole::Trainable : ParamRole::Constant;
    r.params.emplace(name, ParamRecord{id++, kind, role, std::move(d)});
  }
  return r;
}

void OnnxModel::load_record(const Record& r) {
  LoadReport report;
  std::vector<DynTensor> values;
  for (const auto& [name, t] : params_) {
    auto it = r.params.find(name);
    if (it == r.params.end()) {
      report.missing.push_back(name);
      continue;
    }
    const std::string why = load_mismatch(it->second, param_kind(capi::dtype(t)), capi::shape(t));
    if (!why.empty()) report.mismatched.push_back(name + ": " + why);
  }
  for (const auto& [name, p] : r.params) {
    bool known = false;
    for (const auto& [pname, t] : params_) known = known || pname == name;
    if (!known) report.unexpected.push_back(name);
  }
  if (!report.ok()) throw OnnxError("load_record: the record does not fit the model:\n" + report.to_string());
  for (auto& [name, t] : params_) {
    DynTensor v = upload(device_, r.params.at(name).data.convert(capi::dtype(t)));
    if (dtype_is_float(capi::dtype(t))) v = capi::set_requires_grad(v, true);
    t = std::move(v);
  }
}

}  // namespace ember::onnx_import
