#pragma once
// ember_onnx_load's modules (issue 19): an imported ONNX graph (onnx/model.hpp) inside a module-tree container
// (module_tree.hpp) whose params are the graph's initializers as tensor handles. The handles are the truth: before
// each run the graph takes their current values, so optimizer steps, record loads and in-place updates through any
// handle are what the next forward uses, and the gradients of its outputs reach the handles (the graph's ops record
// autodiff on the handles' own leaves).
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "c_api/src/module_tree.hpp"
#include "onnx/ir.hpp"

namespace ember::onnx_import {
class OnnxModel;
}

namespace ember::capi {

struct OnnxModuleState {
  std::shared_ptr<onnx_import::OnnxModel> model;
  std::vector<onnx_import::ValueInfo> inputs, outputs;
  std::vector<std::shared_ptr<TreeParam>> graph_params;  // the initializers' params (the tree may gain others)
  std::mutex mu;  // one run at a time: the model's param slots are set for the run, then the graph runs
};

// A module of the model at `path` / in `size` bytes on `dev`. UnsupportedError without the ONNX library.
std::shared_ptr<ModuleState> onnx_load_file(const std::string& path, const DynDevice& dev);
std::shared_ptr<ModuleState> onnx_load_bytes(const void* data, std::size_t size, const DynDevice& dev);
// The module's graph state; ArgumentError for a module ember_onnx_load did not make.
OnnxModuleState& onnx_state(const ModuleState& m, const char* fn);
// Runs the graph on `inputs` (exactly the graph's input count), returning its first n_outputs outputs.
std::vector<DynTensor> onnx_forward(ModuleState& m, const std::vector<DynTensor>& inputs, std::size_t n_outputs,
                                    bool train);

}  // namespace ember::capi
