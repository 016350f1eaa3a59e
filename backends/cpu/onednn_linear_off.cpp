// Builds without oneDNN: the fused linear always declines and linear.cpp's OpenBLAS path runs.
#include "backends/cpu/onednn_linear.hpp"

namespace ember::cpu::onednn {

std::optional<CpuTensor<float>> linear(const CpuTensor<float>&, const CpuTensor<float>&, const CpuTensor<float>*,
                                       bool, bool) {
  return std::nullopt;
}

bool gemm(bool, bool, int64_t, int64_t, int64_t, const float*, int64_t, const float*, int64_t, float*) { return false; }
bool sgemm(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t, float, float*,
           int64_t) {
  return false;
}

}  // namespace ember::cpu::onednn
