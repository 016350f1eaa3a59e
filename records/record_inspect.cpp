// format_record_tree: the human view of a record file's header (`ember inspect`). Kept apart from the container
// because it is presentation only: it reads a RecordFileInfo and nothing else.
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>

#include "records/recorder.hpp"

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
  const std::string digits = std::to_string(n);
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

void print(std::ostringstream& os, const Node& node, const std::string& prefix) {
  std::size_t k = 0;
  for (const auto& [name, child] : node.children) {
    const bool last = ++k == node.children.size();
    os << prefix << (last ? "└─ " : "├─ ") << name;
    if (const RecordEntryInfo* e = child->entry) {
      os << "  " << param_kind_name(e->kind) << " " << dtype_name(e->dtype) << " " << e->shape.to_string() << "  "
         << with_commas(elements_of(*e)) << "  " << role_label(e->role) << "  id " << e->id;
      if (!child->children.empty()) os << "  (subtree " << with_commas(child->elements) << ")";
    } else {
      os << "  (" << with_commas(child->elements) << " in " << child->tensors << " tensor"
         << (child->tensors == 1 ? "" : "s") << ")";
    }
    os << "\n";
    print(os, *child, prefix + (last ? "   " : "│  "));
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
  std::ostringstream os;
  os << info.file << ": Ember record, format " << info.format_version << ", engine " << info.engine_version << ", "
     << recorder_kind_name(info.kind) << " recorder, " << with_commas(info.file_size) << " bytes\n";
  os << "precision " << info.precision << " (float " << dtype_name(info.float_dtype) << ", int "
     << dtype_name(info.int_dtype) << ")\n";
  if (!info.scalars.empty()) {
    os << "scalars:\n";
    for (const auto& [name, v] : info.scalars) os << "  " << name << " = " << v << "\n";
  }
  os << "params: " << with_commas(root.elements) << " in " << root.tensors << " tensor"
     << (root.tensors == 1 ? "" : "s") << "\n";
  print(os, root, "");
  return os.str();
}

}  // namespace ember
