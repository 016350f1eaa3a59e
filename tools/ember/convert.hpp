#pragma once
// `ember import` / `ember export`: safetensors <-> Ember records. With a model kind (the digits models of
// `ember train`), names and layouts go through the PyTorch name map (records/torch_names.hpp), so a PyTorch
// state_dict of the equivalent nn.Module imports into a record `ember eval` runs, and an exported record loads into
// that nn.Module with load_state_dict; without one, tensors keep their names and layouts.
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>

#include "tools/ember/models.hpp"

namespace ember::tools {

struct ImportOptions {
  std::filesystem::path input;  // a .safetensors file
  std::filesystem::path out;    // default: the input with the extension .emr
  std::optional<ModelKind> model;
  bool partial = false;
  std::string precision = "full";
};
// Writes the record; prints the load report (partial) and what was dropped. Returns the path written.
std::filesystem::path run_import(const ImportOptions& o, std::ostream& log);

struct ExportOptions {
  std::filesystem::path input;  // an Ember record
  std::filesystem::path out;    // default: the input with the extension .safetensors
};
// A record written by `ember train` (it names its model) exports under PyTorch's names; any other as it is.
std::filesystem::path run_export(const ExportOptions& o, std::ostream& log);

}  // namespace ember::tools
