// Node's attribute accessors and its description for messages (onnx/ir.hpp).
#include "onnx/ir.hpp"

#include <fmt/format.h>

#include "records/tensor_name.hpp"

namespace ember::onnx_import {

namespace {

const char* type_name(Attribute::Type t) {
  switch (t) {
    case Attribute::Type::Float: return "float";
    case Attribute::Type::Int: return "int";
    case Attribute::Type::String: return "string";
    case Attribute::Type::Tensor: return "tensor";
    case Attribute::Type::Graph: return "graph";
    case Attribute::Type::Floats: return "floats";
    case Attribute::Type::Ints: return "ints";
    case Attribute::Type::Strings: return "strings";
  }
  return "unknown";
}

// The attribute `key` if present, after checking it has type `want`.
const Attribute* typed(const Node& n, std::string_view key, Attribute::Type want) {
  const Attribute* a = n.attr(key);
  if (a && a->type != want)
    throw OnnxError(fmt::format("{}: attribute {} is {}, expected {}", n.describe(), quote_file_text(key),
                                type_name(a->type), type_name(want)));
  return a;
}

}  // namespace

std::string Node::describe() const {
  const std::string op = quote_file_text(op_type, 64);
  if (name.empty()) return fmt::format("{} node #{}", op, index);
  return fmt::format("{} node {} (#{})", op, quote_file_text(name, 96), index);
}

const Attribute* Node::attr(std::string_view key) const {
  auto it = attrs.find(key);
  return it == attrs.end() ? nullptr : &it->second;
}

int64_t Node::attr_int(std::string_view key, int64_t def) const {
  const Attribute* a = typed(*this, key, Attribute::Type::Int);
  return a ? a->i : def;
}
double Node::attr_float(std::string_view key, double def) const {
  const Attribute* a = typed(*this, key, Attribute::Type::Float);
  return a ? a->f : def;
}
std::string Node::attr_string(std::string_view key, std::string_view def) const {
  const Attribute* a = typed(*this, key, Attribute::Type::String);
  return a ? a->s : std::string(def);
}
std::vector<int64_t> Node::attr_ints(std::string_view key, std::vector<int64_t> def) const {
  const Attribute* a = typed(*this, key, Attribute::Type::Ints);
  return a ? a->ints : def;
}
std::vector<double> Node::attr_floats(std::string_view key, std::vector<double> def) const {
  const Attribute* a = typed(*this, key, Attribute::Type::Floats);
  return a ? a->floats : def;
}
std::vector<std::string> Node::attr_strings(std::string_view key) const {
  const Attribute* a = typed(*this, key, Attribute::Type::Strings);
  return a ? a->strings : std::vector<std::string>{};
}
const TensorData* Node::attr_tensor(std::string_view key) const {
  const Attribute* a = typed(*this, key, Attribute::Type::Tensor);
  return a ? a->t.get() : nullptr;
}
const Graph* Node::attr_graph(std::string_view key) const {
  const Attribute* a = typed(*this, key, Attribute::Type::Graph);
  return a ? a->g.get() : nullptr;
}

}  // namespace ember::onnx_import
