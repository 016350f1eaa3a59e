// The caching device allocator (see allocator.hpp). Size classes: powers of two from 512 B to 1 MiB, then
// multiples of 2 MiB, so a freed block fits the next request of a similar size and at most half (small) or 2 MiB
// (large) of a block is padding. Free lists are exact per size class.
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "backends/cuda/allocator.hpp"
#include "backends/cuda/runtime.cuh"

namespace ember::cuda {
namespace {

constexpr std::size_t kMinBlock = 512;
constexpr std::size_t kSmallLimit = std::size_t{1} << 20;
constexpr std::size_t kLargeStep = std::size_t{2} << 20;

std::size_t size_class(std::size_t bytes) {
  if (bytes <= kMinBlock) return kMinBlock;
  if (bytes <= kSmallLimit) {
    std::size_t c = kMinBlock;
    while (c < bytes) c <<= 1;
    return c;
  }
  return (bytes + kLargeStep - 1) / kLargeStep * kLargeStep;
}

struct DeviceCache {
  std::map<std::size_t, std::vector<void*>> free;  // size class -> blocks
  AllocatorStats stats;
};

// Never destroyed: blocks released during static destruction still find their cache (and are simply kept).
struct Cache {
  std::mutex mu;
  std::map<int, DeviceCache> devices;
};
Cache& cache() {
  static Cache* c = new Cache;
  return *c;
}

// cudaFree of every cached block on `device`. The caller holds the lock and has synchronized the device's stream,
// so no queued kernel still uses them.
void release_cached_locked(DeviceCache& dc) {
  for (auto& [size, blocks] : dc.free) {
    for (void* p : blocks) {
      cudaFree(p);  // best effort: a failure here leaves the memory to the driver, nothing to recover
      dc.stats.cached_bytes -= size;
    }
  }
  dc.free.clear();
}

}  // namespace

Block::~Block() {
  if (!ptr) return;
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  DeviceCache& dc = c.devices[device];
  dc.free[capacity].push_back(ptr);
  dc.stats.cached_bytes += capacity;
  dc.stats.live_bytes -= capacity;
}

std::shared_ptr<Block> allocate(std::size_t bytes, int device) {
  auto block = std::make_shared<Block>();
  block->device = device;
  block->bytes = bytes;
  if (bytes == 0) return block;
  DeviceContext& ctx = context(device);  // also makes `device` current and fails clearly without a GPU
  // Every op allocates its result first: another thread's op meeting this thread's capture stops here (throws).
  GraphCapture* graph = capturing(ctx);
  const std::size_t cap = size_class(bytes);
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  DeviceCache& dc = c.devices[device];
  auto it = dc.free.find(cap);
  if (it != dc.free.end() && !it->second.empty()) {
    block->ptr = it->second.back();
    it->second.pop_back();
    dc.stats.cached_bytes -= cap;
    ++dc.stats.reuses;
  } else {
    void* p = nullptr;
    cudaError_t st = cudaMalloc(&p, cap);
    if (st == cudaErrorMemoryAllocation && graph) {
      // Releasing the cache would wait for the stream, which a graph is capturing: the build declines instead.
      cudaGetLastError();
      throw OutOfMemory("cuda: out of memory allocating " + std::to_string(cap) + " bytes on device " +
                        std::to_string(device) + " while capturing a CUDA graph");
    }
    if (st == cudaErrorMemoryAllocation) {
      // Out of memory: give the cached blocks back to the driver and try once more.
      cudaGetLastError();
      ++dc.stats.cache_flushes;
      check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize(before releasing the cache)");
      release_cached_locked(dc);
      st = cudaMalloc(&p, cap);
    }
    if (st == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      throw OutOfMemory("cuda: out of memory allocating " + std::to_string(cap) + " bytes on device " +
                        std::to_string(device) + " (" + std::to_string(dc.stats.live_bytes) +
                        " bytes held by live tensors)");
    }
    check(st, "cudaMalloc");
    block->ptr = p;
    ++dc.stats.device_allocations;
  }
  block->capacity = cap;
  dc.stats.live_bytes += cap;
  // A graph being captured writes this block on every launch: it holds it as long as the graph exists.
  if (graph) graph->keep.push_back(block);
  return block;
}

AllocatorStats allocator_stats(int device) {
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  return c.devices[device].stats;
}

void empty_cache(int device) {
  DeviceContext& ctx = context(device);
  check(cudaStreamSynchronize(ctx.stream), "cudaStreamSynchronize(empty_cache)");
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  release_cached_locked(c.devices[device]);
}

}  // namespace ember::cuda
