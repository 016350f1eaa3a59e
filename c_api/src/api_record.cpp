// ember.h: records (files and bytes), module save/load with strict or partial loading, load reports.
#include "c_api/src/boundary.hpp"
#include "c_api/src/module_tree.hpp"
#include "records/recorder.hpp"

#include <fmt/format.h>

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

// Calls f(recorder) with the typed recorder that `in` selects (NULL: binary, full precision): the one place where
// ember_recorder and ember_precision become a FileRecorder<Kind, PrecisionSettings>. The default precision is the
// recorder's own: half for compact, full otherwise.
template <class F>
decltype(auto) with_recorder(const ember_record_options* in, F&& f) {
  const auto o = in ? read_struct(in, options_defaults(), kRecordOptionsV1, "options") : options_defaults();
  auto with_precision = [&]<RecorderKind Kind, PrecisionSettings Default>() -> decltype(auto) {
    switch (o.precision) {
      case EMBER_PRECISION_DEFAULT: return f(FileRecorder<Kind, Default>{});
      case EMBER_PRECISION_FULL: return f(FileRecorder<Kind, FullPrecisionSettings>{});
      case EMBER_PRECISION_HALF: return f(FileRecorder<Kind, HalfPrecisionSettings>{});
      case EMBER_PRECISION_DOUBLE: return f(FileRecorder<Kind, DoublePrecisionSettings>{});
    }
    throw ArgumentError(fmt::format("unknown precision {}", o.precision));
  };
  switch (o.recorder) {
    case EMBER_RECORDER_BINARY:
      return with_precision.template operator()<RecorderKind::Binary, FullPrecisionSettings>();
    case EMBER_RECORDER_JSON:
      return with_precision.template operator()<RecorderKind::Json, FullPrecisionSettings>();
    case EMBER_RECORDER_COMPACT:
      return with_precision.template operator()<RecorderKind::Binary, HalfPrecisionSettings>();
  }
  throw ArgumentError(fmt::format("unknown recorder {}", o.recorder));
}

LoadMode to_load_mode(int32_t m) {
  if (m == EMBER_LOAD_STRICT) return LoadMode::Strict;
  if (m == EMBER_LOAD_PARTIAL) return LoadMode::Partial;
  throw ArgumentError(fmt::format("unknown load mode {}", m));
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
    LoadReport rep = m.tree ? tree_load_record(m, r, lm) : load_module_record(m, r, lm);
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
    const ModuleState& m = *use(module, "module");
    o = make_handle<ember_record>(m.tree ? tree_record(m) : module_record(m));
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
    with_recorder(options, [&](auto recorder) {
      const char* p = path_arg(path);
      recorder.save(m.tree ? tree_record(m) : module_record(m), p);
    });
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
    with_recorder(options, [&](auto recorder) { recorder.save(r, path_arg(path)); });
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
    const auto bytes = with_recorder(options, [&](auto recorder) { return recorder.to_bytes(r); });
    n = bytes.size();
    if (capacity == 0) return;  // a size query (ember.h's Strings rule): EMBER_OK with the size
    if (capacity < bytes.size())
      throw StatusError(EMBER_ERR_BUFFER_TOO_SMALL, fmt::format("buffer of {} bytes for {}", capacity, bytes.size()));
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
