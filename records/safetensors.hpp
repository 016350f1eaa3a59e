#pragma once
// safetensors files (https://github.com/huggingface/safetensors), the format PyTorch and Hugging Face share
// weights in, read and written by the records layer.
//
// Layout: u64 little-endian N, then N bytes of a JSON object (padded with spaces), then the byte buffer:
//   {"<tensor name>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
//    "__metadata__": {"<key>": "<value>", ...}}                               (metadata optional, strings only)
// Offsets are relative to the buffer; the tensors, sorted by begin, cover it exactly (no gap, no overlap).
//
// Reading checks everything before any tensor byte is touched and before anything proportional to a claimed size
// is allocated: N <= kSafetensorsMaxHeader and N <= file size - 8; the header is well-formed UTF-8 JSON (rapidjson,
// iterative so nesting depth cannot exhaust the stack; its DOM is a small multiple of N); every entry has exactly
// dtype, shape and data_offsets; the dtype is known; the rank <= kRecordMaxRank; the shape's element count times the
// dtype size, computed without overflow, equals end - begin; offsets lie inside the buffer, do not overlap and cover
// it; names are unique, valid UTF-8 and free of control characters (tensor_name.hpp). Failures are RecordErrors
// ("safetensors <file>: tensor '<name>': ..."), every quoted name escaped.
//
// Memory: the file is memory-mapped read-only and the mapping lives as long as any SafetensorsFile copy that
// shares it, so raw() views a tensor's bytes without copying. Ember's TensorData owns its bytes in a std::vector
// (the engine has no notion of borrowed host memory, and backends upload from it), so tensor() / to_record() copy
// each tensor exactly once, straight from the mapping; nothing else of the file is read into memory. BF16, which
// Ember has no dtype for, is widened to f32 on that copy (exact).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/module/record.hpp"
#include "records/recorder.hpp"

namespace ember {

inline constexpr uint64_t kSafetensorsMaxHeader = uint64_t(100) << 20;  // the reference implementation's bound

struct SafetensorsEntry {
  std::string name;
  std::string stored_dtype;  // as in the file: "F32", "BF16", ...
  DType dtype = DType::F32;  // as Ember holds it (BF16 -> f32)
  Shape shape;
  uint64_t begin = 0, end = 0;  // byte range in the buffer
};

// The validated header of a safetensors file held in `bytes` (which must outlive nothing: entries are copies).
// `file` names the source in messages. Exposed apart from SafetensorsFile for the fuzz harness and for readers of
// memory buffers.
struct SafetensorsHeader {
  std::vector<SafetensorsEntry> entries;  // sorted by name
  std::map<std::string, std::string> metadata;
  uint64_t buffer_start = 0;  // 8 + N
};
SafetensorsHeader parse_safetensors(std::span<const std::byte> bytes, const std::string& file);

class SafetensorsFile {
 public:
  // Maps and validates `path` (RecordIoError when it cannot be read, RecordFormatError when it breaks the format).
  static SafetensorsFile open(const std::filesystem::path& path);

  const std::string& file() const { return file_; }
  uint64_t file_size() const { return bytes_.size(); }
  const std::vector<SafetensorsEntry>& entries() const { return header_.entries; }
  const std::map<std::string, std::string>& metadata() const { return header_.metadata; }
  // The entry called `name`, or nullptr.
  const SafetensorsEntry* find(const std::string& name) const;
  // The stored bytes of `e`, a view into the mapping (no copy).
  std::span<const std::byte> raw(const SafetensorsEntry& e) const;
  // `e` as a TensorData in e.dtype (one copy from the mapping).
  TensorData tensor(const SafetensorsEntry& e) const;
  // Every tensor as a record entry under its own name: Float / Int / Bool kind from its dtype, role Trainable,
  // a fresh ParamId each (safetensors has no ids; the torch name map gives loaded params the module's own).
  Record to_record() const;

 private:
  std::string file_;
  std::shared_ptr<const void> mapping_;  // munmaps when the last copy goes
  std::span<const std::byte> bytes_;
  SafetensorsHeader header_;
};

// Writes `record`'s params (names as they are: apply a name map first for PyTorch) and `metadata` as a safetensors
// file, atomically (atomic_file.hpp). Tensors are laid out in name order, the header padded to a multiple of 8.
// Names must pass tensor_name_problem; the record's scalars are written as metadata "scalar.<name>" entries
// (a decimal string that reads back exactly) unless `metadata` already has that key.
void write_safetensors(const Record& record, const std::filesystem::path& path,
                       const std::map<std::string, std::string>& metadata = {});
// The same bytes in memory.
std::vector<std::byte> safetensors_bytes(const Record& record, const std::map<std::string, std::string>& metadata = {});

// A human listing of the header (`ember inspect` on a safetensors file): names, dtypes, shapes, offsets, metadata,
// every string escaped.
std::string format_safetensors(const SafetensorsFile& f);

// Whether `path` starts like a safetensors file rather than an Ember record (the CLI picks the reader by this).
bool looks_like_safetensors(const std::filesystem::path& path);

}  // namespace ember
