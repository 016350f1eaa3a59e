#pragma once
// GRU (PyTorch 1.13's nn.GRU): per layer and direction, with gates in PyTorch's order r, z, n
//   r = sigmoid(x W_ir + b_ir + h W_hr + b_hr)   z = sigmoid(x W_iz + b_iz + h W_hz + b_hz)
//   n = tanh(x W_in + b_in + r * (h W_hn + b_hn))   h' = (1 - z) * n + z * h
// Params, lengths and batch_first as described in rnn_base.hpp. forward(x, h0, lengths) returns (output, h_n):
// output [T, N, D * H] ([N, T, D * H] with batch_first), h_n [num_layers * D, N, H].
#include "engine/nn/rnn_base.hpp"

namespace ember::nn {

template <Backend B>
struct GRUOutput {
  Tensor<B, 3> output, h_n;
};

template <Backend B>
struct GRU {
  BOOST_HANA_DEFINE_STRUCT(GRU, (std::vector<RnnLayer<B>>, layers), (double, dropout), (bool, batch_first),
                           (TrainingFlag, mode));

  static constexpr int64_t kGates = 3;

  int64_t hidden_size() const { return layers.at(0).forward_dir.weight_hh.shape()[0]; }
  int64_t input_size() const { return layers.at(0).forward_dir.weight_ih.shape()[0]; }
  int64_t num_layers() const { return static_cast<int64_t>(layers.size()); }
  bool bidirectional() const { return !layers.empty() && layers[0].reverse_dir.has_value(); }

  // x [T, N, input_size] ([N, T, input_size] with batch_first); h0 [num_layers * D, N, H] or zeros;
  // lengths: one per sequence (empty: every sequence has all T steps).
  GRUOutput<B> forward(const Tensor<B, 3>& x, const std::optional<Tensor<B, 3>>& h0 = std::nullopt,
                       const std::vector<int64_t>& lengths = {}) const {
    auto r = detail::run_rnn<B, 1>("GRU", layers, detail::time_major(x, batch_first), {h0}, lengths, dropout,
                                   mode.training, Cell{});
    return {detail::time_major(r.output, batch_first), r.final_states[0]};
  }

 private:
  struct Cell {
    // b_ih folds into the input projection; b_hh cannot (b_hn is scaled by r), so it is added per step.
    std::optional<Tensor<B, 1>> ix_bias(const RnnDirection<B>& d) const {
      if (!d.bias_ih) return std::nullopt;
      return d.bias_ih->val();
    }
    RnnState<B> step(const RnnDirection<B>& d, const Tensor<B, 2>& gx, const RnnState<B>& s) const {
      const int64_t h = s[0].dim(1);
      auto gh = s[0].matmul(d.weight_hh.val());
      if (d.bias_hh) gh = gh.add(d.bias_hh->val().template reshape<2>({1, 3 * h}));
      const auto rz = gx.narrow(1, 0, 2 * h).add(gh.narrow(1, 0, 2 * h)).sigmoid();
      const auto n = gx.narrow(1, 2 * h, h).add(rz.narrow(1, 0, h).mul(gh.narrow(1, 2 * h, h))).tanh();
      return {n.add(rz.narrow(1, h, h).mul(s[0].sub(n)))};
    }
  };
};

struct GRUConfig : RnnOptions {
  // Lazy: no value is sampled or allocated until first use.
  template <Backend B>
  GRU<B> init(const typename B::Device& device = {}) const {
    GRU<B> m;
    m.layers = detail::make_rnn_layers<B>("GRUConfig", *this, GRU<B>::kGates, device);
    m.dropout = dropout;
    m.batch_first = batch_first;
    m.mode.training = true;
    return m;
  }
};

}  // namespace ember::nn
