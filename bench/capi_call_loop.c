// One small op N times through ember.h (the op and the free of its result), for instruction counts per call that
// stay the same under load:
//   for n in 1000 2000; do valgrind --tool=callgrind --callgrind-out-file=/dev/null build/bench/ember_capi_call_loop add $n; done
// and (I(2000) - I(1000)) / 1000 is one call. Ops: add (a + b on [1]), scalar (a + 1.0), row (x[1] as slice +
// reshape), select (x[1] in one call), cols (x[:, 1:3]), add_ (in place), none.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ember.h"
#define CK(x) do { ember_status s_ = (x); if (s_) { fprintf(stderr, "%s: %s\n", #x, ember_last_error()); exit(1);} } while (0)
int main(int argc, char** argv) {
  const char* op = argc > 1 ? argv[1] : "add";
  long n = argc > 2 ? atol(argv[2]) : 1000;
  int64_t s1[1] = {1}, s44[2] = {4, 4};
  ember_tensor *a, *b, *x, *acc;
  CK(ember_tensor_ones(NULL, EMBER_DTYPE_F32, s1, 1, &a));
  CK(ember_tensor_ones(NULL, EMBER_DTYPE_F32, s1, 1, &b));
  CK(ember_tensor_ones(NULL, EMBER_DTYPE_F32, s44, 2, &x));
  CK(ember_tensor_zeros(NULL, EMBER_DTYPE_F32, s1, 1, &acc));
  for (long i = 0; i < n; ++i) {
    ember_tensor *o = NULL, *r = NULL;
    if (!strcmp(op, "add")) { CK(ember_tensor_add(a, b, &o)); }
    else if (!strcmp(op, "scalar")) { CK(ember_tensor_scalar(a, EMBER_SCALAR_ADD, 1.0, &o)); }
    else if (!strcmp(op, "row")) {  // x[1] as slice + reshape
      int64_t st[1] = {1}, en[1] = {2}, rs[1] = {4};
      CK(ember_tensor_slice(x, st, en, 1, &r)); CK(ember_tensor_reshape(r, rs, 1, &o));
    }
    else if (!strcmp(op, "select")) { CK(ember_tensor_select(x, 0, 1, &o)); }
    else if (!strcmp(op, "cols")) { int64_t st[2] = {0, 1}, en[2] = {4, 3}; CK(ember_tensor_slice(x, st, en, 2, &o)); }
    else if (!strcmp(op, "add_")) { CK(ember_tensor_inplace(acc, b, EMBER_INPLACE_ADD)); }
    else if (!strcmp(op, "none")) {}
    else { fprintf(stderr, "unknown op\n"); return 2; }
    ember_tensor_free(r); ember_tensor_free(o);
  }
  ember_tensor_free(a); ember_tensor_free(b); ember_tensor_free(x); ember_tensor_free(acc);
  return 0;
}
