#include "backends/cpu/allocator.hpp"

#include <array>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#if __has_include(<sys/mman.h>)
#include <sys/mman.h>
#endif

namespace ember::cpu {
namespace {

// Size classes: exact multiples of 64 bytes below 4 KiB, then powers of two split in four steps (at most 25 %
// waste), so a training loop that allocates the same shapes each step always hits the cache.
std::size_t size_class(std::size_t bytes) {
  if (bytes <= 4096) return (bytes + 63) & ~std::size_t(63);
  std::size_t p = 4096;
  while (p < bytes) p <<= 1;
  const std::size_t step = p / 8;  // classes p/2 + k*p/8, k = 1..4
  const std::size_t lo = p / 2;
  return lo + ((bytes - lo + step - 1) / step) * step;
}

struct Cache {
  std::mutex mu;
  // The classes up to 4 KiB (multiples of 64 bytes) by index, the larger ones by size: small tensors, whose ops are
  // dominated by fixed costs, skip the hashing on both the allocation and the release.
  std::array<std::vector<void*>, 4096 / 64 + 1> small_lists;
  std::unordered_map<std::size_t, std::vector<void*>> free_lists;
  std::vector<void*>& list(std::size_t cls) { return cls <= 4096 ? small_lists[cls / 64] : free_lists[cls]; }
  std::size_t cached = 0;
  std::size_t live = 0;
  std::size_t peak = 0;  // high-water mark of live
  void add_live(std::size_t n) {
    live += n;
    if (live > peak) peak = live;
  }
  std::size_t limit = 0;
  std::size_t os_allocations = 0;
  std::size_t reuses = 0;
  Cache() {
    const char* env = std::getenv("EMBER_CPU_CACHE_MB");
    limit = (env ? std::strtoull(env, nullptr, 10) : 2048ull) << 20;
  }
  ~Cache() { trim(); }
  void trim() {
    std::lock_guard lock(mu);
    for (auto& [sz, list] : free_lists)
      for (void* p : list) std::free(p);
    free_lists.clear();
    for (auto& list : small_lists) {
      for (void* p : list) std::free(p);
      list.clear();
    }
    cached = 0;
  }
};

// Blocks of at least kHugePage bytes start on a 2 MiB boundary and are marked MADV_HUGEPAGE, so the kernel backs
// them with transparent huge pages where it allows (Debian's default THP mode is "madvise": nothing without the
// mark). A stream over a 64 MiB tensor then crosses 32 pages instead of 16384, and neither its TLB misses nor the
// hardware prefetcher's stop at every 4 KiB boundary slow it: a 16M-float sum ran in 1.85 ms instead of 2.3
// (2026-11-25, this VM). The tail short of a whole huge page stays on 4 KiB pages, so nothing is allocated beyond
// the block. EMBER_CPU_HUGEPAGES=0 turns the mark off.
constexpr std::size_t kHugePage = std::size_t(2) << 20;

bool huge_pages_wanted() {
  const char* env = std::getenv("EMBER_CPU_HUGEPAGES");
  return !(env && std::strcmp(env, "0") == 0);
}

void* os_allocate(std::size_t bytes) {
  static const bool huge = huge_pages_wanted();
  if (!huge || bytes < kHugePage) return std::aligned_alloc(64, bytes);  // size classes are multiples of 64
  // posix_memalign, not aligned_alloc: C requires aligned_alloc's size to be a multiple of its alignment, and the
  // size classes above 2 MiB step by 512 KiB and up (ASan reports the call; glibc happened to accept it).
  void* p = nullptr;
  if (posix_memalign(&p, kHugePage, bytes) != 0) return nullptr;
#if defined(MADV_HUGEPAGE)
  if (p) madvise(p, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);  // advice only: a refusal changes nothing
#endif
  return p;
}

Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: buffers may be released during static destruction
  return *c;
}

}  // namespace

Buffer::~Buffer() {
  if (!ptr || owner) return;  // a borrowed range: the owner's block goes back when the owner goes
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  c.live -= capacity;
  if (c.cached + capacity <= c.limit) {
    c.list(capacity).push_back(ptr);
    c.cached += capacity;
  } else {
    std::free(ptr);
  }
}

std::shared_ptr<Buffer> allocate(std::size_t bytes) {
  if (bytes > (std::size_t(1) << 62)) throw std::bad_alloc();  // size_class would overflow; nothing is that big
  auto buf = std::make_shared<Buffer>();
  buf->bytes = bytes;
  if (bytes == 0) return buf;
  const std::size_t cls = size_class(bytes);
  Cache& c = cache();
  {
    std::lock_guard lock(c.mu);
    std::vector<void*>& list = c.list(cls);
    if (!list.empty()) {
      buf->ptr = list.back();
      list.pop_back();
      c.cached -= cls;
      c.add_live(cls);
      ++c.reuses;
      buf->capacity = cls;
      return buf;
    }
    ++c.os_allocations;
    c.add_live(cls);
  }
  buf->ptr = os_allocate(cls);
  if (!buf->ptr) {
    std::lock_guard lock(c.mu);
    c.live -= cls;
    throw std::bad_alloc();
  }
  buf->capacity = cls;
  return buf;
}

std::shared_ptr<Buffer> borrow(const std::shared_ptr<Buffer>& from, std::size_t byte_offset, std::size_t bytes) {
  auto buf = std::make_shared<Buffer>();
  buf->bytes = bytes;
  if (bytes == 0) return buf;  // no memory to share (a null ptr, as allocate(0) gives)
  buf->ptr = static_cast<char*>(from->ptr) + byte_offset;
  buf->owner = from->owner ? from->owner : from;  // one level: a range of a range holds the block itself
  return buf;
}

AllocatorStats allocator_stats() {
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  return {c.cached, c.live, c.os_allocations, c.reuses, c.peak};
}

void allocator_reset_peak() {
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  c.peak = c.live;
}

void allocator_trim() { cache().trim(); }

void set_cache_limit(std::size_t bytes) {
  Cache& c = cache();
  std::lock_guard lock(c.mu);
  c.limit = bytes;
}

}  // namespace ember::cpu
