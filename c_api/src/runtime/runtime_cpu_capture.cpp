// issue 14: libember's capture runtime, ember_compile's (compiled_cpu.cpp): the runtime's ops over
// Autodiff<Capture<Cpu<float>>>, compiled with EMBER_RUNTIME_CPU_CAPTURE (runtime_backend.hpp). A forward that
// ember_compile captures runs on tensors of this runtime: each op computes on the CPU at once, as the builtin
// runtime's would, and appends itself to the capture's tape.
//
// Only the op groups a model's forward uses are compiled for it (c_api/meson.build: capi_capture_op_sources), to
// keep the build short; the others (in-place updates, optimizers and schedulers, the Sequential and module-tree
// layers, RNNs, attention, FFT, sort / scan, the composed shape ops, the fused no-grad inference layers, the Adam
// update) answer UnsupportedError here, which makes ember_compile run that forward eagerly with the error as its
// reason.
#include "c_api/src/runtime/runtime_impl.hpp"

namespace ember::capi {

namespace ops {
#define EMBER_CAPTURE_UNSUPPORTED(R, name, params, args, from)                                                \
  template <>                                                                                                 \
  R name<RuntimeBackend> params {                                                                              \
    (void)std::forward_as_tuple args;                                                                         \
    throw UnsupportedError(#name ": not available inside a compiled forward (the capture runtime has the "   \
                           "forward ops only)");                                                              \
  }
EMBER_RUNTIME_ATTENTION_OPS(EMBER_CAPTURE_UNSUPPORTED)
EMBER_RUNTIME_FFT_OPS(EMBER_CAPTURE_UNSUPPORTED)
EMBER_RUNTIME_INPLACE_OPS(EMBER_CAPTURE_UNSUPPORTED)
EMBER_RUNTIME_SEQUENTIAL_OPS(EMBER_CAPTURE_UNSUPPORTED)
EMBER_RUNTIME_OPTIMIZER_OPS(EMBER_CAPTURE_UNSUPPORTED)
EMBER_RUNTIME_PARAM_OPTIMIZER_OPS(EMBER_CAPTURE_UNSUPPORTED)
EMBER_RUNTIME_NORMS_OPS(EMBER_CAPTURE_UNSUPPORTED)
EMBER_RUNTIME_RNN_OPS(EMBER_CAPTURE_UNSUPPORTED)
EMBER_RUNTIME_SORT_OPS(EMBER_CAPTURE_UNSUPPORTED)
EMBER_RUNTIME_SHAPE_OPS(EMBER_CAPTURE_UNSUPPORTED)
EMBER_RUNTIME_MHA_OPS(EMBER_CAPTURE_UNSUPPORTED)
EMBER_RUNTIME_CONV_ACT_OPS(EMBER_CAPTURE_UNSUPPORTED)
EMBER_RUNTIME_ADAM_OPS(EMBER_CAPTURE_UNSUPPORTED)
#undef EMBER_CAPTURE_UNSUPPORTED
}  // namespace ops

template const BackendRuntime& runtime_instance<RuntimeBackend>();

}  // namespace ember::capi
