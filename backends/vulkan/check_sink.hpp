#pragma once
// A capture sink that can own deferred checks (issue 17 part 3 inside plans): while a plan captures, an index or
// division check's flag becomes the plan's error word instead of being rejected; the plan resets it on every replay
// and reads it when polled (plan.hpp). Stream::defer_check hands a check to the capture sink when it is one.
#include <string>

#include "backends/vulkan/commands.hpp"

namespace ember::vk {

class CheckSink {
 public:
  virtual ~CheckSink() = default;
  // check.flag is what the captured check commands write.
  virtual void defer_check(DeferredCheck check) = 0;
};

// Whether checks must be deferred: Stream::defers_checks, or while a plan captures (its checks are read by the
// plan's poll, never by a read back that a capture cannot contain).
inline bool checks_deferred(const Stream& s) { return s.defers_checks() || s.capture() != nullptr; }

// Throws the error a completed deferred check's flag reports (IndexError / ArgumentError with the CPU's message;
// `where` says which work it was, e.g. "recorded in frame 7"); nothing when the flag is clear. The flag's writes
// must be visible to the host (the work completed behind a barrier to HOST_READ).
void throw_if_failed(const Context& ctx, const DeferredCheck& check, const std::string& where);

}  // namespace ember::vk
