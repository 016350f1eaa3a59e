#pragma once
// Shared by the compile tests (compile_test.cpp on the CPU, compile_vulkan_test.cpp on Vulkan): the models, the
// fixed batches, one training step written once for every backend stack, and readers of its results.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/compile/compile.hpp"
#include "engine/ember.hpp"
#include "engine/nn/nn.hpp"
#include "engine/optim/optim.hpp"

namespace ember::test {

// The digits MLP with dropout after each hidden layer.
template <Backend B>
struct DropMlp {
  BOOST_HANA_DEFINE_STRUCT(DropMlp, (nn::Linear<B>, fc1), (nn::Linear<B>, fc2), (nn::Linear<B>, fc3),
                           (nn::Dropout, drop));
  static DropMlp init() {
    DropMlp m;
    m.fc1 = nn::LinearConfig{64, 32}.init<B>();
    m.fc2 = nn::LinearConfig{32, 32}.init<B>();
    m.fc3 = nn::LinearConfig{32, 10}.init<B>();
    m.drop = nn::DropoutConfig{0.25}.init();
    return m;
  }
  Tensor<B, 2> forward(const Tensor<B, 2>& x) const {
    return fc3.forward(drop.forward(fc2.forward(drop.forward(fc1.forward(x).relu())).relu()));
  }
};

// Batch `i` of a fixed random data set: pixels [n, 64] and labels [n].
struct Batch {
  TensorData x, y;
};
inline Batch batch(int i, int64_t n) {
  Rng rng(100 + static_cast<uint64_t>(i));
  std::vector<double> x(static_cast<std::size_t>(n * 64)), y(static_cast<std::size_t>(n));
  for (auto& v : x) v = rng.uniform();
  for (auto& v : y) v = static_cast<double>(static_cast<int64_t>(rng.uniform() * 10));
  return {TensorData::from_vec<double>(x, Shape{n, 64}), TensorData::from_vec<double>(y, Shape{n})};
}
template <class AD>
Tensor<AD, 2> xs(const Batch& b) {
  return Tensor<AD, 2>::from_data(b.x);
}
template <class AD>
Tensor<AD, 1, Int> ys(const Batch& b) {
  return Tensor<AD, 1, Int>::from_data(b.y);
}

template <class M>
std::vector<std::vector<float>> params(const M& m) {
  std::vector<std::vector<float>> out;
  visit_params(m,
               [&](const std::string&, const auto& p) { out.push_back(p.val().into_data().template to_vec<float>()); });
  return out;
}
inline float scalar(const auto& t) { return t.into_data().template to_vec<float>()[0]; }

// One training step, written once for every backend: loss, backward, Adam (or AdamW).
template <class AD, class M, class Opt>
Tensor<AD, 1> train_step(M& model, Opt& opt, double lr, const Tensor<AD, 2>& x, const Tensor<AD, 1, Int>& y) {
  const auto loss = nn::cross_entropy(model.forward(x), y);
  model = opt.step(lr, std::move(model), GradientsParams<AD>::from_grads(loss.backward(), model));
  return loss;
}

// ember::compile of train_step over `model` and `opt`, the state it reads and rewrites.
template <class AD, class M, class Opt>
auto compile_train_step(M& model, Opt& opt) {
  return compile<AD>([&model, &opt](double lr, const Tensor<AD, 2>& x,
                                    const Tensor<AD, 1, Int>& y) { return train_step(model, opt, lr, x, y); },
                     model, opt);
}

}  // namespace ember::test
