// format_record_tree: the human view of a record file's header (`ember inspect`). Kept apart from the container
// because it is presentation only: it reads a RecordFileInfo and nothing else.
#include <iterator>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "records/recorder.hpp"
#include "records/tensor_name.hpp"

namespace ember {
namespace {

// "layers.10" after "layers.9": numeric path segments compare as numbers.
struct SegmentLess {
  bool operator()(const std::string& a, const std::string& b) const {
    auto numeric = [](const std::string& s) {
      return !s.empty() && s.size() < 19 && s.find_first_not_of("0123456789") == std::string::npos;
    };
    if (numeric(a) && numeric(b)) return std::stoll(a) < std::stoll(b);
    if (numeric(a) != numeric(b)) return numeric(a);
    return a < b;
  }
};

struct Node {
  std::map<std::string, std::unique_ptr<Node>, SegmentLess> children;
  const RecordEntryInfo* entry = nullptr;
  uint64_t elements = 0;
  std::size_t tensors = 0;
};

std::string with_commas(uint64_t n) {
  const std::string digits = fmt::format("{}", n);
  std::string s;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) s.push_back(',');
    s.push_back(digits[i]);
  }
  return s;
}

uint64_t elements_of(const RecordEntryInfo& e) {
  const std::size_t es = dtype_size(e.dtype);
  return es ? e.byte_count / es : 0;  // shape x dtype == byte count was checked on reading
}

const char* role_label(ParamRole r) {
  switch (r) {
    case ParamRole::Trainable: return "trainable";
    case ParamRole::Buffer: return "buffer";
    case ParamRole::Constant: return "constant";
  }
  return "unknown";
}

const char* plural(std::size_t n) { return n == 1 ? "" : "s"; }

void print(std::string& out, const Node& node, const std::string& prefix) {
  auto os = std::back_inserter(out);
  std::size_t k = 0;
  for (const auto& [name, child] : node.children) {
    const bool last = ++k == node.children.size();
    fmt::format_to(os, "{}{}{}", prefix, last ? "└─ " : "├─ ", name);
    if (const RecordEntryInfo* e = child->entry) {
      fmt::format_to(os, "  {} {} {}  {}  {}  id {}", param_kind_name(e->kind), dtype_name(e->dtype),
                     e->shape.to_string(), with_commas(elements_of(*e)), role_label(e->role), e->id);
      if (!child->children.empty()) fmt::format_to(os, "  (subtree {})", with_commas(child->elements));
    } else {
      fmt::format_to(os, "  ({} in {} tensor{})", with_commas(child->elements), child->tensors,
                     plural(child->tensors));
    }
    out += '\n';
    print(out, *child, prefix + (last ? "   " : "│  "));
  }
}

}  // namespace

std::string format_record_tree(const RecordFileInfo& info) {
  Node root;
  for (const auto& e : info.entries) {
    Node* node = &root;
    const uint64_t n = elements_of(e);
    root.elements += n;
    ++root.tensors;
    std::size_t start = 0;
    while (true) {
      const std::size_t dot = e.path.find('.', start);
      const std::string seg = e.path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      auto& child = node->children[seg];
      if (!child) child = std::make_unique<Node>();
      node = child.get();
      node->elements += n;
      ++node->tensors;
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    node->entry = &e;
  }
  std::string out;
  auto os = std::back_inserter(out);
  fmt::format_to(os, "{}: Ember record, format {}, engine {}, {} recorder, {} bytes\n", info.file,
                 info.format_version, escape_file_text(info.engine_version), recorder_kind_name(info.kind),
                 with_commas(info.file_size));
  fmt::format_to(os, "precision {} (float {}, int {})\n", info.precision, dtype_name(info.float_dtype),
                 dtype_name(info.int_dtype));
  if (!info.scalars.empty()) {
    out += "scalars:\n";
    // {:g}: six significant digits, enough for a person reading the tree (the record keeps every bit).
    for (const auto& [name, v] : info.scalars) fmt::format_to(os, "  {} = {:g}\n", name, v);
  }
  fmt::format_to(os, "params: {} in {} tensor{}\n", with_commas(root.elements), root.tensors, plural(root.tensors));
  print(out, root, "");
  return out;
}

}  // namespace ember
