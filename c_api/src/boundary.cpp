// Error mapping, the per-thread error message, and the registry of live handles.
#include "c_api/src/boundary.hpp"

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "c_api/src/handle_table.hpp"
#include "records/recorder.hpp"

namespace ember::capi {
namespace {

// A fixed buffer, not a std::string: a thread_local with a destructor in a shared library complicates unloading,
// and writing the message must not allocate (it also reports std::bad_alloc).
constexpr std::size_t kMessageSize = 4096;
thread_local char t_message[kMessageSize];

ember_status set_message(ember_status s, const char* fn, const char* what) noexcept {
  // format_to_n writes into the fixed buffer without allocating; the result is cut to fit with room for the NUL.
  const auto r = fmt::format_to_n(t_message, kMessageSize - 1, "{}: {}", fn, what);
  *r.out = '\0';
  return s;
}

// The lock of one registry shard: a test-and-test-and-set spin lock, not a std::mutex. Its sections are a few
// probes long and every ember_* call takes one per handle it touches (three for a small op and the free of its
// result), so the one atomic exchange of an uncontended acquire (a mutex pays a second one to release) and no
// call into libpthread are a measurable part of a small op. A waiter yields its time slice after a few spins, so
// a holder that was preempted (more threads than cores) gets to run.
class SpinLock {
 public:
  void lock() noexcept {
    int spins = 0;
    while (held_.exchange(true, std::memory_order_acquire)) {
      while (held_.load(std::memory_order_relaxed))
        if (++spins > 64) std::this_thread::yield();
    }
  }
  void unlock() noexcept { held_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> held_{false};
};

// Sharded so that threads working on different handles rarely contend. Leaked on purpose: handles freed during
// static destruction (a host's global objects) must still find a live registry.
struct Shard {
  SpinLock mu;
  HandleTable<HandleKind> live;
};
constexpr std::size_t kShards = 16;
Shard* shards() {
  static Shard* s = new Shard[kShards];
  return s;
}
Shard& shard_of(const void* p) {
  auto h = reinterpret_cast<std::uintptr_t>(p) >> 4;  // allocations are 16-byte aligned
  h ^= h >> 7;
  return shards()[h % kShards];
}

const char* handle_type_name(HandleKind k) {
  switch (k) {
    case HandleKind::Device: return "ember_device";
    case HandleKind::Tensor: return "ember_tensor";
    case HandleKind::Grads: return "ember_grads";
    case HandleKind::Module: return "ember_module";
    case HandleKind::Optimizer: return "ember_optimizer";
    case HandleKind::Record: return "ember_record";
    case HandleKind::LoadReport: return "ember_load_report";
    case HandleKind::Scheduler: return "ember_scheduler";
    case HandleKind::VulkanReadback: return "ember_vulkan_readback";
    case HandleKind::VulkanPlan: return "ember_vulkan_plan";
  }
  return "handle";
}

}  // namespace

ember_status fail(const char* fn) noexcept {
  try {
    throw;
  } catch (const StatusError& e) {
    return set_message(e.status, fn, e.what());
  } catch (const UnsupportedError& e) {
    return set_message(EMBER_ERR_UNSUPPORTED, fn, e.what());
  } catch (const DeviceLostError& e) {
    // Before DeviceError: a lost device is not "unsupported" (no fallback helps; the host recreates the device).
    return set_message(EMBER_ERR_DEVICE_LOST, fn, e.what());
  } catch (const OutOfMemoryError& e) {
    return set_message(EMBER_ERR_OUT_OF_MEMORY, fn, e.what());
  } catch (const DeviceError& e) {
    // The device cannot do it (a missing feature, an op the backend does not have yet): the host
    // can fall back to another backend, which is what UNSUPPORTED tells it. Backends (plugins included) raise the
    // engine's error types only (engine/tensor/error.hpp), so no backend header is needed here.
    return set_message(EMBER_ERR_UNSUPPORTED, fn, e.what());
  } catch (const LoadError& e) {
    return set_message(EMBER_ERR_RECORD, fn, e.what());
  } catch (const RecordIoError& e) {
    return set_message(EMBER_ERR_IO, fn, e.what());
  } catch (const RecordError& e) {
    return set_message(EMBER_ERR_RECORD, fn, e.what());
  } catch (const ShapeError& e) {
    return set_message(EMBER_ERR_SHAPE, fn, e.what());
  } catch (const IndexError& e) {
    return set_message(EMBER_ERR_INDEX, fn, e.what());
  } catch (const KindError& e) {
    return set_message(EMBER_ERR_DTYPE, fn, e.what());
  } catch (const ArgumentError& e) {
    return set_message(EMBER_ERR_INVALID_ARGUMENT, fn, e.what());
  } catch (const Error& e) {
    return set_message(EMBER_ERR_INVALID_ARGUMENT, fn, e.what());
  } catch (const std::bad_alloc&) {
    return set_message(EMBER_ERR_OUT_OF_MEMORY, fn, "out of memory");
  } catch (const std::length_error& e) {
    return set_message(EMBER_ERR_OUT_OF_MEMORY, fn, e.what());
  } catch (const std::filesystem::filesystem_error& e) {
    return set_message(EMBER_ERR_IO, fn, e.what());
  } catch (const std::invalid_argument& e) {
    return set_message(EMBER_ERR_INVALID_ARGUMENT, fn, e.what());
  } catch (const std::out_of_range& e) {
    return set_message(EMBER_ERR_INDEX, fn, e.what());
  } catch (const std::exception& e) {
    return set_message(EMBER_ERR_INTERNAL, fn, e.what());
  } catch (...) {
    return set_message(EMBER_ERR_INTERNAL, fn, "unknown exception");
  }
}

void register_handle(const void* p, HandleKind k) {
  Shard& s = shard_of(p);
  std::lock_guard lock(s.mu);
  s.live.insert_or_assign(p, k);
}

void check_handle(const void* p, HandleKind k, const char* arg) {
  if (!p) throw StatusError(EMBER_ERR_NULL_HANDLE, fmt::format("{} is NULL (expected an {})", arg, handle_type_name(k)));
  Shard& s = shard_of(p);
  HandleKind found;
  {
    std::lock_guard lock(s.mu);
    const HandleKind* it = s.live.find(p);
    if (it && *it == k) return;
    if (!it)
      throw StatusError(EMBER_ERR_INVALID_HANDLE,
                        fmt::format("{} is not a live {} (already freed, or not a handle)", arg, handle_type_name(k)));
    found = *it;
  }
  throw StatusError(EMBER_ERR_INVALID_HANDLE,
                    fmt::format("{} is an {}, expected an {}", arg, handle_type_name(found), handle_type_name(k)));
}

bool unregister_handle(const void* p, HandleKind k) {
  Shard& s = shard_of(p);
  std::lock_guard lock(s.mu);
  const HandleKind* it = s.live.find(p);
  if (!it || *it != k) return false;
  return s.live.erase(p);
}

void write_text(const std::string& text, char* buf, std::size_t capacity, std::size_t* length) {
  if (!length) throw ArgumentError("length is NULL");
  if (!buf && capacity > 0) throw ArgumentError(fmt::format("buf is NULL with capacity {}", capacity));
  *length = text.size();
  if (capacity > 0) {
    const std::size_t n = std::min(text.size(), capacity - 1);
    std::memcpy(buf, text.data(), n);
    buf[n] = '\0';
  }
  if (capacity < text.size() + 1)
    throw StatusError(EMBER_ERR_BUFFER_TOO_SMALL,
                      fmt::format("buffer of {} bytes for {} (text and NUL)", capacity, text.size() + 1));
}

DType to_dtype(int32_t v, const char* what) {
  if (v < 0 || v > static_cast<int32_t>(DType::I16))
    throw ArgumentError(fmt::format("unknown {} {}", what, v));
  return static_cast<DType>(v);
}

const DynDevice& device_or_default(const ember_device* d) {
  if (!d) return cpu_device();
  return use(d, "device");
}

Shape to_shape(const int64_t* dims, std::size_t rank, const char* what) {
  if (rank > kMaxRank) throw ShapeError(fmt::format("{}: rank {} is outside 0..{}", what, rank, kMaxRank));
  if (rank == 0) return Shape{};  // a scalar: dims may be NULL
  if (!dims) throw ArgumentError(fmt::format("{} is NULL", what));
  return Shape(std::vector<int64_t>(dims, dims + rank));
}

}  // namespace ember::capi

extern "C" {

const char* ember_last_error(void) { return ember::capi::t_message; }
void ember_clear_error(void) { ember::capi::t_message[0] = '\0'; }

}  // extern "C"
