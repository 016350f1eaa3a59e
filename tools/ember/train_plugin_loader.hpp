#pragma once
// Finds and loads a GPU backend's training plugin (train_plugin.hpp) for `ember train --backend <name>`.
#include <ostream>
#include <string_view>

#include "tools/ember/lm.hpp"
#include "tools/ember/train.hpp"

namespace ember::tools {

// Trains with ember-train-<backend>.so, looked up first beside the running executable (/proc/self/exe: the build
// tree, or a relocated install), then in the install libdir. A missing, unloadable or mismatched plugin, or a
// failed training, throws ember::Error naming the file and the reason.
TrainResult train_with_plugin(std::string_view backend, const TrainOptions& options, std::ostream& log);
// The language model's training and sampling, in the same plugin.
LmTrainResult train_lm_with_plugin(std::string_view backend, const LmTrainOptions& options, std::ostream& log);
std::string generate_with_plugin(std::string_view backend, const GenerateOptions& options);

}  // namespace ember::tools
