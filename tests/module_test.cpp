// Module traversal and the module API over nested modules and containers (vector, array, optional, tuple), with
// lazy params counted so that we know exactly when values are materialized.
#include <gtest/gtest.h>

#include <atomic>

#include "backends/cpu/cpu_backend.hpp"
#include "engine/ember.hpp"
#include "engine/module/module.hpp"
#include "records/module_record.hpp"

namespace ember {
namespace {

std::atomic<int> g_inits{0};

template <class T, std::size_t D>
Param<T> counted(std::array<int64_t, D> shape, double value) {
  Shape s(std::vector<int64_t>(shape.begin(), shape.end()));
  return Param<T>::uninitialized(
      ParamId::next(),
      [shape, value](const typename T::Device& d) {
        ++g_inits;
        return T::full(shape, value, d);
      },
      {}, true, s);
}

template <Backend B>
struct Leaf {
  BOOST_HANA_DEFINE_STRUCT(Leaf, (Param<Tensor<B, 2>>, weight), (std::optional<Param<Tensor<B, 1>>>, bias),
                           (int, config_value));
};

template <Backend B>
struct Tree {
  BOOST_HANA_DEFINE_STRUCT(Tree, (Leaf<B>, head), (std::vector<Leaf<B>>, layers), (std::array<Leaf<B>, 2>, pair),
                           (std::optional<Leaf<B>>, maybe), (std::tuple<Leaf<B>, double>, tup),
                           (Param<Tensor<B, 1, Int>>, counts), (Param<Tensor<B, 1, Bool>>, mask),
                           (Param<Tensor<B, 1>>, scale), (TrainingFlag, mode));
};

template <Backend B>
Leaf<B> leaf(int64_t in, int64_t out, bool bias = true) {
  Leaf<B> l;
  l.weight = counted<Tensor<B, 2>>(std::array<int64_t, 2>{in, out}, 0.5);
  if (bias) l.bias = counted<Tensor<B, 1>>(std::array<int64_t, 1>{out}, 0.25);
  l.config_value = 7;
  return l;
}

template <Backend B>
Tree<B> tree() {
  Tree<B> t;
  t.head = leaf<B>(2, 3);
  t.layers = {leaf<B>(3, 4), leaf<B>(4, 5, false)};
  t.pair = {leaf<B>(1, 1), leaf<B>(1, 2)};
  t.maybe = leaf<B>(5, 1);
  t.tup = {leaf<B>(2, 2), 3.5};
  t.counts = make_buffer(Tensor<B, 1, Int>::from_values(std::vector<int64_t>{1, 2, 3}, {3}));
  t.mask = make_constant(Tensor<B, 1, Bool>::from_values(std::vector<bool>{true, false}, {2}));
  t.scale = make_constant(Tensor<B, 1>::ones({4}));
  return t;
}

using AB = Autodiff<Cpu<float>>;

TEST(Module, PathsCoverNestingAndContainers) {
  std::vector<std::string> paths;
  for (const auto& p : named_parameters(tree<AB>())) paths.push_back(p.path);
  const std::vector<std::string> want = {
      "head.weight", "head.bias", "layers.0.weight", "layers.0.bias", "layers.1.weight", "pair.0.weight",
      "pair.0.bias", "pair.1.weight", "pair.1.bias", "maybe.weight", "maybe.bias", "tup.0.weight", "tup.0.bias",
      "counts", "mask", "scale"};
  EXPECT_EQ(paths, want);
}

TEST(Module, CountingAndQueriesNeverMaterialize) {
  g_inits = 0;
  const auto t = tree<AB>();
  EXPECT_EQ(num_params(t), 6 + 3 + 12 + 4 + 20 + 1 + 1 + 2 + 2 + 5 + 1 + 4 + 2 + 3 + 2 + 4);
  EXPECT_EQ(devices(t).size(), 1u);
  for (const auto& p : named_parameters(t)) {
    if (p.role == ParamRole::Trainable) {
      EXPECT_FALSE(p.initialized) << p.path;
    }
  }
  auto frozen = freeze(t, "layers");
  auto moved = to_device(t, cpu::CpuDevice{});
  EXPECT_EQ(g_inits.load(), 0);
  EXPECT_FALSE(moved.head.weight.is_initialized());
}

TEST(Module, LoadingARecordIntoAFreshModuleRunsNoInitializer) {
  const auto trained = tree<AB>();
  const Record rec = into_record(trained);  // materializes `trained` (saving needs values)
  g_inits = 0;
  const auto loaded = load_record(tree<AB>(), rec);
  EXPECT_EQ(g_inits.load(), 0);
  EXPECT_TRUE(loaded.head.weight.is_initialized());
  EXPECT_EQ(loaded.head.weight.id(), trained.head.weight.id());  // ParamIds come from the record
  EXPECT_EQ(loaded.counts.val().to_vec<int64_t>(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(loaded.mask.role(), ParamRole::Constant);
  EXPECT_EQ(loaded.head.config_value, 7);  // non-module members are carried
  EXPECT_EQ(std::get<1>(loaded.tup), 3.5);
}

TEST(Module, FreezeAndRolesControlRequireGrad) {
  auto t = freeze(tree<AB>(), "layers");
  for (const auto& p : named_parameters(t)) {
    const bool in_layers = p.path.rfind("layers.", 0) == 0;
    const bool trainable = p.role == ParamRole::Trainable && p.kind == ParamKind::Float;
    EXPECT_EQ(p.require_grad, trainable && !in_layers) << p.path;
  }
  // "layer" is not a path component prefix of "layers.0": nothing else is frozen.
  auto u = freeze(tree<AB>(), "layer");
  EXPECT_TRUE(u.layers[0].weight.require_grad());
  auto all = no_grad(tree<AB>());
  for (const auto& p : named_parameters(all)) EXPECT_FALSE(p.require_grad) << p.path;
}

TEST(Module, FrozenParamsGetNoGradient) {
  auto t = freeze(tree<AB>(), "head");
  const auto x = Tensor<AB, 2>::ones({1, 2});
  auto y = x.matmul(t.head.weight.val()).matmul(t.layers[0].weight.val()).sum();
  auto grads = y.backward();
  EXPECT_FALSE(t.head.weight.val().grad(grads).has_value());
  EXPECT_TRUE(t.layers[0].weight.val().grad(grads).has_value());
}

TEST(Module, ValidGivesTheInnerBackendInEvalMode) {
  auto t = tree<AB>();
  t.head.weight.val();  // materialized on the autodiff side
  const auto v = valid(t);
  static_assert(std::is_same_v<std::decay_t<decltype(v)>, Tree<Cpu<float>>>);
  EXPECT_FALSE(v.mode.training);
  EXPECT_EQ(v.head.weight.val().to_vec<float>(), t.head.weight.val().inner().to_vec<float>());
  EXPECT_EQ(v.head.weight.id(), t.head.weight.id());
  EXPECT_EQ(num_params(v), num_params(t));
}

TEST(Module, TrainAndEvalFlipEveryFlag) {
  auto t = eval(tree<AB>());
  EXPECT_FALSE(t.mode.training);
  EXPECT_TRUE(train(t).mode.training);
}

TEST(Module, ForkMakesIndependentLeaves) {
  auto t = tree<AB>();
  const auto f = fork(t, cpu::CpuDevice{});
  EXPECT_EQ(f.head.weight.id(), t.head.weight.id());
  auto y = f.head.weight.val().sum();
  auto grads = y.backward();
  EXPECT_TRUE(f.head.weight.val().grad(grads).has_value());
  EXPECT_FALSE(t.head.weight.val().grad(grads).has_value());
}

TEST(Module, CopiesShareOneLazyInitialization) {
  g_inits = 0;
  const auto a = leaf<AB>(2, 2);
  const auto b = a;
  EXPECT_EQ(a.weight.val().to_vec<float>(), b.weight.val().to_vec<float>());
  EXPECT_EQ(g_inits.load(), 1);
}

TEST(Module, PartialLoadReportsAndKeepsTheRest) {
  auto small = tree<AB>();
  small.layers.pop_back();
  Record rec = into_record(small);
  rec.params.erase("head.bias");
  rec.params["extra.weight"] = rec.params["head.weight"];
  LoadReport report;
  g_inits = 0;
  auto loaded = load_record(tree<AB>(), rec, LoadMode::Partial, &report);
  EXPECT_EQ(report.missing, (std::vector<std::string>{"head.bias", "layers.1.weight"}));
  EXPECT_EQ(report.unexpected, (std::vector<std::string>{"extra.weight"}));
  EXPECT_TRUE(report.mismatched.empty());
  EXPECT_TRUE(loaded.head.weight.is_initialized());
  EXPECT_FALSE(loaded.head.bias->is_initialized());  // missing: left lazy, not initialized by the load
  EXPECT_EQ(g_inits.load(), 0);
  EXPECT_THROW(load_record(tree<AB>(), rec), LoadError);
}

TEST(Module, ARecordWhoseParamsShareAnIdIsRefused) {
  Record rec = into_record(tree<AB>());
  rec.params["head.bias"].id = rec.params["head.weight"].id;  // optimizer state would mix the two params
  try {
    (void)load_record(tree<AB>(), rec, LoadMode::Partial);
    FAIL() << "expected LoadError";
  } catch (const LoadError& e) {
    EXPECT_NE(std::string(e.what()).find("share ParamId"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ember
