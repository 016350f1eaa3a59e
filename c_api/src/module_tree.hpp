#pragma once
// Module trees for the C ABI (ember_module_create / ember_module_layer): nn.Module-like nodes whose params are
// tensor handles shared with the caller (tensor_refs.hpp), with named children.
//
//  * A container has the caller's params and children; its forward is the caller's (tensor ops on the handles).
//  * A layer module is one engine layer (any ember_layer_kind). Its params are handles too, made by the module;
//    before each forward the typed layer takes their current values (set_param_values), so optimizer steps, loads
//    and in-place updates through any handle are what the next forward uses, and gradients reach the handles.
//  * A lazy layer (in_features 0 for linear, conv2d, layer_norm, batch_norm*) holds placeholder handles (float,
//    shape [0]) until its first forward infers in_features from the input and writes the initial values into the
//    same handles (torch's UninitializedParameter.materialize); a load before that gives them the record's values.
//
// Params are enumerated like nn.Module.named_parameters: a node's own params in registration order, then each
// child's, with dotted paths; a handle reachable twice (a shared child) is listed once, under its first path.
// Records are path-keyed exactly as typed C++ modules' (records/module_record.hpp).
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "c_api/src/boundary.hpp"
#include "records/module_record.hpp"

namespace ember::capi {

struct OnnxModuleState;  // issue 19: an imported ONNX graph (onnx_module.hpp)

struct TreeParam {
  std::string name;
  ember_tensor* handle = nullptr;  // retained (tensor_refs.hpp) while the module holds it
  ParamRole role = ParamRole::Trainable;
  uint64_t id = 0;       // ParamId in records
  bool placeholder = false;  // a lazy layer's param before materialization
};

struct ModuleTree {
  bool is_layer = false;
  LayerSpec spec;           // layer modules
  bool materialized = true; // false: a lazy layer before its first forward
  std::vector<std::shared_ptr<TreeParam>> params;
  std::vector<std::pair<std::string, std::shared_ptr<ModuleState>>> children;
  bool training = true;     // nn.Module starts in training mode
  // issue 19: set for a module of ember_onnx_load, whose forward is its graph (the params are its initializers).
  std::shared_ptr<OnnxModuleState> onnx;
  mutable std::mutex mu;    // guards the vectors and flags; a layer's forward holds it through the sync

  ModuleTree() = default;
  ModuleTree(const ModuleTree&) = delete;
  ModuleTree& operator=(const ModuleTree&) = delete;
  ~ModuleTree();
};

struct TreeEntry {
  std::string path;
  std::shared_ptr<TreeParam> param;
};

// Gives the param handle `h` the values of `next` (an optimizer step, a load, running statistics) as torch's
// `with torch.no_grad(): p.copy_(next)`: the handle stays the same graph leaf (its .grad and requires_grad kept) and
// its version counts the update. A shape change (a lazy param materialized) makes it a new leaf of next's values.
void assign_param(ember_tensor* h, const DynTensor& next);

// ember_module_layer's lazy kinds: in_features 0 infers it on the first forward.
bool is_lazy_spec(const LayerSpec& s);

std::shared_ptr<ModuleState> make_container(const DynDevice& dev);
std::shared_ptr<ModuleState> make_layer_module(const DynDevice& dev, const LayerSpec& spec);
ModuleTree& tree_of(const ModuleState& m, const char* fn);  // throws for a Sequential

void tree_add_child(ModuleState& parent, const std::string& name, std::shared_ptr<ModuleState> child);
std::shared_ptr<ModuleState> tree_child(const ModuleState& parent, const std::string& name);
void tree_add_param(ModuleState& m, const std::string& name, ember_tensor* t, ParamRole role);

std::vector<TreeEntry> tree_params(const ModuleState& m);
std::vector<ParamDesc> tree_param_descs(const ModuleState& m);
// The param at a dotted path (IndexError naming the path when there is none).
TreeEntry tree_find_param(const ModuleState& m, const std::string& path);

Record tree_record(const ModuleState& m);
// As load_record: strict throws LoadError (nothing changed), partial loads what matches.
LoadReport tree_load_record(ModuleState& m, const Record& r, LoadMode mode);
void tree_state_set(ModuleState& m, const std::string& path, const DynTensor& value);

DynTensor tree_forward(ModuleState& m, const DynTensor& x, bool train);
// issue 19: ember_module_forward of an ONNX module with one input and one output (onnx_module.cpp).
DynTensor onnx_forward_one(ModuleState& m, const DynTensor& x, bool train);
// issue 13 (h-rnn): a forward of a layer module with more operands than x (ember_module_forward_rnn): `run` calls the
// runtime op on m once its typed layer holds the current values of the param handles, under the tree's lock.
// Not for layers with running statistics (their train-mode updates would not reach the handles).
std::vector<DynTensor> tree_forward_with(ModuleState& m, const std::function<std::vector<DynTensor>()>& run);

void tree_set_training(ModuleState& m, bool on);
bool tree_is_training(const ModuleState& m);
void tree_set_requires_grad(ModuleState& m, bool on);
// Every module of the tree, children before their parent (a post-order walk), with its path ("" for the root).
std::vector<std::pair<std::string, std::shared_ptr<ModuleState>>> tree_modules(const std::shared_ptr<ModuleState>& m);

}  // namespace ember::capi
