// A training plugin: the training loop (train_model.hpp) instantiated for one GPU backend and exported through
// train_plugin.hpp's entry. tools/meson.build builds this file once per enabled GPU backend, naming it with
// -DEMBER_TRAIN_PLUGIN_BACKEND=<BackendId enumerator> (Vulkan, Cuda): the backend type comes from the registry.
#include <cstring>
#include <exception>

#include "backends/registry.hpp"
#include "tools/ember/lm_train.hpp"
#include "tools/ember/train_model.hpp"
#include "tools/ember/train_plugin.hpp"

#ifndef EMBER_TRAIN_PLUGIN_BACKEND
#error "EMBER_TRAIN_PLUGIN_BACKEND must name a BackendId (tools/meson.build)"
#endif

namespace ember::tools {
namespace {

constexpr BackendId kBackend = BackendId::EMBER_TRAIN_PLUGIN_BACKEND;
using Inner = typename BackendEntry<kBackend>::Default;

// Runs f, turning any exception into false + its message: nothing throws across the plugin boundary.
template <class F>
bool guarded(std::string& error, F&& f) {
  try {
    f();
    return true;
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = "unknown exception in the training plugin";
  }
  return false;
}

bool train(const TrainOptions& options, std::ostream& log, TrainResult& result, std::string& error) {
  return guarded(error, [&] { result = train_digits<Inner>(options, log); });
}
bool train_lm(const LmTrainOptions& options, std::ostream& log, LmTrainResult& result, std::string& error) {
  return guarded(error, [&] { result = tools::train_lm<Inner>(options, log); });
}
bool generate(const GenerateOptions& options, std::string& text, std::string& error) {
  return guarded(error, [&] { text = generate_text<Inner>(options); });
}

constexpr TrainPlugin kPlugin{backend_info(kBackend)->name.data(), &train, &train_lm, &generate};

}  // namespace
}  // namespace ember::tools

extern "C" __attribute__((visibility("default"))) const ember::tools::TrainPlugin* ember_train_plugin(
    uint32_t interface_version, const char* build_stamp, uint64_t layout_stamp, const char** why) {
  using namespace ember::tools;
  const char* reason = nullptr;
  if (interface_version != kTrainPluginInterface) reason = "its plugin interface version differs from ember's";
  else if (!build_stamp || std::strcmp(build_stamp, kTrainPluginBuildStamp) != 0)
    reason = "it was built by another build of ember (build stamps differ)";
  else if (layout_stamp != kTrainLayoutStamp) reason = "it was built from other sources (option layouts differ)";
  if (why) *why = reason;
  return reason ? nullptr : &kPlugin;
}
