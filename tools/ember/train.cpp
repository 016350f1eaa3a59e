#include "tools/ember/train.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "backends/backend_list.hpp"
#include "backends/cpu/cpu_backend.hpp"
#include "tools/ember/lm.hpp"
#include "tools/ember/train_model.hpp"
#include "tools/ember/train_plugin_loader.hpp"

namespace ember::tools {
namespace {

template <template <class> class M>
double eval_model(const Record& record, const Split<Cpu<float>>& data) {
  using Inner = Cpu<float>;
  auto model = load_record(M<Inner>::init(), record);  // strict: every key and shape must match
  return evaluate(eval(model), data.test_x, data.test_y);
}

std::string compiled_backends() {
  std::vector<std::string_view> names;
  for (const auto& b : kBackends)
    if (b.compiled) names.push_back(b.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

// The CPU trains in this executable; every other backend in its plugin (train_plugin_loader.hpp), so that a CPU run
// maps no GPU library.
TrainResult run_train(const TrainOptions& o, std::ostream& log) {
  if (o.epochs < 1 || o.batch_size < 1 || !(o.lr > 0.0)) throw ArgumentError("train: epochs, batch size and lr must be positive");
  const auto backend = backend_by_name(o.backend);
  if (!backend || !backend->compiled)
    throw ArgumentError(fmt::format("train: backend '{}' is not available ({})", o.backend, compiled_backends()));
  if (backend->id == BackendId::Cpu) return train_digits<Cpu<float>>(o, log);
  return train_with_plugin(backend->name, o, log);
}

EvalResult run_eval(const std::filesystem::path& path, const std::filesystem::path& data_path) {
  Record record = load_record_file(path);
  auto it = record.scalars.find("ember.model");
  if (it != record.scalars.end() && it->second == kTransformerModelId)
    throw Error(fmt::format("eval: {} is a language model; sample it with `ember generate`", path.string()));
  if (it == record.scalars.end() || (it->second != 0.0 && it->second != 1.0))
    throw Error(fmt::format("eval: {} was not written by `ember train` (no ember.model entry)", path.string()));
  EvalResult r;
  r.model = static_cast<ModelKind>(static_cast<int>(it->second));
  record.scalars.clear();
  const auto data = load_split<Cpu<float>>(data_path);
  r.test_samples = data.test_y.dim(0);
  r.test_accuracy = r.model == ModelKind::Mlp ? eval_model<DigitsMlp>(record, data) : eval_model<DigitsCnn>(record, data);
  return r;
}

}  // namespace ember::tools
