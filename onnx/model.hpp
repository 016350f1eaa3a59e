#pragma once
// An imported ONNX model (issue 19): its graph, run by the executor on one device, with the initializers as named
// parameters — float ones require grad, so a forward in training mode records autodiff down to them and an optimizer
// can fine-tune them — and a Record keyed by initializer name (saved like any Ember module's).
//
//   auto m = OnnxModel::load("net.onnx", capi::cpu_device());
//   std::vector<DynTensor> y = m.forward({x});
//
// forward checks each input against its declared dtype kind (float / int / bool) and rank and static dims; dynamic
// dims (dim_param or unknown) take the sizes of the call, and a dim_param named by several inputs must agree.
#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/module/record.hpp"
#include "onnx/ir.hpp"
#include "onnx/op_registry.hpp"
#include "onnx/parse.hpp"

namespace ember::onnx_import {

struct SlotPlan;  // onnx/executor.hpp

class OnnxModel {
 public:
  // Parses (onnx/parse.hpp), checks every operator is supported, uploads the initializers to `device`.
  static OnnxModel load(const std::filesystem::path& path, const DynDevice& device, const ParseLimits& limits = {});
  // A model in memory; external data resolves under `base_dir` (empty: refused).
  static OnnxModel from_bytes(std::span<const std::byte> bytes, const DynDevice& device,
                              const std::filesystem::path& base_dir = {}, const ParseLimits& limits = {});
  // Hand-built IR (tests): sorted and checked like a parsed model.
  static OnnxModel from_ir(Model model, const DynDevice& device);

  const std::vector<ValueInfo>& inputs() const { return model_->graph.inputs; }
  const std::vector<ValueInfo>& outputs() const { return model_->graph.outputs; }
  const Model& ir() const { return *model_; }
  const DynDevice& device() const { return device_; }
  int64_t opset() const;

  // Runs the graph; one tensor per inputs() entry, in order, on this model's device. training: Dropout and
  // BatchNormalization's training behaviour; gradients are recorded whenever grad mode is on.
  std::vector<DynTensor> forward(const std::vector<DynTensor>& inputs, bool training = false) const;

  // The initializers, in file order: name and current value.
  const std::vector<std::pair<std::string, DynTensor>>& params() const { return params_; }
  // Replaces the value of initializer `name` (same shape and kind; the C ABI feeds the current values of its
  // handles). OnnxError for an unknown name or another shape / kind.
  void set_param(std::string_view name, DynTensor value);
  // The params as a Record (path = initializer name; float ones Trainable, others Constant).
  Record record() const;
  // Loads values saved by record() (strict: every initializer, same shapes and kinds).
  void load_record(const Record& r);

 private:
  OnnxModel(std::shared_ptr<const Model> model, const DynDevice& device);
  void check_inputs(const std::vector<DynTensor>& inputs) const;

  std::shared_ptr<const Model> model_;
  std::shared_ptr<const std::unordered_map<const Node*, const Converter*>> converters_;  // executor.hpp
  std::shared_ptr<const SlotPlan> slots_;  // the main graph's slot plan; null where the Scope path runs it
  DynDevice device_;
  std::vector<std::pair<std::string, DynTensor>> params_;
};

}  // namespace ember::onnx_import
