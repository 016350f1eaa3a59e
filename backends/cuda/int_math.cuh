#pragma once
// int64 arithmetic with the CPU backend's (and PyTorch's) semantics, without UB: add/sub/mul/neg wrap in two's
// complement, division truncates toward zero with INT64_MIN / -1 wrapping to INT64_MIN, pow wraps and follows the
// CPU rules for negative exponents. Callers check divisors for zero first (the CPU backend throws).
#include <cstdint>

namespace ember::cuda {

__host__ __device__ __forceinline__ int64_t wrap_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
__host__ __device__ __forceinline__ int64_t wrap_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
__host__ __device__ __forceinline__ int64_t wrap_mul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
__host__ __device__ __forceinline__ int64_t wrap_neg(int64_t a) { return wrap_sub(0, a); }

__host__ __device__ __forceinline__ int64_t int_div(int64_t a, int64_t b) {
  if (b == -1) return wrap_neg(a);
  return b == 0 ? 0 : a / b;  // b == 0 was rejected before the launch; never trap on the device
}

// torch.remainder: the sign of the divisor; x % -1 is 0 (INT64_MIN % -1 would trap).
__host__ __device__ __forceinline__ int64_t int_remainder(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;  // b == 0 was rejected before the launch
  const int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

__host__ __device__ __forceinline__ int64_t int_pow(int64_t base, int64_t exp) {
  if (exp < 0) return base == 1 ? 1 : (base == -1 ? ((exp & 1) ? -1 : 1) : 0);
  uint64_t r = 1, b = static_cast<uint64_t>(base);
  while (exp) {
    if (exp & 1) r *= b;
    b *= b;
    exp >>= 1;
  }
  return static_cast<int64_t>(r);
}

}  // namespace ember::cuda
