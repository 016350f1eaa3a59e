// nn::LSTM / nn::GRU against PyTorch 1.13 (tests/reference/rnn_reference.hpp, from gen_rnn_reference.py): a 2-layer
// bidirectional RNN over a padded batch of unsorted lengths (pack_padded_sequence -> RNN -> pad_packed_sequence),
// with initial states, time-major and batch_first; forward values on every backend of the op suite, and under
// Autodiff the gradients w.r.t. the input, the initial states and every param. Max abs error 1e-5 (f64), 1e-4 (f32).
#include "tests/reference/rnn_reference.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>

#include "engine/nn/nn.hpp"
#include "tests/support/test_backends.hpp"

namespace ember::test {
namespace rnn_cases {

namespace R = ember::test::rnnref;

const R::RefTensor& find(const R::RefCase& c, const std::string& name) {
  for (std::size_t i = 0; i < c.count; ++i)
    if (name == c.tensors[i].name) return c.tensors[i];
  throw std::runtime_error("rnn_reference: no tensor " + name + " in case " + c.name);
}
bool has(const R::RefCase& c, const std::string& name) {
  for (std::size_t i = 0; i < c.count; ++i)
    if (name == c.tensors[i].name) return true;
  return false;
}
std::vector<double> ref_values(const R::RefTensor& t) { return {t.values, t.values + t.size}; }

// PyTorch's [rows, cols] weight as Ember's [cols, rows].
std::vector<double> transposed(const R::RefTensor& t) {
  const auto rows = static_cast<std::size_t>(t.shape[0]), cols = static_cast<std::size_t>(t.shape[1]);
  std::vector<double> out(t.size);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) out[c * rows + r] = t.values[r * cols + c];
  return out;
}

template <class B>
Tensor<B, 3> tensor3(const R::RefTensor& t) {
  return Tensor<B, 3>::from_values(ref_values(t), {t.shape[0], t.shape[1], t.shape[2]});
}

template <class B>
double tol() {
  return gemm_tol<B>(std::is_same_v<typename B::FloatElem, double> ? 1e-5 : 1e-4);
}

::testing::AssertionResult close_to(const std::vector<double>& got, const std::vector<double>& want, double tol,
                                    const std::string& what) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure() << what << ": " << got.size() << " values, expected " << want.size();
  double worst = 0.0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double e = std::abs(got[i] - want[i]);
    if (!(e <= worst)) worst = e, at = i;
  }
  if (worst <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": max abs error " << worst << " at " << at << " (got " << got[at]
                                       << ", expected " << want[at] << "), tolerance " << tol;
}

nn::RnnOptions options(const R::RefCase& c) {
  nn::RnnOptions o;
  o.input_size = R::kInput;
  o.hidden_size = R::kHidden;
  o.num_layers = R::kLayers;
  o.bidirectional = true;
  o.batch_first = c.batch_first;
  return o;
}

// The module with PyTorch's params of the case (torch names through rnn_torch_name, weights transposed).
template <class M>
M with_reference_params(M m, const R::RefCase& c) {
  return map_params(std::move(m), [&](const std::string& path, auto p) {
    using T = typename decltype(p)::Value;
    const auto torch = nn::rnn_torch_name(path);
    if (!torch) throw std::runtime_error("no PyTorch name for " + path);
    const R::RefTensor& t = find(c, "param_" + *torch);
    if constexpr (T::rank == 2)
      return p.with_value(T::from_values(transposed(t), {t.shape[1], t.shape[0]}));
    else
      return p.with_value(T::from_values(ref_values(t), {t.shape[0]}));
  });
}

std::vector<int64_t> lengths_of(const R::RefCase& c) {
  if (c.lengths[0] == 0) return {};
  return {c.lengths.begin(), c.lengths.end()};
}

template <class B>
class RnnReference : public ::testing::Test {};
TYPED_TEST_SUITE(RnnReference, TestBackends, BackendNames);

template <class B>
void check_forward(const R::RefCase& c) {
  SCOPED_TRACE(c.name);
  const auto x = tensor3<B>(find(c, "x"));
  const std::optional<Tensor<B, 3>> h0 = has(c, "h0") ? std::optional(tensor3<B>(find(c, "h0"))) : std::nullopt;
  if (c.lstm) {
    nn::LSTMConfig cfg;
    static_cast<nn::RnnOptions&>(cfg) = options(c);
    const auto m = with_reference_params(cfg.init<B>(), c);
    const std::optional<Tensor<B, 3>> c0 = has(c, "c0") ? std::optional(tensor3<B>(find(c, "c0"))) : std::nullopt;
    const auto r = m.forward(x, h0, c0, lengths_of(c));
    EXPECT_TRUE(close_to(values(r.output), ref_values(find(c, "output")), tol<B>(), "output"));
    EXPECT_TRUE(close_to(values(r.h_n), ref_values(find(c, "h_n")), tol<B>(), "h_n"));
    EXPECT_TRUE(close_to(values(r.c_n), ref_values(find(c, "c_n")), tol<B>(), "c_n"));
    EXPECT_EQ(r.output.shape().to_string(), Shape({find(c, "output").shape.begin(), find(c, "output").shape.end()}).to_string());
  } else {
    nn::GRUConfig cfg;
    static_cast<nn::RnnOptions&>(cfg) = options(c);
    const auto m = with_reference_params(cfg.init<B>(), c);
    const auto r = m.forward(x, h0, lengths_of(c));
    EXPECT_TRUE(close_to(values(r.output), ref_values(find(c, "output")), tol<B>(), "output"));
    EXPECT_TRUE(close_to(values(r.h_n), ref_values(find(c, "h_n")), tol<B>(), "h_n"));
  }
}

TYPED_TEST(RnnReference, ForwardMatchesTorch) {
  for (const auto& c : R::kCases) check_forward<TypeParam>(c);
}

// loss = sum(output * w_out) + sum(h_n * w_h) [+ sum(c_n * w_c)], as the generator's; gradients of the input,
// initial states and every param against PyTorch's.
template <class B>
void check_gradients(const R::RefCase& c) {
  SCOPED_TRACE(c.name);
  auto leaf = [&](const char* name) { return std::optional(tensor3<B>(find(c, name)).require_grad()); };
  const auto x = *leaf("x");
  const std::optional<Tensor<B, 3>> h0 = has(c, "h0") ? leaf("h0") : std::nullopt;
  const std::optional<Tensor<B, 3>> c0 = has(c, "c0") ? leaf("c0") : std::nullopt;
  auto weighted = [&](const Tensor<B, 3>& t, const char* w) {
    return t.mul(tensor3<B>(find(c, w))).template reshape<1>({-1}).sum_dim(0);
  };
  auto check_params = [&](const auto& m, const auto& grads) {
    visit_params(m, [&](const std::string& path, const auto& p) {
      const std::string torch = *nn::rnn_torch_name(path);
      const auto g = p.val().grad(grads);
      ASSERT_TRUE(g.has_value()) << path;
      const R::RefTensor& want = find(c, "grad_" + torch);
      EXPECT_TRUE(close_to(values(*g), want.rank == 2 ? transposed(want) : ref_values(want), tol<B>(), torch));
    });
  };
  if (c.lstm) {
    nn::LSTMConfig cfg;
    static_cast<nn::RnnOptions&>(cfg) = options(c);
    const auto m = with_reference_params(cfg.init<B>(), c);
    const auto r = m.forward(x, h0, c0, lengths_of(c));
    const auto grads = weighted(r.output, "w_out").add(weighted(r.h_n, "w_h")).add(weighted(r.c_n, "w_c")).backward();
    EXPECT_TRUE(close_to(values(*x.grad(grads)), ref_values(find(c, "grad_x")), tol<B>(), "grad_x"));
    if (h0) {
      EXPECT_TRUE(close_to(values(*h0->grad(grads)), ref_values(find(c, "grad_h0")), tol<B>(), "grad_h0"));
    }
    if (c0) {
      EXPECT_TRUE(close_to(values(*c0->grad(grads)), ref_values(find(c, "grad_c0")), tol<B>(), "grad_c0"));
    }
    check_params(m, grads);
  } else {
    nn::GRUConfig cfg;
    static_cast<nn::RnnOptions&>(cfg) = options(c);
    const auto m = with_reference_params(cfg.init<B>(), c);
    const auto r = m.forward(x, h0, lengths_of(c));
    const auto grads = weighted(r.output, "w_out").add(weighted(r.h_n, "w_h")).backward();
    EXPECT_TRUE(close_to(values(*x.grad(grads)), ref_values(find(c, "grad_x")), tol<B>(), "grad_x"));
    if (h0) {
      EXPECT_TRUE(close_to(values(*h0->grad(grads)), ref_values(find(c, "grad_h0")), tol<B>(), "grad_h0"));
    }
    check_params(m, grads);
  }
}

// Two cases (an LSTM time-major, a GRU batch_first, both packed with states) keep this quick on lavapipe; the f64
// CPU test below runs every case.
TYPED_TEST(RnnReference, GradientsMatchTorch) {
  if constexpr (IsAutodiff<TypeParam>::value) {
    for (const auto& c : R::kCases)
      if (std::string(c.name) == "lstm_packed" || std::string(c.name) == "gru_packed_batch_first")
        check_gradients<TypeParam>(c);
  } else {
    GTEST_SKIP() << "gradients need Autodiff";
  }
}

// The f64 gradients on the CPU (the suite's Autodiff variant is the default f32 backend); once, in the CPU suite.
TEST(RnnReferenceF64, GradientsMatchTorch) {
  if (kTestBackend != BackendId::Cpu) GTEST_SKIP() << "run by the CPU op suite";
  for (const auto& c : R::kCases) check_gradients<Autodiff<Cpu<double>>>(c);
}

// Past its length a sequence's output is exactly zero, and its state is the one at its last valid step: running a
// sequence alone, cut to its length, gives the same h_n.
TYPED_TEST(RnnReference, PaddedStepsAreZeroAndStatesFreeze) {
  using B = TypeParam;
  nn::LSTMConfig cfg;
  cfg.input_size = 2;
  cfg.hidden_size = 3;
  cfg.num_layers = 1;
  const auto m = cfg.init<B>();
  const auto x = Tensor<B, 3>::from_values(std::vector<double>{0.5, -1, 0.25, 2, -0.75, 1, 1.5, -0.5, 0.125, 0.25,
                                                               -1.25, 0.75},
                                           {3, 2, 2});
  const auto r = m.forward(x, std::nullopt, std::nullopt, {3, 1});
  const auto out = values(r.output);  // [3, 2, 3]: sequence 1 is zero at steps 1 and 2
  for (int t = 1; t < 3; ++t)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(out[static_cast<std::size_t>((t * 2 + 1) * 3 + j)], 0.0);
  const auto alone = m.forward(x.narrow(0, 0, 1).narrow(1, 1, 1));
  EXPECT_TRUE(close_to(values(r.h_n.narrow(1, 1, 1)), values(alone.h_n), 1e-6, "h_n of the short sequence"));
  EXPECT_THROW(m.forward(x, std::nullopt, std::nullopt, {4, 1}), ArgumentError);
  EXPECT_THROW(m.forward(x, std::nullopt, std::nullopt, {0, 1}), ArgumentError);
  EXPECT_THROW(m.forward(x, std::nullopt, std::nullopt, {3}), ShapeError);
}

}  // namespace rnn_cases
}  // namespace ember::test
