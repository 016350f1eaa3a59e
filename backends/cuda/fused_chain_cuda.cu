// Fusion<Cuda>'s kernel (fused_chain.hpp): one launch of the kernel generated for the program's structure.
//
// Kernels are compiled by NVRTC to a CUBIN for the device's own architecture (or, for an architecture newer than
// this NVRTC knows, to PTX for the newest one it does, which the driver compiles on load), loaded with the runtime's
// library API (cudaLibraryLoadData, CUDA 12+: no driver-API linking) and cached per device by
// fused_chain_key, which leaves out what varies between runs of one kernel (buffers, element count, merged dims,
// strides, scalars: the parameter words). A training step's chains compile on its first step.
//
// A trailing sum / mean: every block writes the sum of its threads' elements, and the eager reduction adds up those
// partials (a mean then divides by the element count, as the eager mean does).
#include <nvrtc.h>

#include <algorithm>
#include <limits>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "backends/cuda/fused_chain.hpp"
#include "backends/cuda/fused_chain_source.hpp"
#include "backends/cuda/kernels.hpp"
#include "backends/cuda/runtime.cuh"
#include "engine/fusion/merged_layout.hpp"

namespace ember::cuda {
namespace {

using fusion::Program;

void check_nvrtc(nvrtcResult r, const char* what) {
  if (r != NVRTC_SUCCESS) throw CudaError(std::string(what) + ": " + nvrtcGetErrorString(r));
}

// source compiled for `arch_option` (--gpu-architecture=...): the CUBIN (sm_XY) or the PTX (compute_XY).
std::string nvrtc_compile(const std::string& source, const std::string& arch_option, bool cubin) {
  nvrtcProgram prog;
  check_nvrtc(nvrtcCreateProgram(&prog, source.c_str(), "ember_fused_chain.cu", 0, nullptr, nullptr),
              "nvrtcCreateProgram(fused chain)");
  const std::string arch = "--gpu-architecture=" + arch_option;
  const char* options[] = {arch.c_str(), "--std=c++17"};
  const nvrtcResult r = nvrtcCompileProgram(prog, 2, options);
  if (r != NVRTC_SUCCESS) {
    std::size_t size = 0;
    std::string log;
    if (nvrtcGetProgramLogSize(prog, &size) == NVRTC_SUCCESS && size > 1) {
      log.resize(size);
      nvrtcGetProgramLog(prog, log.data());
      log.resize(size - 1);
    }
    nvrtcDestroyProgram(&prog);
    throw CudaError(std::string("NVRTC could not compile a fused chain for ") + arch_option + ": " +
                    nvrtcGetErrorString(r) + "\n" + log);
  }
  std::size_t size = 0;
  std::string image;
  const nvrtcResult got = cubin ? nvrtcGetCUBINSize(prog, &size) : nvrtcGetPTXSize(prog, &size);
  if (got == NVRTC_SUCCESS) {
    image.resize(size);
    if ((cubin ? nvrtcGetCUBIN(prog, image.data()) : nvrtcGetPTX(prog, image.data())) != NVRTC_SUCCESS) image.clear();
  }
  nvrtcDestroyProgram(&prog);
  if (image.empty()) throw CudaError("NVRTC compiled a fused chain but gave no image");
  return image;
}

// The image to load on a device of compute capability cc (e.g. 90): its own CUBIN when this NVRTC knows the
// architecture, else PTX of the newest architecture below it that it knows (the driver compiles PTX forward).
std::string image_for(const std::string& source, int cc) {
  int count = 0;
  check_nvrtc(nvrtcGetNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(static_cast<std::size_t>(count));
  if (count > 0) check_nvrtc(nvrtcGetSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  if (std::find(archs.begin(), archs.end(), cc) != archs.end())
    return nvrtc_compile(source, "sm_" + std::to_string(cc), true);
  int best = -1;
  for (int a : archs)
    if (a <= cc) best = std::max(best, a);
  if (best < 0) throw CudaError("NVRTC supports no architecture up to this device's sm_" + std::to_string(cc));
  return nvrtc_compile(source, "compute_" + std::to_string(best), false);  // PTX: loaded NUL-terminated
}

// The library is shared: a CUDA graph that launches the kernel holds it too (graph_capture.hpp), so evicting it
// from the cache does not unload what a graph still launches.
struct Kernel {
  std::shared_ptr<void> library;
  cudaKernel_t kernel = nullptr;
};

// One device's kernels by key, most recently used first in `order`; keys NVRTC failed on, with the reason, so a
// failing structure is compiled once, not on every run.
struct DeviceKernels {
  std::list<std::string> order;
  std::unordered_map<std::string, std::pair<Kernel, std::list<std::string>::iterator>> map;
  std::unordered_map<std::string, std::string> failed;
  FusedChainStats stats;
  std::size_t limit = kMaxFusedKernels;
};

std::mutex g_mutex;
std::map<int, DeviceKernels>& kernels() {
  static auto* k = new std::map<int, DeviceKernels>();  // leaked on purpose: libraries outlive static destruction
  return *k;
}

// The kernel for this structure on ctx's device, compiled and loaded on a miss; nullptr (reason in `why`) when
// NVRTC or the loader refuse it. Call with g_mutex held.
const Kernel* kernel_for(DeviceContext& ctx, const Program& p, const fusion::MergedLayout& l, std::string& why) {
  DeviceKernels& d = kernels()[ctx.device];
  const std::string key = fused_chain_key(p, l);
  if (auto it = d.map.find(key); it != d.map.end()) {
    d.order.splice(d.order.begin(), d.order, it->second.second);
    ++d.stats.hits;
    return &it->second.first;
  }
  if (auto f = d.failed.find(key); f != d.failed.end()) {
    why = f->second;
    return nullptr;
  }
  Kernel k;
  try {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, ctx.device), "cudaGetDeviceProperties");
    const std::string image = image_for(fused_chain_cuda(p, l), prop.major * 10 + prop.minor);
    cudaLibrary_t library = nullptr;
    check(cudaLibraryLoadData(&library, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
          "cudaLibraryLoadData(fused chain)");
    k.library = std::shared_ptr<void>(library, [](void* l) { cudaLibraryUnload(static_cast<cudaLibrary_t>(l)); });
    if (cudaLibraryGetKernel(&k.kernel, library, "ember_fused_chain") != cudaSuccess)
      throw CudaError("cudaLibraryGetKernel(ember_fused_chain): no such kernel in the compiled chain");
  } catch (const CudaError& e) {
    why = e.what();
    d.failed.emplace(key, why);
    return nullptr;
  }
  ++d.stats.compiled;
  d.order.push_front(key);
  const Kernel* out = &d.map.emplace(key, std::make_pair(k, d.order.begin())).first->second.first;
  // Beyond the limit: unload the least recently used (never the one just made), once the stream is done with it
  // (not while a graph captures: it cannot wait; the cache shrinks on a later miss).
  while (d.map.size() > d.limit && !capturing(ctx)) {
    auto it = d.map.find(d.order.back());
    check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize(fused chain eviction)");
    d.map.erase(it);  // unloads the library unless a graph holds it
    d.order.pop_back();
    ++d.stats.evicted;
  }
  return out;
}

const void* data_of(const FusedOperand& o) {
  return o.f ? static_cast<const void*>(o.f->data())
             : o.i ? static_cast<const void*>(o.i->data()) : static_cast<const void*>(o.b->data());
}

void handed_back(int device, const std::string& why) {
  DeviceKernels& d = kernels()[device];
  ++d.stats.unfused;
  d.stats.last_failure = why;
}

}  // namespace

std::optional<CudaTensor<float>> fused_chain(const Program& p, const std::vector<FusedOperand>& inputs, int device) {
  if (p.instrs.empty() || p.out != static_cast<int32_t>(p.instrs.size() - 1))
    throw ArgumentError("fused_chain: the output must be the last of " + std::to_string(p.instrs.size()) +
                        " instructions");
  if (inputs.size() != p.inputs.size())
    throw ArgumentError("fused_chain: " + std::to_string(inputs.size()) + " inputs for a program of " +
                        std::to_string(p.inputs.size()));
  for (const auto& o : inputs) {
    const int d = o.f ? o.f->device() : o.i ? o.i->device() : o.b->device();
    if (d != device) throw ArgumentError("fused_chain: inputs on different CUDA devices");
  }
  // Only the Sum and Mean of everything are fused (Fusion<B> asks for no other): others reduce the chain's output.
  if (p.reduce_all && *p.reduce_all != ReduceOp::Sum && *p.reduce_all != ReduceOp::Mean) {
    Program q = p;
    q.reduce_all.reset();
    auto y = fused_chain(q, inputs, device);
    if (!y) return std::nullopt;
    return reduce_all(*y, *p.reduce_all);
  }
  DeviceContext& ctx = context(device);
  const int64_t n = p.shape.num_elements();
  if (n == 0) {
    if (!p.reduce_all) return CudaTensor<float>(p.shape, device);
    return full<float>(Shape{1}, *p.reduce_all == ReduceOp::Sum ? 0.0f : std::numeric_limits<float>::quiet_NaN(),
                       device);
  }
  const fusion::MergedLayout l = fusion::merge_layout(p);
  std::lock_guard lock(g_mutex);
  if (const std::size_t words = fused_chain_word_count(p, l); words > kMaxFusedWords) {
    handed_back(device, "over the kernel parameter words (" + std::to_string(words) + ")");
    return std::nullopt;
  }
  std::string why;
  const Kernel* k = kernel_for(ctx, p, l, why);
  if (!k) {
    handed_back(device, why);
    return std::nullopt;
  }
  const unsigned grid = grid_for(n, ctx);
  CudaTensor<float> y(p.reduce_all ? Shape{static_cast<int64_t>(grid)} : p.shape, device);
  std::vector<const void*> in;
  in.reserve(inputs.size());
  for (const auto& o : inputs) in.push_back(data_of(o));
  FusedWords w = fused_chain_words(p, l, y.data(), in);
  if (GraphCapture* g = capturing(ctx)) g->resources.push_back(k->library);
  void* args[] = {w.words.data()};  // the one parameter: the block of words (copied at the launch)
  check(cudaLaunchKernel(reinterpret_cast<const void*>(k->kernel), dim3(grid), dim3(kFusedThreads), args, 0,
                         ctx.stream),
        "cudaLaunchKernel(fused chain)");
  if (!p.reduce_all) return y;
  auto sum = reduce_all(y, ReduceOp::Sum);
  return *p.reduce_all == ReduceOp::Mean ? scalar(sum, ScalarOp::Div, static_cast<double>(n)) : sum;
}

FusedChainStats fused_chain_stats(int device) {
  std::lock_guard lock(g_mutex);
  DeviceKernels& d = kernels()[device];
  FusedChainStats s = d.stats;
  s.cached = d.map.size();
  return s;
}

std::string compile_fused_ptx(const std::string& source, int arch) {
  return nvrtc_compile(source, "compute_" + std::to_string(arch), false);
}

}  // namespace ember::cuda
