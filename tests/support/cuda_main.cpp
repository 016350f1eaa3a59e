// main() of the CUDA test binaries: without a usable CUDA device (no GPU, no driver) the whole binary is skipped
// with exit code 77, which meson reports as SKIP, instead of failing every case.
#include <gtest/gtest.h>

#include <cstdio>

#include "backends/cuda/cuda_api.hpp"

#ifndef EMBER_CUDA_SUITE
#define EMBER_CUDA_SUITE "the CUDA op suite"
#endif

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (ember::cuda::device_count() == 0) {
    std::printf("no CUDA device: skipping %s (%s)\n", EMBER_CUDA_SUITE, ember::cuda::unavailable_reason().c_str());
    return 77;
  }
  return RUN_ALL_TESTS();
}
