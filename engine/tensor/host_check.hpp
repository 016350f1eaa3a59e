#pragma once
// host_check(check): a host read made only to validate inputs (cross_entropy's target range), not to choose what to
// compute. Eagerly it just runs `check`. While a graph capture records a step (engine/compile), the capture runs it
// too and then keeps it, re-running it on each replay over that replay's values, instead of refusing the step as
// data-dependent: the replayed ops do not depend on what the check read.
#include <functional>

namespace ember {

class HostCheckSink {
 public:
  virtual ~HostCheckSink() = default;
  // Runs `check` now (its reads allowed) and keeps it for the replays.
  virtual void host_check(const std::function<void()>& check) = 0;
};

inline HostCheckSink*& host_check_sink() {
  static thread_local HostCheckSink* sink = nullptr;
  return sink;
}

inline void host_check(const std::function<void()>& check) {
  if (HostCheckSink* s = host_check_sink())
    s->host_check(check);
  else
    check();
}

}  // namespace ember
