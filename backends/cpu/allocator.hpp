#pragma once
// Caching host allocator. Fresh pages cost ~2.6 µs per 4 KiB on first touch here, so returning each op's output
// to the OS and asking again is slow; freed blocks are kept in per-size free lists and reused.
#include <cstddef>
#include <memory>

namespace ember::cpu {

// A block of at least `bytes` bytes, 64-byte aligned, released into the cache when the last owner drops it; or a
// borrowed range inside another buffer (borrow(): `owner` set, no alignment promised, nothing to release).
struct Buffer {
  void* ptr = nullptr;
  std::size_t bytes = 0;     // requested size
  std::size_t capacity = 0;  // size class actually held (0 when borrowed)
  std::shared_ptr<Buffer> owner;  // the buffer whose memory a borrowed range lies in, kept alive by it
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();
};

std::shared_ptr<Buffer> allocate(std::size_t bytes);
// `bytes` bytes of `from`'s memory from `byte_offset` on, without a copy: buffers are never written after the op
// that made them returns, so a contiguous slice (x[i], x[a:b]) can share its input's storage, as a PyTorch view
// does, and no write through either can be seen in the other. The range keeps the whole block of `from` alive.
std::shared_ptr<Buffer> borrow(const std::shared_ptr<Buffer>& from, std::size_t byte_offset, std::size_t bytes);

struct AllocatorStats {
  std::size_t cached_bytes = 0;  // held in free lists
  std::size_t live_bytes = 0;    // handed out and not yet released
  std::size_t os_allocations = 0;
  std::size_t reuses = 0;
  std::size_t peak_live_bytes = 0;  // the most live_bytes reached since the last allocator_reset_peak()
};
AllocatorStats allocator_stats();
// Starts a new high-water mark of live_bytes from the bytes live now (benchmarks measure an op's peak extra
// memory as peak_live_bytes - live_bytes before it).
void allocator_reset_peak();
// Returns every cached block to the OS.
void allocator_trim();
// Upper bound on bytes kept in the free lists (default 2 GiB, env EMBER_CPU_CACHE_MB).
void set_cache_limit(std::size_t bytes);

}  // namespace ember::cpu
