// Builds without oneDNN: the fused linear always declines and linear.cpp's OpenBLAS path runs.
#include "backends/cpu/onednn_linear.hpp"

namespace ember::cpu::onednn {

std::optional<CpuTensor<float>> linear(const CpuTensor<float>&, const CpuTensor<float>&, const CpuTensor<float>*,
                                       bool, bool) {
  return std::nullopt;
}

}  // namespace ember::cpu::onednn
