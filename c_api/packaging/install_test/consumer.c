/* The smallest program outside the tree that uses the installed C ABI: it reports the library's ABI version
 * against the header's and computes 1 + 2 on the CPU, so a wrong header, library or link line fails it. */
#include <ember.h>
#include <stdio.h>

int main(void) {
  const int64_t shape[1] = {1};
  ember_tensor *a = NULL, *b = NULL, *sum = NULL;
  double value = 0.0;
  if (ember_abi_version() != EMBER_ABI_VERSION) {
    fprintf(stderr, "libember ABI %d, ember.h ABI %d\n", (int)ember_abi_version(), EMBER_ABI_VERSION);
    return 1;
  }
  if (ember_tensor_full(NULL, EMBER_DTYPE_F32, shape, 1, 1.0, &a) ||
      ember_tensor_full(NULL, EMBER_DTYPE_F32, shape, 1, 2.0, &b) || ember_tensor_add(a, b, &sum) ||
      ember_tensor_item(sum, &value)) {
    fprintf(stderr, "ember: %s\n", ember_last_error());
    return 1;
  }
  ember_tensor_free(sum);
  ember_tensor_free(b);
  ember_tensor_free(a);
  printf("ember %s: 1 + 2 = %g\n", ember_version(), value);
  return value == 3.0 ? 0 : 1;
}
