// ember.h: records (files and bytes), module save/load with strict or partial loading, load reports.
#include "c_api/src/boundary.hpp"
#include "records/recorder.hpp"

using namespace ember;
using namespace ember::capi;

namespace {

constexpr std::size_t kRecordOptionsV1 = EMBER_STRUCT_END(ember_record_options, reserved);

ember_record_options options_defaults() {
  ember_record_options o{};
  o.struct_size = sizeof o;
  o.recorder = EMBER_RECORDER_BINARY;
  o.precision = EMBER_PRECISION_DEFAULT;
  return o;
}

RecorderOptions to_recorder(const ember_record_options* in) {
  const auto o = in ? read_struct(in, options_defaults(), kRecordOptionsV1, "options") : options_defaults();
  RecorderOptions r;
  switch (o.recorder) {
    case EMBER_RECORDER_BINARY: r = RecorderOptions::binary(); break;
    case EMBER_RECORDER_JSON: r = RecorderOptions::json(); break;
    case EMBER_RECORDER_COMPACT: r = RecorderOptions::compact(); break;
    default: throw ArgumentError("unknown recorder " + std::to_string(o.recorder));
  }
  switch (o.precision) {
    case EMBER_PRECISION_DEFAULT: break;
    case EMBER_PRECISION_FULL: r.precision = Precision::of<FullPrecisionSettings>(); break;
    case EMBER_PRECISION_HALF: r.precision = Precision::of<HalfPrecisionSettings>(); break;
    case EMBER_PRECISION_DOUBLE: r.precision = Precision::of<DoublePrecisionSettings>(); break;
    default: throw ArgumentError("unknown precision " + std::to_string(o.precision));
  }
  return r;
}

LoadMode to_load_mode(int32_t m) {
  if (m == EMBER_LOAD_STRICT) return LoadMode::Strict;
  if (m == EMBER_LOAD_PARTIAL) return LoadMode::Partial;
  throw ArgumentError("unknown load mode " + std::to_string(m));
}

const char* path_arg(const char* path) {
  if (!path) throw ArgumentError("path is NULL");
  if (!*path) throw ArgumentError("path is empty");
  return path;
}

// Loads into the module and hands out the report, also when a strict load fails (then rethrows).
void load_into(ember_module* module, const Record& r, int32_t mode, ember_load_report** report) {
  ModuleState& m = *use(module, "module");
  const LoadMode lm = to_load_mode(mode);
  try {
    LoadReport rep = load_module_record(m, r, lm);
    if (report) *report = make_handle<ember_load_report>(std::move(rep));
  } catch (const LoadError& e) {
    if (report) *report = make_handle<ember_load_report>(e.report);
    throw;
  }
}

}  // namespace

extern "C" {

ember_status ember_record_options_init(ember_record_options* options) {
  return guard(__func__, [&] {
    if (!options) throw ArgumentError("options is NULL");
    *options = options_defaults();
  });
}

ember_status ember_module_to_record(const ember_module* module, ember_record** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    o = make_handle<ember_record>(module_record(*use(module, "module")));
  });
}

ember_status ember_module_load_record(ember_module* module, const ember_record* record, int32_t mode,
                                      ember_load_report** report) {
  if (report) *report = nullptr;
  return guard(__func__, [&] { load_into(module, use(record, "record"), mode, report); });
}

ember_status ember_module_save(const ember_module* module, const char* path, const ember_record_options* options) {
  return guard(__func__, [&] {
    const ModuleState& m = *use(module, "module");  // handles first, then arguments, then the file
    const RecorderOptions ro = to_recorder(options);
    const char* p = path_arg(path);
    save_record(module_record(m), p, ro);
  });
}

ember_status ember_module_load(ember_module* module, const char* path, int32_t mode, ember_load_report** report) {
  if (report) *report = nullptr;
  return guard(__func__, [&] {
    use(module, "module");
    to_load_mode(mode);  // argument errors before any file access
    load_into(module, load_record_file(path_arg(path)), mode, report);
  });
}

ember_status ember_record_write_file(const ember_record* record, const char* path,
                                     const ember_record_options* options) {
  return guard(__func__, [&] {
    const Record& r = use(record, "record");
    const RecorderOptions ro = to_recorder(options);
    save_record(r, path_arg(path), ro);
  });
}

ember_status ember_record_read_file(const char* path, ember_record** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    o = make_handle<ember_record>(load_record_file(path_arg(path)));
  });
}

ember_status ember_record_to_bytes(const ember_record* record, const ember_record_options* options, void* buffer,
                                   size_t capacity, size_t* size) {
  return guard(__func__, [&] {
    auto& n = out_value(size, "size");
    n = 0;
    const Record& r = use(record, "record");
    const auto bytes = serialize_record(r, to_recorder(options));
    n = bytes.size();
    if (capacity < bytes.size())
      throw StatusError(EMBER_ERR_BUFFER_TOO_SMALL,
                        "buffer of " + std::to_string(capacity) + " bytes for " + std::to_string(bytes.size()));
    if (!buffer) throw ArgumentError("buffer is NULL");
    std::memcpy(buffer, bytes.data(), bytes.size());
  });
}

ember_status ember_record_from_bytes(const void* data, size_t size, ember_record** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    if (!data && size) throw ArgumentError("data is NULL");
    const auto* p = static_cast<const std::byte*>(data);
    o = make_handle<ember_record>(deserialize_record(std::span<const std::byte>(p, size)));
  });
}

ember_status ember_record_entry_count(const ember_record* record, size_t* count) {
  return guard(__func__, [&] { out_value(count, "count") = use(record, "record").params.size(); });
}

ember_status ember_record_free(ember_record* record) { return free_handle(record, __func__); }

ember_status ember_load_report_counts(const ember_load_report* report, size_t* missing, size_t* unexpected,
                                      size_t* mismatched) {
  return guard(__func__, [&] {
    const LoadReport& r = use(report, "report");
    if (missing) *missing = r.missing.size();
    if (unexpected) *unexpected = r.unexpected.size();
    if (mismatched) *mismatched = r.mismatched.size();
  });
}

ember_status ember_load_report_text(const ember_load_report* report, char* buf, size_t capacity, size_t* length) {
  return guard(__func__, [&] { write_text(use(report, "report").to_string(), buf, capacity, length); });
}

ember_status ember_load_report_free(ember_load_report* report) { return free_handle(report, __func__); }

}  // extern "C"
