// ONNX operators of the rnn family: LSTM, GRU, RNN (h-onnx-seq). Each is the time loop of rnn_support.hpp with the
// operator's cell: the input projection of every time step is one matmul up front, each step adds the recurrent
// matmul and applies the gates, so an imported recurrent layer runs on every backend and trains.
#include "onnx/op_registry.hpp"
#include "onnx/ops/control_flow.hpp"
#include "onnx/ops/rnn_support.hpp"

namespace ember::onnx_import {

namespace {

using rnn::States;

DynTensor add(const DynTensor& a, const DynTensor& b) { return capi::binary(a, b, BinaryOp::Add); }
DynTensor mul(const DynTensor& a, const DynTensor& b) { return capi::binary(a, b, BinaryOp::Mul); }
DynTensor rows(const DynTensor& x, int64_t from, int64_t to) { return capi::slice(x, {checks::SliceArg{from, to}}); }
DynTensor transposed(const DynTensor& x) { return capi::transpose(x, 0, 1); }

bool wants_y(const OpContext& ctx) { return !ctx.node.outputs.empty() && !ctx.node.outputs[0].empty(); }

// B [dirs, 2 * rows] -> Wb + Rb of direction d ([rows]), or nullopt without B.
std::optional<DynTensor> summed_bias(const OpContext& ctx, const rnn::Spec& s, int64_t d) {
  if (!ctx.has_input(3)) return std::nullopt;
  const int64_t n = s.gates * s.hidden;
  const DynTensor b = rnn::direction_slice(ctx, s, 3, d, {2 * n}, "B");
  return add(rnn::cols(b, 0, n), rnn::cols(b, n, 2 * n));
}

// LSTM (gates i, o, f, c; functions f, g, h = Sigmoid, Tanh, Tanh):
//   i = f(Xi + H Ri + Pi . C),  f = f(Xf + H Rf + Pf . C) (1 - i with input_forget),  c = g(Xc + H Rc),
//   C' = f . C + i . c,  o = f(Xo + H Ro + Po . C'),  H' = o . h(C')
std::vector<std::optional<DynTensor>> lstm(OpContext& ctx) {
  const rnn::Spec s = rnn::read_spec(ctx, 4, {"Sigmoid", "Tanh", "Tanh"});
  const int64_t h = s.hidden;
  const bool input_forget = ctx.node.attr_int("input_forget", 0) != 0;
  std::vector<rnn::DirectionOut> dirs;
  for (int64_t d = 0; d < s.num_dirs; ++d) {
    const DynTensor w = rnn::direction_slice(ctx, s, 1, d, {4 * h, s.input_size}, "W");
    const DynTensor r_t = transposed(rnn::direction_slice(ctx, s, 2, d, {4 * h, h}, "R"));
    std::optional<DynTensor> p_i, p_o, p_f;
    if (ctx.has_input(7)) {
      const DynTensor p = rnn::direction_slice(ctx, s, 7, d, {3 * h}, "P");
      p_i = rnn::cols(p, 0, h), p_o = rnn::cols(p, h, 2 * h), p_f = rnn::cols(p, 2 * h, 3 * h);
    }
    const rnn::Activation &fa = s.act(d, 0, 3), &ga = s.act(d, 1, 3), &ha = s.act(d, 2, 3);
    const auto peephole = [](const DynTensor& pre, const std::optional<DynTensor>& p, const DynTensor& c) {
      return p ? add(pre, mul(*p, c)) : pre;
    };
    const rnn::Step step = [&](const DynTensor& x_t, const States& prev) -> States {
      const DynTensor& c_prev = prev[1];
      const DynTensor gates = add(x_t, capi::matmul(prev[0], r_t));
      const DynTensor i = rnn::activate(fa, rnn::clipped(s, peephole(rnn::cols(gates, 0, h), p_i, c_prev)));
      const DynTensor f = input_forget
                              ? capi::scalar(i, ScalarOp::RSub, 1.0)
                              : rnn::activate(fa, rnn::clipped(s, peephole(rnn::cols(gates, 2 * h, 3 * h), p_f, c_prev)));
      const DynTensor c = rnn::activate(ga, rnn::clipped(s, rnn::cols(gates, 3 * h, 4 * h)));
      DynTensor c_next = add(mul(f, c_prev), mul(i, c));
      const DynTensor o = rnn::activate(fa, rnn::clipped(s, peephole(rnn::cols(gates, h, 2 * h), p_o, c_next)));
      DynTensor h_next = mul(o, rnn::activate(ha, c_next));
      return {std::move(h_next), std::move(c_next)};
    };
    dirs.push_back(rnn::run_direction(s, d, rnn::project_input(s, w, summed_bias(ctx, s, d)),
                                      {rnn::initial_state(ctx, s, 5, d), rnn::initial_state(ctx, s, 6, d)}, step,
                                      wants_y(ctx)));
  }
  return rnn::assemble_outputs(ctx, s, dirs, 2);
}

// GRU (gates z, r, h; functions f, g = Sigmoid, Tanh):
//   z = f(Xz + H Rz),  r = f(Xr + H Rr),
//   h = g(Xh + (r . H) Rh + Rbh)  or, with linear_before_reset, g(Xh + r . (H Rh + Rbh)),
//   H' = (1 - z) . h + z . H
std::vector<std::optional<DynTensor>> gru(OpContext& ctx) {
  const rnn::Spec s = rnn::read_spec(ctx, 3, {"Sigmoid", "Tanh"});
  const int64_t h = s.hidden;
  const bool linear_before_reset = ctx.node.attr_int("linear_before_reset", 0) != 0;
  std::vector<rnn::DirectionOut> dirs;
  for (int64_t d = 0; d < s.num_dirs; ++d) {
    const DynTensor w = rnn::direction_slice(ctx, s, 1, d, {3 * h, s.input_size}, "W");
    const DynTensor r = rnn::direction_slice(ctx, s, 2, d, {3 * h, h}, "R");
    const DynTensor r_zr_t = transposed(rows(r, 0, 2 * h)), r_h_t = transposed(rows(r, 2 * h, 3 * h));
    // The input side carries Wb, and Rb where it adds outside the reset gate; Rbh stays inside it with
    // linear_before_reset.
    std::optional<DynTensor> input_bias, r_bh;
    if (ctx.has_input(3)) {
      const DynTensor b = rnn::direction_slice(ctx, s, 3, d, {6 * h}, "B");
      const DynTensor wb = rnn::cols(b, 0, 3 * h), rb = rnn::cols(b, 3 * h, 6 * h);
      const DynTensor zr = add(rnn::cols(wb, 0, 2 * h), rnn::cols(rb, 0, 2 * h));
      const DynTensor hb = linear_before_reset ? rnn::cols(wb, 2 * h, 3 * h)
                                               : add(rnn::cols(wb, 2 * h, 3 * h), rnn::cols(rb, 2 * h, 3 * h));
      input_bias = capi::cat({&zr, &hb}, 0);
      if (linear_before_reset) r_bh = rnn::cols(rb, 2 * h, 3 * h);
    }
    const rnn::Activation &fa = s.act(d, 0, 2), &ga = s.act(d, 1, 2);
    const rnn::Step step = [&](const DynTensor& x_t, const States& prev) -> States {
      const DynTensor& h_prev = prev[0];
      const DynTensor zr = add(rnn::cols(x_t, 0, 2 * h), capi::matmul(h_prev, r_zr_t));
      const DynTensor z = rnn::activate(fa, rnn::clipped(s, rnn::cols(zr, 0, h)));
      const DynTensor reset = rnn::activate(fa, rnn::clipped(s, rnn::cols(zr, h, 2 * h)));
      DynTensor recurrent;
      if (linear_before_reset) {
        recurrent = capi::matmul(h_prev, r_h_t);
        if (r_bh) recurrent = add(recurrent, *r_bh);
        recurrent = mul(reset, recurrent);
      } else {
        recurrent = capi::matmul(mul(reset, h_prev), r_h_t);
      }
      const DynTensor cand = rnn::activate(ga, rnn::clipped(s, add(rnn::cols(x_t, 2 * h, 3 * h), recurrent)));
      return {add(mul(capi::scalar(z, ScalarOp::RSub, 1.0), cand), mul(z, h_prev))};
    };
    dirs.push_back(rnn::run_direction(s, d, rnn::project_input(s, w, input_bias), {rnn::initial_state(ctx, s, 5, d)},
                                      step, wants_y(ctx)));
  }
  return rnn::assemble_outputs(ctx, s, dirs, 1);
}

// RNN (function f = Tanh): H' = f(X Wi + H Ri + Wbi + Rbi)
std::vector<std::optional<DynTensor>> simple_rnn(OpContext& ctx) {
  const rnn::Spec s = rnn::read_spec(ctx, 1, {"Tanh"});
  const int64_t h = s.hidden;
  std::vector<rnn::DirectionOut> dirs;
  for (int64_t d = 0; d < s.num_dirs; ++d) {
    const DynTensor w = rnn::direction_slice(ctx, s, 1, d, {h, s.input_size}, "W");
    const DynTensor r_t = transposed(rnn::direction_slice(ctx, s, 2, d, {h, h}, "R"));
    const rnn::Activation& fa = s.act(d, 0, 1);
    const rnn::Step step = [&](const DynTensor& x_t, const States& prev) -> States {
      return {rnn::activate(fa, rnn::clipped(s, add(x_t, capi::matmul(prev[0], r_t))))};
    };
    dirs.push_back(rnn::run_direction(s, d, rnn::project_input(s, w, summed_bias(ctx, s, d)),
                                      {rnn::initial_state(ctx, s, 5, d)}, step, wants_y(ctx)));
  }
  return rnn::assemble_outputs(ctx, s, dirs, 1);
}

}  // namespace

// Opset 7 gave the three operators their current inputs and attributes; 14 added `layout` (read with default 0).
// The control-flow operators (h-onnx-seq's too) register here, which keeps op_registry.cpp's family list as it is.
void register_rnn_ops(OpRegistry& r) {
  r.add("LSTM", lstm, 7);
  r.add("GRU", gru, 7);
  r.add("RNN", simple_rnn, 7);
  register_control_flow_ops(r);
}

}  // namespace ember::onnx_import
