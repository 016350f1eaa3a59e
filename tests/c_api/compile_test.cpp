// issue 14: ember_compile / ember_compiled_* from C. A digits-MLP-shaped forward (three linear layers with ReLU,
// written with ember_tensor_* ops on its param handles) compiled against the same forward run eagerly: Adam
// training bit for bit, the capture / replay sequence, new signatures (batch size, eval mode, no-grad), gradient
// accumulation over two forwards, dropout captured and replayed, and the fallbacks with their reasons.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/c_api/capi_support.hpp"

namespace ember::capi_test {
namespace {

constexpr int64_t kIn = 8, kHidden = 16, kClasses = 4;

// The params of one MLP: w1 b1 w2 b2 w3 b3 (weights [out, in], as nn.Linear's), leaves that require grad.
struct Mlp {
  std::vector<Tensor> p;
  bool read_host = false;    // the forward reads a value to the host (data-dependent)
  bool mix_builtin = false;  // the forward adds a constant it makes itself on the CPU
  bool fail = false;         // the forward fails after its first op
  bool dropout = false;      // dropout (p 0.25) after the first ReLU
  int calls = 0;             // callback invocations
  int32_t last_mode = -1;

  std::vector<ember_tensor*> handles() const {
    std::vector<ember_tensor*> h;
    for (const auto& t : p) h.push_back(t.get());
    return h;
  }
};

Tensor uniform(const std::vector<int64_t>& shape, uint64_t seed, double bound = 0.3) {
  ember_tensor* t = nullptr;
  EXPECT_EQ(ember_tensor_random(nullptr, EMBER_DIST_UNIFORM, -bound, bound, seed, shape.data(), shape.size(), &t),
            EMBER_OK)
      << ember_last_error();
  return Tensor(t);
}

// Two MLPs with the same initial values (independent leaves).
Mlp make_mlp(uint64_t seed) {
  Mlp m;
  const std::vector<std::vector<int64_t>> shapes{{kHidden, kIn}, {kHidden}, {kHidden, kHidden}, {kHidden},
                                                 {kClasses, kHidden}, {kClasses}};
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    Tensor t = uniform(shapes[i], seed + i);
    EXPECT_EQ(ember_tensor_set_requires_grad(t.get(), 1), EMBER_OK) << ember_last_error();
    m.p.push_back(std::move(t));
  }
  return m;
}
Mlp copy_of(const Mlp& src) {
  Mlp m;
  for (const auto& t : src.p) {
    Tensor c = f32(floats(t.get()), shape_of(t.get()));
    EXPECT_EQ(ember_tensor_set_requires_grad(c.get(), 1), EMBER_OK) << ember_last_error();
    m.p.push_back(std::move(c));
  }
  return m;
}

#define EMBER_TRY(call)                  \
  do {                                   \
    const ember_status s_ = (call);      \
    if (s_ != EMBER_OK) return s_;       \
  } while (0)

// x @ w^T + b
ember_status dense(const ember_tensor* x, const ember_tensor* w, const ember_tensor* b, Tensor& out) {
  ember_tensor *wt = nullptr, *y = nullptr, *z = nullptr;
  EMBER_TRY(ember_tensor_transpose(w, 0, 1, &wt));
  Tensor wt_owner(wt);
  EMBER_TRY(ember_tensor_matmul(x, wt, &y));
  Tensor y_owner(y);
  EMBER_TRY(ember_tensor_add(y, b, &z));
  out.reset(z);
  return EMBER_OK;
}
ember_status relu(const Tensor& x, Tensor& out) {
  ember_tensor* y = nullptr;
  EMBER_TRY(ember_tensor_unary(x.get(), EMBER_UNARY_RELU, &y));
  out.reset(y);
  return EMBER_OK;
}

ember_status mlp_forward(Mlp& m, const ember_tensor* x, ember_tensor** out) {
  Tensor h1, a1, h2, a2, y;
  EMBER_TRY(dense(x, m.p[0].get(), m.p[1].get(), h1));
  if (m.fail) return EMBER_ERR_INVALID_ARGUMENT;
  EMBER_TRY(relu(h1, a1));
  if (m.read_host) {
    ember_tensor* total = nullptr;
    EMBER_TRY(ember_tensor_reduce_all(a1.get(), EMBER_REDUCE_SUM, &total));
    Tensor total_owner(total);
    double v = 0;
    EMBER_TRY(ember_tensor_item(total, &v));  // e.g. `if a1.sum().item() > 1e9`
  }
  if (m.dropout) {
    ember_tensor* d = nullptr;
    EMBER_TRY(ember_tensor_dropout(a1.get(), 0.25, &d));
    a1.reset(d);
  }
  if (m.mix_builtin) {
    const int64_t shape[1] = {kHidden};
    ember_tensor *zero = nullptr, *sum = nullptr;
    EMBER_TRY(ember_tensor_full(nullptr, EMBER_DTYPE_F32, shape, 1, 0.0, &zero));
    Tensor zero_owner(zero);
    EMBER_TRY(ember_tensor_add(a1.get(), zero, &sum));
    a1.reset(sum);
  }
  EMBER_TRY(dense(a1.get(), m.p[2].get(), m.p[3].get(), h2));
  EMBER_TRY(relu(h2, a2));
  EMBER_TRY(dense(a2.get(), m.p[4].get(), m.p[5].get(), y));
  *out = y.release();
  return EMBER_OK;
}

ember_status EMBER_CALL mlp_callback(void* user, int32_t mode, const ember_tensor* const* inputs, size_t n_inputs,
                                     ember_tensor** outputs, size_t n_outputs) {
  auto& m = *static_cast<Mlp*>(user);
  ++m.calls;
  m.last_mode = mode;
  if (n_inputs != 1 || n_outputs != 1) return EMBER_ERR_INVALID_ARGUMENT;
  return mlp_forward(m, inputs[0], &outputs[0]);
}

struct CompiledFree {
  void operator()(ember_compiled* c) const { ember_compiled_free(c); }
};
using Compiled = std::unique_ptr<ember_compiled, CompiledFree>;

Compiled compile(Mlp& m) {
  auto h = m.handles();
  ember_compiled* c = nullptr;
  EXPECT_EQ(ember_compile(h.data(), h.size(), mlp_callback, &m, &c), EMBER_OK) << ember_last_error();
  return Compiled(c);
}

Tensor call(ember_compiled* c, const ember_tensor* x, int32_t mode = EMBER_MODE_TRAIN) {
  ember_tensor* out = nullptr;
  EXPECT_EQ(ember_compiled_call(c, mode, &x, 1, &out, 1), EMBER_OK) << ember_last_error();
  return Tensor(out);
}
Tensor eager(Mlp& m, const ember_tensor* x) {
  ember_tensor* out = nullptr;
  EXPECT_EQ(mlp_forward(m, x, &out), EMBER_OK) << ember_last_error();
  return Tensor(out);
}
int32_t last_call(const ember_compiled* c) {
  int32_t k = -1;
  EXPECT_EQ(ember_compiled_last_call(c, &k), EMBER_OK) << ember_last_error();
  return k;
}
std::string reason(const ember_compiled* c) {
  size_t n = 0;
  EXPECT_EQ(ember_compiled_fallback_reason(c, nullptr, 0, &n), EMBER_OK);
  std::string s(n + 1, '\0');
  EXPECT_EQ(ember_compiled_fallback_reason(c, s.data(), s.size(), &n), EMBER_OK);
  s.resize(n);
  return s;
}

Tensor batch_x(int64_t n, uint64_t seed) { return uniform({n, kIn}, seed, 1.0); }
Tensor batch_y(int64_t n, uint64_t seed) {
  std::vector<int64_t> y(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) y[static_cast<std::size_t>(i)] = static_cast<int64_t>((seed * 7 + i * 3) % kClasses);
  return i64(y, {n});
}
Tensor loss_of(const ember_tensor* logits, const ember_tensor* y) {
  ember_tensor* l = nullptr;
  EXPECT_EQ(ember_loss_cross_entropy(logits, y, EMBER_REDUCTION_MEAN, &l), EMBER_OK) << ember_last_error();
  return Tensor(l);
}
void backward(const ember_tensor* loss) {
  ember_backward_options o;
  ASSERT_EQ(ember_backward_options_init(&o), EMBER_OK);
  EXPECT_EQ(ember_tensor_backward_ex(loss, nullptr, &o, nullptr), EMBER_OK) << ember_last_error();
}
Optim adam(const Mlp& m) {
  ember_optimizer_options o;
  EXPECT_EQ(ember_optimizer_options_init(&o, EMBER_OPTIM_ADAM), EMBER_OK);
  o.lr = 0.01;
  auto h = m.handles();
  ember_optimizer* opt = nullptr;
  EXPECT_EQ(ember_optimizer_create_params(h.data(), h.size(), &o, &opt), EMBER_OK) << ember_last_error();
  return Optim(opt);
}
void expect_same_bits(const ember_tensor* a, const ember_tensor* b, const std::string& what) {
  const auto x = floats(a), y = floats(b);
  ASSERT_EQ(x.size(), y.size()) << what;
  EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * sizeof(float)), 0) << what << " differs";
}
void expect_same_params(const Mlp& a, const Mlp& b) {
  for (std::size_t i = 0; i < a.p.size(); ++i) expect_same_bits(a.p[i].get(), b.p[i].get(), "param " + std::to_string(i));
}
Tensor grad_of(const ember_tensor* t) {
  ember_tensor* g = nullptr;
  EXPECT_EQ(ember_tensor_grad(t, &g), EMBER_OK) << ember_last_error();
  return Tensor(g);
}

// One Adam step of each: the eager MLP and the compiled one; their losses must be equal bit for bit.
void train_step(Mlp& e, ember_optimizer* oe, Mlp& /*c*/, ember_compiled* cc, ember_optimizer* oc, int64_t n,
                uint64_t seed) {
  Tensor x = batch_x(n, seed), y = batch_y(n, seed);
  Tensor le = loss_of(eager(e, x.get()).get(), y.get());
  Tensor lc = loss_of(call(cc, x.get()).get(), y.get());
  expect_same_bits(le.get(), lc.get(), "loss of step " + std::to_string(seed));
  backward(le.get());
  backward(lc.get());
  EXPECT_EQ(ember_optimizer_step(oe, nullptr), EMBER_OK) << ember_last_error();
  EXPECT_EQ(ember_optimizer_step(oc, nullptr), EMBER_OK) << ember_last_error();
  EXPECT_EQ(ember_optimizer_zero_grad(oe), EMBER_OK);
  EXPECT_EQ(ember_optimizer_zero_grad(oc), EMBER_OK);
}

TEST(CCompile, AdamTrainingMatchesEagerBitForBit) {
  Mlp e = make_mlp(100), c = copy_of(e);
  Optim oe = adam(e), oc = adam(c);
  Compiled cc = compile(c);
  std::vector<int32_t> kinds;
  for (uint64_t step = 0; step < 12; ++step) {
    train_step(e, oe.get(), c, cc.get(), oc.get(), 6, 1000 + step);
    kinds.push_back(last_call(cc.get()));
    EXPECT_EQ(reason(cc.get()), "");
  }
  std::vector<int32_t> want(12, EMBER_COMPILED_REPLAYED);
  want[0] = EMBER_COMPILED_CAPTURED;
  EXPECT_EQ(kinds, want);
  EXPECT_EQ(c.calls, 1) << "the callback runs for the capture only";
  EXPECT_EQ(c.last_mode, EMBER_MODE_TRAIN);
  expect_same_params(e, c);

  // A new batch size captures again, and the old one still replays.
  train_step(e, oe.get(), c, cc.get(), oc.get(), 3, 2000);
  EXPECT_EQ(last_call(cc.get()), EMBER_COMPILED_CAPTURED);
  train_step(e, oe.get(), c, cc.get(), oc.get(), 3, 2001);
  EXPECT_EQ(last_call(cc.get()), EMBER_COMPILED_REPLAYED);
  train_step(e, oe.get(), c, cc.get(), oc.get(), 6, 2002);
  EXPECT_EQ(last_call(cc.get()), EMBER_COMPILED_REPLAYED);
  expect_same_params(e, c);

  // Eval mode is another signature (the callback sees the mode); so is a call under no_grad.
  Tensor x = batch_x(5, 3000);
  Tensor ye = eager(e, x.get());
  Tensor y1 = call(cc.get(), x.get(), EMBER_MODE_EVAL);
  EXPECT_EQ(last_call(cc.get()), EMBER_COMPILED_CAPTURED);
  EXPECT_EQ(c.last_mode, EMBER_MODE_EVAL);
  Tensor y2 = call(cc.get(), x.get(), EMBER_MODE_EVAL);
  EXPECT_EQ(last_call(cc.get()), EMBER_COMPILED_REPLAYED);
  expect_same_bits(ye.get(), y1.get(), "eval capture");
  expect_same_bits(ye.get(), y2.get(), "eval replay");
  ASSERT_EQ(ember_no_grad_enter(), EMBER_OK);
  Tensor y3 = call(cc.get(), x.get(), EMBER_MODE_EVAL);
  EXPECT_EQ(last_call(cc.get()), EMBER_COMPILED_CAPTURED);
  Tensor y4 = call(cc.get(), x.get(), EMBER_MODE_EVAL);
  EXPECT_EQ(last_call(cc.get()), EMBER_COMPILED_REPLAYED);
  ASSERT_EQ(ember_no_grad_exit(), EMBER_OK);
  expect_same_bits(ye.get(), y4.get(), "no-grad replay");
  int32_t rg = -1;
  ASSERT_EQ(ember_tensor_requires_grad(y4.get(), &rg), EMBER_OK);
  EXPECT_EQ(rg, 0);
  ASSERT_EQ(ember_tensor_requires_grad(y2.get(), &rg), EMBER_OK);
  EXPECT_EQ(rg, 1);
}

// Dropout inside the forward is captured: each replay draws a new mask from the global generator, the mask an eager
// call would draw from the same state (both sides are seeded alike before each step), and its backward multiplies by
// that replay's mask. Training matches eager bit for bit.
TEST(CCompile, DropoutIsCapturedAndReplaysTheEagerMasks) {
  Mlp e = make_mlp(300), c = copy_of(e);
  e.dropout = c.dropout = true;
  Optim oe = adam(e), oc = adam(c);
  Compiled cc = compile(c);
  std::vector<int32_t> kinds;
  std::vector<float> first_losses;
  for (uint64_t step = 0; step < 6; ++step) {
    Tensor x = batch_x(6, 4000 + step), y = batch_y(6, 4000 + step);
    ASSERT_EQ(ember_seed(50 + step), EMBER_OK);
    Tensor le = loss_of(eager(e, x.get()).get(), y.get());
    ASSERT_EQ(ember_seed(50 + step), EMBER_OK);
    Tensor lc = loss_of(call(cc.get(), x.get()).get(), y.get());
    expect_same_bits(le.get(), lc.get(), "loss of step " + std::to_string(step));
    kinds.push_back(last_call(cc.get()));
    EXPECT_EQ(reason(cc.get()), "");
    backward(le.get());
    backward(lc.get());
    EXPECT_EQ(ember_optimizer_step(oe.get(), nullptr), EMBER_OK) << ember_last_error();
    EXPECT_EQ(ember_optimizer_step(oc.get(), nullptr), EMBER_OK) << ember_last_error();
    EXPECT_EQ(ember_optimizer_zero_grad(oe.get()), EMBER_OK);
    EXPECT_EQ(ember_optimizer_zero_grad(oc.get()), EMBER_OK);
  }
  std::vector<int32_t> want(6, EMBER_COMPILED_REPLAYED);
  want[0] = EMBER_COMPILED_CAPTURED;
  EXPECT_EQ(kinds, want);
  EXPECT_EQ(c.calls, 1);
  expect_same_params(e, c);

  // The replay draws anew: two replays from different generator states give different outputs.
  Tensor x = batch_x(6, 4100);
  ASSERT_EQ(ember_seed(1), EMBER_OK);
  const auto y1 = floats(call(cc.get(), x.get()).get());
  ASSERT_EQ(ember_seed(2), EMBER_OK);
  const auto y2 = floats(call(cc.get(), x.get()).get());
  EXPECT_EQ(last_call(cc.get()), EMBER_COMPILED_REPLAYED);
  EXPECT_NE(y1, y2);
}

// A capture that fails runs the forward again eagerly from the generator state the call started with: its dropout
// mask is the one a single eager call draws.
TEST(CCompile, FailedCaptureRerunsFromTheCallsGeneratorState) {
  Mlp e = make_mlp(400), c = copy_of(e);
  e.dropout = c.dropout = e.mix_builtin = c.mix_builtin = true;
  Compiled cc = compile(c);
  Tensor x = batch_x(5, 4200);
  ASSERT_EQ(ember_seed(77), EMBER_OK);
  Tensor ye = eager(e, x.get());
  ASSERT_EQ(ember_seed(77), EMBER_OK);
  Tensor yc = call(cc.get(), x.get());
  EXPECT_EQ(last_call(cc.get()), EMBER_COMPILED_EAGER);
  EXPECT_NE(reason(cc.get()).find("the capture failed"), std::string::npos) << reason(cc.get());
  expect_same_bits(ye.get(), yc.get(), "the eager rerun");
}

// Two forwards, then one backward of the sum of their losses: each replay's backward reads its own activations.
TEST(CCompile, GradientAccumulationOverTwoForwards) {
  Mlp e = make_mlp(200), c = copy_of(e);
  Compiled cc = compile(c);
  {  // capture first (its own backward consumed), so that both forwards below are replays
    Tensor x = batch_x(6, 1), y = batch_y(6, 1);
    backward(loss_of(call(cc.get(), x.get()).get(), y.get()).get());
    backward(loss_of(eager(e, x.get()).get(), y.get()).get());
  }
  Tensor x1 = batch_x(6, 2), y1 = batch_y(6, 2), x2 = batch_x(6, 3), y2 = batch_y(6, 3);
  Tensor c1 = call(cc.get(), x1.get());
  EXPECT_EQ(last_call(cc.get()), EMBER_COMPILED_REPLAYED);
  Tensor c2 = call(cc.get(), x2.get());
  EXPECT_EQ(last_call(cc.get()), EMBER_COMPILED_REPLAYED);
  Tensor e1 = eager(e, x1.get()), e2 = eager(e, x2.get());
  ember_tensor *ls_c = nullptr, *ls_e = nullptr;
  Tensor lc1 = loss_of(c1.get(), y1.get()), lc2 = loss_of(c2.get(), y2.get());
  Tensor le1 = loss_of(e1.get(), y1.get()), le2 = loss_of(e2.get(), y2.get());
  ASSERT_EQ(ember_tensor_add(lc1.get(), lc2.get(), &ls_c), EMBER_OK);
  ASSERT_EQ(ember_tensor_add(le1.get(), le2.get(), &ls_e), EMBER_OK);
  Tensor sum_c(ls_c), sum_e(ls_e);
  expect_same_bits(sum_e.get(), sum_c.get(), "summed loss");
  backward(sum_c.get());
  backward(sum_e.get());
  for (std::size_t i = 0; i < e.p.size(); ++i) {
    Tensor ge = grad_of(e.p[i].get()), gc = grad_of(c.p[i].get());
    ASSERT_TRUE(ge && gc);
    expect_same_bits(ge.get(), gc.get(), "accumulated grad of param " + std::to_string(i));
  }
}

TEST(CCompile, HostReadFallsBackWithReason) {
  Mlp e = make_mlp(300), c = copy_of(e);
  e.read_host = c.read_host = true;
  Optim oe = adam(e), oc = adam(c);
  Compiled cc = compile(c);
  for (uint64_t step = 0; step < 3; ++step) {
    train_step(e, oe.get(), c, cc.get(), oc.get(), 6, 10 + step);
    EXPECT_EQ(last_call(cc.get()), EMBER_COMPILED_EAGER);
    EXPECT_NE(reason(cc.get()), "");
  }
  EXPECT_NE(reason(cc.get()).find("runs eagerly"), std::string::npos) << reason(cc.get());
  EXPECT_EQ(c.calls, 3);
  expect_same_params(e, c);
}

TEST(CCompile, BuiltinConstantInsideTheForwardFallsBack) {
  Mlp e = make_mlp(400), c = copy_of(e);
  e.mix_builtin = c.mix_builtin = true;
  Optim oe = adam(e), oc = adam(c);
  Compiled cc = compile(c);
  for (uint64_t step = 0; step < 3; ++step) {
    train_step(e, oe.get(), c, cc.get(), oc.get(), 6, 20 + step);
    EXPECT_EQ(last_call(cc.get()), EMBER_COMPILED_EAGER);
  }
  EXPECT_NE(reason(cc.get()).find("the capture failed"), std::string::npos) << reason(cc.get());
  expect_same_params(e, c);
}

TEST(CCompile, NonCpuFloat32InputRunsEagerly) {
  Mlp c = make_mlp(500);
  // Frozen params: a float32 param that requires grad cannot meet a float64 input (not differentiable in Ember).
  for (auto& p : c.p) ASSERT_EQ(ember_tensor_set_requires_grad(p.get(), 0), EMBER_OK);
  Compiled cc = compile(c);
  std::vector<double> v(static_cast<std::size_t>(2 * kIn), 0.25);
  const int64_t shape[2] = {2, kIn};
  ember_tensor* x = nullptr;
  ASSERT_EQ(ember_tensor_from_data(nullptr, EMBER_DTYPE_F64, v.data(), v.size() * sizeof(double), shape, 2, &x),
            EMBER_OK);
  Tensor xo(x);
  Tensor y = call(cc.get(), x);
  EXPECT_EQ(last_call(cc.get()), EMBER_COMPILED_EAGER);
  EXPECT_TRUE(has_phrase(reason(cc.get()), "input 0 is a cpu f64 tensor: compile captures CPU float32 tensors"))
      << reason(cc.get());
  EXPECT_EQ(c.calls, 1);
}

TEST(CCompile, FailingCallbackReturnsItsStatusAndRestoresTheState) {
  Mlp c = make_mlp(600);
  c.fail = true;
  Compiled cc = compile(c);
  Tensor x = batch_x(4, 7);
  const ember_tensor* in = x.get();
  ember_tensor* out = reinterpret_cast<ember_tensor*>(0x1);
  EMBER_EXPECT_ERR(ember_compiled_call(cc.get(), EMBER_MODE_TRAIN, &in, 1, &out, 1), EMBER_ERR_INVALID_ARGUMENT,
                   "the forward callback returned EMBER_ERR_INVALID_ARGUMENT");
  EXPECT_EQ(out, nullptr);
  // The params hold CPU tensors again: they meet a tensor made here in an op (a capture tensor could not), and
  // their storage is readable in place.
  for (const auto& p : c.p) {
    const void* data = nullptr;
    EXPECT_EQ(ember_tensor_data_ptr(p.get(), &data), EMBER_OK) << ember_last_error();
    Tensor z = f32(std::vector<float>(floats(p.get()).size(), 0.0f), shape_of(p.get()));
    ember_tensor* s = nullptr;
    EXPECT_EQ(ember_tensor_add(p.get(), z.get(), &s), EMBER_OK) << ember_last_error();
    Tensor so(s);
    int32_t rg = 0;
    EXPECT_EQ(ember_tensor_requires_grad(p.get(), &rg), EMBER_OK);
    EXPECT_EQ(rg, 1);
  }
  // Once the forward works, the same compiled object captures.
  c.fail = false;
  Tensor y = call(cc.get(), x.get());
  EXPECT_EQ(last_call(cc.get()), EMBER_COMPILED_CAPTURED);
}

// ember_module_compile: a Sequential's layers run on the module's own runtime, so its forward cannot be captured;
// it runs eagerly (the capture's failure as its reason) and gives the module's results.
TEST(CCompile, ModuleCompileFallsBackForSequentialLayers) {
  Module m = sequential({linear(kIn, kHidden), layer(EMBER_LAYER_RELU), linear(kHidden, kClasses)});
  ember_compiled* raw = nullptr;
  ASSERT_EQ(ember_module_compile(m.get(), &raw), EMBER_OK) << ember_last_error();
  Compiled cc(raw);
  Tensor x = batch_x(3, 11);
  Tensor want = forward(m.get(), x.get(), EMBER_MODE_TRAIN);
  for (int i = 0; i < 2; ++i) {
    Tensor got = call(cc.get(), x.get());
    EXPECT_EQ(last_call(cc.get()), EMBER_COMPILED_EAGER);
    EXPECT_NE(reason(cc.get()).find("runs eagerly"), std::string::npos) << reason(cc.get());
    expect_same_bits(want.get(), got.get(), "module output");
  }
}

TEST(CCompile, Misuse) {
  ember_compiled* c = nullptr;
  EMBER_EXPECT_ERR(ember_compile(nullptr, 0, nullptr, nullptr, &c), EMBER_ERR_INVALID_ARGUMENT, "forward is NULL");
  EXPECT_EQ(c, nullptr);
  Mlp m = make_mlp(700);
  Compiled cc = compile(m);
  Tensor x = batch_x(2, 1);
  const ember_tensor* in = x.get();
  ember_tensor* out = nullptr;
  EMBER_EXPECT_ERR(ember_compiled_call(cc.get(), 7, &in, 1, &out, 1), EMBER_ERR_INVALID_ARGUMENT, "unknown mode 7");
  EXPECT_EQ(last_call(cc.get()), EMBER_COMPILED_EAGER);
  EXPECT_EQ(reason(cc.get()), "");
  EXPECT_EQ(ember_compiled_free(nullptr), EMBER_OK);
}

}  // namespace
}  // namespace ember::capi_test
