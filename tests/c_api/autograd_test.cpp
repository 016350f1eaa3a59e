// The autograd core of ember.h (issue 11): leaves' .grad slots, ember_tensor_backward_ex (accumulate, retain_graph),
// the scalar-only implicit seed, set_requires_grad on a non-leaf, in-place updates with version counters, the
// backward refused after a saved tensor changed, and ember_autograd_grad. Expected values are worked out by hand in
// the comments; the messages are PyTorch's where PyTorch has one.
#include <gtest/gtest.h>

#include <vector>

#include "tests/c_api/capi_support.hpp"

namespace ember::capi_test {
namespace {

Tensor leaf(const std::vector<float>& v, const std::vector<int64_t>& shape) {
  Tensor t = f32(v, shape);
  EXPECT_EQ(ember_tensor_set_requires_grad(t.get(), 1), EMBER_OK) << ember_last_error();
  return t;
}
Tensor mul(const ember_tensor* a, const ember_tensor* b) {
  ember_tensor* out = nullptr;
  EXPECT_EQ(ember_tensor_mul(a, b, &out), EMBER_OK) << ember_last_error();
  return Tensor(out);
}
Tensor add(const ember_tensor* a, const ember_tensor* b) {
  ember_tensor* out = nullptr;
  EXPECT_EQ(ember_tensor_add(a, b, &out), EMBER_OK) << ember_last_error();
  return Tensor(out);
}
Tensor scalar(const ember_tensor* x, int32_t op, double s) {
  ember_tensor* out = nullptr;
  EXPECT_EQ(ember_tensor_scalar(x, op, s, &out), EMBER_OK) << ember_last_error();
  return Tensor(out);
}
Tensor sum(const ember_tensor* x) {
  ember_tensor* out = nullptr;
  EXPECT_EQ(ember_tensor_reduce_all(x, EMBER_REDUCE_SUM, &out), EMBER_OK) << ember_last_error();
  return Tensor(out);
}
// The .grad slot (empty vector when it has none).
std::vector<float> grad_of(const ember_tensor* t) {
  ember_tensor* g = nullptr;
  EXPECT_EQ(ember_tensor_grad(t, &g), EMBER_OK) << ember_last_error();
  Tensor owned(g);
  return g ? floats(g) : std::vector<float>{};
}
ember_backward_options options(bool retain, bool accumulate = true) {
  ember_backward_options o;
  EXPECT_EQ(ember_backward_options_init(&o), EMBER_OK) << ember_last_error();
  o.retain_graph = retain;
  o.accumulate = accumulate;
  return o;
}
int32_t is_leaf(const ember_tensor* t) {
  int32_t v = -1;
  EXPECT_EQ(ember_tensor_is_leaf(t, &v), EMBER_OK) << ember_last_error();
  return v;
}
int64_t version(const ember_tensor* t) {
  int64_t v = -1;
  EXPECT_EQ(ember_tensor_version(t, &v), EMBER_OK) << ember_last_error();
  return v;
}
struct NoGradScope {
  NoGradScope() { EXPECT_EQ(ember_no_grad_enter(), EMBER_OK); }
  ~NoGradScope() { EXPECT_EQ(ember_no_grad_exit(), EMBER_OK); }
};

using V = std::vector<float>;

TEST(CApiAutograd, BackwardOptionsDefaults) {
  ember_backward_options o;
  o.retain_graph = 7;
  o.accumulate = 7;
  EMBER_ASSERT_OK(ember_backward_options_init(&o));
  EXPECT_EQ(o.struct_size, sizeof o);
  EXPECT_EQ(o.retain_graph, 0);
  EXPECT_EQ(o.accumulate, 1);
  EMBER_EXPECT_ERR(ember_backward_options_init(nullptr), EMBER_ERR_INVALID_ARGUMENT, "options is NULL");
}

TEST(CApiAutograd, BackwardAccumulatesIntoLeafGradAndRetainsTheGraph) {
  auto x = leaf({1, 2, 3}, {3});
  auto w = leaf({0.5f, -1, 2}, {3});
  auto y = mul(x.get(), w.get());  // non-leaf
  auto s = sum(mul(y.get(), x.get()).get());  // sum(w x^2): d/dx = 2 w x = [1, -4, 12], d/dw = x^2 = [1, 4, 9]
  EXPECT_EQ(grad_of(x.get()), V{});
  auto o = options(/*retain=*/true);
  ember_grads* g = nullptr;
  EMBER_ASSERT_OK(ember_tensor_backward_ex(s.get(), nullptr, &o, &g));
  Grads pass1(g);
  EXPECT_EQ(grad_of(x.get()), (V{1, -4, 12}));
  EXPECT_EQ(grad_of(w.get()), (V{1, 4, 9}));
  EXPECT_EQ(grad_of(y.get()), V{});  // non-leaves keep no .grad
  // The graph was kept: a second pass gives the same gradients, which add up in .grad; out may be NULL.
  o = options(/*retain=*/false);
  EMBER_ASSERT_OK(ember_tensor_backward_ex(s.get(), nullptr, &o, nullptr));
  EXPECT_EQ(grad_of(x.get()), (V{2, -8, 24}));
  EXPECT_EQ(grad_of(w.get()), (V{2, 8, 18}));
  // The ember_grads of a pass hold that pass alone.
  ember_tensor* gx = nullptr;
  EMBER_ASSERT_OK(ember_grads_get(pass1.get(), x.get(), &gx));
  Tensor gxo(gx);
  EXPECT_EQ(floats(gx), (V{1, -4, 12}));
  // Without retain_graph the second pass freed it.
  EMBER_EXPECT_ERR(ember_tensor_backward_ex(s.get(), nullptr, &o, nullptr), EMBER_ERR_INVALID_ARGUMENT,
                   "already freed");
  EXPECT_EQ(grad_of(x.get()), (V{2, -8, 24}));  // a failed pass changes no .grad
  // options NULL: the defaults (accumulate, free the graph); accumulate 0 leaves .grad alone.
  auto s2 = sum(mul(x.get(), x.get()).get());  // d/dx = 2x
  auto no_acc = options(true, /*accumulate=*/false);
  EMBER_ASSERT_OK(ember_tensor_backward_ex(s2.get(), nullptr, &no_acc, nullptr));
  EXPECT_EQ(grad_of(x.get()), (V{2, -8, 24}));
  EMBER_ASSERT_OK(ember_tensor_backward_ex(s2.get(), nullptr, nullptr, nullptr));
  EXPECT_EQ(grad_of(x.get()), (V{4, -4, 30}));
  // A seeded pass: d/dx sum(x * x * seed) = 2 x seed.
  auto y2 = mul(x.get(), x.get());
  auto seed = f32({1, 0, -1}, {3});
  EMBER_ASSERT_OK(ember_tensor_backward_ex(y2.get(), seed.get(), nullptr, nullptr));
  EXPECT_EQ(grad_of(x.get()), (V{6, -4, 24}));
}

TEST(CApiAutograd, GradSlotIsTheLeafsAndCanBeSetOrCleared) {
  auto x = leaf({1, 2}, {2});
  Tensor alias;
  {
    ember_tensor* c = nullptr;
    EMBER_ASSERT_OK(ember_tensor_clone(x.get(), &c));
    alias.reset(c);
  }
  auto g = f32({0.25f, -4}, {2});
  EMBER_ASSERT_OK(ember_tensor_set_grad(x.get(), g.get()));
  EXPECT_EQ(grad_of(x.get()), (V{0.25f, -4}));
  EXPECT_EQ(grad_of(alias.get()), (V{0.25f, -4}));  // every handle of the leaf
  auto s = sum(mul(alias.get(), alias.get()).get());
  EMBER_ASSERT_OK(ember_tensor_backward_ex(s.get(), nullptr, nullptr, nullptr));
  EXPECT_EQ(grad_of(x.get()), (V{2.25f, 0}));  // 0.25 + 2, -4 + 4
  EMBER_ASSERT_OK(ember_tensor_set_grad(x.get(), nullptr));
  EXPECT_EQ(grad_of(alias.get()), V{});
  auto wrong = f32({1, 2, 3}, {3});
  EMBER_EXPECT_ERR(ember_tensor_set_grad(x.get(), wrong.get()), EMBER_ERR_SHAPE, "assigned grad has data of a different size");
  auto y = mul(x.get(), x.get());
  EMBER_EXPECT_ERR(ember_tensor_set_grad(y.get(), g.get()), EMBER_ERR_INVALID_ARGUMENT, "not a leaf");
  auto plain = f32({1, 2}, {2});
  EMBER_EXPECT_ERR(ember_tensor_set_grad(plain.get(), g.get()), EMBER_ERR_INVALID_ARGUMENT, "does not require grad");
  EXPECT_EQ(grad_of(plain.get()), V{});
  EXPECT_EQ(is_leaf(x.get()), 1);
  EXPECT_EQ(is_leaf(y.get()), 0);
  EXPECT_EQ(is_leaf(plain.get()), 1);  // PyTorch: tensors that require no grad are leaves
  auto ints = i64({1}, {1});
  EXPECT_EQ(is_leaf(ints.get()), 1);
  EXPECT_EQ(grad_of(ints.get()), V{});
}

TEST(CApiAutograd, ImplicitSeedOnlyForOneElementTensors) {
  auto x = leaf({1, 2}, {2});
  auto y = scalar(x.get(), EMBER_SCALAR_MUL, 3.0);
  ember_grads* g = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_backward(y.get(), nullptr, &g), EMBER_ERR_INVALID_ARGUMENT,
                   "grad can be implicitly created only for scalar outputs");
  EXPECT_EQ(g, nullptr);
  EMBER_EXPECT_ERR(ember_tensor_backward_ex(y.get(), nullptr, nullptr, nullptr), EMBER_ERR_INVALID_ARGUMENT,
                   "grad can be implicitly created only for scalar outputs");
  EXPECT_EQ(grad_of(x.get()), V{});
  // A one-element tensor of any rank is seeded with 1; the failed calls above did not consume the graph.
  auto s = sum(y.get());
  EMBER_ASSERT_OK(ember_tensor_backward(s.get(), nullptr, &g));
  Grads owned(g);
  ember_tensor* gx = nullptr;
  EMBER_ASSERT_OK(ember_grads_get(g, x.get(), &gx));
  Tensor gxo(gx);
  EXPECT_EQ(floats(gx), (V{3, 3}));
  auto y2 = scalar(x.get(), EMBER_SCALAR_MUL, 3.0);  // a fresh graph: s's backward freed y's
  EMBER_ASSERT_OK(ember_tensor_backward_ex(y2.get(), f32({1, 1}, {2}).get(), nullptr, nullptr));
  EXPECT_EQ(grad_of(x.get()), (V{3, 3}));
}

TEST(CApiAutograd, SetRequiresGradOnANonLeafIsPyTorchs) {
  auto x = leaf({1, 2}, {2});
  auto y = mul(x.get(), x.get());
  EMBER_ASSERT_OK(ember_tensor_set_requires_grad(y.get(), 1));  // already requires grad: stays a non-leaf
  EXPECT_EQ(is_leaf(y.get()), 0);
  EMBER_EXPECT_ERR(ember_tensor_set_requires_grad(y.get(), 0), EMBER_ERR_INVALID_ARGUMENT,
                   "you can only change requires_grad flags of leaf variables");
  int32_t on = 0;
  EMBER_ASSERT_OK(ember_tensor_requires_grad(y.get(), &on));
  EXPECT_EQ(on, 1);
  // The graph is intact: d/dx sum(x^2) = 2x.
  auto s = sum(y.get());
  EMBER_ASSERT_OK(ember_tensor_backward_ex(s.get(), nullptr, nullptr, nullptr));
  EXPECT_EQ(grad_of(x.get()), (V{2, 4}));
  // A leaf can still stop requiring grad.
  EMBER_ASSERT_OK(ember_tensor_set_requires_grad(x.get(), 0));
  EMBER_ASSERT_OK(ember_tensor_requires_grad(x.get(), &on));
  EXPECT_EQ(on, 0);
}

TEST(CApiAutograd, InplaceOpsComputeInPlaceOfTheHandle) {
  auto x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  auto row = f32({10, 20, 30}, {3});
  EXPECT_EQ(version(x.get()), 0);
  EMBER_ASSERT_OK(ember_tensor_inplace(x.get(), row.get(), EMBER_INPLACE_ADD));
  EXPECT_EQ(floats(x.get()), (V{11, 22, 33, 14, 25, 36}));
  EMBER_ASSERT_OK(ember_tensor_inplace(x.get(), row.get(), EMBER_INPLACE_SUB));
  EXPECT_EQ(floats(x.get()), (V{1, 2, 3, 4, 5, 6}));
  EMBER_ASSERT_OK(ember_tensor_inplace(x.get(), x.get(), EMBER_INPLACE_MUL));  // self as other
  EXPECT_EQ(floats(x.get()), (V{1, 4, 9, 16, 25, 36}));
  EMBER_ASSERT_OK(ember_tensor_inplace(x.get(), f32({2}, {1}).get(), EMBER_INPLACE_DIV));
  EXPECT_EQ(floats(x.get()), (V{0.5f, 2, 4.5f, 8, 12.5f, 18}));
  EMBER_ASSERT_OK(ember_tensor_inplace(x.get(), row.get(), EMBER_INPLACE_COPY));  // broadcast to [2, 3]
  EXPECT_EQ(floats(x.get()), (V{10, 20, 30, 10, 20, 30}));
  EMBER_ASSERT_OK(ember_tensor_inplace_scalar(x.get(), EMBER_INPLACE_MUL, 0.5));
  EMBER_ASSERT_OK(ember_tensor_inplace_scalar(x.get(), EMBER_INPLACE_ADD, 1));
  EMBER_ASSERT_OK(ember_tensor_inplace_scalar(x.get(), EMBER_INPLACE_SUB, 2));
  EMBER_ASSERT_OK(ember_tensor_inplace_scalar(x.get(), EMBER_INPLACE_DIV, 4));
  EXPECT_EQ(floats(x.get()), (V{1, 2.25f, 3.5f, 1, 2.25f, 3.5f}));  // (v / 2 + 1 - 2) / 4
  EXPECT_EQ(version(x.get()), 9);
  EMBER_ASSERT_OK(ember_tensor_inplace_scalar(x.get(), EMBER_INPLACE_FILL, -7));
  EXPECT_EQ(floats(x.get()), V(6, -7));
  EXPECT_EQ(shape_of(x.get()), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(version(x.get()), 10);
  // A clone is another handle: it keeps its value and starts at version 0.
  ember_tensor* c = nullptr;
  EMBER_ASSERT_OK(ember_tensor_clone(x.get(), &c));
  Tensor clone(c);
  EMBER_ASSERT_OK(ember_tensor_inplace_scalar(x.get(), EMBER_INPLACE_FILL, 1));
  EXPECT_EQ(floats(c), V(6, -7));
  EXPECT_EQ(version(c), 0);

  // Failures name the problem and leave self (and its version) as it was.
  auto big = f32(V(12, 1), {4, 3});
  EMBER_EXPECT_ERR(ember_tensor_inplace(row.get(), x.get(), EMBER_INPLACE_ADD), EMBER_ERR_SHAPE,
                   "output with shape [3] doesn't match the broadcast shape [2, 3]");
  EMBER_EXPECT_ERR(ember_tensor_inplace(x.get(), big.get(), EMBER_INPLACE_COPY), EMBER_ERR_SHAPE, "not broadcastable");
  EXPECT_EQ(floats(row.get()), (V{10, 20, 30}));
  EXPECT_EQ(version(row.get()), 0);
  auto n = i64({7, 8, 9}, {3});
  EMBER_EXPECT_ERR(ember_tensor_inplace(row.get(), n.get(), EMBER_INPLACE_ADD), EMBER_ERR_DTYPE, "other is i64");
  EMBER_EXPECT_ERR(ember_tensor_inplace_scalar(n.get(), EMBER_INPLACE_DIV, 2), EMBER_ERR_DTYPE,
                   "result type float can't be cast to the desired output type i64");
  EMBER_EXPECT_ERR(ember_tensor_inplace_scalar(n.get(), EMBER_INPLACE_ADD, 0.5), EMBER_ERR_DTYPE, "can't be cast");
  EMBER_EXPECT_ERR(ember_tensor_inplace_scalar(n.get(), EMBER_INPLACE_COPY, 1), EMBER_ERR_INVALID_ARGUMENT,
                   "takes a tensor");
  EMBER_EXPECT_ERR(ember_tensor_inplace(n.get(), n.get(), EMBER_INPLACE_FILL), EMBER_ERR_INVALID_ARGUMENT,
                   "takes a scalar");
  EMBER_EXPECT_ERR(ember_tensor_inplace(n.get(), n.get(), 99), EMBER_ERR_INVALID_ARGUMENT, "unknown op 99");
  EXPECT_EQ(ints(n.get()), (std::vector<int64_t>{7, 8, 9}));
  EXPECT_EQ(version(n.get()), 0);
  // Int tensors: integral scalars, copy_ converts (truncating like PyTorch's float -> long copy).
  EMBER_ASSERT_OK(ember_tensor_inplace_scalar(n.get(), EMBER_INPLACE_MUL, 2));
  EXPECT_EQ(ints(n.get()), (std::vector<int64_t>{14, 16, 18}));
  EMBER_ASSERT_OK(ember_tensor_inplace(n.get(), f32({1.75f, -2.5f, 3}, {3}).get(), EMBER_INPLACE_COPY));
  EXPECT_EQ(ints(n.get()), (std::vector<int64_t>{1, -2, 3}));
  int32_t dt = -1;
  EMBER_ASSERT_OK(ember_tensor_dtype(n.get(), &dt));
  EXPECT_EQ(dt, EMBER_DTYPE_I64);
  EMBER_EXPECT_ERR(ember_tensor_inplace(nullptr, n.get(), EMBER_INPLACE_ADD), EMBER_ERR_NULL_HANDLE, "self");
  EMBER_EXPECT_ERR(ember_tensor_version(n.get(), nullptr), EMBER_ERR_INVALID_ARGUMENT, "version is NULL");
}

TEST(CApiAutograd, InplaceOnALeafKeepsItsIdentityUnderNoGrad) {
  auto w = leaf({1, 2}, {2});
  auto s = sum(mul(w.get(), w.get()).get());
  EMBER_ASSERT_OK(ember_tensor_backward_ex(s.get(), nullptr, nullptr, nullptr));
  ASSERT_EQ(grad_of(w.get()), (V{2, 4}));
  // Grad mode on: refused, nothing changes.
  EMBER_EXPECT_ERR(ember_tensor_inplace_scalar(w.get(), EMBER_INPLACE_SUB, 1), EMBER_ERR_INVALID_ARGUMENT,
                   "a leaf Variable that requires grad is being used in an in-place operation.");
  EXPECT_EQ(floats(w.get()), (V{1, 2}));
  EXPECT_EQ(version(w.get()), 0);
  // An SGD step, w -= 0.25 * w.grad, under no-grad: the same leaf with new values.
  {
    NoGradScope ng;
    ember_tensor* g = nullptr;
    EMBER_ASSERT_OK(ember_tensor_grad(w.get(), &g));
    Tensor step = scalar(Tensor(g).get(), EMBER_SCALAR_MUL, 0.25);
    EMBER_ASSERT_OK(ember_tensor_inplace(w.get(), step.get(), EMBER_INPLACE_SUB));
  }
  EXPECT_EQ(floats(w.get()), (V{0.5f, 1}));
  EXPECT_EQ(version(w.get()), 1);
  EXPECT_EQ(is_leaf(w.get()), 1);
  int32_t on = 0;
  EMBER_ASSERT_OK(ember_tensor_requires_grad(w.get(), &on));
  EXPECT_EQ(on, 1);
  EXPECT_EQ(grad_of(w.get()), (V{2, 4}));  // the leaf's .grad is still there
  // The next forward and backward use the new values and add into the same .grad: 2 + 2 * 0.5, 4 + 2 * 1.
  auto s2 = sum(mul(w.get(), w.get()).get());
  EMBER_ASSERT_OK(ember_tensor_backward_ex(s2.get(), nullptr, nullptr, nullptr));
  EXPECT_EQ(grad_of(w.get()), (V{3, 6}));
}

TEST(CApiAutograd, BackwardThroughATensorModifiedAfterItWasSavedFails) {
  auto x = leaf({1, 2, 3}, {3});
  auto y = mul(x.get(), x.get());
  auto s = sum(y.get());
  {
    NoGradScope ng;
    EMBER_ASSERT_OK(ember_tensor_inplace_scalar(x.get(), EMBER_INPLACE_ADD, 1));
  }
  auto keep = options(/*retain=*/true);  // so that the second call below reaches the same stale step
  EMBER_EXPECT_ERR(ember_tensor_backward_ex(s.get(), nullptr, &keep, nullptr), EMBER_ERR_INVALID_ARGUMENT,
                   "one of the variables needed for gradient computation has been modified by an inplace operation");
  EXPECT_EQ(grad_of(x.get()), V{});
  ember_grads* g = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_backward(s.get(), nullptr, &g), EMBER_ERR_INVALID_ARGUMENT,
                   "is at version 1; expected version 0");

  // In-place on a non-leaf with grad mode on is recorded: h = 2x + 1 (x now [2, 3, 4]), then
  // d/dx sum(h * h) = 2 h * 2 = [20, 28, 36].
  auto h = scalar(x.get(), EMBER_SCALAR_MUL, 2.0);
  auto before = sum(mul(h.get(), h.get()).get());  // recorded h before the update
  EMBER_ASSERT_OK(ember_tensor_inplace_scalar(h.get(), EMBER_INPLACE_ADD, 1));
  EXPECT_EQ(is_leaf(h.get()), 0);
  EXPECT_EQ(floats(h.get()), (V{5, 7, 9}));
  auto after = sum(mul(h.get(), h.get()).get());
  EMBER_ASSERT_OK(ember_tensor_backward_ex(after.get(), nullptr, nullptr, nullptr));
  EXPECT_EQ(grad_of(x.get()), (V{20, 28, 36}));
  EMBER_EXPECT_ERR(ember_tensor_backward_ex(before.get(), nullptr, nullptr, nullptr), EMBER_ERR_INVALID_ARGUMENT,
                   "modified by an inplace operation");
  // copy_ into a plain tensor from one that requires grad makes it part of the graph: d/dx sum(t * 3) = 3.
  auto t = f32({0, 0, 0}, {3});
  EMBER_ASSERT_OK(ember_tensor_set_grad(x.get(), nullptr));
  EMBER_ASSERT_OK(ember_tensor_inplace(t.get(), x.get(), EMBER_INPLACE_COPY));
  EXPECT_EQ(is_leaf(t.get()), 0);
  auto st = sum(scalar(t.get(), EMBER_SCALAR_MUL, 3.0).get());
  EMBER_ASSERT_OK(ember_tensor_backward_ex(st.get(), nullptr, nullptr, nullptr));
  EXPECT_EQ(grad_of(x.get()), (V{3, 3, 3}));
}

TEST(CApiAutograd, AutogradGradOfLeavesAndIntermediates) {
  auto x = leaf({1, -2}, {2});
  auto unused = leaf({5}, {1});
  auto y = mul(x.get(), x.get());                              // y = x^2
  auto z = add(scalar(y.get(), EMBER_SCALAR_MUL, 3.0).get(), x.get());  // z = 3y + x
  auto s = sum(z.get());
  const ember_tensor* outs[] = {s.get()};
  const ember_tensor* ins[] = {y.get(), x.get()};
  ember_tensor* r[2] = {nullptr, nullptr};
  // ds/dy = 3, ds/dx = 6x + 1 = [7, -11]; retain the graph for the calls below.
  EMBER_ASSERT_OK(ember_autograd_grad(outs, nullptr, 1, ins, 2, /*retain_graph=*/1, /*allow_unused=*/0, r));
  Tensor r0(r[0]), r1(r[1]);
  EXPECT_EQ(floats(r[0]), (V{3, 3}));
  EXPECT_EQ(floats(r[1]), (V{7, -11}));
  EXPECT_EQ(grad_of(x.get()), V{});  // no .grad touched
  // grad_outputs: a non-scalar output z seeded with [1, 2]: d/dx sum(z * [1, 2]) = [7, -22].
  const ember_tensor* zouts[] = {z.get()};
  auto seed = f32({1, 2}, {2});
  const ember_tensor* seeds[] = {seed.get()};
  const ember_tensor* xin[] = {x.get()};
  ember_tensor* rx = nullptr;
  EMBER_ASSERT_OK(ember_autograd_grad(zouts, seeds, 1, xin, 1, 1, 0, &rx));
  Tensor rxo(rx);
  EXPECT_EQ(floats(rx), (V{7, -22}));
  EMBER_EXPECT_ERR(ember_autograd_grad(zouts, nullptr, 1, xin, 1, 1, 0, &rx), EMBER_ERR_INVALID_ARGUMENT,
                   "grad can be implicitly created only for scalar outputs");
  EXPECT_EQ(rx, nullptr);
  // Two outputs add up: d/dx (s + sum(y)) = [7, -11] + 2x = [9, -15].
  auto sy = sum(y.get());
  const ember_tensor* two[] = {s.get(), sy.get()};
  EMBER_ASSERT_OK(ember_autograd_grad(two, nullptr, 2, xin, 1, 1, 0, &rx));
  Tensor rx2(rx);
  EXPECT_EQ(floats(rx), (V{9, -15}));
  // An input the outputs do not reach: NULL with allow_unused, else PyTorch's error (and every result NULL).
  const ember_tensor* with_unused[] = {x.get(), unused.get()};
  ember_tensor* ru[2] = {nullptr, nullptr};
  EMBER_EXPECT_ERR(ember_autograd_grad(outs, nullptr, 1, with_unused, 2, 1, 0, ru), EMBER_ERR_INVALID_ARGUMENT,
                   "appears to not have been used in the graph. Set allow_unused=True");
  EXPECT_EQ(ru[0], nullptr);
  EMBER_ASSERT_OK(ember_autograd_grad(outs, nullptr, 1, with_unused, 2, /*retain_graph=*/0, /*allow_unused=*/1, ru));
  Tensor ru0(ru[0]);
  EXPECT_EQ(floats(ru[0]), (V{7, -11}));
  EXPECT_EQ(ru[1], nullptr);
  // Without retain_graph that call freed the graph.
  EMBER_EXPECT_ERR(ember_autograd_grad(outs, nullptr, 1, xin, 1, 0, 0, &rx), EMBER_ERR_INVALID_ARGUMENT, "already freed");
  // Inputs that require no grad, outputs that do not, and bad arguments are errors.
  auto plain = f32({1, 2}, {2});
  const ember_tensor* pin[] = {plain.get()};
  auto s3 = sum(mul(x.get(), x.get()).get());
  const ember_tensor* outs3[] = {s3.get()};
  EMBER_EXPECT_ERR(ember_autograd_grad(outs3, nullptr, 1, pin, 1, 1, 0, &rx), EMBER_ERR_INVALID_ARGUMENT,
                   "does not require grad");
  auto ps = sum(plain.get());
  const ember_tensor* pouts[] = {ps.get()};
  EMBER_EXPECT_ERR(ember_autograd_grad(pouts, nullptr, 1, xin, 1, 1, 0, &rx), EMBER_ERR_INVALID_ARGUMENT,
                   "does not require grad and has no grad_fn");
  EMBER_EXPECT_ERR(ember_autograd_grad(outs3, nullptr, 0, xin, 1, 1, 0, &rx), EMBER_ERR_INVALID_ARGUMENT, "no outputs");
  EMBER_EXPECT_ERR(ember_autograd_grad(outs3, nullptr, 1, xin, 1, 1, 0, nullptr), EMBER_ERR_INVALID_ARGUMENT,
                   "results is NULL");
}

}  // namespace
}  // namespace ember::capi_test
