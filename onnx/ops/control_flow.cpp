// ONNX's control-flow operators: If, Loop, Scan (h-onnx-seq), on the executor's subgraph entry
// (Executor::run_subgraph, onnx/executor.hpp): the branch or body runs as a graph of runtime ops in a scope that
// sees the enclosing graphs' values, so its ops record autodiff like the rest of the model. Branch choices and trip
// conditions are read to the host (one bool per iteration); the values themselves stay on the device.
#include "onnx/ops/control_flow.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "onnx/executor.hpp"

namespace ember::onnx_import {

namespace {

using Outputs = std::vector<std::optional<DynTensor>>;

Executor& executor_of(const OpContext& ctx) {
  if (!ctx.executor) ctx.fail("runs a subgraph, which needs the graph executor (onnx/executor.hpp)");
  return *ctx.executor;
}

const Graph& graph_attr(const OpContext& ctx, const char* key) {
  const Graph* g = ctx.node.attr_graph(key);
  if (!g) ctx.fail(fmt::format("needs the graph attribute {}", key));
  return *g;
}

// A one-element tensor (any dtype) as a bool: If's cond, Loop's cond input and its body's cond output.
bool truth(const OpContext& ctx, const DynTensor& t, const char* what) {
  if (capi::shape(t).num_elements() != 1)
    ctx.fail(fmt::format("{} must hold one value, got shape {}", what, capi::shape(t).to_string()));
  return capi::to_data(t).get<double>(0) != 0.0;
}

// The per-iteration values of a scan output stacked along a new axis `axis` (in 0..rank), in order.
DynTensor stack(const std::vector<DynTensor>& items, int64_t axis) {
  std::vector<DynTensor> lifted;
  lifted.reserve(items.size());
  for (const DynTensor& t : items) {
    std::vector<int64_t> dims = capi::shape(t).dims;
    dims.insert(dims.begin() + axis, 1);
    lifted.push_back(capi::reshape(t, dims));
  }
  std::vector<const DynTensor*> parts;
  for (const DynTensor& t : lifted) parts.push_back(&t);
  return capi::cat(parts, axis);
}

// A scan output of zero iterations: [0, dims...] from the body's declared output when its shape is static.
DynTensor empty_scan_output(const OpContext& ctx, const ValueInfo& v) {
  if (!v.dtype || !v.dims || std::any_of(v.dims->begin(), v.dims->end(), [](int64_t d) { return d < 0; }))
    ctx.fail(fmt::format("ran zero iterations, and the body's output '{}' has no static shape to stack", v.name));
  std::vector<int64_t> dims = *v.dims;
  dims.insert(dims.begin(), 0);
  return capi::full(ctx.device, *v.dtype, Shape(dims), 0.0);
}

DynTensor scalar_i64(const DynDevice& dev, int64_t v) {
  return capi::from_data(dev, TensorData::from_vec<int64_t>({v}, Shape{}));
}
DynTensor scalar_bool(const DynDevice& dev, bool v) {
  return capi::from_data(dev, TensorData::from_vec<bool>({v}, Shape{}));
}

// If: runs then_branch or else_branch (no inputs; they read the enclosing scope) and returns its outputs.
Outputs if_op(OpContext& ctx) {
  const bool cond = truth(ctx, ctx.input(0), "cond");
  const Graph& branch = graph_attr(ctx, cond ? "then_branch" : "else_branch");
  const std::vector<DynTensor> outs = executor_of(ctx).run_subgraph(branch, {});
  if (outs.size() != ctx.num_outputs())
    ctx.fail(fmt::format("{} returns {} values for {} outputs", cond ? "then_branch" : "else_branch", outs.size(),
                         ctx.num_outputs()));
  return Outputs(outs.begin(), outs.end());
}

// Loop(M, cond, v_initial...): body(iteration_num, cond, v...) -> (cond, v..., scan_outputs...) while
// i < M and cond; returns the final v... and each scan output stacked over the iterations. The body's cond output
// is read every iteration, as ONNX Runtime does (a loop without M and cond inputs ends when the body says so).
Outputs loop_op(OpContext& ctx) {
  const Graph& body = graph_attr(ctx, "body");
  Executor& ex = executor_of(ctx);
  std::optional<int64_t> max_trips;
  if (ctx.has_input(0)) {
    const std::vector<int64_t> m = ctx.ints(0);
    if (m.size() != 1) ctx.fail(fmt::format("M must hold one value, got {}", m.size()));
    max_trips = m[0];
  }
  bool keep_going = ctx.has_input(1) ? truth(ctx, ctx.input(1), "cond") : true;
  std::vector<DynTensor> carried;
  for (std::size_t i = 2; i < ctx.num_inputs(); ++i) carried.push_back(ctx.input(i));
  const std::size_t n = carried.size();
  if (body.inputs.size() != 2 + n)
    ctx.fail(fmt::format("body takes {} inputs; 2 + {} loop-carried are needed", body.inputs.size(), n));
  if (body.outputs.size() < 1 + n || ctx.num_outputs() != body.outputs.size() - 1)
    ctx.fail(fmt::format("body returns {} values and the node has {} outputs, for {} loop-carried values",
                         body.outputs.size(), ctx.num_outputs(), n));
  const std::size_t k_scans = body.outputs.size() - 1 - n;

  std::vector<std::vector<DynTensor>> scans(k_scans);
  for (int64_t i = 0; keep_going && (!max_trips || i < *max_trips); ++i) {
    std::vector<DynTensor> in{scalar_i64(ctx.device, i), scalar_bool(ctx.device, keep_going)};
    in.insert(in.end(), carried.begin(), carried.end());
    std::vector<DynTensor> out = ex.run_subgraph(body, in);
    keep_going = truth(ctx, out[0], "the body's cond output");
    std::copy(out.begin() + 1, out.begin() + 1 + static_cast<std::ptrdiff_t>(n), carried.begin());
    for (std::size_t k = 0; k < k_scans; ++k) scans[k].push_back(std::move(out[1 + n + k]));
  }
  Outputs result(carried.begin(), carried.end());
  for (std::size_t k = 0; k < k_scans; ++k)
    result.emplace_back(scans[k].empty() ? empty_scan_output(ctx, body.outputs[1 + n + k]) : stack(scans[k], 0));
  return result;
}

// One scan over `seq` steps: states (N) and scan inputs (M) -> final states and the K scan outputs per step.
struct ScanRun {
  std::vector<DynTensor> states;
  std::vector<std::vector<DynTensor>> outputs;  // [k][step]
};
ScanRun run_scan(OpContext& ctx, const Graph& body, std::vector<DynTensor> states,
                 const std::vector<DynTensor>& scan_inputs, const std::vector<int64_t>& in_axes,
                 const std::vector<int64_t>& in_dirs, int64_t steps, std::size_t k_outputs) {
  Executor& ex = executor_of(ctx);
  const std::size_t n = states.size();
  ScanRun run{std::move(states), std::vector<std::vector<DynTensor>>(k_outputs)};
  for (int64_t t = 0; t < steps; ++t) {
    std::vector<DynTensor> in = run.states;
    for (std::size_t j = 0; j < scan_inputs.size(); ++j)
      in.push_back(capi::select(scan_inputs[j], in_axes[j], in_dirs[j] ? steps - 1 - t : t));
    std::vector<DynTensor> out = ex.run_subgraph(body, in);
    if (out.size() != n + k_outputs)
      ctx.fail(fmt::format("body returns {} values; {} states + {} scan outputs are needed", out.size(), n,
                           k_outputs));
    std::copy(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n), run.states.begin());
    for (std::size_t k = 0; k < k_outputs; ++k) run.outputs[k].push_back(std::move(out[n + k]));
  }
  return run;
}

std::vector<int64_t> per_input(const OpContext& ctx, const char* key, std::size_t count) {
  std::vector<int64_t> v = ctx.node.attr_ints(key, std::vector<int64_t>(count, 0));
  if (v.size() != count) ctx.fail(fmt::format("{} has {} entries for {} values", key, v.size(), count));
  return v;
}

// Scan (opset 9+): inputs N states then M scan inputs, scanned along scan_input_axes (reversed per
// scan_input_directions); outputs N final states then K scan outputs stacked along scan_output_axes.
Outputs scan9(OpContext& ctx) {
  const Graph& body = graph_attr(ctx, "body");
  const int64_t m = ctx.node.attr_int("num_scan_inputs", -1);
  if (m < 1 || static_cast<std::size_t>(m) > ctx.num_inputs())
    ctx.fail(fmt::format("num_scan_inputs {} does not fit {} inputs", m, ctx.num_inputs()));
  const std::size_t n = ctx.num_inputs() - static_cast<std::size_t>(m);
  if (ctx.num_outputs() < n) ctx.fail(fmt::format("has {} outputs for {} states", ctx.num_outputs(), n));
  const std::size_t k_outputs = ctx.num_outputs() - n;
  std::vector<DynTensor> states, scan_inputs;
  for (std::size_t i = 0; i < n; ++i) states.push_back(ctx.input(i));
  for (std::size_t i = n; i < ctx.num_inputs(); ++i) scan_inputs.push_back(ctx.input(i));

  std::vector<int64_t> in_axes = per_input(ctx, "scan_input_axes", scan_inputs.size());
  const std::vector<int64_t> in_dirs = per_input(ctx, "scan_input_directions", scan_inputs.size());
  std::vector<int64_t> out_axes = per_input(ctx, "scan_output_axes", k_outputs);
  const std::vector<int64_t> out_dirs = per_input(ctx, "scan_output_directions", k_outputs);
  int64_t steps = -1;
  for (std::size_t j = 0; j < scan_inputs.size(); ++j) {
    const Shape s = capi::shape(scan_inputs[j]);
    const auto rank = static_cast<int64_t>(s.rank());
    if (in_axes[j] < 0) in_axes[j] += rank;
    if (in_axes[j] < 0 || in_axes[j] >= rank)
      ctx.fail(fmt::format("scan input {} of shape {} has no axis {}", j, s.to_string(), in_axes[j]));
    const int64_t len = s[static_cast<std::size_t>(in_axes[j])];
    if (steps >= 0 && len != steps)
      ctx.fail(fmt::format("scan inputs have different lengths ({} and {})", steps, len));
    steps = len;
  }
  ScanRun run = run_scan(ctx, body, std::move(states), scan_inputs, in_axes, in_dirs, steps, k_outputs);
  Outputs result(run.states.begin(), run.states.end());
  for (std::size_t k = 0; k < k_outputs; ++k) {
    std::vector<DynTensor>& items = run.outputs[k];
    if (items.empty()) {
      result.emplace_back(empty_scan_output(ctx, body.outputs[n + k]));
      continue;
    }
    const auto rank = static_cast<int64_t>(capi::shape(items[0]).rank()) + 1;
    int64_t axis = out_axes[k] < 0 ? out_axes[k] + rank : out_axes[k];
    if (axis < 0 || axis >= rank) ctx.fail(fmt::format("scan output {} has no axis {}", k, out_axes[k]));
    if (out_dirs[k]) std::reverse(items.begin(), items.end());
    result.emplace_back(stack(items, axis));
  }
  return result;
}

// Scan (opset 8): inputs sequence_lens (optional) then N states [batch, ...] then M scan inputs [batch, seq, ...];
// every batch entry is scanned on its own for its length (the scan outputs are zero past it).
Outputs scan8(OpContext& ctx) {
  const Graph& body = graph_attr(ctx, "body");
  const int64_t m = ctx.node.attr_int("num_scan_inputs", -1);
  if (m < 1 || static_cast<std::size_t>(m) + 1 > ctx.num_inputs())
    ctx.fail(fmt::format("num_scan_inputs {} does not fit {} inputs", m, ctx.num_inputs()));
  const std::size_t n = ctx.num_inputs() - 1 - static_cast<std::size_t>(m);
  if (ctx.num_outputs() < n) ctx.fail(fmt::format("has {} outputs for {} states", ctx.num_outputs(), n));
  const std::size_t k_outputs = ctx.num_outputs() - n;
  const std::vector<int64_t> dirs = per_input(ctx, "directions", static_cast<std::size_t>(m));
  const Shape first = capi::shape(ctx.input(1 + n));
  if (first.rank() < 2) ctx.fail(fmt::format("scan inputs need [batch, sequence, ...], got {}", first.to_string()));
  const int64_t batch = first[0], seq = first[1];
  for (std::size_t i = 1; i < ctx.num_inputs(); ++i) {
    const Shape s = capi::shape(ctx.input(i));
    if (s.rank() < (i > n ? 2u : 1u) || s[0] != batch || (i > n && s[1] != seq))
      ctx.fail(fmt::format("input {} of shape {} does not have batch {}{}", i, s.to_string(), batch,
                           i > n ? fmt::format(" and sequence {}", seq) : ""));
  }
  std::vector<int64_t> lens(static_cast<std::size_t>(batch), seq);
  if (ctx.has_input(0)) {
    lens = ctx.ints(0);
    if (static_cast<int64_t>(lens.size()) != batch)
      ctx.fail(fmt::format("sequence_lens has {} entries for a batch of {}", lens.size(), batch));
    for (int64_t l : lens)
      if (l < 0 || l > seq) ctx.fail(fmt::format("sequence_lens entry {} is outside [0, {}]", l, seq));
  }

  std::vector<std::vector<DynTensor>> states_per_batch(n), outputs_per_batch(k_outputs);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<DynTensor> states, scan_inputs;
    for (std::size_t i = 0; i < n; ++i) states.push_back(capi::select(ctx.input(1 + i), 0, b));
    for (std::size_t j = 0; j < static_cast<std::size_t>(m); ++j)
      scan_inputs.push_back(capi::select(ctx.input(1 + n + j), 0, b));
    // Steps past the entry's length are never read: a reverse input starts at its own last valid step.
    ScanRun run = run_scan(ctx, body, std::move(states), scan_inputs, std::vector<int64_t>(scan_inputs.size(), 0),
                           dirs, lens[static_cast<std::size_t>(b)], k_outputs);
    for (std::size_t i = 0; i < n; ++i) states_per_batch[i].push_back(run.states[i]);
    for (std::size_t k = 0; k < k_outputs; ++k) {
      std::vector<DynTensor>& items = run.outputs[k];
      if (items.empty()) ctx.fail("a batch entry of length 0 leaves its scan outputs without a shape");
      const DynTensor zero = capi::full(ctx.device, capi::dtype(items[0]), capi::shape(items[0]), 0.0);
      while (static_cast<int64_t>(items.size()) < seq) items.push_back(zero);
      outputs_per_batch[k].push_back(stack(items, 0));
    }
  }
  Outputs result;
  for (auto& s : states_per_batch) result.emplace_back(stack(s, 0));
  for (auto& o : outputs_per_batch) result.emplace_back(stack(o, 0));
  return result;
}

}  // namespace

void register_control_flow_ops(OpRegistry& r) {
  r.add("If", if_op, 1);
  r.add("Loop", loop_op, 1);
  r.add("Scan", scan8, 8, 8);
  r.add("Scan", scan9, 9);
}

}  // namespace ember::onnx_import
