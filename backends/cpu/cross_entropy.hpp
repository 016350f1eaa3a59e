#pragma once
// Fused cross entropy over class-index targets on the CPU (optional_ops.hpp HasFusedCrossEntropy):
// cross_entropy.cpp.
#include "backends/cpu/cpu_tensor.hpp"
#include "engine/backend/cross_entropy_types.hpp"

namespace ember::cpu {

// logits [N, C], targets [N] in [0, C) (IndexError otherwise, before anything is computed).
template <class T>
CrossEntropyForward<CpuTensor<T>> cross_entropy_forward(const CpuTensor<T>& logits, const CpuTensor<int64_t>& targets);
// d loss / d logits for the per-row loss gradient g [N].
template <class T>
CpuTensor<T> cross_entropy_backward(const CpuTensor<T>& logits, const CpuTensor<int64_t>& targets,
                                    const CpuTensor<T>& lse, const CpuTensor<T>& g);

}  // namespace ember::cpu
