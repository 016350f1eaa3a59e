// issue 14: ember_compile / ember_module_compile / ember_compiled_* (ember.h, "Compiled forwards"): the handles
// around runtime/compiled.hpp's Compiled, which captures and replays (runtime/compiled_cpu.cpp).
#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "c_api/src/boundary.hpp"
#include "c_api/src/module_tree.hpp"
#include "c_api/src/runtime/compiled.hpp"
#include "c_api/src/tensor_refs.hpp"

namespace ember::capi {

struct CompiledState final : CompiledForward {
  std::vector<ember_tensor*> state;  // retained (tensor_refs.hpp) until the compiled object is freed
  ember_compiled_forward_fn fn = nullptr;
  void* user = nullptr;
  std::unique_ptr<Compiled> compiled = make_compiled();

  CompiledState() = default;
  CompiledState(const CompiledState&) = delete;
  CompiledState& operator=(const CompiledState&) = delete;
  ~CompiledState() override {
    for (ember_tensor* t : state) release_tensor(t);
  }

  std::vector<DynTensor*> state_slots() override {
    std::vector<DynTensor*> slots;
    slots.reserve(state.size());
    for (std::size_t i = 0; i < state.size(); ++i)
      slots.push_back(&use_mut(state[i], fmt::format("state[{}]", i).c_str()));
    return slots;
  }

  // Handles for the callback's inputs (freed after it), its outputs taken over.
  std::vector<DynTensor> forward(int32_t mode, const std::vector<DynTensor>& inputs, std::size_t n_outputs) override {
    struct Handles {
      std::vector<ember_tensor*> in, out;
      ~Handles() {
        for (ember_tensor* h : in) destroy_handle(h);
        for (ember_tensor* h : out)
          if (h) ember_tensor_free(h);
      }
    } h;
    for (const DynTensor& x : inputs) h.in.push_back(make_handle<ember_tensor>(x));
    h.out.assign(n_outputs, nullptr);
    ember_clear_error();  // so that a message found after the call is the callback's own
    const ember_status st = fn(user, mode, const_cast<const ember_tensor* const*>(h.in.data()), h.in.size(),
                               h.out.data(), n_outputs);
    if (st != EMBER_OK) {
      const std::string inner = ember_last_error();
      const bool known = st >= EMBER_ERR_INVALID_ARGUMENT && st <= EMBER_ERR_BUFFER_TOO_SMALL;
      throw StatusError(known ? st : EMBER_ERR_INVALID_ARGUMENT,
                        fmt::format("the forward callback returned {}{}",
                                    known ? ember_status_name(st) : fmt::format("{}", st),
                                    inner.empty() ? std::string() : "; its last error: " + inner));
    }
    std::vector<DynTensor> out;
    for (std::size_t i = 0; i < n_outputs; ++i) {
      if (!h.out[i]) throw ArgumentError(fmt::format("the forward callback left outputs[{}] NULL", i));
      out.push_back(use(h.out[i], "the forward callback's output"));
    }
    return out;
  }
};

// ember_module_compile's forward: ember_module_forward, one input and one output.
ember_status EMBER_CALL module_forward_fn(void* user, ember_mode_t mode, const ember_tensor* const* inputs,
                                          size_t n_inputs, ember_tensor** outputs, size_t n_outputs) {
  if (n_inputs != 1 || n_outputs != 1) return EMBER_ERR_INVALID_ARGUMENT;  // ember_module_forward: one x, one out
  return ember_module_forward(static_cast<ember_module*>(user), inputs[0], mode, outputs);
}

}  // namespace ember::capi

using namespace ember;
using namespace ember::capi;

namespace {

ember_compiled* make_compiled_handle(ember_tensor* const* state, size_t n_state, ember_compiled_forward_fn fn,
                                     void* user) {
  if (!fn) throw ArgumentError("forward is NULL");
  if (n_state && !state) throw ArgumentError("state is NULL");
  auto c = std::make_shared<CompiledState>();
  c->fn = fn;
  c->user = user;
  for (size_t i = 0; i < n_state; ++i) {
    use(state[i], fmt::format("state[{}]", i).c_str());
    retain_tensor(state[i]);
    c->state.push_back(state[i]);
  }
  return make_handle<ember_compiled>(std::move(c));
}

}  // namespace

extern "C" {

ember_status ember_compile(ember_tensor* const* state, size_t n_state, ember_compiled_forward_fn forward, void* user,
                           ember_compiled** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    o = make_compiled_handle(state, n_state, forward, user);
  });
}

ember_status ember_module_compile(ember_module* module, ember_compiled** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const auto& m = use(module, "module");
    std::vector<ember_tensor*> state;
    if (m->tree)
      for (const auto& e : tree_params(*m)) state.push_back(e.param->handle);
    o = make_compiled_handle(state.data(), state.size(), module_forward_fn, module);
  });
}

ember_status ember_compiled_call(ember_compiled* compiled, int32_t mode, const ember_tensor* const* inputs,
                                 size_t n_inputs, ember_tensor** outputs, size_t n_outputs) {
  if (outputs)
    for (size_t i = 0; i < n_outputs; ++i) outputs[i] = nullptr;
  return guard(__func__, [&] {
    // Keeps the object alive for the call even if the callback frees the handle (which it must not).
    const std::shared_ptr<CompiledState> c = use(compiled, "compiled");
    if (mode != EMBER_MODE_EVAL && mode != EMBER_MODE_TRAIN) throw ArgumentError(fmt::format("unknown mode {}", mode));
    if (n_inputs && !inputs) throw ArgumentError("inputs is NULL");
    if (n_outputs && !outputs) throw ArgumentError("outputs is NULL");
    std::vector<DynTensor> in;
    for (size_t i = 0; i < n_inputs; ++i) in.push_back(use(inputs[i], fmt::format("inputs[{}]", i).c_str()));
    std::vector<DynTensor> r = c->compiled->call(*c, mode, in, n_outputs);
    for (size_t i = 0; i < n_outputs; ++i) outputs[i] = make_handle<ember_tensor>(std::move(r[i]));
  });
}

ember_status ember_compiled_last_call(const ember_compiled* compiled, int32_t* kind) {
  return guard(__func__, [&] {
    out_value(kind, "kind") = static_cast<int32_t>(use(compiled, "compiled")->compiled->last_call());
  });
}

ember_status ember_compiled_fallback_reason(const ember_compiled* compiled, char* buf, size_t capacity,
                                            size_t* length) {
  return guard(__func__,
               [&] { write_text(use(compiled, "compiled")->compiled->fallback_reason(), buf, capacity, length); });
}

ember_status ember_compiled_free(ember_compiled* compiled) { return free_handle(compiled, __func__); }

}  // extern "C"
