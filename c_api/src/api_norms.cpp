// ember.h issue 13: conv_transpose2d's functional form (the layers GroupNorm, RMSNorm and ConvTranspose2d are
// EMBER_LAYER_* kinds of ember_module_sequential), a thin check of the options in front of its runtime op
// (src/runtime/ops_norms.cpp).
#include "c_api/src/boundary.hpp"

using namespace ember;
using namespace ember::capi;

namespace {

const DynTensor& val(const ember_tensor* t, const char* arg) { return use(t, arg); }

constexpr std::size_t kConvTransposeV1 = EMBER_STRUCT_END(ember_conv_transpose2d_options, groups);

ember_conv_transpose2d_options conv_transpose_defaults() {
  ember_conv_transpose2d_options o{};
  o.struct_size = sizeof o;
  o.stride[0] = o.stride[1] = 1;
  o.dilation[0] = o.dilation[1] = 1;
  o.groups = 1;
  return o;
}

}  // namespace

extern "C" {

ember_status ember_conv_transpose2d_options_init(ember_conv_transpose2d_options* options) {
  return guard(__func__, [&] {
    if (!options) throw ArgumentError("options is NULL");
    *options = conv_transpose_defaults();
  });
}

ember_status ember_tensor_conv_transpose2d(const ember_tensor* x, const ember_tensor* weight, const ember_tensor* bias,
                                           const ember_conv_transpose2d_options* options, ember_tensor** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const auto opts =
        options ? read_struct(options, conv_transpose_defaults(), kConvTransposeV1, "options") : conv_transpose_defaults();
    if (opts.reserved != 0) throw ArgumentError("options.reserved must be 0");
    ConvTranspose2dOptions c;
    for (int i = 0; i < 2; ++i) {
      c.stride[i] = opts.stride[i];
      c.padding[i] = opts.padding[i];
      c.output_padding[i] = opts.output_padding[i];
      c.dilation[i] = opts.dilation[i];
    }
    c.groups = opts.groups;
    const DynTensor* b = bias ? &val(bias, "bias") : nullptr;
    o = make_handle<ember_tensor>(conv_transpose2d(val(x, "x"), val(weight, "weight"), b, c));
  });
}

}  // extern "C"
