#pragma once
// Fusion<Cuda>'s kernels (engine/fusion/README.md, issue 14): a recorded chain of elementwise ops
// (fusion::Program) runs as one kernel generated for its structure (fused_chain_source.cpp), compiled with NVRTC
// for the device's architecture on first use and cached per device by the program's key (fused_chain_cuda.cu):
// each input read once, one store of the output, or with a trailing sum / mean one partial per block instead.
// Plain C++ (no CUDA types), like cuda_api.hpp.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/cuda_tensor.hpp"
#include "engine/fusion/operand.hpp"

namespace ember::cuda {

using FusedOperand = fusion::Operand<CudaTensor<float>, CudaTensor<int64_t>, CudaTensor<uint8_t>>;

// The program's result (its output, or the [1] sum / mean with Program::reduce_all) on `device`, queued on its
// stream; nullopt when it cannot run as one kernel here (over the parameter words, or NVRTC could not compile it:
// fused_chain_stats says why), and the caller runs it op by op (fusion::replay).
std::optional<CudaTensor<float>> fused_chain(const fusion::Program& p, const std::vector<FusedOperand>& inputs,
                                             int device);

// Kernels kept per device; the least recently used one is unloaded beyond the limit (after the device's stream
// has finished the work that may still use it).
inline constexpr std::size_t kMaxFusedKernels = 256;

struct FusedChainStats {
  uint64_t compiled = 0;  // programs compiled by NVRTC (cache misses)
  uint64_t hits = 0;      // runs that found their kernel cached
  uint64_t evicted = 0;   // kernels unloaded to stay within kMaxFusedKernels
  uint64_t unfused = 0;   // programs handed back to run op by op
  std::size_t cached = 0;
  std::string last_failure;  // why the last program was handed back ("" if none was)
};
FusedChainStats fused_chain_stats(int device);

// NVRTC alone, no device needed: the PTX of a generated kernel for compute_<arch> (80: sm_80's virtual
// architecture). Throws CudaError with NVRTC's log when it does not compile (tests compile every chain shape).
std::string compile_fused_ptx(const std::string& source, int arch);

}  // namespace ember::cuda
