// ember_onnx_load's modules (onnx_module.hpp): the graph of onnx/model.hpp with its initializers as the params of a
// module-tree container.
#include "c_api/src/onnx_module.hpp"

#include <fmt/format.h>

#include "c_api/src/tensor_refs.hpp"
#include "onnx/model.hpp"

namespace ember::capi {
namespace {

// A handle held by the module only (the caller gets references through ember_module_param), like a layer's.
ember_tensor* module_owned_handle(DynTensor value) {
  ember_tensor* h = make_handle<ember_tensor>(std::move(value));
  retain_tensor(h);
  caller_free_shared_tensor(h);  // drops the creation's caller reference: the module is the only owner
  return h;
}

std::shared_ptr<ModuleState> wrap(std::shared_ptr<onnx_import::OnnxModel> model, const DynDevice& dev) {
  auto state = make_container(dev);
  auto onnx = std::make_shared<OnnxModuleState>();
  onnx->inputs = model->inputs();
  onnx->outputs = model->outputs();
  ModuleTree& t = *state->tree;
  // An exported graph is an inference graph: like a torch module after .eval(); ember_module_set_training(1) (or
  // Python's .train()) before fine-tuning with Dropout / BatchNormalization in training mode.
  t.training = false;
  for (auto& [name, value] : model->params()) {
    // Float initializers are weights (trainable, as the ORTModule's are); integer ones are shapes, indices and axes.
    const bool is_float = dtype_is_float(dtype(value));
    DynTensor v = value;
    if (is_float && !requires_grad(v)) v = set_requires_grad(v, true);
    auto p = std::make_shared<TreeParam>(
        TreeParam{name, nullptr, is_float ? ParamRole::Trainable : ParamRole::Constant, ParamId::next().value, false});
    p->handle = module_owned_handle(std::move(v));
    t.params.push_back(p);
    onnx->graph_params.push_back(std::move(p));
  }
  onnx->model = std::move(model);
  t.onnx = std::move(onnx);
  return state;
}

// What the importer cannot do (an operator without a converter, a dtype Ember lacks) is "valid, but not available
// here" at the C boundary (EMBER_ERR_UNSUPPORTED); a malformed model stays an argument error.
template <class F>
auto unsupported_as_such(F&& body) {
  try {
    return body();
  } catch (const onnx_import::UnsupportedOperatorError& e) {
    throw UnsupportedError(e.what());
  } catch (const onnx_import::UnsupportedDTypeError& e) {
    throw UnsupportedError(e.what());
  }
}

}  // namespace

std::shared_ptr<ModuleState> onnx_load_file(const std::string& path, const DynDevice& dev) {
  // OnnxModel::load is an UnsupportedError in a build without the ONNX library (onnx/parse_unavailable.cpp).
  return unsupported_as_such(
      [&] { return wrap(std::make_shared<onnx_import::OnnxModel>(onnx_import::OnnxModel::load(path, dev)), dev); });
}

std::shared_ptr<ModuleState> onnx_load_bytes(const void* data, std::size_t size, const DynDevice& dev) {
  const std::span<const std::byte> bytes(static_cast<const std::byte*>(data), size);
  return unsupported_as_such([&] {
    return wrap(std::make_shared<onnx_import::OnnxModel>(onnx_import::OnnxModel::from_bytes(bytes, dev)), dev);
  });
}

OnnxModuleState& onnx_state(const ModuleState& m, const char* fn) {
  if (!m.tree || !m.tree->onnx)
    throw ArgumentError(fmt::format("{}: the module is not an ONNX model (make it with ember_onnx_load)", fn));
  return *m.tree->onnx;
}

std::vector<DynTensor> onnx_forward(ModuleState& m, const std::vector<DynTensor>& inputs, std::size_t n_outputs,
                                    bool train) {
  OnnxModuleState& s = onnx_state(m, "onnx_forward");
  if (inputs.size() != s.inputs.size()) {
    std::vector<std::string> names;
    for (const auto& v : s.inputs) names.push_back(v.name);
    throw ArgumentError(fmt::format("the graph has {} input(s) ({}), {} given", s.inputs.size(),
                                    fmt::join(names, ", "), inputs.size()));
  }
  if (n_outputs > s.outputs.size())
    throw ArgumentError(fmt::format("{} outputs asked for, the graph has {}", n_outputs, s.outputs.size()));
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!same_device(device(inputs[i]), m.device))
      throw ArgumentError(fmt::format("input {} ('{}') lives on {}, the model on {}", i, s.inputs[i].name,
                                      device_name(device(inputs[i])), device_name(m.device)));
  std::lock_guard lock(s.mu);
  for (const auto& p : s.graph_params) s.model->set_param(p->name, use(p->handle, "param"));
  std::vector<DynTensor> outs = unsupported_as_such([&] { return s.model->forward(inputs, train); });
  outs.resize(n_outputs);
  return outs;
}

DynTensor onnx_forward_one(ModuleState& m, const DynTensor& x, bool train) {
  OnnxModuleState& s = onnx_state(m, "forward");
  if (s.inputs.size() != 1 || s.outputs.empty())
    throw ArgumentError(fmt::format("ember_module_forward runs an ONNX model of one input; this one has {} inputs and "
                                    "{} outputs (use ember_onnx_forward)",
                                    s.inputs.size(), s.outputs.size()));
  return onnx_forward(m, {x}, 1, train).front();
}

}  // namespace ember::capi
