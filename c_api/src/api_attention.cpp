// ember.h: ember_module_forward_attention / _encoder / _decoder (issue 13, h-mha): multihead attention and the
// transformer layers with their masks and second operands.
#include <fmt/format.h>

#include "c_api/src/boundary.hpp"
#include "c_api/src/module_tree.hpp"

using namespace ember;
using namespace ember::capi;

namespace {

bool train_mode(int32_t mode) {
  if (mode != EMBER_MODE_EVAL && mode != EMBER_MODE_TRAIN) throw ArgumentError(fmt::format("unknown mode {}", mode));
  return mode == EMBER_MODE_TRAIN;
}
const DynTensor* optional_operand(const ember_tensor* t, const char* what) { return t ? &use(t, what) : nullptr; }

// A layer module (ember_module_layer) runs with the current values of its param handles; a Sequential as it is.
std::vector<DynTensor> run_forward(ModuleState& m, const std::function<std::vector<DynTensor>()>& run) {
  return m.tree ? tree_forward_with(m, run) : run();
}

}  // namespace

extern "C" {

ember_status ember_module_forward_attention(ember_module* module, const ember_tensor* query, const ember_tensor* key,
                                            const ember_tensor* value, const ember_tensor* key_padding_mask,
                                            const ember_tensor* attn_mask, int32_t need_weights,
                                            int32_t average_attn_weights, int32_t mode, ember_tensor** out,
                                            ember_tensor** weights) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    if (need_weights && !weights) throw ArgumentError("weights is NULL but need_weights is set");
    if (weights) *weights = nullptr;
    const bool train = train_mode(mode);
    const std::shared_ptr<ModuleState> state = use(module, "module");
    const DynTensor &q = use(query, "query"), &k = use(key, "key"), &v = use(value, "value");
    const DynTensor* kpm = optional_operand(key_padding_mask, "key_padding_mask");
    const DynTensor* am = optional_operand(attn_mask, "attn_mask");
    std::vector<DynTensor> r = run_forward(*state, [&] {
      return forward_attention(*state, q, k, v, kpm, am, need_weights != 0, average_attn_weights != 0, train);
    });
    o = make_handle<ember_tensor>(std::move(r[0]));
    if (r.size() > 1) *weights = make_handle<ember_tensor>(std::move(r[1]));
  });
}

ember_status ember_module_forward_encoder(ember_module* module, const ember_tensor* src, const ember_tensor* mask,
                                          const ember_tensor* src_key_padding_mask, int32_t mode,
                                          ember_tensor** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const bool train = train_mode(mode);
    const std::shared_ptr<ModuleState> state = use(module, "module");
    const DynTensor& x = use(src, "src");
    const DynTensor* m = optional_operand(mask, "mask");
    const DynTensor* kpm = optional_operand(src_key_padding_mask, "src_key_padding_mask");
    std::vector<DynTensor> r =
        run_forward(*state, [&] { return std::vector<DynTensor>{forward_encoder(*state, x, m, kpm, train)}; });
    o = make_handle<ember_tensor>(std::move(r[0]));
  });
}

ember_status ember_module_forward_decoder(ember_module* module, const ember_tensor* tgt, const ember_tensor* memory,
                                          const ember_tensor* tgt_mask, const ember_tensor* memory_mask,
                                          const ember_tensor* tgt_key_padding_mask,
                                          const ember_tensor* memory_key_padding_mask, int32_t mode,
                                          ember_tensor** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const bool train = train_mode(mode);
    const std::shared_ptr<ModuleState> state = use(module, "module");
    const DynTensor &t = use(tgt, "tgt"), &mem = use(memory, "memory");
    const DynTensor* tm = optional_operand(tgt_mask, "tgt_mask");
    const DynTensor* mm = optional_operand(memory_mask, "memory_mask");
    const DynTensor* tk = optional_operand(tgt_key_padding_mask, "tgt_key_padding_mask");
    const DynTensor* mk = optional_operand(memory_key_padding_mask, "memory_key_padding_mask");
    std::vector<DynTensor> r = run_forward(
        *state, [&] { return std::vector<DynTensor>{forward_decoder(*state, t, mem, tm, mm, tk, mk, train)}; });
    o = make_handle<ember_tensor>(std::move(r[0]));
  });
}

}  // extern "C"
