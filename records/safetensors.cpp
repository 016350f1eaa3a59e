// safetensors reading and writing (safetensors.hpp).
#include "records/safetensors.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include <fmt/format.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "records/atomic_file.hpp"
#include "records/tensor_name.hpp"

namespace ember {
namespace {

constexpr const char* kLabel = "safetensors";
constexpr const char* kMetadataKey = "__metadata__";
constexpr const char* kScalarPrefix = "scalar.";

[[noreturn]] void format_error(const std::string& file, const std::string& what) {
  throw RecordFormatError(file, what, kLabel);
}

struct DTypeName {
  const char* stored;
  DType dtype;       // as Ember holds it
  std::size_t size;  // stored element size
};
// The dtypes Ember reads. BF16 is widened to f32; unsigned and 8-bit float types are refused by name.
constexpr DTypeName kDTypes[] = {
    {"F32", DType::F32, 4},  {"F64", DType::F64, 8}, {"F16", DType::F16, 2}, {"BF16", DType::F32, 2},
    {"I64", DType::I64, 8},  {"I32", DType::I32, 4}, {"I16", DType::I16, 2}, {"U8", DType::U8, 1},
    {"BOOL", DType::Bool, 1},
};

const DTypeName* find_dtype(std::string_view s) {
  for (const auto& d : kDTypes)
    if (s == d.stored) return &d;
  return nullptr;
}

const char* stored_name(DType d) {
  for (const auto& t : kDTypes)
    if (t.dtype == d && std::strcmp(t.stored, "BF16") != 0) return t.stored;
  throw ArgumentError(fmt::format("safetensors: dtype {} has no safetensors name", dtype_name(d)));
}

uint64_t read_u64_le(const std::byte* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | static_cast<uint8_t>(p[i]);
  return v;
}

std::string json_string(const rapidjson::Value& v) { return std::string(v.GetString(), v.GetStringLength()); }

// f(name, value) for each member of the object `obj`, walked by count: C++20 makes the comparison of rapidjson's
// member iterators ambiguous (clang's -Wambiguous-reversed-operator).
template <class F>
void for_each_member(const rapidjson::Value& obj, F&& f) {
  auto it = obj.MemberBegin();
  for (rapidjson::SizeType i = 0; i < obj.MemberCount(); ++i, ++it) f(it->name, it->value);
}

SafetensorsEntry parse_entry(const std::string& file, const std::string& name, const rapidjson::Value& v,
                             uint64_t buffer_size) {
  const std::string where = fmt::format("tensor {}", quote_file_text(name));
  auto fail = [&](const std::string& why) { format_error(file, fmt::format("{}: {}", where, why)); };
  if (!v.IsObject()) fail("the entry is not an object");
  SafetensorsEntry e;
  e.name = name;
  bool has_dtype = false, has_shape = false, has_offsets = false;
  for_each_member(v, [&](const rapidjson::Value& name_value, const rapidjson::Value& x) {
    const std::string key = json_string(name_value);
    if ((key == "dtype" && has_dtype) || (key == "shape" && has_shape) || (key == "data_offsets" && has_offsets))
      fail(fmt::format("{} appears twice", key));
    if (key == "dtype") {
      if (!x.IsString()) fail("dtype is not a string");
      e.stored_dtype = json_string(x);
      has_dtype = true;
    } else if (key == "shape") {
      if (!x.IsArray()) fail("shape is not an array");
      if (x.Size() > kRecordMaxRank) fail(fmt::format("rank {} (Ember holds up to {})", x.Size(), kRecordMaxRank));
      for (const auto& d : x.GetArray()) {
        if (!d.IsUint64() || d.GetUint64() > uint64_t(INT64_MAX)) fail("shape holds a value that is not a dimension");
        e.shape.dims.push_back(static_cast<int64_t>(d.GetUint64()));
      }
      has_shape = true;
    } else if (key == "data_offsets") {
      if (!x.IsArray() || x.Size() != 2 || !x[0].IsUint64() || !x[1].IsUint64())
        fail("data_offsets is not a pair of byte offsets");
      e.begin = x[0].GetUint64();
      e.end = x[1].GetUint64();
      has_offsets = true;
    } else {
      fail(fmt::format("unknown field {}", quote_file_text(key)));
    }
  });
  if (!has_dtype || !has_shape || !has_offsets)
    fail(fmt::format("missing {}", !has_dtype ? "dtype" : !has_shape ? "shape" : "data_offsets"));
  const DTypeName* dt = find_dtype(e.stored_dtype);
  if (!dt) fail(fmt::format("dtype {} is not one Ember reads (F32 F64 F16 BF16 I64 I32 I16 U8 BOOL)",
                            quote_file_text(e.stored_dtype)));
  e.dtype = dt->dtype;
  uint64_t bytes = dt->size;
  for (int64_t d : e.shape.dims) {
    const auto u = static_cast<uint64_t>(d);
    if (u != 0 && bytes > UINT64_MAX / u) fail(fmt::format("shape {} overflows", e.shape.to_string()));
    bytes *= u;
  }
  if (e.end < e.begin) fail(fmt::format("data_offsets [{}, {}] end before they begin", e.begin, e.end));
  if (e.end > buffer_size)
    fail(fmt::format("data_offsets [{}, {}] run past the end of the {}-byte buffer", e.begin, e.end, buffer_size));
  if (e.end - e.begin != bytes)
    fail(fmt::format("shape {} of {} is {} bytes, data_offsets [{}, {}] hold {}", e.shape.to_string(), e.stored_dtype,
                     bytes, e.begin, e.end, e.end - e.begin));
  return e;
}

}  // namespace

SafetensorsHeader parse_safetensors(std::span<const std::byte> bytes, const std::string& file) {
  if (bytes.size() < 8)
    format_error(file, fmt::format("truncated: {} bytes, the header length alone is 8", bytes.size()));
  const uint64_t n = read_u64_le(bytes.data());
  if (n > kSafetensorsMaxHeader)
    format_error(file, fmt::format("header length {} exceeds the limit of {} bytes", n, kSafetensorsMaxHeader));
  if (n > bytes.size() - 8)
    format_error(file, fmt::format("header length {} runs past the end of the file ({} bytes after the length)", n,
                                   bytes.size() - 8));
  if (n < 2) format_error(file, fmt::format("header length {} cannot hold a JSON object", n));
  const auto* text = reinterpret_cast<const char*>(bytes.data() + 8);
  if (text[0] != '{') format_error(file, "the header does not start with '{'");
  rapidjson::Document doc;
  // Iterative: nesting depth costs heap (bounded by n), not stack. Encoding validated: names are UTF-8.
  doc.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag>(text, static_cast<std::size_t>(n));
  if (doc.HasParseError())
    format_error(file, fmt::format("the header is not valid JSON (error {} at byte {})",
                                   static_cast<int>(doc.GetParseError()), doc.GetErrorOffset()));
  if (!doc.IsObject()) format_error(file, "the header is not a JSON object");
  SafetensorsHeader h;
  h.buffer_start = 8 + n;
  const uint64_t buffer_size = bytes.size() - h.buffer_start;
  bool seen_metadata = false;
  for_each_member(doc, [&](const rapidjson::Value& name_value, const rapidjson::Value& value) {
    const std::string name = json_string(name_value);
    if (name != kMetadataKey) {
      if (const std::string why = tensor_name_problem(name); !why.empty()) format_error(file, "tensor name: " + why);
      h.entries.push_back(parse_entry(file, name, value, buffer_size));
      return;
    }
    if (seen_metadata) format_error(file, "two __metadata__ entries");
    seen_metadata = true;
    if (!value.IsObject()) format_error(file, "__metadata__ is not an object");
    for_each_member(value, [&](const rapidjson::Value& k, const rapidjson::Value& v) {
      const std::string key = json_string(k);
      if (!v.IsString())
        format_error(file, fmt::format("__metadata__ {}: the value is not a string", quote_file_text(key)));
      if (!h.metadata.emplace(key, json_string(v)).second)
        format_error(file, fmt::format("__metadata__ {} appears twice", quote_file_text(key)));
    });
  });
  std::sort(h.entries.begin(), h.entries.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (std::size_t i = 1; i < h.entries.size(); ++i)
    if (h.entries[i].name == h.entries[i - 1].name)
      format_error(file, fmt::format("tensor {} appears twice", quote_file_text(h.entries[i].name)));
  // Sorted by offset, the tensors must tile the buffer: each begins where the one before ends.
  std::vector<const SafetensorsEntry*> by_offset;
  by_offset.reserve(h.entries.size());
  for (const auto& e : h.entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(), [](const auto* a, const auto* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t at = 0;
  const SafetensorsEntry* prev = nullptr;
  for (const auto* e : by_offset) {
    if (e->begin < at)
      format_error(file, fmt::format("tensor {} (bytes [{}, {}]) overlaps tensor {} (bytes [{}, {}])",
                                     quote_file_text(e->name), e->begin, e->end, quote_file_text(prev->name),
                                     prev->begin, prev->end));
    if (e->begin > at)
      format_error(file, fmt::format("bytes [{}, {}] of the buffer belong to no tensor (before tensor {})", at,
                                     e->begin, quote_file_text(e->name)));
    at = e->end;
    prev = e;
  }
  if (at != buffer_size)
    format_error(file, fmt::format("bytes [{}, {}] of the buffer belong to no tensor", at, buffer_size));
  return h;
}

// ---------------------------------------------------------------- SafetensorsFile
SafetensorsFile SafetensorsFile::open(const std::filesystem::path& path) {
  SafetensorsFile f;
  f.file_ = path.string();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw RecordIoError(f.file_, fmt::format("cannot open: {}", std::strerror(errno)), kLabel);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int err = errno;
    ::close(fd);
    throw RecordIoError(f.file_, err ? fmt::format("cannot read: {}", std::strerror(err)) : "not a regular file",
                        kLabel);
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size > 0) {
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int err = errno;
    ::close(fd);
    if (p == MAP_FAILED) throw RecordIoError(f.file_, fmt::format("cannot map: {}", std::strerror(err)), kLabel);
    f.mapping_ = std::shared_ptr<const void>(p, [size](const void* q) { ::munmap(const_cast<void*>(q), size); });
    f.bytes_ = {static_cast<const std::byte*>(p), size};
  } else {
    ::close(fd);
  }
  f.header_ = parse_safetensors(f.bytes_, f.file_);
  return f;
}

const SafetensorsEntry* SafetensorsFile::find(const std::string& name) const {
  auto it = std::lower_bound(header_.entries.begin(), header_.entries.end(), name,
                             [](const SafetensorsEntry& e, const std::string& n) { return e.name < n; });
  return it != header_.entries.end() && it->name == name ? &*it : nullptr;
}

std::span<const std::byte> SafetensorsFile::raw(const SafetensorsEntry& e) const {
  return bytes_.subspan(header_.buffer_start + e.begin, e.end - e.begin);
}

TensorData SafetensorsFile::tensor(const SafetensorsEntry& e) const {
  const auto src = raw(e);
  if (e.stored_dtype == "BF16") {  // bf16 is the top half of an f32: shift in 16 zero bits
    std::vector<std::byte> out(src.size() * 2);
    for (std::size_t i = 0; i < src.size() / 2; ++i) {
      out[4 * i + 2] = src[2 * i];
      out[4 * i + 3] = src[2 * i + 1];
    }
    return TensorData(std::move(out), e.shape, DType::F32);
  }
  return TensorData(std::vector<std::byte>(src.begin(), src.end()), e.shape, e.dtype);
}

Record SafetensorsFile::to_record() const {
  Record r;
  for (const auto& e : header_.entries) {
    const ParamKind kind = dtype_is_float(e.dtype) ? ParamKind::Float
                           : e.dtype == DType::Bool ? ParamKind::Bool
                                                    : ParamKind::Int;
    // A fresh id each: load_record refuses two params sharing one (their optimizer state would mix).
    r.params.emplace(e.name, ParamRecord{ParamId::next().value, kind, ParamRole::Trainable, tensor(e)});
  }
  for (const auto& [key, value] : header_.metadata) {
    if (!key.starts_with(kScalarPrefix)) continue;
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (end == value.c_str() || *end != '\0')
      format_error(file_, fmt::format("__metadata__ {}: {} is not a number", quote_file_text(key),
                                      quote_file_text(value)));
    r.scalars[key.substr(std::strlen(kScalarPrefix))] = v;
  }
  return r;
}

// ---------------------------------------------------------------- writing
namespace {

// The header JSON (padded to a multiple of 8 with spaces, as the reference writer does) and the tensors in order.
std::string header_json(const Record& record, const std::map<std::string, std::string>& metadata,
                        const std::string& file) {
  auto fail = [&](const std::string& why) { throw RecordFormatError(file, "cannot save: " + why, kLabel); };
  std::map<std::string, std::string> meta = metadata;
  for (const auto& [name, v] : record.scalars) meta.emplace(kScalarPrefix + name, fmt::format("{}", v));
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  w.StartObject();
  if (!meta.empty()) {
    w.Key(kMetadataKey);
    w.StartObject();
    for (const auto& [k, v] : meta) {
      w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
      w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
    }
    w.EndObject();
  }
  uint64_t at = 0;
  for (const auto& [name, pr] : record.params) {
    if (name == kMetadataKey) fail("a tensor cannot be called __metadata__");
    if (const std::string why = tensor_name_problem(name); !why.empty()) fail("tensor name: " + why);
    if (pr.data.shape.rank() > kRecordMaxRank)
      fail(fmt::format("tensor {} has rank {} (at most {})", quote_file_text(name), pr.data.shape.rank(),
                       kRecordMaxRank));
    pr.data.validate();
    w.Key(name.data(), static_cast<rapidjson::SizeType>(name.size()));
    w.StartObject();
    w.Key("dtype");
    w.String(stored_name(pr.data.dtype));
    w.Key("shape");
    w.StartArray();
    for (int64_t d : pr.data.shape.dims) w.Uint64(static_cast<uint64_t>(d));
    w.EndArray();
    w.Key("data_offsets");
    w.StartArray();
    w.Uint64(at);
    at += pr.data.bytes.size();
    w.Uint64(at);
    w.EndArray();
    w.EndObject();
  }
  w.EndObject();
  std::string json(sb.GetString(), sb.GetSize());
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(static_cast<uint64_t>(json.size()) >> (8 * i) & 0xff);
  return out + json;
}

}  // namespace

void write_safetensors(const Record& record, const std::filesystem::path& path,
                       const std::map<std::string, std::string>& metadata) {
  const std::string file = path.string();
  const std::string head = header_json(record, metadata, file);  // refuses bad records before any file exists
  record_detail::write_file_atomically(path, kLabel, [&](int fd) {
    auto put = [&](const void* p, std::size_t n) {
      if (!record_detail::write_all(fd, static_cast<const char*>(p), n))
        throw RecordIoError(file, fmt::format("write failed: {}", std::strerror(errno)), kLabel);
    };
    put(head.data(), head.size());
    for (const auto& [name, pr] : record.params) put(pr.data.bytes.data(), pr.data.bytes.size());
  });
}

std::vector<std::byte> safetensors_bytes(const Record& record, const std::map<std::string, std::string>& metadata) {
  const std::string head = header_json(record, metadata, record_detail::kMemoryFile);
  std::vector<std::byte> out(reinterpret_cast<const std::byte*>(head.data()),
                             reinterpret_cast<const std::byte*>(head.data()) + head.size());
  for (const auto& [name, pr] : record.params) out.insert(out.end(), pr.data.bytes.begin(), pr.data.bytes.end());
  return out;
}

std::string format_safetensors(const SafetensorsFile& f) {
  std::string out;
  auto os = std::back_inserter(out);
  uint64_t elements = 0;
  for (const auto& e : f.entries()) elements += static_cast<uint64_t>(e.shape.num_elements());
  fmt::format_to(os, "{}: safetensors, {} bytes, {} tensor{}, {} elements\n", escape_file_text(f.file()),
                 f.file_size(), f.entries().size(), f.entries().size() == 1 ? "" : "s", elements);
  if (!f.metadata().empty()) {
    out += "metadata:\n";
    for (const auto& [k, v] : f.metadata())
      fmt::format_to(os, "  {} = {}\n", quote_file_text(k), quote_file_text(v));
  }
  for (const auto& e : f.entries())
    fmt::format_to(os, "{}  {} {}  bytes [{}, {}]\n", escape_file_text(e.name), e.stored_dtype, e.shape.to_string(),
                   e.begin, e.end);
  return out;
}

bool looks_like_safetensors(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::byte head[9];
  const ssize_t n = ::read(fd, head, sizeof head);
  ::close(fd);
  // An Ember record starts "EMBERREC"; a safetensors file with a u64 length whose JSON begins with '{'.
  return n == 9 && static_cast<char>(head[8]) == '{';
}

}  // namespace ember
