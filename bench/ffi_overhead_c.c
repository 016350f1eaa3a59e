/* The C baseline of bench/ffi_overhead.py: ember_tensor_add of two 1-element tensors and ember_tensor_free of the
 * result, N times after N/10 warm-up calls, the same loop each language binding's overhead program runs. Prints one
 * line, `c ns_per_call=<float>`.
 *   ffi_overhead_c [N]   (default 200000) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ember.h"

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* One call as the bindings make it: the op, a status check, the free. Returns 0 or the failing status. */
static ember_status add_and_free(const ember_tensor* a, const ember_tensor* b) {
  ember_tensor* sum = NULL;
  ember_status status = ember_tensor_add(a, b, &sum);
  if (status != EMBER_OK) return status;
  return ember_tensor_free(sum);
}

int main(int argc, char** argv) {
  const long n = argc > 1 ? atol(argv[1]) : 200000;
  const int64_t shape[1] = {1};
  ember_tensor *a = NULL, *b = NULL;
  if (n <= 0 || ember_tensor_full(NULL, EMBER_DTYPE_F32, shape, 1, 1.0, &a) ||
      ember_tensor_full(NULL, EMBER_DTYPE_F32, shape, 1, 2.0, &b)) {
    fprintf(stderr, "ffi_overhead_c: %s\n", n <= 0 ? "N must be positive" : ember_last_error());
    return 1;
  }
  for (long i = 0; i < n / 10; ++i)
    if (add_and_free(a, b)) break;
  const double start = now_ns();
  for (long i = 0; i < n; ++i) {
    if (add_and_free(a, b)) {
      fprintf(stderr, "ffi_overhead_c: %s\n", ember_last_error());
      return 1;
    }
  }
  const double elapsed = now_ns() - start;
  printf("c ns_per_call=%.1f\n", elapsed / (double)n);
  ember_tensor_free(b);
  ember_tensor_free(a);
  return 0;
}
