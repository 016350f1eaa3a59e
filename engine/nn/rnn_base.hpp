#pragma once
// What LSTM and GRU (lstm.hpp, gru.hpp) share: the params of one layer and direction, the config, the sequence
// bookkeeping (batch_first, per-sequence lengths, initial states) and the layer/direction loop. Only the cell step
// differs between the two.
//
// Semantics are PyTorch 1.13's nn.LSTM / nn.GRU. With per-sequence `lengths` the result is that of
// pack_padded_sequence -> LSTM -> pad_packed_sequence: the output has max(lengths) steps and is zero past each
// sequence's length, h_n (c_n) hold each sequence's state at its own last valid step, and the reverse direction
// starts at each sequence's own end. That is done by masking, not packing: at a step past a sequence's length its
// state is kept (so the forward direction freezes at the last valid step and the reverse direction reaches that
// sequence's end still holding h0) and its output is zero. Lengths need not be sorted (enforce_sorted=False).
//
// Params: Ember paths "layers.<k>.forward_dir.weight_ih" ... are PyTorch's "weight_ih_l<k>", and
// "layers.<k>.reverse_dir.*" its "*_l<k>_reverse" (rnn_torch_name). Weights are stored [in, gates * hidden] as
// Linear's are (x.matmul(W) with no transpose), so PyTorch's [gates * hidden, in] is transposed on import; gates
// are in PyTorch's order inside the gates * hidden columns (LSTM i, f, g, o; GRU r, z, n).
//
// Cost: the input projection of a whole sequence is one matmul per layer and direction; each step is a hidden
// matmul plus a few elementwise ops, all backend tensor ops, so every backend and Autodiff run it unchanged.
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "engine/module/traversal.hpp"
#include "engine/nn/dropout.hpp"
#include "engine/nn/init.hpp"
#include "engine/nn/shape_util.hpp"

namespace ember::nn {

// One direction of one layer: PyTorch's weight_ih_l<k>[_reverse], weight_hh_l<k>, bias_ih_l<k>, bias_hh_l<k>.
template <Backend B>
struct RnnDirection {
  BOOST_HANA_DEFINE_STRUCT(RnnDirection, (Param<Tensor<B, 2>>, weight_ih), (Param<Tensor<B, 2>>, weight_hh),
                           (std::optional<Param<Tensor<B, 1>>>, bias_ih), (std::optional<Param<Tensor<B, 1>>>, bias_hh));
};

template <Backend B>
struct RnnLayer {
  BOOST_HANA_DEFINE_STRUCT(RnnLayer, (RnnDirection<B>, forward_dir), (std::optional<RnnDirection<B>>, reverse_dir));
};

// PyTorch's name of an RNN param given its Ember path below the module ("layers.1.reverse_dir.bias_hh" ->
// "bias_hh_l1_reverse"); nullopt for a path that is not one. Shared by the typed and the C ABI's name maps.
inline std::optional<std::string> rnn_torch_name(const std::string& path) {
  const std::string head = "layers.";
  if (path.rfind(head, 0) != 0) return std::nullopt;
  const std::size_t dot = path.find('.', head.size());
  if (dot == std::string::npos || dot == head.size()) return std::nullopt;
  const std::string k = path.substr(head.size(), dot - head.size());
  if (!std::all_of(k.begin(), k.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  const std::string rest = path.substr(dot + 1);
  for (const char* leaf : {"weight_ih", "weight_hh", "bias_ih", "bias_hh"}) {
    if (rest == std::string("forward_dir.") + leaf) return fmt::format("{}_l{}", leaf, k);
    if (rest == std::string("reverse_dir.") + leaf) return fmt::format("{}_l{}_reverse", leaf, k);
  }
  return std::nullopt;
}

// PyTorch's constructor arguments (nn.LSTM / nn.GRU; proj_size is not supported).
struct RnnOptions {
  int64_t input_size = 0, hidden_size = 0, num_layers = 1;
  bool bias = true, batch_first = false;
  double dropout = 0.0;  // on every layer's output but the last, in training mode
  bool bidirectional = false;
  Initializer initializer = torch_default_initializer();
};

namespace detail {

// Every param U(-1/sqrt(hidden), 1/sqrt(hidden)) as in PyTorch: its default initializer with fan_in = hidden_size.
template <Backend B>
std::vector<RnnLayer<B>> make_rnn_layers(const char* who, const RnnOptions& o, int64_t gates,
                                         const typename B::Device& device) {
  require_positive(who, "input_size", o.input_size);
  require_positive(who, "hidden_size", o.hidden_size);
  require_positive(who, "num_layers", o.num_layers);
  // Bounds that keep gates * hidden * (in or hidden) far from int64 overflow and the layer loop short, before any
  // param exists (the C ABI takes these sizes from callers); larger tensors are then refused by their shape checks.
  constexpr int64_t kMaxSize = int64_t{1} << 24, kMaxLayers = 1 << 16;
  if (o.input_size > kMaxSize || o.hidden_size > kMaxSize || o.num_layers > kMaxLayers)
    throw ArgumentError(fmt::format("{}: input_size {}, hidden_size {}, num_layers {} exceed the bounds {}, {}, {}", who,
                                    o.input_size, o.hidden_size, o.num_layers, kMaxSize, kMaxSize, kMaxLayers));
  if (!(o.dropout >= 0.0 && o.dropout <= 1.0))
    throw ArgumentError(fmt::format("{}: dropout must be in [0, 1], got {:f}", who, o.dropout));
  const int64_t h = o.hidden_size, gh = gates * o.hidden_size;
  const Fans fans{h, gh};
  auto direction = [&](int64_t in) {
    RnnDirection<B> d;
    d.weight_ih = lazy_param<Tensor<B, 2>>(o.initializer, std::array<int64_t, 2>{in, gh}, fans, device);
    d.weight_hh = lazy_param<Tensor<B, 2>>(o.initializer, std::array<int64_t, 2>{h, gh}, fans, device);
    if (o.bias) {
      d.bias_ih = lazy_param<Tensor<B, 1>>(o.initializer, std::array<int64_t, 1>{gh}, fans, device);
      d.bias_hh = lazy_param<Tensor<B, 1>>(o.initializer, std::array<int64_t, 1>{gh}, fans, device);
    }
    return d;
  };
  std::vector<RnnLayer<B>> layers;
  for (int64_t k = 0; k < o.num_layers; ++k) {
    const int64_t in = k == 0 ? o.input_size : (o.bidirectional ? 2 : 1) * h;
    RnnLayer<B> l;
    l.forward_dir = direction(in);
    if (o.bidirectional) l.reverse_dir = direction(in);
    layers.push_back(std::move(l));
  }
  return layers;
}

// The step masks of a padded batch: mask(t) is [N, 1], 1 where step t is inside the sequence; nullopt at steps every
// sequence covers (no masking needed there). Built once per forward and shared by every layer and direction.
template <Backend B>
class StepMasks {
 public:
  StepMasks(const std::vector<int64_t>& lengths, int64_t steps, const typename B::Device& dev) : masks_(steps) {
    if (lengths.empty()) return;
    const int64_t shortest = *std::min_element(lengths.begin(), lengths.end());
    const auto n = static_cast<int64_t>(lengths.size());
    for (int64_t t = shortest; t < steps; ++t) {
      std::vector<double> m(lengths.size());
      for (std::size_t i = 0; i < lengths.size(); ++i) m[i] = t < lengths[i] ? 1.0 : 0.0;
      masks_[static_cast<std::size_t>(t)] = Tensor<B, 2>::from_values(m, std::array<int64_t, 2>{n, 1}, dev);
    }
  }
  const std::optional<Tensor<B, 2>>& at(int64_t t) const { return masks_[static_cast<std::size_t>(t)]; }

 private:
  std::vector<std::optional<Tensor<B, 2>>> masks_;
};

// Sequence lengths checked against a batch of n sequences of `steps` steps (pack_padded_sequence's rules).
inline void check_lengths(const char* who, const std::vector<int64_t>& lengths, int64_t n, int64_t steps) {
  if (lengths.empty()) return;
  if (static_cast<int64_t>(lengths.size()) != n)
    throw ShapeError(fmt::format("{}: {} lengths for a batch of {} sequences", who, lengths.size(), n));
  for (std::size_t i = 0; i < lengths.size(); ++i)
    if (lengths[i] < 1 || lengths[i] > steps)
      throw ArgumentError(fmt::format("{}: lengths[{}] = {} is outside [1, {}] (the input's sequence length)", who, i,
                                      lengths[i], steps));
}

}  // namespace detail

// The states an RNN carries per step: S = 1 (GRU: h) or 2 (LSTM: h, c); index 0 is the output h.
template <Backend B>
using RnnState = std::vector<Tensor<B, 2>>;

// The result of run_rnn: the top layer's output (time-major [T, N, D * H]) and each state's final values stacked
// as [num_layers * D, N, H].
template <Backend B>
struct RnnRun {
  Tensor<B, 3> output;
  std::vector<Tensor<B, 3>> final_states;
};

namespace detail {

// The layer/direction loop. `x` is [T, N, I] (time-major), `initial[s]` [num_layers * D, N, H] for each state s
// (nullopt: zeros). Cell: `static constexpr int64_t kGates`, `ix_bias(dir)` (the bias folded into the input
// projection, or nullopt) and `step(dir, gx_t [N, gates * H], state) -> state`.
template <Backend B, std::size_t S, class Cell>
RnnRun<B> run_rnn(const char* who, const std::vector<RnnLayer<B>>& layers, const Tensor<B, 3>& x_in,
                     const std::array<std::optional<Tensor<B, 3>>, S>& initial, const std::vector<int64_t>& lengths,
                     double dropout, bool training, const Cell& cell) {
  if (layers.empty()) throw ArgumentError(fmt::format("{}: the module has no layers", who));
  const int64_t dirs = layers[0].reverse_dir ? 2 : 1;
  const int64_t h = layers[0].forward_dir.weight_hh.shape()[0];
  const int64_t in = layers[0].forward_dir.weight_ih.shape()[0];
  const int64_t n = x_in.dim(1);
  if (x_in.dim(2) != in)
    throw ShapeError(fmt::format("{}: input {} has {} features, expected input_size {}", who, x_in.shape().to_string(),
                                 x_in.dim(2), in));
  check_lengths(who, lengths, n, x_in.dim(0));
  // pad_packed_sequence's output has max(lengths) steps: the steps past every sequence are never run.
  const int64_t steps = lengths.empty() ? x_in.dim(0) : *std::max_element(lengths.begin(), lengths.end());
  if (steps == 0) throw ShapeError(fmt::format("{}: the input {} has no steps", who, x_in.shape().to_string()));
  const Tensor<B, 3> x0 = steps == x_in.dim(0) ? x_in : x_in.narrow(0, 0, steps);
  const auto layer_count = static_cast<int64_t>(layers.size());
  const std::array<int64_t, 3> state_shape{layer_count * dirs, n, h};
  for (std::size_t s = 0; s < S; ++s)
    if (initial[s] && !(initial[s]->shape() == Shape(std::vector<int64_t>(state_shape.begin(), state_shape.end()))))
      throw ShapeError(fmt::format("{}: initial state {} has shape {}, expected [{}, {}, {}]", who, s,
                                   initial[s]->shape().to_string(), state_shape[0], state_shape[1], state_shape[2]));
  const StepMasks<B> masks(lengths, steps, x_in.device());
  const auto zeros = Tensor<B, 2>::zeros({n, h}, x_in.device());
  Dropout drop;
  drop.prob = dropout;
  drop.mode.training = training;

  std::array<std::vector<Tensor<B, 2>>, S> finals;
  Tensor<B, 3> x = x0;
  for (int64_t k = 0; k < layer_count; ++k) {
    const RnnLayer<B>& layer = layers[static_cast<std::size_t>(k)];
    std::vector<Tensor<B, 3>> dir_outputs;
    for (int64_t d = 0; d < dirs; ++d) {
      const RnnDirection<B>& dir = d == 0 ? layer.forward_dir : *layer.reverse_dir;
      // The whole sequence's input projection at once: [T * N, I] x [I, gates * H].
      auto gx = x.template reshape<2>({steps * n, x.dim(2)}).matmul(dir.weight_ih.val());
      if (auto b = cell.ix_bias(dir)) gx = gx.add(b->template reshape<2>({1, b->dim(0)}));
      RnnState<B> state;
      for (std::size_t s = 0; s < S; ++s)
        state.push_back(initial[s] ? initial[s]->narrow(0, k * dirs + d, 1).template reshape<2>({n, h}) : zeros);
      std::vector<Tensor<B, 2>> out;  // in the order run; the reverse direction's is flipped below
      out.reserve(static_cast<std::size_t>(steps));
      for (int64_t i = 0; i < steps; ++i) {
        const int64_t t = d == 0 ? i : steps - 1 - i;
        RnnState<B> next = cell.step(dir, gx.narrow(0, t * n, n), state);
        if (const auto& m = masks.at(t)) {
          // Past a sequence's end: keep its state, output zero.
          for (std::size_t s = 0; s < S; ++s) next[s] = state[s].add(m->mul(next[s].sub(state[s])));
          out.push_back(next[0].mul(*m));
        } else {
          out.push_back(next[0]);
        }
        state = std::move(next);
      }
      for (std::size_t s = 0; s < S; ++s) finals[s].push_back(state[s]);
      if (d == 1) std::reverse(out.begin(), out.end());
      dir_outputs.push_back(stack(out, 0));
    }
    x = Tensor<B, 3>::cat(dir_outputs, 2);
    if (k + 1 < layer_count) x = drop.forward(x);
  }
  RnnRun<B> r{x, {}};
  for (std::size_t s = 0; s < S; ++s) r.final_states.push_back(stack(finals[s], 0));
  return r;
}

// batch_first's [N, T, F] <-> the loop's [T, N, F].
template <Backend B>
Tensor<B, 3> time_major(const Tensor<B, 3>& x, bool batch_first) {
  return batch_first ? x.swap_dims(0, 1) : x;
}

}  // namespace detail
}  // namespace ember::nn
