// ember.h: scaled-dot-product attention (issue 13), a thin check in front of the runtime op
// (src/runtime/ops_sdpa.cpp), which runs the backend's fused flash-attention kernel where it has one.
#include "c_api/src/boundary.hpp"

using namespace ember;
using namespace ember::capi;

extern "C" {

ember_status ember_scaled_dot_product_attention(const ember_tensor* query, const ember_tensor* key,
                                                const ember_tensor* value, const ember_tensor* attn_bias,
                                                int32_t is_causal, double scale, ember_tensor** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const DynTensor* bias = attn_bias ? &use(attn_bias, "attn_bias") : nullptr;
    o = make_handle<ember_tensor>(scaled_dot_product_attention(use(query, "query"), use(key, "key"),
                                                               use(value, "value"), bias, is_causal != 0, scale));
  });
}

}  // extern "C"
