// RotaryEmbedding against GPT-NeoX's rotate_half formula written out in torch (tests/reference/
// transformer_reference.hpp), forward and gradient, plus the property RoPE exists for (a query/key dot product
// depends only on the distance of their positions); LearnedPositionalEmbedding's rows and their gradient.
#include "tests/reference/transformer_reference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "engine/ember.hpp"
#include "engine/nn/positional_embedding.hpp"

namespace ember::test {
namespace {

using namespace ember::nn;
using AD = Autodiff<Cpu<double>>;
using ADF = Autodiff<Cpu<float>>;

template <class B, std::size_t D>
Tensor<B, D> from_ref(const tfref::RefTensor& t, bool track = false) {
  auto x = Tensor<B, D>::from_data(TensorData::from_vec<double>(
      {t.data, t.data + t.size}, Shape(std::vector<int64_t>(t.shape.begin(), t.shape.begin() + t.rank))));
  return track ? x.require_grad() : x;
}
template <class T>
double max_abs_diff(const T& got, const tfref::RefTensor& want) {
  const auto v = got.into_data().template to_vec<double>();
  EXPECT_EQ(v.size(), want.size);
  double m = 0;
  for (std::size_t i = 0; i < v.size() && i < want.size; ++i) m = std::max(m, std::abs(v[i] - want.data[i]));
  return m;
}

template <class B>
void check_rope(double tol) {
  const auto x = from_ref<B, 4>(tfref::rope_inputs[0], true);
  const auto rope = RotaryEmbeddingConfig{4}.init();
  const auto y = rope.forward(x, 3);
  EXPECT_LE(max_abs_diff(y, tfref::rope_outputs[0]), tol);
  const auto grads = y.mul(from_ref<B, 4>(tfref::rope_loss_weights[0])).sum().backward();
  EXPECT_LE(max_abs_diff(*x.grad(grads), tfref::rope_grads[0]), tol);
}

TEST(RotaryEmbedding, MatchesNeoXRotateHalfForwardAndGradient) {
  check_rope<AD>(1e-5);
  check_rope<ADF>(1e-4);
}

TEST(RotaryEmbedding, ScoresDependOnlyOnRelativePosition) {
  using B = Cpu<double>;
  const auto q = Tensor<B, 4>::random({1, 1, 1, 8}, Normal{0, 1});
  const auto k = Tensor<B, 4>::random({1, 1, 1, 8}, Normal{0, 1});
  const auto rope = RotaryEmbeddingConfig{8, 100.0}.init();
  auto score = [&](int64_t m, int64_t n) { return rope.forward(q, m).mul(rope.forward(k, n)).sum().item(); };
  EXPECT_NEAR(score(5, 2), score(13, 10), 1e-9);
  EXPECT_NEAR(score(0, 0), q.mul(k).sum().item(), 1e-12);  // position 0 is the identity
  EXPECT_GT(std::abs(score(5, 2) - score(2, 5)), 1e-6);    // but the direction of the distance matters
}

TEST(RotaryEmbedding, RejectsOddOrTooLargeDim) {
  EXPECT_THROW(RotaryEmbeddingConfig{3}.init(), ArgumentError);
  const auto x = Tensor<Cpu<float>, 4>::zeros({1, 1, 2, 4});
  EXPECT_THROW(RotaryEmbeddingConfig{6}.init().forward(x), ShapeError);
}

TEST(LearnedPositionalEmbedding, AddsRowsAtOffsetAndScattersTheirGradient) {
  auto pe = LearnedPositionalEmbeddingConfig{5, 2, true}.init<AD>();
  pe.weight = pe.weight.with_value(
      Tensor<AD, 2>::from_values({0.0, 1.0, 10.0, 11.0, 20.0, 21.0, 30.0, 31.0, 40.0, 41.0}, {5, 2}).require_grad());
  const auto x = Tensor<AD, 3>::zeros({3, 2, 2});  // batch 3, T 2
  const auto y = pe.forward(x, 2);
  EXPECT_EQ(y.into_data().to_vec<double>(),
            (std::vector<double>{20, 21, 30, 31, 20, 21, 30, 31, 20, 21, 30, 31}));
  const auto g = pe.weight.val().grad(y.sum().backward());
  ASSERT_TRUE(g);
  EXPECT_EQ(g->into_data().to_vec<double>(), (std::vector<double>{0, 0, 0, 0, 3, 3, 3, 3, 0, 0}));
  EXPECT_THROW(pe.forward(x, 4), IndexError);
  auto seq_first = LearnedPositionalEmbeddingConfig{5, 2}.init<Cpu<double>>();
  const auto s = seq_first.forward(Tensor<Cpu<double>, 3>::zeros({2, 3, 2}));  // T 2, batch 3
  const auto w = seq_first.weight.val().into_data().to_vec<double>();
  EXPECT_EQ(s.into_data().to_vec<double>()[2 * 3], w[2]);  // position 1, batch 0, feature 0
}

}  // namespace
}  // namespace ember::test
