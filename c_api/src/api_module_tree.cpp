// ember.h: module trees (containers, layer modules, caller params); module_tree.hpp has the semantics.
#include <cstddef>
#include <string>

#include <fmt/format.h>

#include "c_api/src/module_tree.hpp"
#include "c_api/src/tensor_refs.hpp"

using namespace ember;
using namespace ember::capi;

namespace {

std::string name_arg(const char* name, const char* what) {
  if (!name) throw ArgumentError(fmt::format("{} is NULL", what));
  return name;
}

ParamRole to_role(int32_t role) {
  if (role < EMBER_PARAM_TRAINABLE || role > EMBER_PARAM_CONSTANT) throw ArgumentError(fmt::format("unknown param role {}", role));
  return static_cast<ParamRole>(role);
}

// A held param handle given to the caller: one more caller reference.
ember_tensor* hand_out(ember_tensor* h) {
  add_caller_ref(h);
  return h;
}

}  // namespace

// ember_layer_desc -> LayerSpec, shared with ember_module_sequential (api_module.cpp).
namespace ember::capi {
LayerSpec read_layer_desc(const ember_layer_desc* desc);
}

extern "C" {

ember_status ember_module_create(const ember_device* device, ember_module** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    o = make_handle<ember_module>(make_container(device_or_default(device)));
  });
}

ember_status ember_module_layer(const ember_device* device, const ember_layer_desc* desc, ember_module** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const LayerSpec spec = read_layer_desc(desc);
    o = make_handle<ember_module>(make_layer_module(device_or_default(device), spec));
  });
}

ember_status ember_module_add_child(ember_module* parent, const char* name, ember_module* child) {
  return guard(__func__, [&] {
    const auto& p = use(parent, "parent");
    const auto& c = use(child, "child");
    tree_add_child(*p, name_arg(name, "name"), c);
  });
}

ember_status ember_module_child(const ember_module* parent, const char* name, ember_module** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const auto& p = use(parent, "parent");
    o = make_handle<ember_module>(tree_child(*p, name_arg(name, "name")));
  });
}

ember_status ember_module_child_count(const ember_module* module, size_t* count) {
  return guard(__func__, [&] {
    const ModuleTree& t = tree_of(*use(module, "module"), "child_count");
    std::lock_guard lock(t.mu);
    out_value(count, "count") = t.children.size();
  });
}

ember_status ember_module_child_name(const ember_module* module, size_t index, char* buf, size_t capacity,
                                     size_t* length) {
  return guard(__func__, [&] {
    const ModuleTree& t = tree_of(*use(module, "module"), "child_name");
    std::string name;
    {
      std::lock_guard lock(t.mu);
      if (index >= t.children.size())
        throw IndexError(fmt::format("index {} out of range for {} children", index, t.children.size()));
      name = t.children[index].first;
    }
    write_text(name, buf, capacity, length);
  });
}

ember_status ember_module_add_param(ember_module* module, const char* name, ember_tensor* tensor, int32_t role) {
  return guard(__func__, [&] {
    const auto& m = use(module, "module");
    use(tensor, "tensor");
    tree_add_param(*m, name_arg(name, "name"), tensor, to_role(role));
  });
}

ember_status ember_module_param(const ember_module* module, size_t index, ember_tensor** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const auto entries = tree_params(*use(module, "module"));
    if (index >= entries.size())
      throw IndexError(fmt::format("index {} out of range for {} params", index, entries.size()));
    o = hand_out(entries[index].param->handle);
  });
}

ember_status ember_module_find_param(const ember_module* module, const char* path, ember_tensor** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const auto& m = use(module, "module");
    o = hand_out(tree_find_param(*m, name_arg(path, "path")).param->handle);
  });
}

ember_status ember_module_set_training(ember_module* module, int32_t train) {
  return guard(__func__, [&] { tree_set_training(*use(module, "module"), train != 0); });
}

ember_status ember_module_is_training(const ember_module* module, int32_t* train) {
  return guard(__func__, [&] {
    const auto& m = use(module, "module");
    out_value(train, "train") = tree_is_training(*m) ? 1 : 0;
  });
}

ember_status ember_module_set_requires_grad(ember_module* module, int32_t on) {
  return guard(__func__, [&] { tree_set_requires_grad(*use(module, "module"), on != 0); });
}

ember_status ember_module_apply(ember_module* module, ember_module_visitor visit, void* user) {
  return guard(__func__, [&] {
    const auto& m = use(module, "module");
    if (!visit) throw ArgumentError("visit is NULL");
    for (const auto& [path, node] : tree_modules(m)) {
      // A handle for the call only: the visitor may use it like any module handle, but not keep it.
      ember_module* h = make_handle<ember_module>(node);
      ember_clear_error();  // so that a message found after the call is the visitor's own
      const ember_status result = visit(user, h, path.c_str());
      const std::string inner = ember_last_error();
      free_handle(h, __func__);
      if (result == EMBER_OK) continue;
      // The visitor's status is returned, with a message like any failure's (a visitor that fails by itself sets
      // none), keeping the message of the ember_* call it failed on, if any. A status that is no ember_status_code
      // (the visitor's own numbers) would break ember.h's promise of one: it becomes INVALID_ARGUMENT.
      const bool known = result >= EMBER_ERR_INVALID_ARGUMENT && result <= EMBER_ERR_BUFFER_TOO_SMALL;
      throw StatusError(known ? result : EMBER_ERR_INVALID_ARGUMENT,
                        fmt::format("the visitor returned {} at module '{}'{}",
                                    known ? ember_status_name(result) : fmt::format("{}", result), path,
                                    inner.empty() ? std::string() : "; its last error: " + inner));
    }
  });
}

ember_status ember_module_state_set(ember_module* module, const char* path, const ember_tensor* value) {
  return guard(__func__, [&] {
    const auto& m = use(module, "module");
    const DynTensor& v = use(value, "value");
    tree_state_set(*m, name_arg(path, "path"), v);
  });
}

}  // extern "C"
