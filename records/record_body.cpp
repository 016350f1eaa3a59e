// The record body through cereal (layout in recorder.hpp). cereal trusts the length prefixes it reads, so its own
// std::string / std::vector loaders never run here: every string and sequence is read as a size tag, checked
// against the format's limits and the bytes left in the body, and only then allocated and filled (binary_data or
// element by element).
//
// rapidjson parses iteratively (a heap stack bounded by the input), so a crafted "[[[[..." cannot overflow the
// call stack; the flag must be set before cereal includes rapidjson.
#define RAPIDJSON_PARSE_DEFAULT_FLAGS kParseFullPrecisionFlag | kParseNanAndInfFlag | kParseIterativeFlag

#include "records/record_body.hpp"
#include "records/tensor_name.hpp"

#include <algorithm>
#include <cereal/archives/json.hpp>
#include <cereal/archives/portable_binary.hpp>
#include <cereal/cereal.hpp>
#include <cereal/types/string.hpp>  // saving strings, and loading them from the JSON DOM only
#include <charconv>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

namespace ember::record_detail {
namespace {

using cereal::make_nvp;
using cereal::make_size_tag;
using cereal::size_type;

template <class Ar>
constexpr bool kJson = std::is_base_of_v<cereal::JSONInputArchive, Ar> || std::is_base_of_v<cereal::JSONOutputArchive, Ar>;

// Smallest binary entry: seven u64 size tags / integers with empty strings and rank 0.
constexpr uint64_t kMinEntryBytes = 56;
// Smallest binary scalar: a u64 size tag and an f64.
constexpr uint64_t kMinScalarBytes = 16;

// What the load functions need beyond the archive.
struct ReadCtx {
  std::istream* in = nullptr;
  std::streamoff end = 0;  // stream offset one past the body
  uint64_t length = 0;     // body length
  bool json = false;
  bool payloads = true;
  DType float_dtype = DType::F32, int_dtype = DType::I32;
  const std::string* file = nullptr;

  // Body bytes not read yet. JSON is parsed into a DOM up front whose arrays and strings really exist (bounded by
  // the body), so there the body length is the bound.
  uint64_t remaining() const {
    if (json) return length;
    const std::streamoff pos = in->tellg();
    if (pos < 0 || pos > end) return 0;
    return static_cast<uint64_t>(end - pos);
  }
  [[noreturn]] void fail(const std::string& what) const { throw RecordFormatError(*file, what); }
};

// An input archive carrying a ReadCtx; load functions receive the base archive and get back here.
template <class Base>
struct WithCtx : Base {
  WithCtx(ReadCtx& c, std::istream& in) : Base(in), c(c) {}
  ReadCtx& c;
};
template <class Ar>
ReadCtx& ctx(Ar& ar) {
  return static_cast<WithCtx<Ar>&>(ar).c;  // every input archive here is constructed as a WithCtx
}

const char* role_name(ParamRole r) {
  switch (r) {
    case ParamRole::Trainable: return "trainable";
    case ParamRole::Buffer: return "buffer";
    case ParamRole::Constant: return "constant";
  }
  return "unknown";
}

DType expected_dtype(ParamKind k, DType float_dtype, DType int_dtype) {
  return k == ParamKind::Float ? float_dtype : k == ParamKind::Int ? int_dtype : DType::Bool;
}

// A record entry with its payload: `src` when saving, `data` when loading.
struct Entry {
  RecordEntryInfo info;
  const TensorData* src = nullptr;
  TensorData data;
};

template <class Ar>
void load_string(Ar& ar, const char* name, std::string& s) {
  auto& c = ctx(ar);
  if constexpr (kJson<Ar>) {
    ar(make_nvp(name, s));  // the DOM string exists already: its size is real
  } else {
    size_type n = 0;
    ar(make_size_tag(n));
    if (n > kRecordMaxString || n > c.remaining())
      c.fail(fmt::format("{} claims {} bytes (at most {}, {} left in the body)", name, n, kRecordMaxString,
                         c.remaining()));
    s.resize(n);
    if (n) ar(cereal::binary_data(s.data(), n));
  }
  if (s.size() > kRecordMaxString) c.fail(fmt::format("{} longer than {}", name, kRecordMaxString));
}

// Names end up in terminals and reports: valid UTF-8 without control characters only (tensor_name.hpp).
inline void check_name(const ReadCtx& c, const char* what, const std::string& name) {
  const std::string why = tensor_name_problem(name);
  if (!why.empty()) c.fail(fmt::format("{}: {}", what, why));
}

struct ShapeIO {
  std::vector<int64_t>* dims;
};
template <class Ar>
void save(Ar& ar, const ShapeIO& s) {
  ar(make_size_tag(static_cast<size_type>(s.dims->size())));
  for (int64_t d : *s.dims) ar(d);
}
template <class Ar>
void load(Ar& ar, ShapeIO& s) {
  size_type n = 0;
  ar(make_size_tag(n));
  if (n > kRecordMaxRank) ctx(ar).fail(fmt::format("rank {} exceeds {}", n, kRecordMaxRank));
  s.dims->resize(n);
  for (auto& d : *s.dims) ar(d);
}

struct ScalarItem {
  std::string name;
  double value = 0;
};
template <class Ar>
void save(Ar& ar, const ScalarItem& s) {
  ar(make_nvp("name", s.name), make_nvp("value", s.value));
}
template <class Ar>
void load(Ar& ar, ScalarItem& s) {
  load_string(ar, "name", s.name);
  check_name(ctx(ar), "scalar", s.name);
  ar(make_nvp("value", s.value));
}

struct ScalarsIO {
  std::map<std::string, double>* map;
};
template <class Ar>
void save(Ar& ar, const ScalarsIO& s) {
  ar(make_size_tag(static_cast<size_type>(s.map->size())));
  for (const auto& [name, value] : *s.map) ar(ScalarItem{name, value});
}
template <class Ar>
void load(Ar& ar, ScalarsIO& s) {
  auto& c = ctx(ar);
  size_type n = 0;
  ar(make_size_tag(n));
  if (n > kRecordMaxScalars || (!c.json && n > c.remaining() / kMinScalarBytes))
    c.fail(fmt::format("scalar count {} exceeds what the body can hold", n));
  for (size_type i = 0; i < n; ++i) {
    ScalarItem item;
    ar(item);
    if (!s.map->emplace(item.name, item.value).second) c.fail(fmt::format("duplicate scalar '{}'", item.name));
  }
}

// ---------------------------------------------------------------- json values
// The double with the fewest digits that reads back (double -> float -> f16, as the loader does) to the same bits.
double json_number_f32(float f) {
  if (!std::isfinite(f)) return f;
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, f);
  double d = 0;
  std::from_chars(buf, r.ptr, d);
  const float back = static_cast<float>(d);
  return std::memcmp(&back, &f, sizeof f) == 0 ? d : static_cast<double>(f);
}
double json_number_f16(f16 h) {
  const float f = f16_to_float(h);
  if (!std::isfinite(f)) return f;
  char buf[64];
  for (int digits = 1; digits <= 5; ++digits) {
    const auto r = std::to_chars(buf, buf + sizeof buf, static_cast<double>(f), std::chars_format::general, digits);
    double d = 0;
    std::from_chars(buf, r.ptr, d);
    if (float_to_f16(static_cast<float>(d)).bits == h.bits) return d;
  }
  return f;
}

struct ValuesIO {
  Entry* e;
};
template <class Ar>
void save(Ar& ar, const ValuesIO& v) {  // json only
  const TensorData& d = *v.e->src;
  const std::size_t n = d.num_elements();
  ar(make_size_tag(static_cast<size_type>(n)));
  for (std::size_t i = 0; i < n; ++i) {
    const std::byte* p = d.bytes.data() + i * dtype_size(d.dtype);
    if (d.dtype == DType::F32) {
      float f;
      std::memcpy(&f, p, 4);
      ar(json_number_f32(f));
    } else if (d.dtype == DType::F16) {
      f16 h;
      std::memcpy(&h, p, 2);
      ar(json_number_f16(h));
    } else if (d.dtype == DType::F64) {
      ar(d.get<double>(i));
    } else if (d.dtype == DType::Bool) {
      ar(d.get<bool>(i));
    } else {
      ar(d.get<int64_t>(i));
    }
  }
}
template <class Ar>
void load(Ar& ar, ValuesIO& v) {  // json only
  auto& c = ctx(ar);
  const RecordEntryInfo& info = v.e->info;
  const std::size_t es = dtype_size(info.dtype);
  size_type n = 0;
  ar(make_size_tag(n));
  if (n != info.byte_count / es)
    c.fail(fmt::format("param '{}': {} values, shape {} needs {}", info.path, n, info.shape.to_string(),
                       info.byte_count / es));
  if (!c.payloads) return;
  std::vector<std::byte> bytes(info.byte_count);
  for (size_type i = 0; i < n; ++i) {
    std::byte* p = bytes.data() + i * es;
    if (dtype_is_float(info.dtype)) {
      double x = 0;
      ar(x);
      if (info.dtype == DType::F64) detail::store_as(p, x);
      else if (info.dtype == DType::F32) detail::store_as(p, static_cast<float>(x));
      else detail::store_as(p, float_to_f16(static_cast<float>(x)));
    } else if (info.dtype == DType::Bool) {
      bool b = false;
      ar(b);
      detail::store_as(p, uint8_t(b));
    } else {
      int64_t x = 0;
      ar(x);
      const auto [lo, hi] = info.dtype == DType::I16   ? std::pair<int64_t, int64_t>{INT16_MIN, INT16_MAX}
                            : info.dtype == DType::I32 ? std::pair<int64_t, int64_t>{INT32_MIN, INT32_MAX}
                            : info.dtype == DType::U8  ? std::pair<int64_t, int64_t>{0, 255}
                                                       : std::pair<int64_t, int64_t>{INT64_MIN, INT64_MAX};
      if (x < lo || x > hi)
        c.fail(fmt::format("param '{}': value {} at element {} does not fit {}", info.path, x, i,
                           dtype_name(info.dtype)));
      switch (info.dtype) {
        case DType::I16: detail::store_as(p, static_cast<int16_t>(x)); break;
        case DType::I32: detail::store_as(p, static_cast<int32_t>(x)); break;
        case DType::U8: detail::store_as(p, static_cast<uint8_t>(x)); break;
        default: detail::store_as(p, x); break;
      }
    }
  }
  v.e->data = TensorData(std::move(bytes), info.shape, info.dtype);
}

// ---------------------------------------------------------------- entries
template <class T>
T parse_name(const ReadCtx& c, const std::string& what, const std::string& s, std::initializer_list<T> all,
             const char* (*name)(T)) {
  for (T v : all)
    if (s == name(v)) return v;
  c.fail(fmt::format("{} {} is unknown", what, quote_file_text(s)));
}
const char* dtype_cname(DType d) { return dtype_name(d).data(); }  // dtype_name's views are literals

// Shape x dtype size must equal the byte count and fit the body, checked without overflow.
void check_entry(const ReadCtx& c, const RecordEntryInfo& i) {
  auto fail = [&](const std::string& why) { c.fail(fmt::format("param '{}': {}", i.path, why)); };
  const std::string shape = i.shape.to_string();
  const DType want = expected_dtype(i.kind, c.float_dtype, c.int_dtype);
  if (i.dtype != want)
    fail(fmt::format("{} for a {} param, the record's precision stores {}", dtype_name(i.dtype),
                     param_kind_name(i.kind), dtype_name(want)));
  uint64_t n = 1;
  for (int64_t d : i.shape.dims) {
    if (d < 0) fail(fmt::format("negative dim in shape {}", shape));
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) fail(fmt::format("shape {} overflows", shape));
  }
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(n, static_cast<uint64_t>(dtype_size(i.dtype)), &bytes) || n > c.length)
    fail(fmt::format("shape {} claims more elements than the {}-byte body can hold", shape, c.length));
  if (bytes != i.byte_count)
    fail(fmt::format("shape {} of {} needs {} bytes, the header says {}", shape, dtype_name(i.dtype), bytes,
                     i.byte_count));
  if (!c.json && bytes > c.remaining())
    fail(fmt::format("{} bytes claimed, {} left in the body", bytes, c.remaining()));
}

struct EntryIO {
  Entry* e;
};
template <class Ar>
void save(Ar& ar, const EntryIO& io) {
  RecordEntryInfo& i = io.e->info;
  ar(make_nvp("path", i.path), make_nvp("id", i.id), make_nvp("kind", std::string(param_kind_name(i.kind))),
     make_nvp("role", std::string(role_name(i.role))), make_nvp("dtype", std::string(dtype_name(i.dtype))),
     make_nvp("shape", ShapeIO{&i.shape.dims}), make_nvp("bytes", i.byte_count));
  if constexpr (kJson<Ar>) ar(make_nvp("values", ValuesIO{io.e}));
}
template <class Ar>
void load(Ar& ar, EntryIO& io) {
  auto& c = ctx(ar);
  RecordEntryInfo& i = io.e->info;
  std::string kind, role, dtype;
  load_string(ar, "path", i.path);
  check_name(c, "param path", i.path);
  ar(make_nvp("id", i.id));
  load_string(ar, "kind", kind);
  load_string(ar, "role", role);
  load_string(ar, "dtype", dtype);
  i.kind = parse_name(c, "kind", kind, {ParamKind::Float, ParamKind::Int, ParamKind::Bool}, param_kind_name);
  i.role = parse_name(c, "role", role, {ParamRole::Trainable, ParamRole::Buffer, ParamRole::Constant}, role_name);
  i.dtype = parse_name(c, "dtype", dtype,
                       {DType::F32, DType::F64, DType::F16, DType::I32, DType::I64, DType::U8, DType::Bool, DType::I16},
                       dtype_cname);
  ShapeIO shape{&i.shape.dims};
  ar(make_nvp("shape", shape));
  ar(make_nvp("bytes", i.byte_count));
  check_entry(c, i);
  if constexpr (kJson<Ar>) {
    ValuesIO values{io.e};
    ar(make_nvp("values", values));
  }
}

struct EntriesIO {
  std::vector<Entry>* list;
};
template <class Ar>
void save(Ar& ar, const EntriesIO& s) {
  ar(make_size_tag(static_cast<size_type>(s.list->size())));
  for (auto& e : *s.list) ar(EntryIO{&e});
}
template <class Ar>
void load(Ar& ar, EntriesIO& s) {
  auto& c = ctx(ar);
  size_type n = 0;
  ar(make_size_tag(n));
  if (n > kRecordMaxEntries || (!c.json && n > c.remaining() / kMinEntryBytes))
    c.fail(fmt::format("param count {} exceeds what the body can hold", n));
  for (size_type k = 0; k < n; ++k) {  // grows with what was really read, never by the claimed count
    Entry e;
    EntryIO io{&e};
    ar(io);
    s.list->push_back(std::move(e));
  }
}

// ---------------------------------------------------------------- whole body
template <class Ar>
void save_payload(Ar& ar, const TensorData& d) {
  const std::byte* p = d.bytes.data();
  const std::size_t n = d.bytes.size();
  if (n == 0) return;
  switch (dtype_size(d.dtype)) {  // the element size lets the portable archive fix the byte order
    case 1: ar(cereal::binary_data(reinterpret_cast<const uint8_t*>(p), n)); break;
    case 2: ar(cereal::binary_data(reinterpret_cast<const uint16_t*>(p), n)); break;
    case 4: ar(cereal::binary_data(reinterpret_cast<const uint32_t*>(p), n)); break;
    default: ar(cereal::binary_data(reinterpret_cast<const uint64_t*>(p), n)); break;
  }
}
template <class Ar>
void load_payload(Ar& ar, std::byte* p, std::size_t n, DType dtype) {
  if (n == 0) return;
  switch (dtype_size(dtype)) {
    case 1: ar(cereal::binary_data(reinterpret_cast<uint8_t*>(p), n)); break;
    case 2: ar(cereal::binary_data(reinterpret_cast<uint16_t*>(p), n)); break;
    case 4: ar(cereal::binary_data(reinterpret_cast<uint32_t*>(p), n)); break;
    default: ar(cereal::binary_data(reinterpret_cast<uint64_t*>(p), n)); break;
  }
}

template <class Ar>
void save_all(Ar& ar, StoredPrecision p, std::map<std::string, double>& scalars, std::vector<Entry>& entries) {
  ar(make_nvp("engine_version", std::string(engine_version())), make_nvp("precision", std::string(p.name)),
     make_nvp("float_dtype", std::string(dtype_name(p.float_dtype))),
     make_nvp("int_dtype", std::string(dtype_name(p.int_dtype))), make_nvp("scalars", ScalarsIO{&scalars}),
     make_nvp("params", EntriesIO{&entries}));
  if constexpr (!kJson<Ar>)
    for (const auto& e : entries) save_payload(ar, *e.src);
}

template <class Ar>
void load_all(Ar& ar, RecordFileInfo& info, std::vector<Entry>& entries) {
  auto& c = ctx(ar);
  std::string fd, id;
  load_string(ar, "engine_version", info.engine_version);
  load_string(ar, "precision", info.precision);
  load_string(ar, "float_dtype", fd);
  load_string(ar, "int_dtype", id);
  StoredPrecision p;
  try {  // the header's name picks the policy whose dtypes the payloads must have
    p = with_precision_named(info.precision,
                             [](auto policy) { return StoredPrecision::of<typename decltype(policy)::type>(); });
  } catch (const ArgumentError&) {
    c.fail(fmt::format("unknown precision {}", quote_file_text(info.precision)));
  }
  if (fd != dtype_name(p.float_dtype) || id != dtype_name(p.int_dtype))
    c.fail(fmt::format("precision '{}' stores {} / {}, the header says {} / {}", p.name, dtype_name(p.float_dtype),
                       dtype_name(p.int_dtype), fd, id));
  info.float_dtype = c.float_dtype = p.float_dtype;
  info.int_dtype = c.int_dtype = p.int_dtype;
  ScalarsIO scalars{&info.scalars};
  ar(make_nvp("scalars", scalars));
  EntriesIO list{&entries};
  ar(make_nvp("params", list));
  if constexpr (!kJson<Ar>) {
    uint64_t total = 0;
    for (const auto& e : entries)
      if (__builtin_add_overflow(total, e.info.byte_count, &total)) c.fail("payload sizes overflow");
    if (total != c.remaining())
      c.fail(fmt::format("payloads need {} bytes, {} follow the header", total, c.remaining()));
    if (!c.payloads) return;
    for (auto& e : entries) {  // each allocation is within the body, checked above
      std::vector<std::byte> bytes(e.info.byte_count);
      load_payload(ar, bytes.data(), bytes.size(), e.info.dtype);
      e.data = TensorData(std::move(bytes), e.info.shape, e.info.dtype);
    }
  }
}

}  // namespace

void write_body(std::ostream& out, const Record& record, RecorderKind kind, StoredPrecision precision,
                const std::string& file) {
  auto fail = [&](const std::string& what) { throw RecordFormatError(file, fmt::format("cannot save: {}", what)); };
  if (record.params.size() > kRecordMaxEntries) fail(fmt::format("{} params (at most 2^20)", record.params.size()));
  if (record.scalars.size() > kRecordMaxScalars) fail(fmt::format("{} scalars", record.scalars.size()));
  std::vector<Entry> entries;
  entries.reserve(record.params.size());
  for (const auto& [path, pr] : record.params) {
    if (path.size() > kRecordMaxString) fail(fmt::format("param path longer than {} bytes", kRecordMaxString));
    if (const std::string why = tensor_name_problem(path); !why.empty()) fail(fmt::format("param path: {}", why));
    if (pr.data.shape.rank() > kRecordMaxRank)
      fail(fmt::format("param '{}' has rank {} (the format holds up to {})", path, pr.data.shape.rank(),
                       kRecordMaxRank));
    try {
      pr.data.validate();
    } catch (const ShapeError& e) {
      fail(fmt::format("param '{}': {}", path, e.what()));
    }
    const DType want = expected_dtype(pr.kind, precision.float_dtype, precision.int_dtype);
    if (pr.data.dtype != want)
      fail(fmt::format("param '{}' is {}, precision '{}' stores {}", path, dtype_name(pr.data.dtype), precision.name,
                       dtype_name(want)));
    entries.push_back(Entry{{path, pr.id, pr.kind, pr.role, pr.data.dtype, pr.data.shape, pr.data.bytes.size()},
                            &pr.data,
                            {}});
  }
  std::map<std::string, double> scalars = record.scalars;
  for (const auto& [name, v] : scalars) {
    if (name.size() > kRecordMaxString) fail(fmt::format("scalar name longer than {} bytes", kRecordMaxString));
    if (const std::string why = tensor_name_problem(name); !why.empty()) fail(fmt::format("scalar: {}", why));
  }
  try {
    if (kind == RecorderKind::Json) {
      cereal::JSONOutputArchive ar(out, cereal::JSONOutputArchive::Options(
                                            324, cereal::JSONOutputArchive::Options::IndentChar::space, 2));
      save_all(ar, precision, scalars, entries);
    } else {
      cereal::PortableBinaryOutputArchive ar(out);
      save_all(ar, precision, scalars, entries);
    }
  } catch (const cereal::Exception& e) {
    throw RecordIoError(file, fmt::format("write failed: {}", e.what()));
  }
  out.flush();
  if (!out) throw RecordIoError(file, "write failed");
}

void read_body(std::istream& in, uint64_t length, RecorderKind kind, const std::string& file, RecordFileInfo& info,
               Record* record) {
  ReadCtx c;
  c.in = &in;
  c.end = static_cast<std::streamoff>(in.tellg()) + static_cast<std::streamoff>(length);
  c.length = length;
  c.json = kind == RecorderKind::Json;
  c.payloads = record != nullptr;
  c.file = &file;
  std::vector<Entry> entries;
  try {
    if (c.json) {
      WithCtx<cereal::JSONInputArchive> ar(c, in);
      load_all(static_cast<cereal::JSONInputArchive&>(ar), info, entries);
    } else {
      WithCtx<cereal::PortableBinaryInputArchive> ar(c, in);
      load_all(static_cast<cereal::PortableBinaryInputArchive&>(ar), info, entries);
    }
  } catch (const cereal::Exception& e) {
    c.fail(fmt::format("malformed {}body ({})", c.json ? "JSON " : "", e.what()));
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.info.path < b.info.path; });
  for (std::size_t k = 1; k < entries.size(); ++k)
    if (entries[k].info.path == entries[k - 1].info.path)
      c.fail(fmt::format("duplicate param '{}'", entries[k].info.path));
  info.entries.clear();
  info.entries.reserve(entries.size());
  for (auto& e : entries) {
    if (record)
      record->params.emplace(e.info.path, ParamRecord{e.info.id, e.info.kind, e.info.role, std::move(e.data)});
    info.entries.push_back(std::move(e.info));
  }
  if (record) record->scalars = info.scalars;
}

}  // namespace ember::record_detail
