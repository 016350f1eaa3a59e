#pragma once
// Recorders: how a Record becomes a file (and back). Typed by a PrecisionSettings policy, the way Burn does it:
//
//   BinFileRecorder<P>       cereal portable binary (compact, exact)           default P: FullPrecisionSettings
//   JsonFileRecorder<P>      cereal pretty JSON (readable, diffable)           default P: FullPrecisionSettings
//   CompactFileRecorder<P>   the binary archive with half precision by default: the same type as
//                            BinFileRecorder<P>, because "compact" is a preset, not another file format
//
// save converts the record to P's element types (P::FloatElem, P::IntElem; a narrowing Int conversion that loses a
// value throws RecordPrecisionError naming the file, before the file is touched) and writes P's name and dtypes
// into the header. load reads any Ember record file — either archive, any precision: the preamble says which
// archive, the header which precision, and the container checks the payloads against it — then converts to P's
// element types, so what a recorder gives back always holds P's dtypes. Loading a file saved with another precision
// therefore converts (half -> full widens; double -> full narrows floats by rounding, and fails for an Int value that
// does not fit). load_record_file / deserialize_record read a record as stored, without a policy (`ember eval`,
// `ember inspect`, the C ABI's loaders: module loading converts to the backend's element types anyway).
//
// The container is ours, around cereal, because cereal trusts every length prefix it reads (a 9-byte file can make
// it allocate gigabytes) and has no notion of versions or integrity. Every size is checked before anything
// proportional to it is allocated, so a hostile or corrupt file fails fast with a typed RecordError, never crashes,
// and never makes us allocate more than the file's size plus a small constant (the JSON DOM: a small multiple).
//
// File layout, format version 1:
//
//   preamble, 61 bytes of ASCII, so that JSON records stay text for diff and grep:
//     "EMBERREC"                  magic (8 bytes)
//     " " + 8 lowercase hex       u32 format version (1)
//     " " + 8 lowercase hex       u32 recorder kind (0 binary, 1 json)
//     " " + 16 lowercase hex      u64 body length: the file must be exactly 61 + this many bytes
//     " " + 16 lowercase hex      u64 FNV-1a-64 of the body, verified before the body is parsed
//     "\n"
//   body, binary: a cereal PortableBinaryArchive (little-endian) holding
//     engine version, precision name, float dtype name, int dtype name      (strings: u64 length + bytes)
//     u64 scalar count, then (name, f64 value) per scalar
//     u64 entry count, then per param: path, u64 id, kind name ("float"/"int"/"bool"), role name
//       ("trainable"/"buffer"/"constant"), dtype name ("f32", "f16", "i16", ...), u64 rank, rank x i64 dims,
//       u64 byte count
//     then the payloads, in entry order: byte-count bytes each, elements little-endian, nothing after them.
//   body, json: a cereal JSONOutputArchive (pretty, 2-space indent), one object:
//     {"engine_version", "precision", "float_dtype", "int_dtype", "scalars": [{"name", "value"}...],
//      "params": [{"path", "id", "kind", "role", "dtype", "shape": [dims], "bytes", "values": [numbers]}...]}
//     Values are row-major numbers (true/false for bool); floats are written with the fewest digits that read back
//     to the same f16/f32/f64 bits (NaN/Infinity as rapidjson's NaN/Infinity tokens, NaN payloads not kept).
//
// Bounds checked while reading, before any allocation they govern: file size against body length, checksum,
// strings <= 4 KiB and <= remaining bytes, entry count <= 2^20 and <= remaining bytes / smallest entry, rank <= 8,
// dims >= 0, shape product x dtype size without overflow and == byte count, byte counts summing to exactly the bytes
// left after the header (binary) or == the number of values (json).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "engine/module/record.hpp"
#include "records/precision.hpp"

namespace ember {

// Values are stored in record files: append-only.
enum class RecorderKind : uint32_t { Binary = 0, Json = 1 };

const char* recorder_kind_name(RecorderKind k);

// Format constants, public so that tests and tools can craft and check files.
inline constexpr uint32_t kRecordFormatVersion = 1;
inline constexpr std::size_t kRecordPreambleSize = 61;
inline constexpr std::size_t kRecordMaxRank = 8;
inline constexpr std::size_t kRecordMaxString = 4096;
inline constexpr std::size_t kRecordMaxEntries = std::size_t(1) << 20;
inline constexpr std::size_t kRecordMaxScalars = std::size_t(1) << 16;

// The Ember version written into every record ("0.1.0"), from meson's project version.
const char* engine_version();

// FNV-1a-64, the body checksum. `state` chains calls over chunks.
uint64_t record_checksum(std::span<const std::byte> bytes, uint64_t state = 0xcbf29ce484222325ull);

// ---------------------------------------------------------------- errors
// Every message starts with "record <file>: " (or "record <memory>: "; "safetensors <file>: " for safetensors files)
// and says what is wrong.
class RecordError : public Error {
 public:
  // `label` names the format in the message: "record" for Ember's own files, "safetensors" for safetensors.
  RecordError(const std::string& file, const std::string& problem, const char* label = "record")
      : Error(fmt::format("{} {}: {}", label, file, problem)), file_(file) {}
  const std::string& file() const { return file_; }

 private:
  std::string file_;
};
// Not an Ember record (wrong magic), an unknown recorder kind, or a body that breaks the format's rules (hostile
// sizes, unknown dtype names, duplicate paths, ...).
class RecordFormatError : public RecordError {
 public:
  using RecordError::RecordError;
};
// Written by a newer Ember: format version above kRecordFormatVersion.
class RecordVersionError : public RecordError {
 public:
  using RecordError::RecordError;
};
// Damaged in storage or transit: truncated, trailing bytes, checksum mismatch.
class RecordCorruptError : public RecordError {
 public:
  using RecordError::RecordError;
};
// The record does not fit the requested precision (an Int value that would not survive narrowing).
class RecordPrecisionError : public RecordError {
 public:
  using RecordError::RecordError;
};
// The operating system refused: cannot open, read, write, sync or rename.
class RecordIoError : public RecordError {
 public:
  using RecordError::RecordError;
};

// ---------------------------------------------------------------- reading as stored
// The record as stored (dtypes as stored; load_record / from_data convert to the backend's element types).
Record load_record_file(const std::filesystem::path& path);
// The same container in memory (what a recorder's to_bytes writes), for the C ABI.
Record deserialize_record(std::span<const std::byte> bytes);

// ---------------------------------------------------------------- typed recorders
namespace record_detail {

// The untyped halves of the recorders (record_file.cpp), kept out of the templates so that only one translation
// unit parses cereal. `record` already holds `precision`'s dtypes.
void write_record_file(const Record& record, const std::filesystem::path& path, RecorderKind kind,
                       StoredPrecision precision);
std::vector<std::byte> write_record_bytes(const Record& record, RecorderKind kind, StoredPrecision precision);

// convert_record<P>, with an Int value that does not fit reported as a RecordPrecisionError naming `file`.
template <PrecisionSettings P>
Record converted(const Record& record, const std::string& file) {
  try {
    return convert_record<P>(record);
  } catch (const ArgumentError& e) {
    std::string_view why = e.what();
    if (why.starts_with("record: ")) why.remove_prefix(8);  // RecordError adds its own "record <file>: "
    throw RecordPrecisionError(file, std::string(why));
  }
}

inline const std::string kMemoryFile = "<memory>";

}  // namespace record_detail

template <RecorderKind Kind, PrecisionSettings P>
class FileRecorder {
 public:
  using Settings = P;
  static constexpr RecorderKind kind = Kind;

  // Converts to P (failing before any file is touched) and writes atomically: a temporary file in the same
  // directory, flushed and fsynced, then renamed over `path`. On any failure the temporary is removed and `path`
  // keeps its old contents.
  void save(const Record& record, const std::filesystem::path& path) const {
    record_detail::write_record_file(record_detail::converted<P>(record, path.string()), path, Kind,
                                     StoredPrecision::of<P>());
  }
  // Any Ember record file (either archive, any precision), converted to P's element types.
  Record load(const std::filesystem::path& path) const {
    return record_detail::converted<P>(load_record_file(path), path.string());
  }
  // The same container in memory, byte for byte what save writes.
  std::vector<std::byte> to_bytes(const Record& record) const {
    return record_detail::write_record_bytes(record_detail::converted<P>(record, record_detail::kMemoryFile), Kind,
                                             StoredPrecision::of<P>());
  }
  Record from_bytes(std::span<const std::byte> bytes) const {
    return record_detail::converted<P>(deserialize_record(bytes), record_detail::kMemoryFile);
  }
};

template <PrecisionSettings P = FullPrecisionSettings>
using BinFileRecorder = FileRecorder<RecorderKind::Binary, P>;
template <PrecisionSettings P = FullPrecisionSettings>
using JsonFileRecorder = FileRecorder<RecorderKind::Json, P>;
template <PrecisionSettings P = HalfPrecisionSettings>
using CompactFileRecorder = BinFileRecorder<P>;
using DefaultFileRecorder = BinFileRecorder<FullPrecisionSettings>;

template <class R>
concept Recorder = PrecisionSettings<typename R::Settings> &&
                   requires(const R r, const Record& rec, const std::filesystem::path& path,
                            std::span<const std::byte> bytes) {
                     r.save(rec, path);
                     { r.load(path) } -> std::same_as<Record>;
                     { r.to_bytes(rec) } -> std::same_as<std::vector<std::byte>>;
                     { r.from_bytes(bytes) } -> std::same_as<Record>;
                   };

// ---------------------------------------------------------------- inspecting
struct RecordEntryInfo {
  std::string path;
  uint64_t id = 0;
  ParamKind kind = ParamKind::Float;
  ParamRole role = ParamRole::Trainable;
  DType dtype = DType::F32;
  Shape shape;
  uint64_t byte_count = 0;
};

struct RecordFileInfo {
  std::string file;
  uint64_t file_size = 0;
  uint32_t format_version = 0;
  std::string engine_version;
  RecorderKind kind = RecorderKind::Binary;
  std::string precision;  // "full", "half", "double"
  DType float_dtype = DType::F32;
  DType int_dtype = DType::I32;
  std::vector<RecordEntryInfo> entries;  // sorted by path
  std::map<std::string, double> scalars;
};

// The header of a record file, fully validated (checksum included), without keeping tensor payloads in memory.
RecordFileInfo inspect_record_file(const std::filesystem::path& path);

// A tree of the params grouped by path prefix, with kinds, roles, dtypes, shapes, element counts per subtree and
// in total, precision and versions (`ember inspect`).
std::string format_record_tree(const RecordFileInfo& info);

}  // namespace ember
