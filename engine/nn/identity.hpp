#pragma once
// Identity: returns its input (any type). A placeholder layer, e.g. to switch a block off in a Sequential.
namespace ember::nn {

struct Identity {
  template <class X>
  X forward(const X& x) const {
    return x;
  }
};

}  // namespace ember::nn
