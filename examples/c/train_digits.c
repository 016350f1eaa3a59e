/* Trains the digits MLP (64-256-256-10, ReLU, Adam) through ember.h alone: plain C11 plus zlib for the data.
 *
 *   train_digits_c [digits.csv.gz] [epochs] [record.emr]
 *
 * The data set is data/digits.csv.gz (UCI handwritten digits, 8x8 pixels 0..16 and a label per line). Prints the
 * mean training loss and the test accuracy per epoch, and exits with status 1 if the final test accuracy is below
 * 90% (the meson test relies on it). With a third argument the trained model is saved there as a binary record:
 * the tests of the language bindings (bindings/) train the same model the same way and compare their record with it byte for
 * byte. */
#include <ember.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "digits_data.h"

#define BATCH 64

/* Every ember call returns a status; on failure ember_last_error() says what went wrong. */
#define CHECK(call)                                                                                     \
  do {                                                                                                  \
    ember_status s_ = (call);                                                                           \
    if (s_ != EMBER_OK) {                                                                               \
      fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call, ember_status_name(s_), \
              ember_last_error());                                                                      \
      exit(2);                                                                                          \
    }                                                                                                   \
  } while (0)

/* Copies rows idx[0..n) of the data set into tensors x [n, 64] and y [n]. */
static void make_batch(const dataset* d, const size_t* idx, size_t n, ember_tensor** x, ember_tensor** y) {
  float* xb = malloc(n * PIXELS * sizeof(float));
  int64_t* yb = malloc(n * sizeof(int64_t));
  int64_t xs[2] = {(int64_t)n, PIXELS}, ys[1] = {(int64_t)n};
  for (size_t i = 0; i < n; ++i) {
    memcpy(xb + i * PIXELS, d->x + idx[i] * PIXELS, PIXELS * sizeof(float));
    yb[i] = d->y[idx[i]];
  }
  CHECK(ember_tensor_from_data(NULL, EMBER_DTYPE_F32, xb, n * PIXELS * sizeof(float), xs, 2, x));
  CHECK(ember_tensor_from_data(NULL, EMBER_DTYPE_I64, yb, n * sizeof(int64_t), ys, 1, y));
  free(xb);
  free(yb);
}

/* Fraction of rows idx[0..n) the model classifies correctly (eval mode, no graph recorded). */
static double accuracy(ember_module* model, const dataset* d, const size_t* idx, size_t n) {
  ember_tensor *x, *y, *logits, *pred;
  int64_t* labels = malloc(n * sizeof(int64_t));
  size_t correct = 0;
  make_batch(d, idx, n, &x, &y);
  CHECK(ember_no_grad_enter());
  CHECK(ember_module_forward(model, x, EMBER_MODE_EVAL, &logits));
  CHECK(ember_no_grad_exit());
  CHECK(ember_tensor_argmax(logits, 1, 0, &pred));
  CHECK(ember_tensor_copy_to(pred, EMBER_DTYPE_I64, labels, n * sizeof(int64_t), NULL));
  for (size_t i = 0; i < n; ++i) correct += labels[i] == d->y[idx[i]];
  ember_tensor_free(x);
  ember_tensor_free(y);
  ember_tensor_free(logits);
  ember_tensor_free(pred);
  free(labels);
  return (double)correct / (double)n;
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "data/digits.csv.gz";
  const int epochs = argc > 2 ? atoi(argv[2]) : 5;
  dataset data;
  ember_layer_desc layers[5];
  ember_module* model;
  ember_optimizer* optim;
  ember_optimizer_options opts;
  size_t *order, n_train, n_test, param_count;
  double acc = 0.0;

  if (!load_digits(path, &data)) {
    fprintf(stderr, "cannot read %s\n", path);
    return 2;
  }
  printf("ember %s (C ABI %d): %zu digits from %s\n", ember_version(), ember_abi_version(), data.n, path);

  /* 80% train, 20% test, after a fixed shuffle. */
  order = malloc(data.n * sizeof(size_t));
  for (size_t i = 0; i < data.n; ++i) order[i] = i;
  shuffle(order, data.n);
  n_train = data.n * 4 / 5;
  n_test = data.n - n_train;

  CHECK(ember_seed(42));
  CHECK(ember_layer_init(&layers[0], EMBER_LAYER_LINEAR));
  layers[0].in_features = PIXELS;
  layers[0].out_features = 256;
  CHECK(ember_layer_init(&layers[1], EMBER_LAYER_RELU));
  CHECK(ember_layer_init(&layers[2], EMBER_LAYER_LINEAR));
  layers[2].in_features = 256;
  layers[2].out_features = 256;
  CHECK(ember_layer_init(&layers[3], EMBER_LAYER_RELU));
  CHECK(ember_layer_init(&layers[4], EMBER_LAYER_LINEAR));
  layers[4].in_features = 256;
  layers[4].out_features = CLASSES;
  CHECK(ember_module_sequential(NULL, layers, 5, &model));
  CHECK(ember_module_param_count(model, &param_count));
  printf("model: %zu parameter tensors\n", param_count);

  CHECK(ember_optimizer_options_init(&opts, EMBER_OPTIM_ADAM));
  opts.lr = 1e-3;
  CHECK(ember_optimizer_create(model, &opts, &optim));

  for (int epoch = 1; epoch <= epochs; ++epoch) {
    double loss_sum = 0.0;
    shuffle(order, n_train);
    for (size_t start = 0; start < n_train; start += BATCH) {
      size_t n = n_train - start < BATCH ? n_train - start : BATCH;
      ember_tensor *x, *y, *logits, *loss;
      ember_grads* grads;
      double l;
      make_batch(&data, order + start, n, &x, &y);
      CHECK(ember_module_forward(model, x, EMBER_MODE_TRAIN, &logits));
      CHECK(ember_loss_cross_entropy(logits, y, EMBER_REDUCTION_MEAN, &loss));
      CHECK(ember_tensor_item(loss, &l));
      loss_sum += l * (double)n;
      CHECK(ember_tensor_backward(loss, NULL, &grads));
      CHECK(ember_optimizer_step(optim, grads));
      ember_grads_free(grads);
      ember_tensor_free(loss);
      ember_tensor_free(logits);
      ember_tensor_free(x);
      ember_tensor_free(y);
    }
    acc = accuracy(model, &data, order + n_train, n_test);
    printf("epoch %d/%d  loss %.4f  test accuracy %.1f%%\n", epoch, epochs, loss_sum / (double)n_train,
           100.0 * acc);
  }

  if (argc > 3) CHECK(ember_module_save(model, argv[3], NULL));
  ember_optimizer_free(optim);
  ember_module_free(model);
  free(order);
  free(data.x);
  free(data.y);
  if (acc < 0.9) {
    fprintf(stderr, "test accuracy %.1f%% is below 90%%\n", 100.0 * acc);
    return 1;
  }
  return 0;
}
