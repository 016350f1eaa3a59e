#pragma once
// `ember train`, `ember eval`: the digits classifier end to end (data, model, Adam, record, curve).
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "tools/ember/models.hpp"

namespace ember::tools {

struct TrainOptions {
  ModelKind model = ModelKind::Mlp;
  std::string backend = "cpu";
  int64_t epochs = 20;
  int64_t batch_size = 64;
  double lr = 1e-3;
  std::string precision = "full";  // record precision: full | half | double
  std::filesystem::path out;       // default: digits-<model>.emr in the current directory
  std::filesystem::path data;      // default: data::default_digits_path()
  uint64_t seed = 42;
  bool progress = true;  // the per-batch progress bar (only drawn on a terminal)
};

struct EpochStats {
  double loss = 0.0;
  double train_accuracy = 0.0;
  double test_accuracy = 0.0;
  double seconds = 0.0;  // training time of the epoch (forward, backward, optimizer), evaluation excluded
};

struct TrainResult {
  std::vector<EpochStats> epochs;
  std::filesystem::path record_path, curve_path;
};

TrainResult run_train(const TrainOptions& o, std::ostream& log);

struct EvalResult {
  ModelKind model = ModelKind::Mlp;
  double test_accuracy = 0.0;
  int64_t test_samples = 0;
};
// Loads a record written by `ember train` and measures accuracy on the same held-out split.
EvalResult run_eval(const std::filesystem::path& record, const std::filesystem::path& data);

}  // namespace ember::tools
