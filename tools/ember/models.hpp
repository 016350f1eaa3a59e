#pragma once
// The digits classifiers of `ember train`: an MLP (64-256-256-10) and a small CNN over the 8x8 image.
#include <string>

#include "engine/nn/nn.hpp"

namespace ember::tools {

enum class ModelKind { Mlp = 0, Cnn = 1 };

inline ModelKind model_kind_from_name(const std::string& s) {
  if (s == "mlp") return ModelKind::Mlp;
  if (s == "cnn") return ModelKind::Cnn;
  throw ArgumentError("unknown model '" + s + "' (mlp or cnn)");
}
inline const char* model_name(ModelKind k) { return k == ModelKind::Mlp ? "mlp" : "cnn"; }

template <Backend B>
struct DigitsMlp {
  BOOST_HANA_DEFINE_STRUCT(DigitsMlp, (nn::Linear<B>, fc1), (nn::Linear<B>, fc2), (nn::Linear<B>, fc3));

  static DigitsMlp init(const typename B::Device& dev = {}) {
    DigitsMlp m;
    m.fc1 = nn::LinearConfig{64, 256}.init<B>(dev);
    m.fc2 = nn::LinearConfig{256, 256}.init<B>(dev);
    m.fc3 = nn::LinearConfig{256, 10}.init<B>(dev);
    return m;
  }
  // x [N, 64] pixels in [0, 1] -> logits [N, 10].
  Tensor<B, 2> forward(const Tensor<B, 2>& x) const {
    // Linear + ReLU as one op: fused in inference, the same recorded ops as forward(x).relu() in training.
    return fc3.forward(fc2.forward_relu(fc1.forward_relu(x)));
  }
};

template <Backend B>
struct DigitsCnn {
  BOOST_HANA_DEFINE_STRUCT(DigitsCnn, (nn::Conv2d<B>, conv1), (nn::Conv2d<B>, conv2), (nn::Linear<B>, fc1),
                           (nn::Linear<B>, fc2));

  static DigitsCnn init(const typename B::Device& dev = {}) {
    DigitsCnn m;
    m.conv1 = nn::Conv2dConfig{.in_channels = 1, .out_channels = 16, .kernel_size = {3, 3}, .padding = {1, 1}}.init<B>(dev);
    m.conv2 = nn::Conv2dConfig{.in_channels = 16, .out_channels = 32, .kernel_size = {3, 3}, .padding = {1, 1}}.init<B>(dev);
    m.fc1 = nn::LinearConfig{32 * 4 * 4, 64}.init<B>(dev);
    m.fc2 = nn::LinearConfig{64, 10}.init<B>(dev);
    return m;
  }
  // x [N, 64] -> [N, 1, 8, 8] -> conv 16 -> conv 32 -> 2x2 max pool -> [N, 512] -> 64 -> logits [N, 10].
  Tensor<B, 2> forward(const Tensor<B, 2>& x) const {
    const int64_t n = x.dim(0);
    auto h = conv1.forward(x.reshape(std::array<int64_t, 4>{n, 1, 8, 8})).relu();
    h = conv2.forward(h).relu();
    h = max_pool2d<B>(h, Pool2dOptions{});
    auto f = h.template reshape<2>(std::array<int64_t, 2>{n, 32 * 4 * 4});
    return fc2.forward(fc1.forward(f).relu());
  }
};

}  // namespace ember::tools
