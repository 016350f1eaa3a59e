// The fuzzer's attention rows (issue 13, h-mha; declared in fuzz_actions.hpp, placed in kActions by
// fuzz_actions.cpp): MULTIHEAD_ATTENTION / TRANSFORMER_ENCODER_LAYER / TRANSFORMER_DECODER_LAYER modules with fuzzed
// sizes (mostly tiny, sometimes negative or huge: refused before any allocation; embed_dim not divisible by
// num_heads), and ember_module_forward_attention / _encoder / _decoder on them or on any module of the pool, with
// fuzzed operands and masks (any kind and rank, NULL or not) and out pointers (NULL or not).
#include "tests/fuzz/fuzz_actions.hpp"

namespace ember_fuzz {

void attention(Ctx& c) {
  const int32_t kinds[] = {EMBER_LAYER_MULTIHEAD_ATTENTION, EMBER_LAYER_TRANSFORMER_ENCODER_LAYER,
                           EMBER_LAYER_TRANSFORMER_DECODER_LAYER};
  switch (c.in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: {
      Padded<ember_layer_desc> d;
      Ctx::check("ember_layer_init", ember_layer_init(&d.value, kinds[c.in.ConsumeIntegralInRange<int>(0, 2)]));
      d.value.in_features = c.size();
      d.value.num_heads = c.size();
      d.value.kdim = c.flag() ? c.size() : 0;
      d.value.vdim = c.flag() ? c.size() : 0;
      d.value.dim_feedforward = c.size();
      d.value.batch_first = c.choice(2);
      d.value.norm_first = c.choice(2);
      d.value.activation = c.choice(2);
      d.value.bias = c.choice(2);
      if (c.flag()) d.value.p = c.real();
      if (c.flag()) d.value.eps = c.real();
      d.value.struct_size = c.struct_size(sizeof d.value);
      if (c.flag()) MAKE(ember_module_sequential, c.device(), &d.value, size_t{1});
      else MAKE(ember_module_layer, c.device(), &d.value);
      return;
    }
    case 1: {
      ember_tensor *out = nullptr, *weights = nullptr;
      const ember_tensor* kpm = c.flag() ? c.tensor() : nullptr;
      const ember_tensor* am = c.flag() ? c.tensor() : nullptr;
      CALL(ember_module_forward_attention, c.module(), c.tensor(), c.tensor(), c.tensor(), kpm, am, c.choice(2),
           c.choice(2), c.choice(3), c.flag() ? &out : nullptr, c.flag() ? &weights : nullptr);
      if (out) c.keep(out, "ember_module_forward_attention");
      if (weights) c.keep(weights, "ember_module_forward_attention");
      return;
    }
    case 2: {
      ember_tensor* out = nullptr;
      const ember_tensor* mask = c.flag() ? c.tensor() : nullptr;
      const ember_tensor* kpm = c.flag() ? c.tensor() : nullptr;
      CALL(ember_module_forward_encoder, c.module(), c.tensor(), mask, kpm, c.choice(3), c.flag() ? &out : nullptr);
      if (out) c.keep(out, "ember_module_forward_encoder");
      return;
    }
    default: {
      ember_tensor* out = nullptr;
      const ember_tensor* masks[4];
      for (auto& m : masks) m = c.flag() ? c.tensor() : nullptr;
      CALL(ember_module_forward_decoder, c.module(), c.tensor(), c.tensor(), masks[0], masks[1], masks[2], masks[3],
           c.choice(3), c.flag() ? &out : nullptr);
      if (out) c.keep(out, "ember_module_forward_decoder");
    }
  }
}

}  // namespace ember_fuzz
