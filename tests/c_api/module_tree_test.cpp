// Module trees through the C ABI: containers, per-layer modules, caller params shared by handle, lazy layers,
// train/eval, freezing, apply, state_set and path-keyed records (issue 11).
#include <cmath>
#include <string>
#include <vector>

#include "tests/c_api/capi_support.hpp"

namespace ember::capi_test {
namespace {

Module container() {
  ember_module* m = nullptr;
  EXPECT_EQ(ember_module_create(nullptr, &m), EMBER_OK) << ember_last_error();
  return Module(m);
}
Module layer_module(const ember_layer_desc& d) {
  ember_module* m = nullptr;
  EXPECT_EQ(ember_module_layer(nullptr, &d, &m), EMBER_OK) << ember_last_error();
  return Module(m);
}
Tensor param_at(const ember_module* m, const char* path) {
  ember_tensor* t = nullptr;
  EXPECT_EQ(ember_module_find_param(m, path, &t), EMBER_OK) << ember_last_error();
  return Tensor(t);
}
std::vector<std::string> names(const ember_module* m) {
  size_t n = 0;
  EXPECT_EQ(ember_module_param_count(m, &n), EMBER_OK) << ember_last_error();
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back(param_name(m, i));
  return out;
}
Tensor leaf(const std::vector<float>& v, const std::vector<int64_t>& shape) {
  Tensor t = f32(v, shape);
  EXPECT_EQ(ember_tensor_set_requires_grad(t.get(), 1), EMBER_OK) << ember_last_error();
  return t;
}
void set_state(ember_module* m, const char* path, const std::vector<float>& v, const std::vector<int64_t>& shape) {
  auto t = f32(v, shape);
  EXPECT_EQ(ember_module_state_set(m, path, t.get()), EMBER_OK) << ember_last_error();
}
void expect_near(const std::vector<float>& got, const std::vector<double>& want, double tol = 1e-6) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

// model = {scale (caller's [1]), fc: Linear(3, 2)}
struct Model {
  Module root = container();
  Module fc;
  Tensor scale = leaf({2.0f}, {1});
  Model() {
    fc = layer_module(linear(3, 2));
    EXPECT_EQ(ember_module_add_param(root.get(), "scale", scale.get(), EMBER_PARAM_TRAINABLE), EMBER_OK)
        << ember_last_error();
    EXPECT_EQ(ember_module_add_child(root.get(), "fc", fc.get()), EMBER_OK) << ember_last_error();
  }
};

TEST(CApiModuleTree, ParamsAreListedRecursivelyWithDottedPathsAndAreTheCallersHandles) {
  Model m;
  EXPECT_EQ(names(m.root.get()), (std::vector<std::string>{"scale", "fc.weight", "fc.bias"}));
  ember_tensor* p = nullptr;
  EMBER_ASSERT_OK(ember_module_param(m.root.get(), 0, &p));
  EXPECT_EQ(p, m.scale.get());  // the caller's own handle, not a copy
  EMBER_EXPECT_OK(ember_tensor_free(p));
  auto w = param_at(m.root.get(), "fc.weight");
  EXPECT_EQ(shape_of(w.get()), (std::vector<int64_t>{3, 2}));  // nn::Linear stores [in, out]
  ember_param_info info{};
  info.struct_size = sizeof info;
  EMBER_ASSERT_OK(ember_module_param_info(m.root.get(), 0, &info));
  EXPECT_EQ(info.role, EMBER_PARAM_TRAINABLE);
  EXPECT_EQ(info.requires_grad, 1);
  EXPECT_EQ(info.numel, 1);
  int64_t numel = 0;
  EMBER_ASSERT_OK(ember_module_num_elements(m.root.get(), &numel));
  EXPECT_EQ(numel, 1 + 6 + 2);
  ember_tensor* none = nullptr;
  EMBER_EXPECT_ERR(ember_module_find_param(m.root.get(), "fc.nope", &none), EMBER_ERR_INDEX, "no param 'fc.nope'");
  EMBER_EXPECT_ERR(ember_module_param(m.root.get(), 3, &none), EMBER_ERR_INDEX, "out of range for 3 params");
  ember_module* child = nullptr;
  EMBER_ASSERT_OK(ember_module_child(m.root.get(), "fc", &child));
  Module c(child);
  EXPECT_EQ(names(c.get()), (std::vector<std::string>{"weight", "bias"}));
  size_t nc = 0;
  EMBER_ASSERT_OK(ember_module_child_count(m.root.get(), &nc));
  EXPECT_EQ(nc, 1u);
  EMBER_EXPECT_ERR(ember_module_child(m.root.get(), "conv", &child), EMBER_ERR_INDEX, "no child named 'conv'");
}

TEST(CApiModuleTree, TreeShapeErrorsAreReported) {
  Model m;
  auto other = layer_module(linear(2, 2));
  EMBER_EXPECT_ERR(ember_module_add_child(m.root.get(), "fc", other.get()), EMBER_ERR_INVALID_ARGUMENT,
                   "already has a child named 'fc'");
  EMBER_EXPECT_ERR(ember_module_add_child(m.root.get(), "scale", other.get()), EMBER_ERR_INVALID_ARGUMENT,
                   "already has a param named 'scale'");
  EMBER_EXPECT_ERR(ember_module_add_child(m.root.get(), "a.b", other.get()), EMBER_ERR_INVALID_ARGUMENT,
                   "contains '.'");
  auto inner = container();
  EMBER_ASSERT_OK(ember_module_add_child(m.root.get(), "inner", inner.get()));
  EMBER_EXPECT_ERR(ember_module_add_child(inner.get(), "loop", m.root.get()), EMBER_ERR_INVALID_ARGUMENT,
                   "no cycles");
  EMBER_EXPECT_ERR(ember_module_add_child(m.fc.get(), "x", other.get()), EMBER_ERR_INVALID_ARGUMENT,
                   "a layer module has no children");
  auto seq = sequential({linear(2, 2)});
  EMBER_EXPECT_ERR(ember_module_add_child(m.root.get(), "seq", seq.get()), EMBER_ERR_INVALID_ARGUMENT,
                   "cannot be a child");
  // Params: float leaves only.
  auto ints = i64({1, 2}, {2});
  EMBER_EXPECT_ERR(ember_module_add_param(m.root.get(), "i", ints.get(), EMBER_PARAM_TRAINABLE), EMBER_ERR_DTYPE,
                   "must be a float tensor");
  EMBER_EXPECT_OK(ember_module_add_param(m.root.get(), "counts", ints.get(), EMBER_PARAM_BUFFER));
  ember_tensor* twice = nullptr;
  EMBER_ASSERT_OK(ember_tensor_scalar(m.scale.get(), EMBER_SCALAR_MUL, 2.0, &twice));
  Tensor t(twice);
  EMBER_EXPECT_ERR(ember_module_add_param(m.root.get(), "derived", t.get(), EMBER_PARAM_TRAINABLE),
                   EMBER_ERR_INVALID_ARGUMENT, "not a leaf");
  EMBER_EXPECT_ERR(ember_module_add_param(m.root.get(), "r", m.scale.get(), 7), EMBER_ERR_INVALID_ARGUMENT,
                   "unknown param role 7");
  // A container's forward is the caller's.
  auto x = f32({1, 2, 3}, {1, 3});
  ember_tensor* y = nullptr;
  EMBER_EXPECT_ERR(ember_module_forward(m.root.get(), x.get(), EMBER_MODE_EVAL, &y), EMBER_ERR_INVALID_ARGUMENT,
                   "written by the caller");
}

TEST(CApiModuleTree, LayerForwardUsesTheCurrentValuesOfItsParamHandles) {
  auto fc = layer_module(linear(3, 2));
  set_state(fc.get(), "weight", {1, 2, 3, 4, 5, 6}, {3, 2});  // [in, out]
  set_state(fc.get(), "bias", {0.5f, -1}, {2});
  auto x = f32({1, 1, 2}, {1, 3});
  // y = x W + b = [1+3+10, 2+4+12] + b
  expect_near(floats(forward(fc.get(), x.get()).get()), {14.5, 17});
  // An optimizer over the live handle updates what the next forward uses: SGD(lr 0.5) with d(sum y)/db = [1, 1].
  auto b = param_at(fc.get(), "bias");
  ember_tensor* bh = b.get();
  ember_optimizer_options o;
  EMBER_ASSERT_OK(ember_optimizer_options_init(&o, EMBER_OPTIM_SGD));
  o.lr = 0.5;
  ember_optimizer* opt = nullptr;
  EMBER_ASSERT_OK(ember_optimizer_create_params(&bh, 1, &o, &opt));
  Optim op(opt);
  auto y = forward(fc.get(), x.get(), EMBER_MODE_TRAIN);
  ember_tensor* s = nullptr;
  EMBER_ASSERT_OK(ember_tensor_reduce_all(y.get(), EMBER_REDUCE_SUM, &s));
  Tensor loss(s);
  ember_grads* g = nullptr;
  EMBER_ASSERT_OK(ember_tensor_backward(loss.get(), nullptr, &g));
  Grads grads(g);
  EMBER_ASSERT_OK(ember_optimizer_step(opt, grads.get()));
  expect_near(floats(b.get()), {0.0, -1.5});
  expect_near(floats(forward(fc.get(), x.get()).get()), {14, 16.5});
}

TEST(CApiModuleTree, CallerParamUpdatesAreSeenByTheModuleAndTheCaller) {
  Model m;
  ember_tensor* s = m.scale.get();
  ember_optimizer_options o;
  EMBER_ASSERT_OK(ember_optimizer_options_init(&o, EMBER_OPTIM_SGD));
  o.lr = 0.25;
  ember_optimizer* opt = nullptr;
  EMBER_ASSERT_OK(ember_optimizer_create_params(&s, 1, &o, &opt));
  Optim op(opt);
  // loss = 3 * scale: d/dscale = 3.
  ember_tensor* l = nullptr;
  EMBER_ASSERT_OK(ember_tensor_scalar(s, EMBER_SCALAR_MUL, 3.0, &l));
  Tensor loss(l);
  ember_grads* g = nullptr;
  EMBER_ASSERT_OK(ember_tensor_backward(loss.get(), nullptr, &g));
  Grads grads(g);
  EMBER_ASSERT_OK(ember_optimizer_step(opt, grads.get()));
  expect_near(floats(m.scale.get()), {2.0 - 0.25 * 3});
  expect_near(floats(param_at(m.root.get(), "scale").get()), {2.0 - 0.25 * 3});
  int32_t rg = 0;
  EMBER_ASSERT_OK(ember_tensor_requires_grad(s, &rg));
  EXPECT_EQ(rg, 1);  // still a leaf that requires grad: the next forward trains it again
}

TEST(CApiModuleTree, HeldHandlesOutliveTheCallersReferenceAndAreFreedOncePerHandout) {
  Module root = container();
  ember_tensor* t = nullptr;
  const float v = 1.5f;
  const int64_t shape = 1;
  EMBER_ASSERT_OK(ember_tensor_from_data(nullptr, EMBER_DTYPE_F32, &v, sizeof v, &shape, 1, &t));
  EMBER_ASSERT_OK(ember_module_add_param(root.get(), "p", t, EMBER_PARAM_TRAINABLE));
  EMBER_ASSERT_OK(ember_tensor_free(t));  // the module still holds it
  EMBER_EXPECT_ERR(ember_tensor_free(t), EMBER_ERR_INVALID_HANDLE, "already freed");
  ember_tensor* again = nullptr;
  EMBER_ASSERT_OK(ember_module_param(root.get(), 0, &again));
  EXPECT_EQ(again, t);
  expect_near(floats(again), {1.5});
  EMBER_ASSERT_OK(ember_tensor_free(again));
  root.reset();  // the last holder: the handle is gone now
  int64_t n = 0;
  EMBER_EXPECT_ERR(ember_tensor_numel(t, &n), EMBER_ERR_INVALID_HANDLE, "already freed");
}

TEST(CApiModuleTree, LazyLinearMaterializesItsSameHandlesOnTheFirstForward) {
  EMBER_ASSERT_OK(ember_seed(3));
  auto lazy = layer_module(linear(0, 2));
  auto w = param_at(lazy.get(), "weight");
  EXPECT_EQ(shape_of(w.get()), (std::vector<int64_t>{0}));
  // An optimizer made before the first forward (as with torch's UninitializedParameter) holds the same handles.
  ember_tensor* params[2] = {w.get(), nullptr};
  auto b = param_at(lazy.get(), "bias");
  params[1] = b.get();
  ember_optimizer_options o;
  EMBER_ASSERT_OK(ember_optimizer_options_init(&o, EMBER_OPTIM_SGD));
  o.lr = 1.0;
  ember_optimizer* opt = nullptr;
  EMBER_ASSERT_OK(ember_optimizer_create_params(params, 2, &o, &opt));
  Optim op(opt);
  ember_record* rec = nullptr;
  EMBER_EXPECT_ERR(ember_module_to_record(lazy.get(), &rec), EMBER_ERR_INVALID_ARGUMENT, "lazy layer");
  auto x = f32({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});
  auto y = forward(lazy.get(), x.get(), EMBER_MODE_TRAIN);
  EXPECT_EQ(shape_of(y.get()), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(shape_of(w.get()), (std::vector<int64_t>{4, 2}));
  // The same values an eager Linear(4, 2) draws from the same seed.
  EMBER_ASSERT_OK(ember_seed(3));
  auto eager = layer_module(linear(4, 2));
  EXPECT_EQ(floats(w.get()), floats(param_at(eager.get(), "weight").get()));
  // One SGD step reaches the materialized bias: d(sum y)/db = [2, 2].
  const auto b0 = floats(b.get());
  ember_tensor* s = nullptr;
  EMBER_ASSERT_OK(ember_tensor_reduce_all(y.get(), EMBER_REDUCE_SUM, &s));
  Tensor loss(s);
  ember_grads* g = nullptr;
  EMBER_ASSERT_OK(ember_tensor_backward(loss.get(), nullptr, &g));
  Grads grads(g);
  EMBER_ASSERT_OK(ember_optimizer_step(opt, grads.get()));
  expect_near(floats(b.get()), {b0[0] - 2.0, b0[1] - 2.0});
  // Later inputs must fit the inferred in_features.
  auto bad = f32({1, 2, 3}, {1, 3});
  ember_tensor* out = nullptr;
  EMBER_EXPECT_ERR(ember_module_forward(lazy.get(), bad.get(), EMBER_MODE_EVAL, &out), EMBER_ERR_SHAPE, "expected d_input 4");
}

TEST(CApiModuleTree, LazyConvTakesARecordsShapesBeforeItsFirstForward) {
  EMBER_ASSERT_OK(ember_seed(5));
  auto conv = layer(EMBER_LAYER_CONV2D);
  conv.in_features = 2;
  conv.out_features = 3;
  conv.kernel_size[0] = conv.kernel_size[1] = 3;
  auto eager = layer_module(conv);
  conv.in_features = 0;
  auto lazy = layer_module(conv);
  ember_record* r = nullptr;
  EMBER_ASSERT_OK(ember_module_to_record(eager.get(), &r));
  RecordH rec(r);
  EMBER_ASSERT_OK(ember_module_load_record(lazy.get(), rec.get(), EMBER_LOAD_STRICT, nullptr));
  EXPECT_EQ(shape_of(param_at(lazy.get(), "weight").get()), (std::vector<int64_t>{3, 2, 3, 3}));
  auto x = f32(std::vector<float>(2 * 2 * 5 * 5, 0.25f), {2, 2, 5, 5});
  EXPECT_EQ(floats(forward(lazy.get(), x.get()).get()), floats(forward(eager.get(), x.get()).get()));
}

TEST(CApiModuleTree, LazyNormsInferTheirFeaturesFromDimOneOrTheLastDim) {
  auto bn = layer(EMBER_LAYER_BATCH_NORM2D);
  bn.in_features = 0;
  auto b = layer_module(bn);
  EXPECT_EQ(names(b.get()), (std::vector<std::string>{"gamma", "beta", "running_mean", "running_var"}));
  auto img = f32(std::vector<float>(2 * 3 * 2 * 2, 1.0f), {2, 3, 2, 2});
  forward(b.get(), img.get(), EMBER_MODE_TRAIN);
  EXPECT_EQ(shape_of(param_at(b.get(), "running_var").get()), (std::vector<int64_t>{3}));
  expect_near(floats(param_at(b.get(), "gamma").get()), {1, 1, 1});
  auto ln = layer(EMBER_LAYER_LAYER_NORM);
  ln.in_features = 0;
  auto l = layer_module(ln);
  auto x = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  forward(l.get(), x.get());
  EXPECT_EQ(shape_of(param_at(l.get(), "beta").get()), (std::vector<int64_t>{3}));
  auto conv = layer(EMBER_LAYER_CONV2D);
  conv.in_features = 0;
  conv.out_features = 2;
  auto c = layer_module(conv);
  auto flat = f32({1, 2}, {1, 2});
  ember_tensor* out = nullptr;
  EMBER_EXPECT_ERR(ember_module_forward(c.get(), flat.get(), EMBER_MODE_EVAL, &out), EMBER_ERR_SHAPE,
                   "lazy conv2d: input must be [N, C, H, W], got [1, 2]");
}

TEST(CApiModuleTree, TrainEvalAndFreezingReachEveryModule) {
  Model m;
  auto deep = container();
  auto bn = layer(EMBER_LAYER_BATCH_NORM1D);
  bn.in_features = 2;
  auto norm = layer_module(bn);
  EMBER_ASSERT_OK(ember_module_add_child(deep.get(), "norm", norm.get()));
  EMBER_ASSERT_OK(ember_module_add_child(m.root.get(), "deep", deep.get()));
  int32_t train = 0;
  EMBER_ASSERT_OK(ember_module_is_training(norm.get(), &train));
  EXPECT_EQ(train, 1);  // nn.Module starts in training mode
  EMBER_ASSERT_OK(ember_module_set_training(m.root.get(), 0));
  for (ember_module* x : {m.root.get(), m.fc.get(), deep.get(), norm.get()}) {
    EMBER_ASSERT_OK(ember_module_is_training(x, &train));
    EXPECT_EQ(train, 0);
  }
  EMBER_ASSERT_OK(ember_module_set_requires_grad(m.root.get(), 0));
  size_t n = 0;
  EMBER_ASSERT_OK(ember_module_param_count(m.root.get(), &n));
  EXPECT_EQ(n, 3u + 4u);
  for (size_t i = 0; i < n; ++i) {
    ember_param_info info{};
    info.struct_size = sizeof info;
    EMBER_ASSERT_OK(ember_module_param_info(m.root.get(), i, &info));
    EXPECT_EQ(info.requires_grad, 0) << param_name(m.root.get(), i);
  }
  EMBER_ASSERT_OK(ember_module_set_requires_grad(m.fc.get(), 1));
  int32_t rg = 0;
  EMBER_ASSERT_OK(ember_tensor_requires_grad(param_at(m.root.get(), "fc.weight").get(), &rg));
  EXPECT_EQ(rg, 1);
  EMBER_ASSERT_OK(ember_tensor_requires_grad(m.scale.get(), &rg));
  EXPECT_EQ(rg, 0);
  // Buffers never require grad.
  EMBER_ASSERT_OK(ember_module_set_requires_grad(norm.get(), 1));
  EMBER_ASSERT_OK(ember_tensor_requires_grad(param_at(norm.get(), "running_mean").get(), &rg));
  EXPECT_EQ(rg, 0);
}

struct Visits {
  std::vector<std::string> paths;
  int stop_at = -1;
};
ember_status visit(void* user, ember_module* m, const char* path) {
  auto* v = static_cast<Visits*>(user);
  size_t n = 0;
  if (ember_module_param_count(m, &n) != EMBER_OK) return EMBER_ERR_INTERNAL;
  v->paths.push_back(std::string(path) + ":" + std::to_string(n));
  return static_cast<int>(v->paths.size()) == v->stop_at ? EMBER_ERR_INDEX : EMBER_OK;
}

TEST(CApiModuleTree, ApplyVisitsChildrenBeforeParentsAndStopsOnAnError) {
  Model m;
  auto block = container();
  auto conv = layer(EMBER_LAYER_CONV2D);
  conv.in_features = 1;
  conv.out_features = 1;
  auto c1 = layer_module(conv);
  EMBER_ASSERT_OK(ember_module_add_child(block.get(), "conv", c1.get()));
  EMBER_ASSERT_OK(ember_module_add_child(m.root.get(), "block", block.get()));
  Visits v;
  EMBER_ASSERT_OK(ember_module_apply(m.root.get(), visit, &v));
  EXPECT_EQ(v.paths, (std::vector<std::string>{"fc:2", "block.conv:2", "block:2", ":5"}));
  Visits stop;
  stop.stop_at = 2;
  EXPECT_EQ(ember_module_apply(m.root.get(), visit, &stop), EMBER_ERR_INDEX);
  EXPECT_EQ(stop.paths.size(), 2u);
}

// A visitor that fails by itself sets no message: ember_module_apply returned its status with an empty (or a
// stale) ember_last_error(), breaking ember.h's rule that every failure names the function (found by the fuzzer).
// A visitor's own number outside ember_status_code came back as is.
TEST(CApiFuzzFound, ApplyNamesTheFailingVisitAndKeepsStatusesInRange) {
  Model m;
  auto fail_with = [](void* user, ember_module*, const char*) -> ember_status {
    return *static_cast<ember_status*>(user);
  };
  ember_status code = EMBER_ERR_SHAPE;
  EMBER_EXPECT_ERR(ember_module_apply(m.root.get(), fail_with, &code), EMBER_ERR_SHAPE,
                   "ember_module_apply: the visitor returned EMBER_ERR_SHAPE at module 'fc'");
  code = 1234;
  EMBER_EXPECT_ERR(ember_module_apply(m.root.get(), fail_with, &code), EMBER_ERR_INVALID_ARGUMENT,
                   "the visitor returned 1234");
  // A visitor failing on an ember_* call and passing its status on: that call's message is kept.
  auto bad_call = [](void*, ember_module*, const char*) -> ember_status {
    ember_tensor* out = nullptr;
    return ember_tensor_add(nullptr, nullptr, &out);
  };
  EMBER_EXPECT_ERR(ember_module_apply(m.root.get(), bad_call, nullptr), EMBER_ERR_NULL_HANDLE,
                   "its last error: ember_tensor_add: ");
}

// Two trees built the same way: {scale, conv: Conv2d(1, 2, 3), head: {fc: Linear(8, 3)}}.
Module build_tree(uint64_t seed, Tensor& scale) {
  EXPECT_EQ(ember_seed(seed), EMBER_OK);
  Module root = container();
  scale = leaf({static_cast<float>(seed)}, {1});
  EXPECT_EQ(ember_module_add_param(root.get(), "scale", scale.get(), EMBER_PARAM_TRAINABLE), EMBER_OK);
  auto conv = layer(EMBER_LAYER_CONV2D);
  conv.in_features = 1;
  conv.out_features = 2;
  conv.kernel_size[0] = conv.kernel_size[1] = 3;
  auto c = layer_module(conv);
  EXPECT_EQ(ember_module_add_child(root.get(), "conv", c.get()), EMBER_OK);
  auto head = container();
  auto fc = layer_module(linear(8, 3));
  EXPECT_EQ(ember_module_add_child(head.get(), "fc", fc.get()), EMBER_OK);
  EXPECT_EQ(ember_module_add_child(root.get(), "head", head.get()), EMBER_OK);
  return root;
}

TEST(CApiModuleTree, ATreeSavedToAFileLoadsIntoAFreshIdenticalTree) {
  Tensor sa, sb;
  auto a = build_tree(7, sa);
  auto b = build_tree(8, sb);
  EXPECT_EQ(names(a.get()),
            (std::vector<std::string>{"scale", "conv.weight", "conv.bias", "head.fc.weight", "head.fc.bias"}));
  EXPECT_NE(floats(param_at(a.get(), "conv.weight").get()), floats(param_at(b.get(), "conv.weight").get()));
  TempPath file("tree.bin");
  EMBER_ASSERT_OK(ember_module_save(a.get(), file.path.c_str(), nullptr));
  ember_load_report* rep = nullptr;
  EMBER_ASSERT_OK(ember_module_load(b.get(), file.path.c_str(), EMBER_LOAD_STRICT, &rep));
  Report report(rep);
  size_t missing = 9, unexpected = 9, mismatched = 9;
  EMBER_ASSERT_OK(ember_load_report_counts(rep, &missing, &unexpected, &mismatched));
  EXPECT_EQ(missing + unexpected + mismatched, 0u);
  for (const char* p : {"scale", "conv.weight", "conv.bias", "head.fc.weight", "head.fc.bias"})
    EXPECT_EQ(floats(param_at(a.get(), p).get()), floats(param_at(b.get(), p).get())) << p;
  expect_near(floats(sb.get()), {7.0});  // loaded into the caller's own handle
  // Ids follow the record (they key optimizer state across save / load).
  ember_param_info ia{}, ib{};
  ia.struct_size = ib.struct_size = sizeof ia;
  EMBER_ASSERT_OK(ember_module_param_info(a.get(), 1, &ia));
  EMBER_ASSERT_OK(ember_module_param_info(b.get(), 1, &ib));
  EXPECT_EQ(ia.id, ib.id);
  // The forward the caller writes gives the same result on both.
  auto x = f32(std::vector<float>(16, 0.5f), {1, 1, 4, 4});
  ember_module *ca = nullptr, *cb = nullptr;
  EMBER_ASSERT_OK(ember_module_child(a.get(), "conv", &ca));
  EMBER_ASSERT_OK(ember_module_child(b.get(), "conv", &cb));
  Module mca(ca), mcb(cb);
  EXPECT_EQ(floats(forward(ca, x.get()).get()), floats(forward(cb, x.get()).get()));
}

TEST(CApiModuleTree, StrictLoadIntoADifferentTreeReportsEveryMismatchAndChangesNothing) {
  Tensor sa, sb;
  auto a = build_tree(7, sa);
  auto b = build_tree(8, sb);
  auto extra = f32({1, 2}, {2});
  EMBER_ASSERT_OK(ember_module_add_param(b.get(), "extra", extra.get(), EMBER_PARAM_BUFFER));
  ember_module* head = nullptr;
  EMBER_ASSERT_OK(ember_module_child(b.get(), "head", &head));
  Module h(head);
  auto fc2 = layer_module(linear(8, 4));
  EMBER_ASSERT_OK(ember_module_add_child(head, "fc2", fc2.get()));
  ember_record* r = nullptr;
  EMBER_ASSERT_OK(ember_module_to_record(a.get(), &r));
  RecordH rec(r);
  size_t entries = 0;
  EMBER_ASSERT_OK(ember_record_entry_count(r, &entries));
  EXPECT_EQ(entries, 5u);
  const auto before = floats(param_at(b.get(), "conv.weight").get());
  ember_load_report* rep = nullptr;
  EMBER_EXPECT_ERR(ember_module_load_record(b.get(), r, EMBER_LOAD_STRICT, &rep), EMBER_ERR_RECORD,
                   "head.fc2.weight");
  Report report(rep);
  size_t missing = 0, unexpected = 0, mismatched = 0;
  EMBER_ASSERT_OK(ember_load_report_counts(rep, &missing, &unexpected, &mismatched));
  EXPECT_EQ(missing, 3u);  // extra, head.fc2.weight, head.fc2.bias
  EXPECT_EQ(unexpected, 0u);
  EXPECT_EQ(floats(param_at(b.get(), "conv.weight").get()), before);
  // Partial: what matches loads.
  EMBER_ASSERT_OK(ember_module_load_record(b.get(), r, EMBER_LOAD_PARTIAL, nullptr));
  EXPECT_EQ(floats(param_at(b.get(), "conv.weight").get()), floats(param_at(a.get(), "conv.weight").get()));
  // A shape mismatch is reported per path.
  auto c = container();
  auto fc = layer_module(linear(8, 5));
  EMBER_ASSERT_OK(ember_module_add_child(c.get(), "fc", fc.get()));
  ember_module* ah = nullptr;
  EMBER_ASSERT_OK(ember_module_child(a.get(), "head", &ah));
  Module ahm(ah);
  ember_record* hr = nullptr;
  EMBER_ASSERT_OK(ember_module_to_record(ah, &hr));
  RecordH hrec(hr);
  EMBER_EXPECT_ERR(ember_module_load_record(c.get(), hr, EMBER_LOAD_STRICT, nullptr), EMBER_ERR_RECORD,
                   "fc.weight: shape [8, 3] in record, [8, 5] in module");
}

TEST(CApiModuleTree, StateSetChecksDtypeAndShape) {
  Model m;
  auto wrong = f32({1, 2}, {2});
  EMBER_EXPECT_ERR(ember_module_state_set(m.root.get(), "scale", wrong.get()), EMBER_ERR_SHAPE, "has shape [1]");
  auto ints = i64({1}, {1});
  EMBER_EXPECT_ERR(ember_module_state_set(m.root.get(), "scale", ints.get()), EMBER_ERR_DTYPE, "'scale' is f32");
  EMBER_EXPECT_ERR(ember_module_state_set(m.root.get(), "nope", wrong.get()), EMBER_ERR_INDEX, "no param 'nope'");
  set_state(m.root.get(), "scale", {4}, {1});
  expect_near(floats(m.scale.get()), {4});
  int32_t rg = 0;
  EMBER_ASSERT_OK(ember_tensor_requires_grad(m.scale.get(), &rg));
  EXPECT_EQ(rg, 1);
}

TEST(CApiModuleTree, TrainModeBatchNormWritesItsRunningStatisticsBackToTheHandles) {
  auto bn = layer(EMBER_LAYER_BATCH_NORM1D);
  bn.in_features = 1;
  auto m = layer_module(bn);
  auto mean = param_at(m.get(), "running_mean");
  auto x = f32({1, 3}, {2, 1});
  forward(m.get(), x.get(), EMBER_MODE_TRAIN);
  expect_near(floats(mean.get()), {0.1 * 2.0});  // momentum 0.1 times the batch mean 2
  forward(m.get(), x.get(), EMBER_MODE_EVAL);
  expect_near(floats(mean.get()), {0.2});
}

}  // namespace
}  // namespace ember::capi_test
