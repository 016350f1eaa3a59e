// The parser's entry points in a build without libonnx-dev / protobuf (meson -Donnx=disabled, or not found): each
// says so as capi::UnsupportedError (ember.h: EMBER_ERR_UNSUPPORTED). The graph checks need no protobuf and are in
// graph_check.cpp either way.
#include "c_api/src/runtime/dyn.hpp"
#include "onnx/parse.hpp"

namespace ember::onnx_import {

namespace {
[[noreturn]] void unavailable() {
  throw capi::UnsupportedError(
      "ONNX import is not available: this Ember was built without libonnx-dev and protobuf (meson -Donnx)");
}
}  // namespace

bool parser_available() { return false; }
Model parse_model_file(const std::filesystem::path&, const ParseLimits&) { unavailable(); }
Model parse_model_bytes(std::span<const std::byte>, const std::filesystem::path&, const ParseLimits&) {
  unavailable();
}
TensorData parse_tensor_file(const std::filesystem::path&, const ParseLimits&) { unavailable(); }

}  // namespace ember::onnx_import
