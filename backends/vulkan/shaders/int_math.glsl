// int64 helpers with the CPU backend's semantics (backends/cpu/elementwise.cpp): division truncates toward zero
// and x / -1 wraps (INT64_MIN / -1 = INT64_MIN); pow wraps on overflow; negative exponents give 1, +-1 or 0.
// Division by zero never reaches a shader (the host checks divisors first); it returns 0 here if it did.
#ifdef TYPE_I64
int64_t int_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return -a;
  return a / b;
}
// torch.remainder: the sign of the divisor (x % -1 is 0, as INT64_MIN % -1 would overflow).
int64_t int_remainder(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  const int64_t r = a - (a / b) * b;  // truncated remainder; GLSL leaves % of negative operands undefined
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
int64_t int_pow(int64_t base, int64_t e) {
  if (e < 0) return base == 1 ? 1 : (base == -1 ? ((e & 1) != 0 ? -1 : 1) : 0);
  uint64_t r = 1, b = uint64_t(base);
  while (e != 0) {
    if ((e & 1) != 0) r *= b;
    b *= b;
    e >>= 1;
  }
  return int64_t(r);
}
#endif
