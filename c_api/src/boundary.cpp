// Error mapping, the per-thread error message, and the messages for bad handles.
#include "c_api/src/boundary.hpp"

#include <cstdio>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

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

void bad_handle(const void* p, HandleKind k, const char* arg) {
  const char* want = handle_type_name(k);
  if (!p) throw StatusError(EMBER_ERR_NULL_HANDLE, fmt::format("{} is NULL (expected an {})", arg, want));
  const HandleSlots::Verdict v = HandleSlots::instance().explain(p);
  if (v == HandleSlots::Verdict::NotAHandle)
    throw StatusError(EMBER_ERR_INVALID_HANDLE, fmt::format("{} is not an {} (not a value Ember issued)", arg, want));
  const auto actual = static_cast<HandleKind>(HandleValue::kind(HandleValue::bits(p)));
  if (actual != k)
    throw StatusError(EMBER_ERR_INVALID_HANDLE, fmt::format("{} is an {}{}, expected an {}", arg,
                                                            handle_type_name(actual),
                                                            v == HandleSlots::Verdict::Freed ? " (already freed)" : "",
                                                            want));
  if (v == HandleSlots::Verdict::Freed)
    throw StatusError(EMBER_ERR_INVALID_HANDLE,
                      fmt::format("{} is an {} that was already freed (a stale handle; whatever handle now uses its slot "
                                  "is not touched)",
                                  arg, want));
  // Live and of the right kind when looked at again: it was freed or issued by another thread meanwhile.
  throw StatusError(EMBER_ERR_INVALID_HANDLE, fmt::format("{} changed while it was used (freed by another thread?)", arg));
}

std::size_t first_nonzero_byte(const void* p, std::size_t from, std::size_t to) noexcept {
  const auto* bytes = static_cast<const unsigned char*>(p);
  while (from < to && bytes[from] == 0) ++from;
  return from;
}

void write_text(const std::string& text, char* buf, std::size_t capacity, std::size_t* length) {
  if (!length) throw ArgumentError("length is NULL");
  if (!buf && capacity > 0) throw ArgumentError(fmt::format("buf is NULL with capacity {}", capacity));
  *length = text.size();
  if (capacity == 0) return;  // a length query: EMBER_OK, and the last error (maybe what is being measured) stays
  const std::size_t n = std::min(text.size(), capacity - 1);
  std::memcpy(buf, text.data(), n);
  buf[n] = '\0';
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
