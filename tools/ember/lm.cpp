// `ember train --model transformer` / `ember generate` on the CPU in this executable, on any other backend through
// its training plugin (train_plugin_loader.hpp), as run_train does for the digits.
#include "tools/ember/lm.hpp"

#include <fmt/format.h>

#include "backends/backend_list.hpp"
#include "backends/cpu/cpu_backend.hpp"
#include "tools/ember/lm_train.hpp"
#include "tools/ember/train_plugin_loader.hpp"

namespace ember::tools {
namespace {

BackendInfo compiled_backend(const std::string& name, const char* command) {
  const auto backend = backend_by_name(name);
  if (!backend || !backend->compiled) {
    std::vector<std::string_view> names;
    for (const auto& b : kBackends)
      if (b.compiled) names.push_back(b.name);
    throw ArgumentError(fmt::format("{}: backend '{}' is not available ({})", command, name, fmt::join(names, ", ")));
  }
  return *backend;
}

}  // namespace

LmTrainResult run_train_lm(const LmTrainOptions& o, std::ostream& log) {
  const BackendInfo backend = compiled_backend(o.backend, "train");
  if (backend.id == BackendId::Cpu) return train_lm<Cpu<float>>(o, log);
  return train_lm_with_plugin(backend.name, o, log);
}

std::string run_generate(const GenerateOptions& o) {
  const BackendInfo backend = compiled_backend(o.backend, "generate");
  if (backend.id == BackendId::Cpu) return generate_text<Cpu<float>>(o);
  return generate_with_plugin(backend.name, o);
}

}  // namespace ember::tools
