#pragma once
// The output length of a window of k taps, d apart, slid with stride s over an input of length `in` padded by p on
// both sides (PyTorch's floor rule, no ceil_mode): the one formula behind conv2d and every pooling op.
#include <cstdint>

#include "engine/backend/host_device.hpp"

namespace ember {

// Callers make sure the padded input holds one window (in + 2p >= d(k-1) + 1) and s >= 1; checks.hpp does that
// for the tensor layer.
EMBER_HOST_DEVICE constexpr int64_t window_out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  return (in + 2 * p - d * (k - 1) - 1) / s + 1;
}

}  // namespace ember
