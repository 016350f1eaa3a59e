// The fuzzer's rows for issue 13's norms (declared in fuzz_actions.hpp, placed in kActions by fuzz_actions.cpp):
// ember_tensor_conv_transpose2d with NULL, default or fuzzed options (sizes that are negative, huge or make the
// output empty or enormous must be refused before any allocation), and Sequentials of the GROUP_NORM, RMS_NORM and
// CONV_TRANSPOSE2D kinds with fuzzed fields, run on fuzzed tensors.
#include "tests/fuzz/fuzz_actions.hpp"

namespace ember_fuzz {

void norms(Ctx& c) {
  if (c.flag()) {
    Padded<ember_conv_transpose2d_options> o;
    Ctx::check("ember_conv_transpose2d_options_init", ember_conv_transpose2d_options_init(&o.value));
    if (c.flag()) {
      for (int i = 0; i < 2; ++i) {
        o.value.stride[i] = c.size();
        o.value.padding[i] = c.size();
        o.value.output_padding[i] = c.size();
        o.value.dilation[i] = c.size();
      }
      o.value.groups = c.size();
      o.value.reserved = c.choice(2);
    }
    o.value.struct_size = c.struct_size(sizeof o.value);
    ember_tensor* x = c.tensor();
    ember_tensor* w = c.tensor();
    ember_tensor* b = c.flag() ? nullptr : c.tensor();
    MAKE(ember_tensor_conv_transpose2d, x, w, b, c.flag() ? &o.value : nullptr);
    return;
  }
  ember_layer_desc d;
  Ctx::check("ember_layer_init",
             ember_layer_init(&d, EMBER_LAYER_GROUP_NORM + c.in.ConsumeIntegralInRange<int32_t>(0, 2)));
  d.in_features = c.size();
  d.out_features = c.size();
  d.num_groups = c.size();
  d.affine = c.choice(2);
  d.bias = c.choice(2);
  if (c.flag()) d.eps = c.real();
  for (int i = 0; i < 2; ++i) {
    d.kernel_size[i] = c.size();
    d.stride[i] = c.size();
    d.padding[i] = c.size();
    d.output_padding[i] = c.size();
    d.dilation[i] = c.size();
  }
  d.groups = c.size();
  ember_module* m = nullptr;
  if (ember_module_sequential(c.device(), &d, 1, &m) != EMBER_OK) return;
  c.keep(m, "ember_module_sequential");
  MAKE(ember_module_forward, m, c.tensor(), c.choice(2));
}

}  // namespace ember_fuzz
