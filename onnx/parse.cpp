// ModelProto -> the importer's IR (onnx/parse.hpp): reading with bounded sizes, then nodes, attributes, value infos
// and initializers, then the graph checks (graph_check.cpp).
#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <climits>
#include <fstream>
#include <unordered_set>

#include "onnx/parse_internal.hpp"
#include "records/tensor_name.hpp"

namespace ember::onnx_import {

namespace {

using detail::ParseState;

constexpr int kProtobufRecursionLimit = 200;  // nested messages (subgraphs inside attributes inside nodes ...)

std::vector<std::byte> read_file(const std::filesystem::path& path, uint64_t max_bytes, const char* what) {
  std::error_code ec;
  const std::string shown = quote_file_text(path.string(), 200);
  if (!std::filesystem::is_regular_file(path, ec))
    throw OnnxError(fmt::format("{} {} is not a readable file", what, shown));
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) throw OnnxError(fmt::format("{} {}: {}", what, shown, ec.message()));
  if (size > max_bytes)
    throw OnnxError(fmt::format("{} {} has {} bytes, above the limit of {}", what, shown, size, max_bytes));
  std::ifstream in(path, std::ios::binary);
  std::vector<std::byte> bytes(size);
  if (size) in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size));
  if (!in) throw OnnxError(fmt::format("{} {}: reading failed", what, shown));
  return bytes;
}

// Parses `msg` from exactly `bytes`, with protobuf's total-bytes limit at the input's size and a recursion limit.
template <class Message>
void parse_message(Message& msg, std::span<const std::byte> bytes, uint64_t max_bytes, const char* what) {
  if (bytes.size() > max_bytes || bytes.size() > static_cast<std::size_t>(INT_MAX))
    throw OnnxError(fmt::format("{} has {} bytes, above the limit of {}", what, bytes.size(),
                                std::min<uint64_t>(max_bytes, INT_MAX)));
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream in(&raw);
  in.SetTotalBytesLimit(static_cast<int>(bytes.size()));
  in.SetRecursionLimit(kProtobufRecursionLimit);
  if (!msg.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
    throw OnnxError(fmt::format("{} is not a valid ONNX protobuf (truncated, corrupt, or nested too deeply)", what));
}

ValueInfo value_info_from_proto(const onnx::ValueInfoProto& v) {
  ValueInfo out;
  out.name = v.name();
  if (!v.has_type()) return out;
  const onnx::TypeProto& type = v.type();
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType: break;
    case onnx::TypeProto::kSequenceType: out.non_tensor_kind = "sequence"; return out;
    case onnx::TypeProto::kMapType: out.non_tensor_kind = "map"; return out;
    case onnx::TypeProto::kOptionalType: out.non_tensor_kind = "optional"; return out;
    case onnx::TypeProto::kSparseTensorType: out.non_tensor_kind = "sparse_tensor"; return out;
    default: out.non_tensor_kind = "unknown"; return out;
  }
  const auto& tt = type.tensor_type();
  out.onnx_elem_type = tt.elem_type();
  out.dtype = detail::dtype_of_onnx(tt.elem_type());
  if (!tt.has_shape()) return out;
  std::vector<int64_t> dims;
  for (const auto& d : tt.shape().dim()) {
    if (d.has_dim_value() && d.dim_value() >= 0) {
      dims.push_back(d.dim_value());
      out.dim_params.emplace_back();
    } else {
      dims.push_back(-1);
      out.dim_params.push_back(d.has_dim_param() ? d.dim_param() : std::string());
    }
  }
  out.dims = std::move(dims);
  return out;
}

Graph graph_from_proto(const onnx::GraphProto& g, ParseState& st, int depth);

std::optional<Attribute> attribute_from_proto(const onnx::AttributeProto& a, const Node& node, ParseState& st,
                                              int depth) {
  Attribute out;
  const std::string what = fmt::format("{}: attribute {}", node.describe(), quote_file_text(a.name(), 64));
  int type = a.type();
  if (type == onnx::AttributeProto_AttributeType_UNDEFINED) {  // IR < 2 files set only the value's field
    if (a.has_f()) type = onnx::AttributeProto_AttributeType_FLOAT;
    else if (a.has_i()) type = onnx::AttributeProto_AttributeType_INT;
    else if (a.has_s()) type = onnx::AttributeProto_AttributeType_STRING;
    else if (a.has_t()) type = onnx::AttributeProto_AttributeType_TENSOR;
    else if (a.has_g()) type = onnx::AttributeProto_AttributeType_GRAPH;
    else if (a.floats_size()) type = onnx::AttributeProto_AttributeType_FLOATS;
    else if (a.ints_size()) type = onnx::AttributeProto_AttributeType_INTS;
    else if (a.strings_size()) type = onnx::AttributeProto_AttributeType_STRINGS;
  }
  switch (type) {
    case onnx::AttributeProto_AttributeType_FLOAT: out.type = Attribute::Type::Float; out.f = a.f(); break;
    case onnx::AttributeProto_AttributeType_INT: out.type = Attribute::Type::Int; out.i = a.i(); break;
    case onnx::AttributeProto_AttributeType_STRING: out.type = Attribute::Type::String; out.s = a.s(); break;
    case onnx::AttributeProto_AttributeType_FLOATS:
      out.type = Attribute::Type::Floats;
      out.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case onnx::AttributeProto_AttributeType_INTS:
      out.type = Attribute::Type::Ints;
      out.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case onnx::AttributeProto_AttributeType_STRINGS:
      out.type = Attribute::Type::Strings;
      out.strings.assign(a.strings().begin(), a.strings().end());
      break;
    case onnx::AttributeProto_AttributeType_TENSOR:
      out.type = Attribute::Type::Tensor;
      out.t = std::make_shared<const TensorData>(detail::tensor_from_proto(a.t(), st, what));
      break;
    case onnx::AttributeProto_AttributeType_GRAPH:
      out.type = Attribute::Type::Graph;
      out.g = std::make_shared<const Graph>(graph_from_proto(a.g(), st, depth + 1));
      break;
    case onnx::AttributeProto_AttributeType_TYPE_PROTO:
    case onnx::AttributeProto_AttributeType_TYPE_PROTOS:
      // Only the sequence / optional operators take types (Optional, SequenceEmpty's dtype is an int): left out, so
      // that such a node is reported as an unsupported operator, not as an unreadable file.
      return std::nullopt;
    case onnx::AttributeProto_AttributeType_SPARSE_TENSOR:
    case onnx::AttributeProto_AttributeType_SPARSE_TENSORS:
      throw UnsupportedDTypeError(fmt::format("{} is a sparse tensor, which Ember does not support", what));
    default:
      throw OnnxError(fmt::format("{} has type {}, which Ember does not support", what, a.type()));
  }
  return out;
}

Graph graph_from_proto(const onnx::GraphProto& g, ParseState& st, int depth) {
  if (depth > st.limits.max_graph_depth)
    throw OnnxError(fmt::format("subgraphs are nested deeper than {}", st.limits.max_graph_depth));
  Graph out;
  out.name = g.name();
  if (g.sparse_initializer_size())
    throw UnsupportedDTypeError(fmt::format("graph {} has sparse initializers, which Ember does not support",
                                            quote_file_text(g.name(), 96)));
  std::unordered_set<std::string> init_names;
  for (const auto& t : g.initializer()) {
    const std::string what = fmt::format("initializer {}", quote_file_text(t.name(), 96));
    if (t.name().empty()) throw OnnxError("an initializer has no name");
    if (!init_names.insert(t.name()).second) throw OnnxError(fmt::format("{} is defined twice", what));
    out.initializers.emplace_back(t.name(), detail::tensor_from_proto(t, st, what));
  }
  // Inputs that name an initializer are its declaration (IR < 4 lists every initializer as an input).
  for (const auto& v : g.input())
    if (!init_names.count(v.name())) out.inputs.push_back(value_info_from_proto(v));
  for (const auto& v : g.output()) out.outputs.push_back(value_info_from_proto(v));
  st.nodes += g.node_size();
  if (st.nodes > st.limits.max_nodes)
    throw OnnxError(fmt::format("the model has more than {} nodes", st.limits.max_nodes));
  out.nodes.reserve(static_cast<std::size_t>(g.node_size()));
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& p = g.node(i);
    Node n;
    n.name = p.name();
    n.op_type = p.op_type();
    n.domain = p.domain() == "ai.onnx" ? std::string() : p.domain();
    n.index = i;
    n.inputs.assign(p.input().begin(), p.input().end());
    n.outputs.assign(p.output().begin(), p.output().end());
    for (const auto& a : p.attribute()) {
      std::optional<Attribute> attr = attribute_from_proto(a, n, st, depth);
      if (!attr) continue;
      if (!n.attrs.emplace(a.name(), std::move(*attr)).second)
        throw OnnxError(fmt::format("{}: attribute {} is given twice", n.describe(), quote_file_text(a.name(), 64)));
    }
    out.nodes.push_back(std::move(n));
  }
  return out;
}

Model model_from_bytes(std::span<const std::byte> bytes, ParseState& st, const char* what) {
  onnx::ModelProto proto;
  parse_message(proto, bytes, st.limits.max_file_bytes, what);
  if (!proto.has_graph()) throw OnnxError(fmt::format("{} has no graph", what));
  Model m;
  m.ir_version = proto.ir_version();
  m.producer_name = proto.producer_name();
  m.producer_version = proto.producer_version();
  for (const auto& o : proto.opset_import()) {
    const std::string domain = o.domain() == "ai.onnx" ? std::string() : o.domain();
    if (!m.opsets.emplace(domain, o.version()).second)
      throw OnnxError(fmt::format("opset of domain {} is imported twice", quote_file_text(domain, 64)));
  }
  if (proto.opset_import_size() == 0) m.opsets.emplace("", 1);  // IR 2 files: opset 1 implied
  if (proto.functions_size())
    throw UnsupportedOperatorError("the model defines local functions, which Ember does not support");
  m.graph = graph_from_proto(proto.graph(), st, 0);
  // Protobuf's arena of the whole file is freed here: what remains is the IR.
  sort_and_check_graph(m.graph);
  return m;
}

}  // namespace

bool parser_available() { return true; }

Model parse_model_file(const std::filesystem::path& path, const ParseLimits& limits) {
  const std::vector<std::byte> bytes = read_file(path, limits.max_file_bytes, "ONNX model");
  ParseState st{limits, path.has_parent_path() ? path.parent_path() : std::filesystem::path(".")};
  const std::string what = "ONNX model " + quote_file_text(path.string(), 200);
  return model_from_bytes(bytes, st, what.c_str());
}

Model parse_model_bytes(std::span<const std::byte> bytes, const std::filesystem::path& base_dir,
                        const ParseLimits& limits) {
  ParseState st{limits, base_dir};
  return model_from_bytes(bytes, st, "ONNX model <memory>");
}

TensorData parse_tensor_file(const std::filesystem::path& path, const ParseLimits& limits) {
  const std::vector<std::byte> bytes = read_file(path, limits.max_file_bytes, "ONNX tensor");
  onnx::TensorProto proto;
  const std::string what = "ONNX tensor " + quote_file_text(path.string(), 200);
  parse_message(proto, bytes, limits.max_file_bytes, what.c_str());
  ParseState st{limits, path.has_parent_path() ? path.parent_path() : std::filesystem::path(".")};
  return detail::tensor_from_proto(proto, st, what);
}

}  // namespace ember::onnx_import
