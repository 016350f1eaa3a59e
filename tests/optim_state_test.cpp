// Schedulers against hand-computed PyTorch values, optimizer / scheduler state save+load (bit-identical
// continuation, clear errors), and an end-to-end fit of a 2-layer MLP with Adam.
#include <cmath>
#include <numbers>

#include "tests/optim_test_util.hpp"

namespace ember::optim_test {
namespace {

template <class E, class F>
void expect_throw_with(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected an exception mentioning '" << needle << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

std::vector<double> take(LrScheduler& s, int n) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(s.step());
  return out;
}

// ---------------------------------------------------------------- schedulers

TEST(Scheduler, StepLr) {
  // StepLR(lr=0.1, step_size=2, gamma=0.5): epochs 0..5
  StepLr s(0.1, 2, 0.5);
  expect_near(take(s, 6), {0.1, 0.1, 0.05, 0.05, 0.025, 0.025}, 1e-15);
  EXPECT_THROW(StepLr(0.1, 0, 0.5), ArgumentError);
}

TEST(Scheduler, CosineAnnealing) {
  // CosineAnnealingLR(lr=0.1, T_max=4, eta_min=0.01): 0.01 + 0.09 (1 + cos(pi t / 4)) / 2
  //   t=1: 0.01 + 0.045 (1 + 0.70710678) = 0.08681980515339464     t=2: 0.055
  //   t=3: 0.01 + 0.045 (1 - 0.70710678) = 0.023180194846605363    t=4: 0.01, then back up (period 8)
  CosineAnnealingLr s(0.1, 4, 0.01);
  const double hi = 0.08681980515339464, lo = 0.023180194846605363;
  expect_near(take(s, 10), {0.1, hi, 0.055, lo, 0.01, lo, 0.055, hi, 0.1, hi}, 1e-15);
}

TEST(Scheduler, LinearWarmup) {
  // SequentialLR([LinearLR(start_factor=0.25, total_iters=3), StepLR(0.1, 2, 0.5)], milestones=[3]):
  //   warmup 0.1 * (0.25 + 0.75 t/3): 0.025, 0.05, 0.075; then StepLR from its epoch 0: 0.1, 0.1, 0.05, 0.05, 0.025
  LinearWarmup warm(StepLr(0.1, 2, 0.5), 3, 0.25);
  expect_near(take(warm, 8), {0.025, 0.05, 0.075, 0.1, 0.1, 0.05, 0.05, 0.025}, 1e-15);
  // start_factor 0.5 over 2 steps into cosine: 0.05, 0.075, then 0.1, 0.0868..., 0.055
  LinearWarmup cw(CosineAnnealingLr(0.1, 4, 0.01), 2, 0.5);
  expect_near(take(cw, 5), {0.05, 0.075, 0.1, 0.08681980515339464, 0.055}, 1e-15);
  EXPECT_THROW(LinearWarmup(StepLr(0.1, 2, 0.5), 3, 0.0), ArgumentError);
}

TEST(Scheduler, StateResumesExactly) {
  LinearWarmup a(CosineAnnealingLr(0.1, 5, 0.001), 3, 0.1);
  take(a, 4);
  const Record st = a.state();
  EXPECT_EQ(st.scalars.at("step"), 4);
  EXPECT_EQ(st.scalars.at("inner.step"), 1);
  LinearWarmup b(CosineAnnealingLr(0.1, 5, 0.001), 3, 0.1);
  b.load_state(st);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(a.step(), b.step()) << "step " << i;

  Record bad = st;
  bad.scalars.erase("lr");
  expect_throw_with<ArgumentError>([&] { b.load_state(bad); }, "'step' and 'lr'");
  bad = st;
  bad.scalars["momentum"] = 1;
  expect_throw_with<ArgumentError>([&] { b.load_state(bad); }, "unexpected scalar 'momentum'");
}

// ---------------------------------------------------------------- a 2-layer MLP, written here as a reflected struct

template <Backend B>
struct Mlp {
  BOOST_HANA_DEFINE_STRUCT(Mlp, (Param<Tensor<B, 2>>, w1), (Param<Tensor<B, 1>>, b1), (Param<Tensor<B, 2>>, w2),
                           (Param<Tensor<B, 1>>, b2));
};

template <Backend B>
Mlp<B> make_mlp(uint64_t seed, int64_t hidden) {
  Rng rng(seed);
  Mlp<B> m;
  m.w1 = Param<Tensor<B, 2>>::initialized(ParamId::next(), Tensor<B, 2>::random({1, hidden}, Normal{0, 1}, rng));
  m.b1 = Param<Tensor<B, 1>>::initialized(ParamId::next(), Tensor<B, 1>::random({hidden}, Uniform{-1, 1}, rng));
  m.w2 = Param<Tensor<B, 2>>::initialized(ParamId::next(),
                                          Tensor<B, 2>::random({hidden, 1}, Normal{0, 1 / std::sqrt(double(hidden))}, rng));
  m.b2 = Param<Tensor<B, 1>>::initialized(ParamId::next(), Tensor<B, 1>::zeros({1}));
  return m;
}

template <Backend B>
Tensor<B, 2> forward(const Mlp<B>& m, const Tensor<B, 2>& x) {
  const int64_t h = m.b1.shape()[0];
  auto z = x.matmul(m.w1.val()).add(m.b1.val().template reshape<2>({1, h})).tanh();
  return z.matmul(m.w2.val()).add(m.b2.val().template reshape<2>({1, 1}));
}

// y = sin(x) on 32 points of [-2, 2], as [32, 1] columns.
template <Backend B>
std::pair<Tensor<B, 2>, Tensor<B, 2>> toy_data() {
  std::vector<double> xs, ys;
  for (int i = 0; i < 32; ++i) {
    xs.push_back(-2.0 + 4.0 * i / 31.0);
    ys.push_back(std::sin(xs.back()));
  }
  return {Tensor<B, 2>::from_values(xs, {32, 1}), Tensor<B, 2>::from_values(ys, {32, 1})};
}

template <Backend B>
Tensor<B, 1> mse(const Mlp<B>& m, const std::pair<Tensor<B, 2>, Tensor<B, 2>>& data) {
  auto d = forward(m, data.first).sub(data.second);
  return d.mul(d).mean();
}

TEST(EndToEnd, AdamFitsToyRegressionTenfold) {
  const auto data = toy_data<AF>();
  auto m = make_mlp<AF>(7, 16);
  Adam<AF> adam;
  const double first = mse(m, data).item();
  for (int s = 0; s < 300; ++s) m = adam.step(0.02, m, grads_of<AF>(m, [&](const Mlp<AF>& x) { return mse(x, data); }));
  const double last = mse(m, data).item();
  EXPECT_LT(last * 10, first) << "loss " << first << " -> " << last;
}

// ---------------------------------------------------------------- save / load: bit-identical continuation

template <class Opt, class MakeOpt>
void expect_bit_identical_resume(MakeOpt make_opt) {
  const auto data = toy_data<AF>();
  auto loss = [&](const Mlp<AF>& x) { return mse(x, data); };
  const auto start = make_mlp<AF>(11, 8);
  auto sched = [] { return LinearWarmup(CosineAnnealingLr(0.05, 6, 0.001), 2, 0.2); };

  // Uninterrupted: 6 steps. Param values are immutable, so `start` is reused below.
  Opt o1 = make_opt();
  auto s1 = sched();
  auto m1 = start;
  for (int i = 0; i < 6; ++i) m1 = o1.step(s1.step(), m1, grads_of<AF>(m1, loss));

  // Interrupted after 3 steps; model, optimizer and scheduler go through records into fresh objects.
  Opt o2 = make_opt();
  auto s2 = sched();
  auto m2 = start;
  for (int i = 0; i < 3; ++i) m2 = o2.step(s2.step(), m2, grads_of<AF>(m2, loss));
  const Record model_rec = into_record(m2);  // full precision: f32, lossless for Cpu<float>
  const Record optim_rec = convert_record<FullPrecisionSettings>(o2.state());
  const Record sched_rec = s2.state();

  auto m3 = load_record(make_mlp<AF>(99, 8), model_rec);  // other values, other ids: all replaced by the record
  Opt o3 = make_opt();
  o3.load_state(optim_rec, m3);
  auto s3 = sched();
  s3.load_state(sched_rec);
  for (int i = 0; i < 3; ++i) m3 = o3.step(s3.step(), m3, grads_of<AF>(m3, loss));

  const Record r1 = into_record(m1), r3 = into_record(m3);
  ASSERT_EQ(r1.params.size(), r3.params.size());
  for (const auto& [path, p] : r1.params) {
    EXPECT_EQ(p.data.bytes, r3.params.at(path).data.bytes) << path;
    EXPECT_EQ(p.id, r3.params.at(path).id) << path;
  }
  EXPECT_NE(into_record(start).params.at("w1").data.bytes, r1.params.at("w1").data.bytes);  // it did train
}

TEST(State, AdamWResumesBitIdentical) {
  expect_bit_identical_resume<AdamW<AF>>([] {
    AdamW<AF> o(AdamWConfig{.weight_decay = 0.05});
    o.set_param_options("b1", {2.0, 0.0});
    return o;
  });
}

TEST(State, SgdNesterovResumesBitIdentical) {
  expect_bit_identical_resume<Sgd<AF>>(
      [] { return Sgd<AF>(SgdConfig{.momentum = 0.9, .weight_decay = 1e-3, .nesterov = true}); });
}

TEST(State, RecordLayout) {
  auto m = make_pair<AD>({1, 2}, {3});
  Adam<AD> adam;
  for (int i = 0; i < 2; ++i) m = adam.step(0.1, m, grads_of<AD>(m, pair_half_sq<AD>));
  const Record st = adam.state();
  const std::string a = std::to_string(m.a.id().value), b = std::to_string(m.b.id().value);
  EXPECT_EQ(st.params.size(), 4u);
  EXPECT_EQ(st.params.at(a + ".exp_avg").id, m.a.id().value);
  EXPECT_EQ(st.params.at(b + ".exp_avg_sq").data.shape, (Shape{1, 1}));  // the param's own shape
  EXPECT_EQ(st.params.at(a + ".exp_avg").data.dtype, DType::F64);      // the inner backend's dtype: lossless
  EXPECT_EQ(st.scalars.at(a + ".step"), 2);
  // m after 2 steps from g = w: m1 = 0.1 g1, m2 = m1 + 0.1 (g2 - m1); a[0]: g = 1, 0.900000001 -> 0.1800000001,
  // a[1]: g = 2, 1.9000000005 -> 0.2 + 0.1 * 1.7000000005 = 0.37000000005
  expect_near(st.params.at(a + ".exp_avg").data.to_vec<double>(), {0.1800000001, 0.37000000005});
}

TEST(State, LoadErrorsAreClear) {
  auto m = make_pair<AD>({1, 2}, {3});
  Adam<AD> adam;
  m = adam.step(0.1, m, grads_of<AD>(m, pair_half_sq<AD>));
  const Record good = adam.state();
  const std::string a = std::to_string(m.a.id().value);

  // Moments of one param disagreeing on shape.
  Record bad = good;
  bad.params[a + ".exp_avg_sq"].data = TensorData::from_vec<double>({1, 2, 3}, Shape{3});
  expect_throw_with<ShapeError>([&] { adam.load_state(bad); }, "'" + a + ".exp_avg_sq' has shape [3]");

  // A module whose param (same id) has another shape: load_state(r, module) names the path.
  Pair<AD> other;
  other.a = param<AD, 1>({1, 2, 3}, {3}, true, ParamRole::Trainable, m.a.id());
  other.b = m.b;
  expect_throw_with<ShapeError>([&] { adam.load_state(good, other); },
                                "optimizer state for 'a' (param id " + a + ") has shape [2], the param has [3]");
  // Loaded without the module, the same mismatch is caught at the next step.
  Adam<AD> fresh;
  fresh.load_state(good);
  expect_throw_with<ShapeError>([&] { fresh.step(0.1, other, grads_of<AD>(other, pair_half_sq<AD>)); },
                                "has shape [2], the param has [3]");
  EXPECT_EQ(fresh.step_count(m.a.id()), 1);  // validation runs before any update: the state is untouched
  GradientsParams<AD> wrong;
  wrong.put(m.a.id(), Tensor<Cpu<double>, 1>::ones({5}));
  expect_throw_with<ShapeError>([&] { fresh.step(0.1, m, wrong); }, "gradient for 'a' has shape [5]");

  bad = good;
  bad.params.erase(a + ".exp_avg_sq");
  expect_throw_with<ArgumentError>([&] { adam.load_state(bad); }, "'exp_avg_sq' is missing");
  bad = good;
  bad.params[a + ".momentum_buffer"] = good.params.at(a + ".exp_avg");
  expect_throw_with<ArgumentError>([&] { adam.load_state(bad); }, "unexpected entry");
  bad = good;
  bad.scalars["lr"] = 0.1;
  expect_throw_with<ArgumentError>([&] { adam.load_state(bad); }, "is not '<param id>.<name>'");
  Pair<AD> stranger = make_pair<AD>({1, 2}, {3});  // new ids
  expect_throw_with<ArgumentError>([&] { adam.load_state(good, stranger); }, "the module does not have");

  // Failed loads changed nothing.
  EXPECT_EQ(adam.state().params.at(a + ".exp_avg").data.bytes, good.params.at(a + ".exp_avg").data.bytes);
  EXPECT_EQ(adam.step_count(m.a.id()), 1);
}

}  // namespace
}  // namespace ember::optim_test
