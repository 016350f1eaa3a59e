#pragma once
// The ONNX importer's own view of a model (issue 19): what onnx/parse.cpp makes of a ModelProto after bounding and
// validating it, and all the rest of the importer reads. Plain C++ with no protobuf types, so op converters
// (onnx/ops/*.cpp) and tests build nodes by hand without the ONNX library.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tensor/error.hpp"
#include "engine/tensor/tensor_data.hpp"

namespace ember::onnx_import {

// Every importer failure: a bad file, an unsupported operator or dtype, a node whose inputs break its operator's
// rules. Messages name the node ("Reshape node 'n3' (#12): ...") and escape file content.
class OnnxError : public Error {
 public:
  using Error::Error;
};

// The subclasses say why a model cannot run here (the conformance runner's categories, ember.h's UNSUPPORTED):
// an operator (or opset, or domain) without a converter, reported for every such node of the model at once.
class UnsupportedOperatorError : public OnnxError {
 public:
  using OnnxError::OnnxError;
};
// An element type Ember does not have (int8, uint16/32/64, bfloat16, string, complex) or a value that is not a
// tensor (sequence, map, optional, sparse tensor).
class UnsupportedDTypeError : public OnnxError {
 public:
  using OnnxError::OnnxError;
};

struct Graph;

// A node attribute (AttributeProto). Only the field of `type` is meaningful.
struct Attribute {
  enum class Type { Float, Int, String, Tensor, Graph, Floats, Ints, Strings };
  Type type = Type::Int;
  double f = 0.0;
  int64_t i = 0;
  std::string s;
  std::shared_ptr<const TensorData> t;
  std::shared_ptr<const Graph> g;
  std::vector<double> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
};

struct Node {
  std::string name;  // may be empty in the file; describe() then uses the index
  std::string op_type;
  std::string domain;  // "" and "ai.onnx" are the default domain
  int64_t index = 0;   // position in its graph, for messages
  std::vector<std::string> inputs;   // "" = an omitted optional input
  std::vector<std::string> outputs;  // "" = an omitted optional output
  std::map<std::string, Attribute, std::less<>> attrs;

  // "Conv node 'conv1' (#3)": escaped, for messages.
  std::string describe() const;
  bool has_attr(std::string_view key) const { return attrs.find(key) != attrs.end(); }
  // Typed accessors: the default when the attribute is absent; OnnxError naming the node when it has another type.
  int64_t attr_int(std::string_view key, int64_t def) const;
  double attr_float(std::string_view key, double def) const;
  std::string attr_string(std::string_view key, std::string_view def) const;
  std::vector<int64_t> attr_ints(std::string_view key, std::vector<int64_t> def = {}) const;
  std::vector<double> attr_floats(std::string_view key, std::vector<double> def = {}) const;
  std::vector<std::string> attr_strings(std::string_view key) const;
  const TensorData* attr_tensor(std::string_view key) const;  // nullptr when absent
  const Graph* attr_graph(std::string_view key) const;        // nullptr when absent
  const Attribute* attr(std::string_view key) const;          // nullptr when absent
};

// A graph input or output: its declared element type and shape. dims[i] < 0 is a dynamic dimension
// (dim_params[i] names it when the file does).
struct ValueInfo {
  std::string name;
  std::optional<DType> dtype;  // nullopt: unknown or not representable in Ember
  int32_t onnx_elem_type = 0;  // TensorProto.DataType as in the file
  std::optional<std::vector<int64_t>> dims;  // nullopt: rank unknown
  std::vector<std::string> dim_params;
  // Empty for a tensor; otherwise what the value is ("sequence", "map", "optional", "sparse_tensor", "unknown"),
  // which the importer cannot feed or return.
  std::string non_tensor_kind;
};

struct Graph {
  std::string name;
  std::vector<Node> nodes;  // topologically sorted by the parser (cycles are an OnnxError at load)
  std::vector<ValueInfo> inputs;   // without the ones that are initializers
  std::vector<ValueInfo> outputs;
  std::vector<std::pair<std::string, TensorData>> initializers;  // in file order
};

struct Model {
  int64_t ir_version = 0;
  std::map<std::string, int64_t, std::less<>> opsets;  // domain ("" for ai.onnx) -> version
  std::string producer_name, producer_version;
  Graph graph;
};

}  // namespace ember::onnx_import
