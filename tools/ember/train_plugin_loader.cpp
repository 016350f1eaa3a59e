#include "tools/ember/train_plugin_loader.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "engine/tensor/error.hpp"
#include "tools/ember/train_plugin.hpp"

#ifndef EMBER_INSTALL_LIBDIR
#error "EMBER_INSTALL_LIBDIR must be defined by the build (tools/meson.build)"
#endif

namespace ember::tools {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> search_dirs() {
  std::vector<fs::path> dirs;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path());
  dirs.emplace_back(EMBER_INSTALL_LIBDIR);
  return dirs;
}

// The plugin's trainer; the library stays loaded for the life of the process (a GPU driver keeps threads and
// exit handlers inside it, so unloading it would be unsafe).
const TrainPlugin& load_plugin(std::string_view backend) {
  const std::string file = fmt::format("ember-train-{}.so", backend);
  std::vector<std::string> looked;
  for (const auto& dir : search_dirs()) {
    const fs::path path = dir / file;
    std::error_code ec;
    if (!fs::exists(path, ec)) {
      looked.push_back(dir.string());
      continue;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      throw Error(fmt::format("cannot load the {} trainer {}: {}", backend, path.string(), why ? why : "dlopen failed"));
    }
    auto entry = reinterpret_cast<TrainPluginEntry>(dlsym(handle, kTrainPluginEntryName));
    if (!entry)
      throw Error(fmt::format("{} is not an ember training plugin (it exports no {})", path.string(),
                              kTrainPluginEntryName));
    const char* why = nullptr;
    const TrainPlugin* plugin = entry(kTrainPluginInterface, kTrainPluginBuildStamp, kTrainLayoutStamp, &why);
    if (!plugin)
      throw Error(fmt::format("{} does not match this ember: {} (rebuild or reinstall both)", path.string(),
                              why ? why : "refused"));
    return *plugin;
  }
  throw Error(fmt::format("the {} trainer {} is not installed (looked in {})", backend, file,
                          fmt::join(looked, " and ")));
}

}  // namespace

TrainResult train_with_plugin(std::string_view backend, const TrainOptions& options, std::ostream& log) {
  const TrainPlugin& plugin = load_plugin(backend);
  TrainResult result;
  std::string error;
  if (!plugin.train(options, log, result, error)) throw Error(error);
  return result;
}

LmTrainResult train_lm_with_plugin(std::string_view backend, const LmTrainOptions& options, std::ostream& log) {
  const TrainPlugin& plugin = load_plugin(backend);
  LmTrainResult result;
  std::string error;
  if (!plugin.train_lm(options, log, result, error)) throw Error(error);
  return result;
}

std::string generate_with_plugin(std::string_view backend, const GenerateOptions& options) {
  const TrainPlugin& plugin = load_plugin(backend);
  std::string text, error;
  if (!plugin.generate(options, text, error)) throw Error(error);
  return text;
}

}  // namespace ember::tools
