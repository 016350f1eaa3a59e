// Per-thread no-grad scopes of the C ABI (ember_no_grad_enter / _exit). They set the engine flag of libember;
// plugins get it copied in before each call (dispatch.cpp).
#include "c_api/src/runtime/tensor_ops.hpp"

namespace ember::capi {
namespace {

// This thread's open ember_no_grad_enter scopes: the flag each one found, restored by its exit. A plain array
// (not a vector) so the thread-local needs no destructor; scopes deeper than this are refused.
constexpr int kMaxNoGradDepth = 64;
thread_local bool t_saved[kMaxNoGradDepth];
thread_local int t_depth = 0;

}  // namespace

void no_grad_enter() {
  if (t_depth >= kMaxNoGradDepth)
    throw ArgumentError("no_grad_enter: more than " + std::to_string(kMaxNoGradDepth) + " nested scopes");
  t_saved[t_depth++] = autodiff::no_grad_flag();
  autodiff::no_grad_flag() = true;
}

void no_grad_exit() {
  if (t_depth == 0) throw ArgumentError("no_grad_exit: no open no-grad scope on this thread");
  autodiff::no_grad_flag() = t_saved[--t_depth];
}

bool grad_enabled() { return !autodiff::no_grad_flag(); }

}  // namespace ember::capi
