#pragma once
// Shared by the parser's files (parse.cpp, parse_tensor.cpp, external_data.cpp): protobuf types appear only here
// and in those files, never in the importer's other headers.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include <onnx/onnx_pb.h>

#include "onnx/parse.hpp"

namespace ember::onnx_import::detail {

// What the conversion of one model needs besides the proto: the limits, where external data may be read from, and
// running totals that the limits bound across the whole model.
struct ParseState {
  const ParseLimits& limits;
  std::filesystem::path base_dir;  // empty: external data refused
  uint64_t external_bytes = 0;
  int64_t nodes = 0;
};

// ONNX's element type as Ember's DType; nullopt for the types Ember does not have.
std::optional<DType> dtype_of_onnx(int32_t elem_type);
// "int8", "bfloat16", ... for messages (the number for an unknown one).
std::string onnx_dtype_name(int32_t elem_type);

// A TensorProto as host data, with its sizes checked (parse.hpp) before anything is allocated. `what` names the
// tensor in messages ("initializer 'w'").
TensorData tensor_from_proto(const onnx::TensorProto& t, ParseState& st, const std::string& what);

// The bytes of an external tensor: `location` resolved under st.base_dir, offset/length checked against the file
// and against `expected_bytes`.
std::vector<std::byte> read_external_data(const onnx::TensorProto& t, ParseState& st, uint64_t expected_bytes,
                                          const std::string& what);

}  // namespace ember::onnx_import::detail
