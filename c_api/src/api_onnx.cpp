// ember.h: ONNX import (issue 19). The models are module trees (onnx_module.hpp); the operator list is the
// importer's registry (onnx/op_registry.hpp).
#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "c_api/src/onnx_module.hpp"
#include "onnx/op_registry.hpp"

using namespace ember;
using namespace ember::capi;

namespace {

const onnx_import::ValueInfo& value_at(const std::vector<onnx_import::ValueInfo>& values, std::size_t index,
                                       const char* what) {
  if (index >= values.size())
    throw IndexError(fmt::format("index {} out of range for {} {}", index, values.size(), what));
  return values[index];
}

// The registry's names, computed once (the registry never changes after it is built).
const std::vector<std::string>& operator_names() {
  static const std::vector<std::string> names = onnx_import::op_registry().names();
  return names;
}

}  // namespace

extern "C" {

ember_status ember_onnx_load(const char* path, const ember_device* device, ember_module** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    if (!path) throw ArgumentError("path is NULL");
    o = make_handle<ember_module>(onnx_load_file(path, device_or_default(device)));
  });
}

ember_status ember_onnx_load_memory(const void* data, size_t size, const ember_device* device, ember_module** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    if (!data && size > 0) throw ArgumentError("data is NULL");
    o = make_handle<ember_module>(onnx_load_bytes(data, size, device_or_default(device)));
  });
}

ember_status ember_onnx_forward(ember_module* module, const ember_tensor* const* inputs, size_t n_inputs,
                                ember_tensor** outputs, size_t n_outputs, ember_mode_t mode) {
  return guard(__func__, [&] {
    if (n_outputs > 0 && !outputs) throw ArgumentError("outputs is NULL");
    for (size_t i = 0; i < n_outputs; ++i) outputs[i] = nullptr;
    if (mode != EMBER_MODE_EVAL && mode != EMBER_MODE_TRAIN) throw ArgumentError(fmt::format("unknown mode {}", mode));
    if (n_inputs > 0 && !inputs) throw ArgumentError("inputs is NULL");
    const std::shared_ptr<ModuleState> state = use(module, "module");
    // Bounded by the graph's input count before anything is allocated for them.
    const std::size_t want = onnx_state(*state, "ember_onnx_forward").inputs.size();
    if (n_inputs != want)
      throw ArgumentError(fmt::format("the graph has {} input(s), n_inputs is {}", want, n_inputs));
    std::vector<DynTensor> xs;
    xs.reserve(n_inputs);
    for (size_t i = 0; i < n_inputs; ++i) xs.push_back(use(inputs[i], fmt::format("inputs[{}]", i).c_str()));
    std::vector<DynTensor> ys = onnx_forward(*state, xs, n_outputs, mode == EMBER_MODE_TRAIN);
    // Handles are made only once every output exists, so a failure leaves no half-filled array.
    for (size_t i = 0; i < n_outputs; ++i) outputs[i] = make_handle<ember_tensor>(std::move(ys[i]));
  });
}

ember_status ember_onnx_input_count(const ember_module* module, size_t* count) {
  return guard(__func__, [&] {
    auto& c = out_value(count, "count");
    c = onnx_state(*use(module, "module"), __func__).inputs.size();
  });
}

ember_status ember_onnx_output_count(const ember_module* module, size_t* count) {
  return guard(__func__, [&] {
    auto& c = out_value(count, "count");
    c = onnx_state(*use(module, "module"), __func__).outputs.size();
  });
}

ember_status ember_onnx_input_name(const ember_module* module, size_t index, char* buf, size_t capacity,
                                   size_t* length) {
  return guard(__func__, [&] {
    const auto& s = onnx_state(*use(module, "module"), __func__);
    write_text(value_at(s.inputs, index, "inputs").name, buf, capacity, length);
  });
}

ember_status ember_onnx_output_name(const ember_module* module, size_t index, char* buf, size_t capacity,
                                    size_t* length) {
  return guard(__func__, [&] {
    const auto& s = onnx_state(*use(module, "module"), __func__);
    write_text(value_at(s.outputs, index, "outputs").name, buf, capacity, length);
  });
}

ember_status ember_onnx_input_info(const ember_module* module, size_t index, int32_t* dtype, int64_t* dims,
                                   size_t capacity, int64_t* rank) {
  return guard(__func__, [&] {
    auto& r = out_value(rank, "rank");
    auto& d = out_value(dtype, "dtype");
    if (capacity > 0 && !dims) throw ArgumentError("dims is NULL");
    const auto& s = onnx_state(*use(module, "module"), __func__);
    const onnx_import::ValueInfo& v = value_at(s.inputs, index, "inputs");
    d = v.dtype ? static_cast<int32_t>(*v.dtype) : -1;
    r = v.dims ? static_cast<int64_t>(v.dims->size()) : -1;
    if (!v.dims || capacity == 0) return;
    if (capacity < v.dims->size())
      throw StatusError(EMBER_ERR_BUFFER_TOO_SMALL,
                        fmt::format("input '{}' has rank {}, capacity is {}", v.name, v.dims->size(), capacity));
    for (std::size_t i = 0; i < v.dims->size(); ++i) dims[i] = (*v.dims)[i] < 0 ? -1 : (*v.dims)[i];
  });
}

ember_status ember_onnx_operator_count(size_t* count) {
  return guard(__func__, [&] {
    auto& c = out_value(count, "count");
    c = operator_names().size();
  });
}

ember_status ember_onnx_operator_name(size_t index, char* buf, size_t capacity, size_t* length) {
  return guard(__func__, [&] {
    const auto& names = operator_names();
    if (index >= names.size())
      throw IndexError(fmt::format("index {} out of range for {} operators", index, names.size()));
    write_text(names[index], buf, capacity, length);
  });
}

}  // extern "C"
