/* Trains a small residual CNN on the digits through ember.h alone, the way a PyTorch user writes an nn.Module:
 * a module tree built by the caller (conv layers and a linear head as per-layer modules, plus one parameter the
 * caller makes itself, a learnable residual scale) and a forward the caller writes with tensor ops:
 *
 *   h = relu(conv1(x));  h = relu(h + scale * conv2(h));  logits = fc(flatten(max_pool(h)))
 *
 * trained with Adam over the tree's params (ember_optimizer_create_params) and a StepLR schedule.
 *
 *   train_residual_cnn_c [digits.csv.gz] [epochs] [min accuracy]
 *
 * Prints the loss and test accuracy per epoch; exits with status 1 if the final test accuracy is below the
 * minimum (default 0.9: the meson test relies on it). */
#include <ember.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "digits_data.h"

#define BATCH 32
#define CHANNELS 8

#define CHECK(call)                                                                                     \
  do {                                                                                                  \
    ember_status s_ = (call);                                                                           \
    if (s_ != EMBER_OK) {                                                                               \
      fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call, ember_status_name(s_), \
              ember_last_error());                                                                      \
      exit(2);                                                                                          \
    }                                                                                                   \
  } while (0)

/* The tree and the handles the forward uses. The children and the scale are owned by the tree (`root`); these are
 * the caller's own references. */
typedef struct {
  ember_module *root, *conv1, *conv2, *fc;
  ember_tensor* scale; /* the live param handle: optimizer steps update it in place */
} net;

static ember_module* conv_layer(int64_t in, int64_t out) {
  ember_layer_desc d;
  ember_module* m;
  CHECK(ember_layer_init(&d, EMBER_LAYER_CONV2D));
  d.in_features = in;
  d.out_features = out;
  d.kernel_size[0] = d.kernel_size[1] = 3;
  d.padding[0] = d.padding[1] = 1;
  CHECK(ember_module_layer(NULL, &d, &m));
  return m;
}

static net build_net(void) {
  net n;
  ember_layer_desc fc;
  const float init_scale = 0.5f;
  const int64_t one = 1;
  CHECK(ember_module_create(NULL, &n.root));
  n.conv1 = conv_layer(1, CHANNELS);
  n.conv2 = conv_layer(CHANNELS, CHANNELS);
  CHECK(ember_layer_init(&fc, EMBER_LAYER_LINEAR));
  fc.in_features = CHANNELS * 4 * 4;
  fc.out_features = CLASSES;
  CHECK(ember_module_layer(NULL, &fc, &n.fc));
  CHECK(ember_module_add_child(n.root, "conv1", n.conv1));
  CHECK(ember_module_add_child(n.root, "conv2", n.conv2));
  CHECK(ember_module_add_child(n.root, "fc", n.fc));
  /* nn.Parameter(torch.tensor([0.5])): the caller's tensor becomes the param itself. */
  CHECK(ember_tensor_from_data(NULL, EMBER_DTYPE_F32, &init_scale, sizeof init_scale, &one, 1, &n.scale));
  CHECK(ember_tensor_set_requires_grad(n.scale, 1));
  CHECK(ember_module_add_param(n.root, "res_scale", n.scale, EMBER_PARAM_TRAINABLE));
  return n;
}

static void free_net(net* n) {
  ember_tensor_free(n->scale);
  ember_module_free(n->conv1);
  ember_module_free(n->conv2);
  ember_module_free(n->fc);
  ember_module_free(n->root);
}

/* The caller's forward: x [N, 1, 8, 8] -> logits [N, 10]. Intermediate tensors are freed as soon as the next one
 * exists (the graph keeps what backward needs). */
static ember_tensor* forward(const net* n, const ember_tensor* x) {
  int32_t training;
  int32_t mode;
  ember_tensor *c1, *h1, *c2, *scaled, *sum, *h2, *pooled, *flat, *logits;
  int64_t dims[4];
  size_t rank;
  CHECK(ember_module_is_training(n->root, &training));
  mode = training ? EMBER_MODE_TRAIN : EMBER_MODE_EVAL;
  CHECK(ember_module_forward(n->conv1, x, mode, &c1));
  CHECK(ember_tensor_unary(c1, EMBER_UNARY_RELU, &h1));
  ember_tensor_free(c1);
  CHECK(ember_module_forward(n->conv2, h1, mode, &c2));
  CHECK(ember_tensor_mul(c2, n->scale, &scaled)); /* [N, C, 8, 8] * [1]: broadcast */
  ember_tensor_free(c2);
  CHECK(ember_tensor_add(h1, scaled, &sum)); /* the skip connection */
  ember_tensor_free(h1);
  ember_tensor_free(scaled);
  CHECK(ember_tensor_unary(sum, EMBER_UNARY_RELU, &h2));
  ember_tensor_free(sum);
  CHECK(ember_tensor_max_pool2d(h2, NULL, &pooled)); /* 2x2: [N, C, 4, 4] */
  ember_tensor_free(h2);
  CHECK(ember_tensor_shape(pooled, dims, 4, &rank));
  dims[1] = dims[1] * dims[2] * dims[3];
  CHECK(ember_tensor_reshape(pooled, dims, 2, &flat));
  ember_tensor_free(pooled);
  CHECK(ember_module_forward(n->fc, flat, mode, &logits));
  ember_tensor_free(flat);
  return logits;
}

/* Rows idx[0..n) as x [n, 1, 8, 8] and y [n]. */
static void make_batch(const dataset* d, const size_t* idx, size_t n, ember_tensor** x, ember_tensor** y) {
  float* xb = malloc(n * PIXELS * sizeof(float));
  int64_t* yb = malloc(n * sizeof(int64_t));
  int64_t xs[4] = {(int64_t)n, 1, 8, 8}, ys[1] = {(int64_t)n};
  for (size_t i = 0; i < n; ++i) {
    memcpy(xb + i * PIXELS, d->x + idx[i] * PIXELS, PIXELS * sizeof(float));
    yb[i] = d->y[idx[i]];
  }
  CHECK(ember_tensor_from_data(NULL, EMBER_DTYPE_F32, xb, n * PIXELS * sizeof(float), xs, 4, x));
  CHECK(ember_tensor_from_data(NULL, EMBER_DTYPE_I64, yb, n * sizeof(int64_t), ys, 1, y));
  free(xb);
  free(yb);
}

static double accuracy(const net* m, const dataset* d, const size_t* idx, size_t n) {
  ember_tensor *x, *y, *logits, *pred;
  int64_t* labels = malloc(n * sizeof(int64_t));
  size_t correct = 0;
  make_batch(d, idx, n, &x, &y);
  CHECK(ember_module_set_training(m->root, 0)); /* model.eval() */
  CHECK(ember_no_grad_enter());
  logits = forward(m, x);
  CHECK(ember_no_grad_exit());
  CHECK(ember_module_set_training(m->root, 1));
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
  const int epochs = argc > 2 ? atoi(argv[2]) : 3;
  const double min_accuracy = argc > 3 ? atof(argv[3]) : 0.9;
  dataset data;
  net model;
  ember_tensor** params;
  ember_optimizer* optim;
  ember_optimizer_options opts;
  ember_scheduler_options sched_opts;
  ember_scheduler* sched;
  size_t *order, n_train, n_test, n_params;
  double acc = 0.0, lr, scale;

  if (!load_digits(path, &data)) {
    fprintf(stderr, "cannot read %s\n", path);
    return 2;
  }
  order = malloc(data.n * sizeof(size_t));
  for (size_t i = 0; i < data.n; ++i) order[i] = i;
  shuffle(order, data.n);
  n_train = data.n * 4 / 5;
  n_test = data.n - n_train;

  CHECK(ember_seed(7));
  model = build_net();
  /* model.parameters(): the tree's live handles, in path order. */
  CHECK(ember_module_param_count(model.root, &n_params));
  params = malloc(n_params * sizeof *params);
  for (size_t i = 0; i < n_params; ++i) {
    char name[64];
    size_t len;
    CHECK(ember_module_param(model.root, i, &params[i]));
    CHECK(ember_module_param_name(model.root, i, name, sizeof name, &len));
    printf("param %zu: %s\n", i, name);
  }
  CHECK(ember_optimizer_options_init(&opts, EMBER_OPTIM_ADAM));
  opts.lr = 1e-2;
  CHECK(ember_optimizer_create_params(params, n_params, &opts, &optim));
  CHECK(ember_scheduler_options_init(&sched_opts, EMBER_SCHED_STEP));
  sched_opts.step_size = 2;
  sched_opts.gamma = 0.5;
  CHECK(ember_scheduler_create(optim, &sched_opts, &sched));

  for (int epoch = 1; epoch <= epochs; ++epoch) {
    double loss_sum = 0.0;
    shuffle(order, n_train);
    for (size_t start = 0; start < n_train; start += BATCH) {
      size_t n = n_train - start < BATCH ? n_train - start : BATCH;
      ember_tensor *x, *y, *logits, *loss;
      ember_grads* grads;
      double l;
      make_batch(&data, order + start, n, &x, &y);
      logits = forward(&model, x);
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
    CHECK(ember_scheduler_get_lr(sched, 0, &lr));
    CHECK(ember_scheduler_step(sched));
    CHECK(ember_tensor_item(model.scale, &scale));
    acc = accuracy(&model, &data, order + n_train, n_test);
    printf("epoch %d/%d  lr %.4g  loss %.4f  residual scale %.4f  test accuracy %.1f%%\n", epoch, epochs, lr,
           loss_sum / (double)n_train, scale, 100.0 * acc);
  }

  ember_scheduler_free(sched);
  ember_optimizer_free(optim);
  for (size_t i = 0; i < n_params; ++i) ember_tensor_free(params[i]);
  free(params);
  free_net(&model);
  free(order);
  free(data.x);
  free(data.y);
  if (acc < min_accuracy) {
    fprintf(stderr, "test accuracy %.1f%% is below %.1f%%\n", 100.0 * acc, 100.0 * min_accuracy);
    return 1;
  }
  return 0;
}
