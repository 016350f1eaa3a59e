#pragma once
// What ONNX's three recurrent operators (LSTM, GRU, RNN; onnx/ops/rnn.cpp) share: their attributes (direction,
// layout, clip, activations with alpha/beta), the validation of their common inputs, and the time loop with
// sequence_lens and the reverse direction. Everything is composed of runtime ops (matmul, activations, slices, cat,
// where, gather), so an imported recurrent layer runs on every backend and its weights receive gradients.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "onnx/op_registry.hpp"

namespace ember::onnx_import::rnn {

// One activation function of the `activations` attribute, with the alpha/beta it consumed.
struct Activation {
  std::string name;  // lower-case: sigmoid, tanh, relu, affine, leakyrelu, thresholdedrelu, scaledtanh, ...
  double alpha = 0.0, beta = 0.0;
};
DynTensor activate(const Activation& a, const DynTensor& x);

// The attributes and shapes common to the three operators, with the inputs normalised to layout 0.
struct Spec {
  int64_t gates = 1;        // 4 LSTM, 3 GRU, 1 RNN: rows of W / R per direction are gates * hidden
  int64_t hidden = 0;
  int64_t num_dirs = 1;
  bool reverse_only = false;  // direction == "reverse"
  int64_t layout = 0;
  std::optional<double> clip;
  // acts[d * per_dir + k]: the k-th function (f, g, h) of direction d.
  std::vector<Activation> acts;
  int64_t seq = 0, batch = 0, input_size = 0;
  std::optional<std::vector<int64_t>> lens;  // sequence_lens, when given and not all equal to seq
  DynTensor x;                               // [seq, batch, input] (layout 0)
  DType dtype = DType::F32;

  bool is_reverse(int64_t d) const { return reverse_only || d == 1; }
  const Activation& act(int64_t d, std::size_t k, std::size_t per_dir) const {
    return acts[static_cast<std::size_t>(d) * per_dir + k];
  }
};

// Reads the attributes and checks X, W, R, B, sequence_lens (inputs 0..4); `default_acts` are the operator's
// default functions of one direction (LSTM: Sigmoid, Tanh, Tanh).
Spec read_spec(const OpContext& ctx, int64_t gates, const std::vector<std::string>& default_acts);

// Input `i` ([num_dirs, batch, hidden] in layout 0, [batch, num_dirs, hidden] in layout 1) for direction d as
// [batch, hidden]; zeros when omitted.
DynTensor initial_state(const OpContext& ctx, const Spec& s, std::size_t i, int64_t d);
// Direction d of a per-direction input [num_dirs, dims...] -> [dims...], after checking its shape.
DynTensor direction_slice(const OpContext& ctx, const Spec& s, std::size_t i, int64_t d,
                          const std::vector<int64_t>& dims, const char* what);
// Columns [from, to) of a [rows, cols] matrix (or elements of a vector).
DynTensor cols(const DynTensor& x, int64_t from, int64_t to);
// x clamped to [-clip, clip] when the operator has a clip attribute (applied to every activation's input).
DynTensor clipped(const Spec& s, const DynTensor& x);

// A step of one direction: the gate pre-activations of this time step's input ([batch, gates * hidden], already
// multiplied by W and with the biases that do not depend on the state) and the states of the previous step (h, and
// c for LSTM) -> the new states (h first).
using States = std::vector<DynTensor>;
using Step = std::function<States(const DynTensor& x_t, const States& prev)>;

struct DirectionOut {
  DynTensor y;  // [seq, 1, batch, hidden]; zero past a batch entry's sequence length
  States last;  // the states after each entry's last valid step
};
// Runs the time loop of direction d over x_proj ([seq, batch, gates * hidden]), in reverse for a reverse
// direction (within each entry's own length when sequence_lens is given).
DirectionOut run_direction(const Spec& s, int64_t d, const DynTensor& x_proj, States init, const Step& step,
                           bool need_y);

// The node's outputs from each direction's results: Y [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs,
// hidden]), then Y_h (and Y_c: state k at output k + 1) [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]).
std::vector<std::optional<DynTensor>> assemble_outputs(const OpContext& ctx, const Spec& s,
                                                       const std::vector<DirectionOut>& dirs,
                                                       std::size_t num_states);

// X [seq*batch, input] @ W_d^T -> [seq, batch, rows], plus `bias` ([rows]) when given.
DynTensor project_input(const Spec& s, const DynTensor& w_d, const std::optional<DynTensor>& bias);

}  // namespace ember::onnx_import::rnn
