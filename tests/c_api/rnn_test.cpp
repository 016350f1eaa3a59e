// issue 13 (h-rnn): EMBER_LAYER_LSTM / _GRU and ember_module_forward_rnn against PyTorch 1.13
// (tests/reference/rnn_reference.hpp): forward values and gradients through the C ABI (a layer module whose params
// are set by path, PyTorch's layouts transposed), the PyTorch name map both ways, and the refusals.
#include "tests/reference/rnn_reference.hpp"

#include <cmath>
#include <string>

#include "engine/nn/rnn_base.hpp"
#include "tests/c_api/capi_support.hpp"

namespace ember::capi_test {
namespace {

namespace R = ember::test::rnnref;

const R::RefCase& ref_case(const std::string& name) {
  for (const auto& c : R::kCases)
    if (name == c.name) return c;
  throw std::runtime_error("no case " + name);
}
const R::RefTensor* find(const R::RefCase& c, const std::string& name) {
  for (std::size_t i = 0; i < c.count; ++i)
    if (name == c.tensors[i].name) return &c.tensors[i];
  return nullptr;
}
std::vector<int64_t> dims(const R::RefTensor& t) { return {t.shape.begin(), t.shape.begin() + t.rank}; }
Tensor tensor(const R::RefTensor& t, bool grad = false) {
  Tensor out = f32(std::vector<float>(t.values, t.values + t.size), dims(t));
  if (grad) {
    EXPECT_EQ(ember_tensor_set_requires_grad(out.get(), 1), EMBER_OK) << ember_last_error();
  }
  return out;
}
std::vector<double> want(const R::RefTensor& t, bool transpose = false) {
  if (!transpose) return {t.values, t.values + t.size};
  const auto rows = static_cast<std::size_t>(t.shape[0]), cols = static_cast<std::size_t>(t.shape[1]);
  std::vector<double> out(t.size);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) out[c * rows + r] = t.values[r * cols + c];
  return out;
}
void expect_close(const ember_tensor* t, const std::vector<double>& w, const std::string& what) {
  const auto got = floats(t);
  ASSERT_EQ(got.size(), w.size()) << what;
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - w[i]));
  EXPECT_LE(worst, 1e-4) << what;
}

ember_layer_desc rnn_desc(const R::RefCase& c) {
  ember_layer_desc d = layer(c.lstm ? EMBER_LAYER_LSTM : EMBER_LAYER_GRU);
  d.in_features = R::kInput;
  d.out_features = R::kHidden;
  d.num_layers = R::kLayers;
  d.bidirectional = 1;
  d.batch_first = c.batch_first;
  return d;
}

// A layer module with the case's PyTorch params (set by Ember path, weights transposed).
Module reference_module(const R::RefCase& c) {
  const ember_layer_desc d = rnn_desc(c);
  ember_module* m = nullptr;
  EXPECT_EQ(ember_module_layer(nullptr, &d, &m), EMBER_OK) << ember_last_error();
  size_t n = 0;
  EXPECT_EQ(ember_module_param_count(m, &n), EMBER_OK);
  EXPECT_EQ(n, static_cast<size_t>(R::kLayers * 2 * 4));
  for (size_t i = 0; i < n; ++i) {
    const std::string path = param_name(m, i);
    const auto torch = nn::rnn_torch_name(path);
    EXPECT_TRUE(torch.has_value()) << path;
    const R::RefTensor* t = find(c, "param_" + *torch);
    std::vector<int64_t> shape = dims(*t);
    if (t->rank == 2) std::swap(shape[0], shape[1]);
    const auto v = want(*t, t->rank == 2);
    Tensor value = f32(std::vector<float>(v.begin(), v.end()), shape);
    EXPECT_EQ(ember_module_state_set(m, path.c_str(), value.get()), EMBER_OK) << path << ": " << ember_last_error();
  }
  return Module(m);
}

struct RnnOut {
  Tensor output, h_n, c_n;
};
RnnOut run(ember_module* m, const ember_tensor* x, const ember_tensor* h0, const ember_tensor* c0,
           const std::vector<int64_t>& lengths) {
  ember_tensor *o = nullptr, *h = nullptr, *c = nullptr;
  EXPECT_EQ(ember_module_forward_rnn(m, x, h0, c0, lengths.empty() ? nullptr : lengths.data(), lengths.size(),
                                     EMBER_MODE_EVAL, &o, &h, &c),
            EMBER_OK)
      << ember_last_error();
  return {Tensor(o), Tensor(h), Tensor(c)};
}
std::vector<int64_t> lengths_of(const R::RefCase& c) {
  if (c.lengths[0] == 0) return {};
  return {c.lengths.begin(), c.lengths.end()};
}

Tensor weighted_sum(const ember_tensor* t, const ember_tensor* w) {
  ember_tensor *p = nullptr, *s = nullptr;
  EXPECT_EQ(ember_tensor_binary(t, w, EMBER_BINARY_MUL, &p), EMBER_OK) << ember_last_error();
  Tensor prod(p);
  EXPECT_EQ(ember_tensor_reduce_all(prod.get(), EMBER_REDUCE_SUM, &s), EMBER_OK) << ember_last_error();
  return Tensor(s);
}
Tensor plus(const ember_tensor* a, const ember_tensor* b) {
  ember_tensor* s = nullptr;
  EXPECT_EQ(ember_tensor_add(a, b, &s), EMBER_OK) << ember_last_error();
  return Tensor(s);
}

// Forward, then the gradients of the generator's loss w.r.t. x, the initial states and every param.
void check_case(const std::string& name) {
  SCOPED_TRACE(name);
  const R::RefCase& c = ref_case(name);
  Module m = reference_module(c);
  Tensor x = tensor(*find(c, "x"), true);
  Tensor h0 = find(c, "h0") ? tensor(*find(c, "h0"), true) : Tensor();
  Tensor c0 = find(c, "c0") ? tensor(*find(c, "c0"), true) : Tensor();
  RnnOut r = run(m.get(), x.get(), h0.get(), c0.get(), lengths_of(c));
  expect_close(r.output.get(), want(*find(c, "output")), "output");
  expect_close(r.h_n.get(), want(*find(c, "h_n")), "h_n");
  if (c.lstm) expect_close(r.c_n.get(), want(*find(c, "c_n")), "c_n");
  else EXPECT_EQ(r.c_n.get(), nullptr);

  Tensor loss = plus(weighted_sum(r.output.get(), tensor(*find(c, "w_out")).get()).get(),
                     weighted_sum(r.h_n.get(), tensor(*find(c, "w_h")).get()).get());
  if (c.lstm) loss = plus(loss.get(), weighted_sum(r.c_n.get(), tensor(*find(c, "w_c")).get()).get());
  ember_grads* g = nullptr;
  ASSERT_EQ(ember_tensor_backward(loss.get(), nullptr, &g), EMBER_OK) << ember_last_error();
  Grads grads(g);
  auto grad_of = [&](const ember_tensor* t) {
    ember_tensor* out = nullptr;
    EXPECT_EQ(ember_grads_get(grads.get(), t, &out), EMBER_OK) << ember_last_error();
    return Tensor(out);
  };
  expect_close(grad_of(x.get()).get(), want(*find(c, "grad_x")), "grad_x");
  if (h0) expect_close(grad_of(h0.get()).get(), want(*find(c, "grad_h0")), "grad_h0");
  if (c0) expect_close(grad_of(c0.get()).get(), want(*find(c, "grad_c0")), "grad_c0");
  size_t n = 0;
  ASSERT_EQ(ember_module_param_count(m.get(), &n), EMBER_OK);
  for (size_t i = 0; i < n; ++i) {
    const std::string torch = *nn::rnn_torch_name(param_name(m.get(), i));
    ember_tensor* p = nullptr;
    ASSERT_EQ(ember_module_param(m.get(), i, &p), EMBER_OK) << ember_last_error();
    Tensor param(p);
    const R::RefTensor* w = find(c, "grad_" + torch);
    expect_close(grad_of(param.get()).get(), want(*w, w->rank == 2), "grad_" + torch);
  }
}

TEST(CApiRnn, LstmPackedMatchesTorch) { check_case("lstm_packed"); }
TEST(CApiRnn, LstmBatchFirstMatchesTorch) { check_case("lstm_packed_batch_first"); }
TEST(CApiRnn, LstmFullLengthWithoutStatesMatchesTorch) { check_case("lstm_full"); }
TEST(CApiRnn, GruPackedBatchFirstMatchesTorch) { check_case("gru_packed_batch_first"); }

// A layer module's PyTorch state_dict (keys weight_ih_l0 ...) loads strictly into a fresh one and gives PyTorch's
// output; a Sequential's ("0.weight_ih_l0" ...) round-trips the same way, and ember_module_forward gives
// forward_rnn's output without states or lengths.
Module from_torch_state(ember_module* from, Module to) {
  ember_record* rec = nullptr;
  EXPECT_EQ(ember_module_to_torch_state_dict(from, &rec), EMBER_OK) << ember_last_error();
  RecordH record(rec);
  size_t entries = 0;
  EMBER_EXPECT_OK(ember_record_entry_count(record.get(), &entries));
  EXPECT_EQ(entries, static_cast<size_t>(R::kLayers * 2 * 4));
  ember_load_report* rep = nullptr;
  EXPECT_EQ(ember_module_load_torch_state_dict(to.get(), record.get(), EMBER_LOAD_STRICT, &rep), EMBER_OK)
      << ember_last_error();
  Report report(rep);
  return to;
}

TEST(CApiRnn, TorchStateDictRoundTripAndPlainForward) {
  const R::RefCase& c = ref_case("lstm_full");
  Module ref = reference_module(c);
  const ember_layer_desc d = rnn_desc(c);
  ember_module* fresh = nullptr;
  EMBER_ASSERT_OK(ember_module_layer(nullptr, &d, &fresh));
  Module loaded = from_torch_state(ref.get(), Module(fresh));
  Tensor x = tensor(*find(c, "x"));
  expect_close(run(loaded.get(), x.get(), nullptr, nullptr, {}).output.get(), want(*find(c, "output")), "output");

  Module seq_a = sequential({d});
  Module seq_b = from_torch_state(seq_a.get(), sequential({d}));
  const RnnOut a = run(seq_a.get(), x.get(), nullptr, nullptr, {});
  const auto va = floats(a.output.get());
  const auto vb = floats(run(seq_b.get(), x.get(), nullptr, nullptr, {}).output.get());
  EXPECT_EQ(va, vb);
  EXPECT_EQ(floats(forward(seq_a.get(), x.get()).get()), va);
}

TEST(CApiRnn, Refusals) {
  const R::RefCase& c = ref_case("gru_packed");
  Module gru = reference_module(c);
  Tensor x = tensor(*find(c, "x"));
  Tensor h0 = tensor(*find(c, "h0"));
  ember_tensor *o = nullptr, *h = nullptr, *cn = nullptr;
  const int64_t lengths[] = {5, 2, 4}, zero[] = {5, 0, 4};
  EMBER_EXPECT_ERR(ember_module_forward_rnn(gru.get(), x.get(), h0.get(), h0.get(), nullptr, 0, EMBER_MODE_EVAL, &o,
                                            &h, &cn),
                   EMBER_ERR_INVALID_ARGUMENT, "c0 must be NULL");
  EMBER_EXPECT_ERR(ember_module_forward_rnn(gru.get(), x.get(), h0.get(), nullptr, lengths, 2, EMBER_MODE_EVAL, &o, &h,
                                            &cn),
                   EMBER_ERR_SHAPE, "2 lengths");
  EMBER_EXPECT_ERR(ember_module_forward_rnn(gru.get(), x.get(), h0.get(), nullptr, zero, 3, EMBER_MODE_EVAL, &o, &h,
                                            &cn),
                   EMBER_ERR_INVALID_ARGUMENT, "lengths[1] = 0");
  EMBER_EXPECT_ERR(ember_module_forward_rnn(gru.get(), x.get(), x.get(), nullptr, lengths, 3, EMBER_MODE_EVAL, &o, &h,
                                            &cn),
                   EMBER_ERR_SHAPE, "initial state 0");
  EMBER_EXPECT_ERR(ember_module_forward_rnn(gru.get(), x.get(), nullptr, nullptr, nullptr, 3, EMBER_MODE_EVAL, &o, &h,
                                            &cn),
                   EMBER_ERR_INVALID_ARGUMENT, "lengths is NULL");
  EMBER_EXPECT_ERR(ember_module_forward_rnn(gru.get(), x.get(), nullptr, nullptr, nullptr, 0, 7, &o, &h, &cn),
                   EMBER_ERR_INVALID_ARGUMENT, "unknown mode 7");
  EXPECT_EQ(o, nullptr);
  EXPECT_EQ(h, nullptr);
  Module lstm = reference_module(ref_case("lstm_full"));
  EMBER_EXPECT_ERR(ember_module_forward_rnn(lstm.get(), x.get(), nullptr, nullptr, nullptr, 0, EMBER_MODE_EVAL, &o,
                                            &h, nullptr),
                   EMBER_ERR_INVALID_ARGUMENT, "c_n is NULL");
  Module two = sequential({rnn_desc(c), rnn_desc(c)});
  EMBER_EXPECT_ERR(ember_module_forward_rnn(two.get(), x.get(), nullptr, nullptr, nullptr, 0, EMBER_MODE_EVAL, &o, &h,
                                            &cn),
                   EMBER_ERR_INVALID_ARGUMENT, "one LSTM or GRU layer");
  Module lin = sequential({linear(3, 2)});
  EMBER_EXPECT_ERR(ember_module_forward_rnn(lin.get(), x.get(), nullptr, nullptr, nullptr, 0, EMBER_MODE_EVAL, &o, &h,
                                            &cn),
                   EMBER_ERR_INVALID_ARGUMENT, "not an LSTM or GRU");
  ember_layer_desc bad = rnn_desc(c);
  bad.p = 1.5;
  ember_module* m = nullptr;
  EMBER_EXPECT_ERR(ember_module_sequential(nullptr, &bad, 1, &m), EMBER_ERR_INVALID_ARGUMENT, "dropout");
  ember_layer_desc d;
  EMBER_EXPECT_OK(ember_layer_init(&d, EMBER_LAYER_LSTM));
  EXPECT_EQ(d.p, 0.0);  // PyTorch's RNN dropout default, not Dropout's 0.5
}

}  // namespace
}  // namespace ember::capi_test
