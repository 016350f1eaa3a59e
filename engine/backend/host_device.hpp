#pragma once
// EMBER_HOST_DEVICE marks the small geometry helpers (engine/backend/*_geometry.hpp) that CUDA kernels call on the
// device as well as on the host; for every other compiler it expands to nothing.
#ifdef __CUDACC__
#define EMBER_HOST_DEVICE __host__ __device__
#else
#define EMBER_HOST_DEVICE
#endif
