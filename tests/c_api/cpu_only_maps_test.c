/* A process that only uses the CPU maps no GPU library: libember links none (GPU backends are plugins loaded on
 * first use of their backend), and enumerating the backends loads no plugin. Does CPU work through the C ABI (a
 * matmul, a reduction, a backward pass), then reads /proc/self/maps. Plain C: it also checks ember.h is C. */
#include <stdio.h>
#include <string.h>

#include "ember.h"

#define CHECK(call)                                                                      \
  do {                                                                                   \
    ember_status s_ = (call);                                                            \
    if (s_ != EMBER_OK) {                                                                \
      fprintf(stderr, "%s failed: %s (%s)\n", #call, ember_status_name(s_), ember_last_error()); \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

int main(void) {
  static const char* const kGpuLibraries[] = {"libvulkan", "libcublas", "libcufft", "libcudart", "libcuda.so",
                                              "libember-vulkan", "libember-cuda"};
  const float a_values[6] = {1, 2, 3, 4, 5, 6};
  const int64_t a_shape[2] = {2, 3}, b_shape[2] = {3, 2};
  ember_tensor *a = NULL, *b = NULL, *c = NULL, *loss = NULL, *grad = NULL;
  ember_grads* grads = NULL;
  int32_t backends[8];
  size_t count = 0, i;
  double value = 0, grad_sum = 0;
  float grad_values[6];
  char line[4096];
  int failures = 0;
  FILE* maps;

  CHECK(ember_tensor_from_data(NULL, EMBER_DTYPE_F32, a_values, sizeof a_values, a_shape, 2, &a));
  CHECK(ember_tensor_set_requires_grad(a, 1));
  CHECK(ember_tensor_ones(NULL, EMBER_DTYPE_F32, b_shape, 2, &b));
  CHECK(ember_tensor_matmul(a, b, &c));
  CHECK(ember_tensor_reduce_all(c, EMBER_REDUCE_SUM, &loss));
  CHECK(ember_tensor_item(loss, &value));
  CHECK(ember_tensor_backward(loss, NULL, &grads));
  CHECK(ember_grads_get(grads, a, &grad));
  CHECK(ember_tensor_copy_to(grad, EMBER_DTYPE_F32, grad_values, sizeof grad_values, NULL));
  for (i = 0; i < 6; ++i) grad_sum += grad_values[i];
  /* sum(a @ ones) = 2 * sum(a) = 42; d/da = 2 everywhere. */
  if (value != 42.0 || grad_sum != 12.0) {
    fprintf(stderr, "CPU results are wrong: sum %g (expected 42), gradient sum %g (expected 12)\n", value, grad_sum);
    return 1;
  }
  CHECK(ember_backend_list(backends, 8, &count));
  if (count < 1 || backends[0] != EMBER_BACKEND_CPU) {
    fprintf(stderr, "ember_backend_list does not start with the CPU\n");
    return 1;
  }

  maps = fopen("/proc/self/maps", "r");
  if (!maps) {
    perror("/proc/self/maps");
    return 77; /* not Linux-like: nothing to check */
  }
  while (fgets(line, sizeof line, maps)) {
    for (i = 0; i < sizeof kGpuLibraries / sizeof kGpuLibraries[0]; ++i) {
      if (strstr(line, kGpuLibraries[i])) {
        fprintf(stderr, "a CPU-only process maps %s: %s", kGpuLibraries[i], line);
        ++failures;
      }
    }
  }
  fclose(maps);

  ember_tensor_free(grad);
  ember_grads_free(grads);
  ember_tensor_free(loss);
  ember_tensor_free(c);
  ember_tensor_free(b);
  ember_tensor_free(a);
  if (failures) return 1;
  printf("CPU work done; no GPU library mapped\n");
  return 0;
}
