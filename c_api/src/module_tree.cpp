// Module trees (module_tree.hpp): containers and layer modules whose params are shared tensor handles.
#include "c_api/src/module_tree.hpp"

#include <set>

#include <fmt/format.h>

#include "c_api/src/runtime/inplace_op.hpp"
#include "c_api/src/tensor_refs.hpp"
#include "records/precision.hpp"

namespace ember::capi {
namespace {

ParamKind kind_of_dtype(DType d) {
  if (dtype_is_float(d)) return ParamKind::Float;
  if (d == DType::Bool) return ParamKind::Bool;
  return ParamKind::Int;
}

// A handle made by the module itself: held by the module only (the caller gets references via ember_module_param).
ember_tensor* module_owned_handle(DynTensor value) {
  ember_tensor* h = make_handle<ember_tensor>(std::move(value));
  retain_tensor(h);
  caller_free_shared_tensor(h);  // drops the creation's caller reference: the module is the only owner
  return h;
}

void check_name(const ModuleTree& t, const std::string& name, const char* what) {
  if (name.empty()) throw ArgumentError(fmt::format("{} name is empty", what));
  if (name.find('.') != std::string::npos)
    throw ArgumentError(fmt::format("{} name '{}' contains '.' (paths are dotted)", what, name));
  for (const auto& p : t.params)
    if (p->name == name) throw ArgumentError(fmt::format("the module already has a param named '{}'", name));
  for (const auto& [n, c] : t.children)
    if (n == name) throw ArgumentError(fmt::format("the module already has a child named '{}'", name));
}

// The engine's param names of a layer kind, in its field order (what a lazy layer materializes into).
std::vector<std::pair<std::string, ParamRole>> lazy_param_names(const LayerSpec& s) {
  using R = ParamRole;
  switch (static_cast<LayerKind>(s.kind)) {
    case LayerKind::Linear:
    case LayerKind::Conv2d:
      if (s.bias) return {{"weight", R::Trainable}, {"bias", R::Trainable}};
      return {{"weight", R::Trainable}};
    case LayerKind::LayerNorm: return {{"gamma", R::Trainable}, {"beta", R::Trainable}};
    case LayerKind::BatchNorm1d:
    case LayerKind::BatchNorm2d:
      return {{"gamma", R::Trainable}, {"beta", R::Trainable}, {"running_mean", R::Buffer}, {"running_var", R::Buffer}};
    default: break;
  }
  throw ArgumentError(fmt::format("layer kind {} has no lazy form", s.kind));
}

// in_features of a lazy layer from its first input (torch's LazyLinear: the last dim; conv and batch norm: dim 1).
int64_t infer_in_features(const LayerSpec& s, const Shape& x) {
  const auto kind = static_cast<LayerKind>(s.kind);
  if (kind == LayerKind::Linear || kind == LayerKind::LayerNorm) {
    if (x.rank() < 1) throw ShapeError("lazy layer: the input has no dims to infer in_features from");
    return x[x.rank() - 1];
  }
  if (kind == LayerKind::Conv2d && x.rank() != 4)
    throw ShapeError(fmt::format("lazy conv2d: input must be [N, C, H, W], got {}", x.to_string()));
  if (x.rank() < 2) throw ShapeError(fmt::format("lazy batch_norm: input must be [N, C, ...], got {}", x.to_string()));
  return x[1];
}

void collect(const ModuleState& m, const std::string& prefix, std::vector<TreeEntry>& out,
             std::set<const ember_tensor*>& seen) {
  const ModuleTree& t = *m.tree;
  std::vector<std::shared_ptr<TreeParam>> params;
  std::vector<std::pair<std::string, std::shared_ptr<ModuleState>>> children;
  {
    std::lock_guard lock(t.mu);
    params = t.params;
    children = t.children;
  }
  for (const auto& p : params)
    if (seen.insert(p->handle).second) out.push_back({prefix + p->name, p});
  for (const auto& [name, child] : children) collect(*child, prefix + name + ".", out, seen);
}

bool reaches(const std::shared_ptr<ModuleState>& from, const ModuleState* target) {
  if (from.get() == target) return true;
  std::vector<std::pair<std::string, std::shared_ptr<ModuleState>>> children;
  {
    std::lock_guard lock(from->tree->mu);
    children = from->tree->children;
  }
  for (const auto& [n, c] : children)
    if (reaches(c, target)) return true;
  return false;
}

// Materializes a lazy layer from its first input: builds the typed layer with the inferred in_features (drawing
// its initial values from the generator seeded by ember_seed, as an eager layer would), and writes those values
// into the placeholders still unset (a loaded param keeps its loaded value). Caller holds t.mu.
void materialize(ModuleState& m, ModuleTree& t, const DynTensor& x) {
  LayerSpec s = t.spec;
  s.in = infer_in_features(s, shape(x));
  if (s.in <= 0) throw ShapeError(fmt::format("lazy layer: inferred in_features {} from input {}", s.in, shape(x).to_string()));
  const auto seq = make_sequential(m.device, {s});
  for (std::size_t i = 0; i < t.params.size(); ++i) {
    TreeParam& p = *t.params[i];
    if (!p.placeholder) continue;
    assign_param(p.handle, param_value(*seq, i));
    p.placeholder = false;
  }
  std::unique_lock lock(m.mu);
  m.module = seq->module;
  t.spec = s;
  t.materialized = true;
}

}  // namespace

void assign_param(ember_tensor* h, const DynTensor& next) {
  Handle<ember_tensor>& handle = use_handle(h, "param");
  const DynTensor& old = handle.value;
  if (shape(old) == shape(next) && dtype(old) == dtype(next)) {
    autodiff::NoGrad no_grad;  // an update of a leaf, not an op of the graph
    handle.value = inplace(old, detach(next), InplaceOp::Copy);
  } else {
    DynTensor fresh = detach(next);
    handle.value = requires_grad(old) ? set_requires_grad(fresh, true) : fresh;
  }
  ++handle.version;
}

ModuleTree::~ModuleTree() {
  for (const auto& p : params) release_tensor(p->handle);
}

bool is_lazy_spec(const LayerSpec& s) {
  switch (static_cast<LayerKind>(s.kind)) {
    case LayerKind::Linear:
    case LayerKind::Conv2d:
    case LayerKind::LayerNorm:
    case LayerKind::BatchNorm1d:
    case LayerKind::BatchNorm2d: return s.in == 0;
    default: return false;
  }
}

ModuleTree& tree_of(const ModuleState& m, const char* fn) {
  if (!m.tree)
    throw ArgumentError(fmt::format("{}: not for a Sequential of ember_module_sequential (only for modules of "
                                    "ember_module_create / ember_module_layer)",
                                    fn));
  return *m.tree;
}

std::shared_ptr<ModuleState> make_container(const DynDevice& dev) {
  auto state = std::make_shared<ModuleState>();
  state->runtime = dev.runtime;
  state->device = dev;
  state->tree = std::make_shared<ModuleTree>();
  return state;
}

std::shared_ptr<ModuleState> make_layer_module(const DynDevice& dev, const LayerSpec& spec) {
  auto state = std::make_shared<ModuleState>();
  auto tree = std::make_shared<ModuleTree>();
  tree->is_layer = true;
  tree->spec = spec;
  state->device = dev;
  state->has_batch_norm = spec.kind == static_cast<int32_t>(LayerKind::BatchNorm1d) ||
                          spec.kind == static_cast<int32_t>(LayerKind::BatchNorm2d);
  if (is_lazy_spec(spec)) {
    state->runtime = dev.runtime;
    tree->materialized = false;
    for (const auto& [name, role] : lazy_param_names(spec)) {
      DynTensor v = full(dev, DType::F32, Shape{0}, 0.0);
      if (role == ParamRole::Trainable) v = set_requires_grad(v, true);
      auto p = std::make_shared<TreeParam>(TreeParam{name, nullptr, role, ParamId::next().value, true});
      p->handle = module_owned_handle(std::move(v));
      tree->params.push_back(std::move(p));
    }
  } else {
    const auto seq = make_sequential(dev, {spec});
    state->runtime = seq->runtime;
    state->module = seq->module;
    const auto descs = parameters(*seq);
    for (std::size_t i = 0; i < descs.size(); ++i) {
      const std::string& path = descs[i].info.path;
      const std::string prefix = "layers.0.";
      const std::string name = path.rfind(prefix, 0) == 0 ? path.substr(prefix.size()) : path;
      auto p = std::make_shared<TreeParam>(TreeParam{name, nullptr, descs[i].info.role, descs[i].info.id.value, false});
      p->handle = module_owned_handle(param_value(*seq, i));
      tree->params.push_back(std::move(p));
    }
  }
  state->tree = std::move(tree);
  return state;
}

void tree_add_child(ModuleState& parent, const std::string& name, std::shared_ptr<ModuleState> child) {
  ModuleTree& t = tree_of(parent, "add_child");
  if (!child->tree)
    throw ArgumentError("add_child: a Sequential of ember_module_sequential cannot be a child (build it from "
                        "ember_module_layer modules in a container)");
  if (reaches(child, &parent))
    throw ArgumentError(fmt::format("add_child: '{}' contains the parent (a module tree has no cycles)", name));
  std::lock_guard lock(t.mu);
  if (t.is_layer) throw ArgumentError("add_child: a layer module has no children (add both to a container)");
  check_name(t, name, "child");
  t.children.emplace_back(name, std::move(child));
}

std::shared_ptr<ModuleState> tree_child(const ModuleState& parent, const std::string& name) {
  const ModuleTree& t = tree_of(parent, "child");
  std::lock_guard lock(t.mu);
  for (const auto& [n, c] : t.children)
    if (n == name) return c;
  throw IndexError(fmt::format("the module has no child named '{}'", name));
}

void tree_add_param(ModuleState& m, const std::string& name, ember_tensor* h, ParamRole role) {
  ModuleTree& t = tree_of(m, "add_param");
  const DynTensor& v = use(h, "tensor");
  if (role == ParamRole::Trainable) {
    if (!dtype_is_float(dtype(v)))
      throw KindError(fmt::format("add_param: a trainable param must be a float tensor, '{}' is {}", name,
                                  dtype_name(dtype(v))));
    if (!is_leaf(v))
      throw ArgumentError(fmt::format("add_param: '{}' is the result of an op, not a leaf (a param must be a "
                                      "leaf: detach it, or make it with ember_tensor_from_data)",
                                      name));
  }
  if (!same_device(device(v), m.device))
    throw ArgumentError(fmt::format("add_param: '{}' lives on {}, the module on {}", name, device_name(device(v)),
                                    device_name(m.device)));
  std::lock_guard lock(t.mu);
  if (t.is_layer) throw ArgumentError("add_param: a layer module's params are its layer's (add the param to a container)");
  check_name(t, name, "param");
  auto p = std::make_shared<TreeParam>(TreeParam{name, h, role, ParamId::next().value, false});
  retain_tensor(h);
  t.params.push_back(std::move(p));
}

std::vector<TreeEntry> tree_params(const ModuleState& m) {
  tree_of(m, "params");
  std::vector<TreeEntry> out;
  std::set<const ember_tensor*> seen;
  collect(m, "", out, seen);
  return out;
}

std::vector<ParamDesc> tree_param_descs(const ModuleState& m) {
  std::vector<ParamDesc> out;
  for (const auto& e : tree_params(m)) {
    const DynTensor& v = use(e.param->handle, "param");
    const DType d = dtype(v);
    out.push_back({ParamInfo{e.path, ParamId{e.param->id}, kind_of_dtype(d), e.param->role, shape(v),
                             requires_grad(v), !e.param->placeholder},
                   d});
  }
  return out;
}

TreeEntry tree_find_param(const ModuleState& m, const std::string& path) {
  for (auto& e : tree_params(m))
    if (e.path == path) return e;
  throw IndexError(fmt::format("the module has no param '{}'", path));
}

Record tree_record(const ModuleState& m) {
  Record r;
  for (const auto& e : tree_params(m)) {
    if (e.param->placeholder)
      throw ArgumentError(fmt::format("to_record: '{}' belongs to a lazy layer that has not run yet (its shape is "
                                      "unknown: run a forward first)",
                                      e.path));
    const DynTensor& v = use(e.param->handle, "param");
    r.params.emplace(e.path, ParamRecord{e.param->id, kind_of_dtype(dtype(v)), e.param->role, to_data(v)});
  }
  return convert_record<FullPrecisionSettings>(r);
}

LoadReport tree_load_record(ModuleState& m, const Record& record, LoadMode mode) {
  const auto entries = tree_params(m);
  LoadReport rep;
  std::set<std::string> seen, skip;
  for (const auto& e : entries) {
    seen.insert(e.path);
    auto it = record.params.find(e.path);
    if (it == record.params.end()) {
      rep.missing.push_back(e.path);
      continue;
    }
    const DynTensor& v = use(e.param->handle, "param");
    // A lazy layer's placeholder takes the record's shape (torch materializes lazy params from a state dict).
    const Shape want = e.param->placeholder ? it->second.data.shape : shape(v);
    const std::string why = load_mismatch(it->second, kind_of_dtype(dtype(v)), want);
    if (!why.empty()) {
      rep.mismatched.push_back(fmt::format("{}: {}", e.path, why));
      skip.insert(e.path);
    }
  }
  for (const auto& [key, pr] : record.params)
    if (!seen.count(key)) rep.unexpected.push_back(key);
  std::map<uint64_t, std::string> ids;
  for (const auto& [key, pr] : record.params) {
    if (!seen.count(key) || skip.count(key)) continue;
    auto [it, fresh] = ids.emplace(pr.id, key);
    if (!fresh)
      throw LoadError(fmt::format("load_record: params '{}' and '{}' share ParamId {}", it->second, key, pr.id), rep);
  }
  if (mode == LoadMode::Strict && !rep.ok())
    throw LoadError(fmt::format("load_record: the record does not match the module\n{}", rep.to_string()), rep);
  // Convert everything first, then assign: a failing conversion leaves every param as it was.
  std::vector<std::pair<const TreeEntry*, DynTensor>> next;
  for (const auto& e : entries) {
    auto it = record.params.find(e.path);
    if (it == record.params.end() || skip.count(e.path)) continue;
    const DynTensor& v = use(e.param->handle, "param");
    next.emplace_back(&e, from_data(device(v), it->second.data.convert(dtype(v))));
  }
  for (auto& [e, value] : next) {
    assign_param(e->param->handle, value);
    e->param->id = record.params.at(e->path).id;
    e->param->placeholder = false;
  }
  return rep;
}

void tree_state_set(ModuleState& m, const std::string& path, const DynTensor& value) {
  const TreeEntry e = tree_find_param(m, path);
  const DynTensor& v = use(e.param->handle, "param");
  if (dtype(value) != dtype(v))
    throw KindError(fmt::format("state_set: '{}' is {}, the value {}", path, dtype_name(dtype(v)),
                                dtype_name(dtype(value))));
  if (!e.param->placeholder && !(shape(value) == shape(v)))
    throw ShapeError(fmt::format("state_set: '{}' has shape {}, the value {}", path, shape(v).to_string(),
                                 shape(value).to_string()));
  if (!same_device(device(value), device(v)))
    throw ArgumentError(fmt::format("state_set: the value lives on {}, '{}' on {}", device_name(device(value)), path,
                                    device_name(device(v))));
  // A copy of the value's data (not its graph): the param stays the same leaf with its own requires_grad.
  assign_param(e.param->handle, value);
  e.param->placeholder = false;
}

DynTensor tree_forward(ModuleState& m, const DynTensor& x, bool train) {
  ModuleTree& t = tree_of(m, "forward");
  if (t.onnx) return onnx_forward_one(m, x, train);
  if (!t.is_layer)
    throw ArgumentError("this module's forward is written by the caller (a container of ember_module_create: "
                        "call its children's forwards and tensor ops on its params)");
  std::lock_guard lock(t.mu);
  if (!t.materialized) materialize(m, t, x);
  std::vector<DynTensor> values;
  values.reserve(t.params.size());
  for (const auto& p : t.params) values.push_back(use(p->handle, "param"));
  set_param_values(m, values);
  DynTensor out = forward(m, x, train);
  if (train && m.has_batch_norm) {  // the running statistics the forward updated go back to their handles
    const auto descs = parameters(m);
    for (std::size_t i = 0; i < descs.size() && i < t.params.size(); ++i)
      if (descs[i].info.role == ParamRole::Buffer) assign_param(t.params[i]->handle, param_value(m, i));
  }
  return out;
}

std::vector<DynTensor> tree_forward_with(ModuleState& m, const std::function<std::vector<DynTensor>()>& run) {
  ModuleTree& t = tree_of(m, "forward");
  if (!t.is_layer)
    throw ArgumentError("this module's forward is written by the caller (a container of ember_module_create)");
  std::lock_guard lock(t.mu);
  if (!t.materialized) throw ArgumentError("forward: the layer is not materialized (a lazy layer)");
  std::vector<DynTensor> values;
  values.reserve(t.params.size());
  for (const auto& p : t.params) values.push_back(use(p->handle, "param"));
  set_param_values(m, values);
  return run();
}

void tree_set_training(ModuleState& m, bool on) {
  for (const auto& [path, node] : tree_modules(std::shared_ptr<ModuleState>(std::shared_ptr<ModuleState>{}, &m))) {
    std::lock_guard lock(node->tree->mu);
    node->tree->training = on;
  }
}

bool tree_is_training(const ModuleState& m) {
  const ModuleTree& t = tree_of(m, "is_training");
  std::lock_guard lock(t.mu);
  return t.training;
}

void tree_set_requires_grad(ModuleState& m, bool on) {
  for (const auto& e : tree_params(m)) {
    if (e.param->role != ParamRole::Trainable) continue;  // buffers and constants never require grad
    DynTensor& v = use_mut(e.param->handle, "param");
    if (requires_grad(v) != on) v = set_requires_grad(v, on);
  }
}

std::vector<std::pair<std::string, std::shared_ptr<ModuleState>>> tree_modules(const std::shared_ptr<ModuleState>& m) {
  tree_of(*m, "modules");
  std::vector<std::pair<std::string, std::shared_ptr<ModuleState>>> out;
  std::set<const ModuleState*> seen;
  std::function<void(const std::shared_ptr<ModuleState>&, const std::string&)> walk =
      [&](const std::shared_ptr<ModuleState>& node, const std::string& path) {
        if (!seen.insert(node.get()).second) return;
        std::vector<std::pair<std::string, std::shared_ptr<ModuleState>>> children;
        {
          std::lock_guard lock(node->tree->mu);
          children = node->tree->children;
        }
        for (const auto& [name, child] : children) walk(child, path.empty() ? name : path + "." + name);
        out.emplace_back(path, node);
      };
  walk(m, "");
  return out;
}

}  // namespace ember::capi
