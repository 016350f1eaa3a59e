// External tensor data (TensorProto.data_location = EXTERNAL): a file named relative to the model's directory,
// resolved and checked so that a model can never read outside that directory or past a file's end.
#include <fmt/format.h>

#include <fstream>
#include <system_error>

#include "onnx/parse_internal.hpp"
#include "records/tensor_name.hpp"

namespace ember::onnx_import::detail {

namespace {

// A non-negative decimal integer that fits int64 (offset / length values are strings in the file).
uint64_t parse_size(const std::string& text, const std::string& key, const std::string& what) {
  if (text.empty() || text.size() > 19)
    throw OnnxError(fmt::format("{}: external data {} {} is not a size", what, key, quote_file_text(text, 40)));
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      throw OnnxError(fmt::format("{}: external data {} {} is not a size", what, key, quote_file_text(text, 40)));
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

// The canonical path of `location` under `base`, or an OnnxError when it is absolute, has `..`, or escapes (through
// a symbolic link) the canonical base directory.
std::filesystem::path resolve_under(const std::filesystem::path& base, const std::string& location,
                                    const std::string& what) {
  namespace fs = std::filesystem;
  const std::string shown = quote_file_text(location, 120);
  if (location.empty()) throw OnnxError(fmt::format("{}: external data has no location", what));
  if (location.find('\0') != std::string::npos)
    throw OnnxError(fmt::format("{}: external data location {} has a NUL byte", what, shown));
  const fs::path rel(location);
  if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory())
    throw OnnxError(fmt::format("{}: external data location {} is absolute; it must be relative to the model's "
                                "directory", what, shown));
  for (const fs::path& part : rel)
    if (part == "..")
      throw OnnxError(fmt::format("{}: external data location {} leaves the model's directory (..)", what, shown));
  std::error_code ec;
  const fs::path root = fs::canonical(base, ec);
  if (ec) throw OnnxError(fmt::format("{}: the model's directory cannot be resolved: {}", what, ec.message()));
  const fs::path full = fs::canonical(root / rel, ec);
  if (ec) throw OnnxError(fmt::format("{}: external data file {} cannot be opened: {}", what, shown, ec.message()));
  // Component-wise prefix test: /a/bc is not under /a/b.
  auto r = root.begin();
  auto f = full.begin();
  for (; r != root.end(); ++r, ++f)
    if (f == full.end() || *f != *r)
      throw OnnxError(fmt::format("{}: external data location {} resolves outside the model's directory", what,
                                  shown));
  return full;
}

}  // namespace

std::vector<std::byte> read_external_data(const onnx::TensorProto& t, ParseState& st, uint64_t expected_bytes,
                                          const std::string& what) {
  if (st.base_dir.empty())
    throw OnnxError(fmt::format("{}: the tensor's data is in an external file, but the model was given as bytes "
                                "without a directory to read it from", what));
  std::string location;
  std::optional<uint64_t> offset, length;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset") offset = parse_size(kv.value(), "offset", what);
    else if (kv.key() == "length") length = parse_size(kv.value(), "length", what);
  }
  const std::filesystem::path file = resolve_under(st.base_dir, location, what);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(file, ec))
    throw OnnxError(fmt::format("{}: external data {} is not a regular file", what, quote_file_text(location, 120)));
  const uint64_t size = std::filesystem::file_size(file, ec);
  if (ec) throw OnnxError(fmt::format("{}: external data {}: {}", what, quote_file_text(location, 120), ec.message()));
  const uint64_t off = offset.value_or(0);
  if (off > size)
    throw OnnxError(fmt::format("{}: external data offset {} is past the end of {} ({} bytes)", what, off,
                                quote_file_text(location, 120), size));
  const uint64_t len = length.value_or(size - off);
  if (len > size - off)
    throw OnnxError(fmt::format("{}: external data offset {} + length {} is past the end of {} ({} bytes)", what,
                                off, len, quote_file_text(location, 120), size));
  if (len != expected_bytes)
    throw OnnxError(fmt::format("{}: external data has {} bytes, the tensor's shape needs {}", what, len,
                                expected_bytes));
  if (len > st.limits.max_total_external_bytes - st.external_bytes)
    throw OnnxError(fmt::format("{}: the model's external data exceeds {} bytes", what,
                                st.limits.max_total_external_bytes));
  st.external_bytes += len;
  std::ifstream in(file, std::ios::binary);
  std::vector<std::byte> bytes(len);
  in.seekg(static_cast<std::streamoff>(off));
  if (len) in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(len));
  if (!in) throw OnnxError(fmt::format("{}: reading external data {} failed", what, quote_file_text(location, 120)));
  return bytes;
}

}  // namespace ember::onnx_import::detail
