// onednn.hpp without oneDNN (Ember built where libdnnl-dev is absent): nothing is handled here, so conv.cpp always
// runs its own im2col + GEMM kernels.
#include "backends/cpu/onednn.hpp"

namespace ember::cpu::onednn {

bool enabled() { return false; }
void set_enabled(bool) {}
int64_t forward_weight_reorders() { return 0; }
int64_t forward_blocked_inputs_reused() { return 0; }
bool winograd() { return false; }
void set_winograd(bool) {}
int64_t winograd_plans() { return 0; }
int64_t forward_channel_parts() { return 0; }

std::optional<CpuTensor<float>> conv2d(const CpuTensor<float>&, const CpuTensor<float>&, const CpuTensor<float>*,
                                       const Conv2dOptions&, PostOp) {
  return std::nullopt;
}
std::optional<CpuTensor<float>> conv2d_max_pool(const CpuTensor<float>&, const CpuTensor<float>&,
                                                const CpuTensor<float>*, const Conv2dOptions&, PostOp,
                                                const Pool2dOptions&) {
  return std::nullopt;
}
std::optional<Conv2dGrads<CpuTensor<float>>> conv2d_backward(const CpuTensor<float>&, const CpuTensor<float>&,
                                                             const CpuTensor<float>&, bool, const Conv2dOptions&) {
  return std::nullopt;
}

std::optional<Conv2dGrads<CpuTensor<float>>> conv2d_backward_im2col(const CpuTensor<float>&, const CpuTensor<float>&,
                                                                    const CpuTensor<float>&, bool,
                                                                    const Conv2dOptions&) {
  return std::nullopt;
}

}  // namespace ember::cpu::onednn
