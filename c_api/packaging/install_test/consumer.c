/* The smallest program outside the tree that uses the installed C ABI: it checks the library's ABI version against
 * the header's and computes 1 + 2, so a wrong header, library or link line fails it.
 *   consumer [cpu|vulkan|cuda]   the backend to compute on (default cpu; a GPU backend's plugin is loaded) */
#include <ember.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  const char* backend_name = argc > 1 ? argv[1] : "cpu";
  const int32_t backend = !strcmp(backend_name, "vulkan") ? EMBER_BACKEND_VULKAN
                          : !strcmp(backend_name, "cuda") ? EMBER_BACKEND_CUDA
                                                          : EMBER_BACKEND_CPU;
  const int64_t shape[1] = {1};
  ember_device* device = NULL;
  ember_tensor *a = NULL, *b = NULL, *sum = NULL;
  double value = 0.0;
  if (ember_abi_version() != EMBER_ABI_VERSION) {
    fprintf(stderr, "libember ABI %d, ember.h ABI %d\n", (int)ember_abi_version(), EMBER_ABI_VERSION);
    return 1;
  }
  if (ember_device_create(backend, 0, &device)) {
    printf("no %s device: %s\n", backend_name, ember_last_error());
    return 2;
  }
  if (ember_tensor_full(device, EMBER_DTYPE_F32, shape, 1, 1.0, &a) ||
      ember_tensor_full(device, EMBER_DTYPE_F32, shape, 1, 2.0, &b) || ember_tensor_add(a, b, &sum) ||
      ember_tensor_item(sum, &value)) {
    fprintf(stderr, "ember: %s\n", ember_last_error());
    return 1;
  }
  ember_tensor_free(sum);
  ember_tensor_free(b);
  ember_tensor_free(a);
  ember_device_free(device);
  printf("ember %s: 1 + 2 = %g on %s\n", ember_version(), value, backend_name);
  return value == 3.0 ? 0 : 1;
}
