#pragma once
// LSTM (PyTorch 1.13's nn.LSTM without proj_size): per layer and direction, with gates in PyTorch's order i, f, g, o
//   i = sigmoid(x W_ii + b_ii + h W_hi + b_hi)   f = sigmoid(... f ...)   g = tanh(... g ...)   o = sigmoid(... o ...)
//   c' = f * c + i * g      h' = o * tanh(c')
// Params, lengths and batch_first as described in rnn_base.hpp. forward(x, {h0, c0}, lengths) returns
// (output, h_n, c_n): output [T, N, D * H] ([N, T, D * H] with batch_first), h_n / c_n [num_layers * D, N, H].
#include "engine/nn/rnn_base.hpp"

namespace ember::nn {

template <Backend B>
struct LSTMOutput {
  Tensor<B, 3> output, h_n, c_n;
};

template <Backend B>
struct LSTM {
  BOOST_HANA_DEFINE_STRUCT(LSTM, (std::vector<RnnLayer<B>>, layers), (double, dropout), (bool, batch_first),
                           (TrainingFlag, mode));

  static constexpr int64_t kGates = 4;

  int64_t hidden_size() const { return layers.at(0).forward_dir.weight_hh.shape()[0]; }
  int64_t input_size() const { return layers.at(0).forward_dir.weight_ih.shape()[0]; }
  int64_t num_layers() const { return static_cast<int64_t>(layers.size()); }
  bool bidirectional() const { return !layers.empty() && layers[0].reverse_dir.has_value(); }

  // x [T, N, input_size] ([N, T, input_size] with batch_first); h0 / c0 [num_layers * D, N, H] or zeros;
  // lengths: one per sequence (empty: every sequence has all T steps).
  LSTMOutput<B> forward(const Tensor<B, 3>& x, const std::optional<Tensor<B, 3>>& h0 = std::nullopt,
                        const std::optional<Tensor<B, 3>>& c0 = std::nullopt,
                        const std::vector<int64_t>& lengths = {}) const {
    auto r = detail::run_rnn<B, 2>("LSTM", layers, detail::time_major(x, batch_first), {h0, c0}, lengths, dropout,
                                   mode.training, Cell{});
    return {detail::time_major(r.output, batch_first), r.final_states[0], r.final_states[1]};
  }

 private:
  struct Cell {
    // Both biases only ever appear summed: fold them into the input projection, once per sequence.
    std::optional<Tensor<B, 1>> ix_bias(const RnnDirection<B>& d) const {
      if (!d.bias_ih) return std::nullopt;
      return d.bias_ih->val().add(d.bias_hh->val());
    }
    RnnState<B> step(const RnnDirection<B>& d, const Tensor<B, 2>& gx, const RnnState<B>& s) const {
      const int64_t h = s[0].dim(1);
      const auto g = gx.add(s[0].matmul(d.weight_hh.val()));
      const auto i = g.narrow(1, 0, h).sigmoid(), f = g.narrow(1, h, h).sigmoid();
      const auto c = f.mul(s[1]).add(i.mul(g.narrow(1, 2 * h, h).tanh()));
      return {g.narrow(1, 3 * h, h).sigmoid().mul(c.tanh()), c};
    }
  };
};

struct LSTMConfig : RnnOptions {
  // Lazy: no value is sampled or allocated until first use.
  template <Backend B>
  LSTM<B> init(const typename B::Device& device = {}) const {
    LSTM<B> m;
    m.layers = detail::make_rnn_layers<B>("LSTMConfig", *this, LSTM<B>::kGates, device);
    m.dropout = dropout;
    m.batch_first = batch_first;
    m.mode.training = true;
    return m;
  }
};

}  // namespace ember::nn
