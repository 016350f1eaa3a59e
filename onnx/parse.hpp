#pragma once
// Reading ONNX files (issue 19): a ModelProto (or one TensorProto) through libonnx_proto / protobuf into the
// importer's IR (onnx/ir.hpp), with every size bounded before it is read or allocated. Built only where libonnx-dev
// and protobuf are found (meson -Donnx=auto); otherwise each function throws capi::UnsupportedError.
//
// What is checked, so that a hostile file fails with an OnnxError and never makes us allocate more than its own size
// (plus its external data's, checked against those files' sizes) and a small constant:
//   - the file size (ParseLimits::max_file_bytes) before reading; protobuf's total-bytes and recursion limits;
//   - per tensor: rank <= 8, dims >= 0, the element count without overflow, its bytes <= max_tensor_bytes, and the
//     stored values (raw_data bytes or the typed field's count) exactly matching the element count;
//   - external data: `location` relative, without `..`, resolving (symlinks included) under the model's directory;
//     offset and length inside that file and length == the tensor's bytes;
//   - graphs: node count, subgraph depth, names defined once, every input defined (in the graph, its initializers
//     or an enclosing graph), no cycles; the nodes come back topologically sorted;
// OnnxModel (onnx/model.hpp) then reports every operator without a converter at once (check_supported); the parser
// itself does not, so that tools (the conformance runner) can list a model's operators whatever is supported.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>

#include "onnx/ir.hpp"

namespace ember::onnx_import {

struct ParseLimits {
  uint64_t max_file_bytes = (uint64_t{1} << 31) - 1;        // protobuf's own ceiling for one message
  uint64_t max_tensor_bytes = uint64_t{1} << 32;            // one initializer / Constant / external tensor
  uint64_t max_total_external_bytes = uint64_t{1} << 36;    // all external data of a model together
  int64_t max_nodes = int64_t{1} << 20;                     // all graphs of a model together
  int max_graph_depth = 16;                                 // subgraphs inside subgraphs (If / Loop / Scan)
};

// True when this build has the protobuf parser.
bool parser_available();

// A model file; external data is resolved under its directory.
Model parse_model_file(const std::filesystem::path& path, const ParseLimits& limits = {});
// A model in memory; `base_dir` is where external data lives (empty: a model with external data is refused).
Model parse_model_bytes(std::span<const std::byte> bytes, const std::filesystem::path& base_dir = {},
                        const ParseLimits& limits = {});
// One serialized TensorProto (the input_N.pb / output_N.pb files of ONNX's backend tests).
TensorData parse_tensor_file(const std::filesystem::path& path, const ParseLimits& limits = {});

// Checks the operators of `model` (subgraphs included) against the registry at the model's opsets; throws one
// UnsupportedOperatorError listing every node without a converter (name, node, opset). Used by the parser and by
// OnnxModel for hand-built IR.
void check_supported(const Model& model);

// Validates names and sorts `g`'s nodes topologically (subgraphs too): duplicate definitions, undefined inputs and
// cycles are OnnxErrors. `outer` are the names an enclosing graph defines (empty for the main graph).
void sort_and_check_graph(Graph& g, const std::vector<std::string>& outer = {});

}  // namespace ember::onnx_import
