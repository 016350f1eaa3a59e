#pragma once
// The interface between `ember` and its training plugins (ember-train-<backend>.so, one per GPU backend, see
// train_plugin.cpp). `ember train --backend vulkan` dlopens the plugin (train_plugin_loader.hpp) instead of linking
// the backend, so the executable maps no GPU library unless a GPU backend trains.
//
// C++ types (TrainOptions, std::ostream, TrainResult) cross this boundary, which is sound only between an executable
// and a plugin built by the same compiler from the same sources: the entry refuses any caller whose interface
// version or build stamp differs from its own. No exception crosses: train() reports failure as a message.
#include <cstdint>
#include <ostream>
#include <string>

#include "tools/ember/lm.hpp"
#include "tools/ember/train.hpp"

namespace ember::tools {

// Bump when TrainPlugin, TrainOptions, TrainResult or the language model's options and results change.
inline constexpr uint32_t kTrainPluginInterface = 2;

// Same meson build, same compiler, same configuration. EMBER_BUILD_STAMP is set by tools/meson.build for the
// executable and every plugin alike; the struct sizes catch a stale plugin built from other sources.
#ifndef EMBER_BUILD_STAMP
#error "EMBER_BUILD_STAMP must be defined by the build (tools/meson.build)"
#endif
inline constexpr const char* kTrainPluginBuildStamp = EMBER_BUILD_STAMP;
inline constexpr uint64_t kTrainLayoutStamp = sizeof(TrainOptions) * 1000003u + sizeof(TrainResult) * 1009u +
                                              sizeof(EpochStats) + sizeof(LmTrainOptions) * 10007u +
                                              sizeof(LmTrainResult) * 101u + sizeof(GenerateOptions) * 7u;

struct TrainPlugin {
  const char* backend;  // the backend's name in backends/backend_list.hpp ("vulkan")
  // Trains as run_train does. Never throws: on failure returns false with the reason in `error`.
  bool (*train)(const TrainOptions& options, std::ostream& log, TrainResult& result, std::string& error);
  // The language model (lm.hpp): trains as run_train_lm does, samples as run_generate does. Never throw.
  bool (*train_lm)(const LmTrainOptions& options, std::ostream& log, LmTrainResult& result, std::string& error);
  bool (*generate)(const GenerateOptions& options, std::string& text, std::string& error);
};

// The one symbol a plugin exports. Returns the trainer, or null with *why set (a static string) when the caller's
// interface version, build stamp or layout stamp is not the plugin's.
using TrainPluginEntry = const TrainPlugin* (*)(uint32_t interface_version, const char* build_stamp,
                                                uint64_t layout_stamp, const char** why);
inline constexpr const char* kTrainPluginEntryName = "ember_train_plugin";

}  // namespace ember::tools
