// ONNX operators of the core family: Constant (every value_* form), Identity (h-onnx-core). The control-flow
// operators (If, Loop, Scan) are h-onnx-seq's, on the executor's run_subgraph (onnx/executor.hpp).
#include <fmt/format.h>

#include "onnx/op_registry.hpp"
#include "records/tensor_name.hpp"

namespace ember::onnx_import {

namespace {

// Constant's value as host data: exactly one of value / value_float(s) / value_int(s) (value_string(s) and
// sparse_value are not Ember dtypes).
TensorData constant_value(const OpContext& ctx) {
  const Node& n = ctx.node;
  int given = 0;
  for (const auto& [key, a] : n.attrs) {
    (void)a;
    if (key.rfind("value", 0) == 0 || key == "sparse_value") ++given;
  }
  if (given != 1) ctx.fail(fmt::format("needs exactly one value attribute, got {}", given));
  if (const TensorData* t = n.attr_tensor("value")) return *t;
  if (n.has_attr("value_float"))
    return TensorData::from_vec<float>({static_cast<float>(n.attr_float("value_float", 0.0))}, Shape{});
  if (n.has_attr("value_int")) return TensorData::from_vec<int64_t>({n.attr_int("value_int", 0)}, Shape{});
  if (n.has_attr("value_floats")) {
    const std::vector<double> v = n.attr_floats("value_floats");
    std::vector<float> f(v.begin(), v.end());
    return TensorData::from_vec<float>(f, Shape{static_cast<int64_t>(f.size())});
  }
  if (n.has_attr("value_ints")) {
    const std::vector<int64_t> v = n.attr_ints("value_ints");
    return TensorData::from_vec<int64_t>(v, Shape{static_cast<int64_t>(v.size())});
  }
  for (const char* key : {"value_string", "value_strings", "sparse_value"})
    if (n.has_attr(key))
      throw UnsupportedDTypeError(fmt::format("{}: {} is not an Ember dtype", n.describe(), key));
  for (const auto& [key, a] : n.attrs) ctx.fail(fmt::format("unknown value attribute {}", quote_file_text(key, 64)));
  ctx.fail("no value attribute");
}

}  // namespace

void register_core_ops(OpRegistry& r) {
  r.add("Constant", [](OpContext& ctx) -> std::vector<std::optional<DynTensor>> {
    return {upload(ctx.device, constant_value(ctx))};
  });
  // Identity passes the value itself: the same tensor (and autodiff node) under a second name.
  r.add("Identity", [](OpContext& ctx) -> std::vector<std::optional<DynTensor>> { return {ctx.input(0)}; });
}

}  // namespace ember::onnx_import
