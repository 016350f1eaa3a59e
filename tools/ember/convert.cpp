#include "tools/ember/convert.hpp"

#include <fmt/format.h>

#include "backends/cpu/cpu_backend.hpp"
#include "records/recorder.hpp"
#include "records/safetensors.hpp"
#include "records/torch_names.hpp"
#include "tools/ember/lm_train.hpp"

namespace ember::tools {
namespace {

using Inner = Cpu<float>;
constexpr const char* kModelScalar = "ember.model";  // what `ember eval` reads (train.cpp)

std::filesystem::path with_extension(std::filesystem::path p, const char* ext) { return p.replace_extension(ext); }

void save_record(const Record& r, const std::filesystem::path& path, const std::string& precision) {
  if (precision == "full") BinFileRecorder<FullPrecisionSettings>{}.save(r, path);
  else if (precision == "half") BinFileRecorder<HalfPrecisionSettings>{}.save(r, path);
  else if (precision == "double") BinFileRecorder<DoublePrecisionSettings>{}.save(r, path);
  else throw ArgumentError(fmt::format("import: unknown precision '{}'", precision));
}

template <template <class> class M>
Record import_model(const Record& torch, const ImportOptions& o, std::ostream& log) {
  LoadReport rep;
  std::vector<std::string> dropped;
  const auto m = load_torch_state_dict(M<Inner>::init(), torch, o.partial ? LoadMode::Partial : LoadMode::Strict,
                                       &rep, &dropped);
  if (!rep.ok()) log << "partial load:\n" << rep.to_string();
  for (const auto& d : dropped) log << fmt::format("dropped {} (no Ember counterpart)\n", d);
  Record r = into_record(m);
  r.scalars[kModelScalar] = static_cast<double>(*o.model);
  return r;
}

template <template <class> class M>
Record export_model(const Record& record) {
  const auto m = load_record(M<Inner>::init(), record);
  return torch_state_dict(m);
}

}  // namespace

std::filesystem::path run_import(const ImportOptions& o, std::ostream& log) {
  const auto file = SafetensorsFile::open(o.input);
  const Record torch = file.to_record();
  const std::filesystem::path out = o.out.empty() ? with_extension(o.input, ".emr") : o.out;
  Record r;
  if (!o.model) r = torch;
  else if (*o.model == ModelKind::Mlp) r = import_model<DigitsMlp>(torch, o, log);
  else r = import_model<DigitsCnn>(torch, o, log);
  save_record(r, out, o.precision);
  log << fmt::format("imported {} tensors from {} into {}{}\n", file.entries().size(), o.input.string(),
                     out.string(), o.model ? fmt::format(" ({} model)", model_name(*o.model)) : "");
  return out;
}

std::filesystem::path run_export(const ExportOptions& o, std::ostream& log) {
  Record record = load_record_file(o.input);
  const std::filesystem::path out = o.out.empty() ? with_extension(o.input, ".safetensors") : o.out;
  auto it = record.scalars.find(kModelScalar);
  Record torch;
  std::string how = "names as they are";
  if (it != record.scalars.end() && (it->second == 0.0 || it->second == 1.0)) {
    const auto kind = static_cast<ModelKind>(static_cast<int>(it->second));
    record.scalars.clear();
    torch = kind == ModelKind::Mlp ? export_model<DigitsMlp>(record) : export_model<DigitsCnn>(record);
    how = fmt::format("PyTorch names of the {} model", model_name(kind));
  } else if (it != record.scalars.end() && it->second == kTransformerModelId) {
    // The language model: the names and layouts of its PyTorch twin (tests/reference/gen_lm_fixture.py), whose
    // load_state_dict takes the file as it is; the shape comes from the record's ember.lm.* scalars.
    const LmConfig cfg = lm_config_from_scalars(record.scalars, o.input.string());
    record.scalars.clear();
    torch = torch_state_dict(load_record(CharTransformer<Inner>::init(cfg), record));
    how = "PyTorch names of the transformer";
  } else {
    torch = std::move(record);
  }
  write_safetensors(torch, out, {{"format", "pt"}});
  log << fmt::format("exported {} tensors from {} into {} ({})\n", torch.params.size(), o.input.string(),
                     out.string(), how);
  return out;
}

}  // namespace ember::tools
