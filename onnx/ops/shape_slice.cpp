// ONNX operators that cut, pad or mask a tensor along its dims (h-onnx-shape): Slice (any step, negative too), Pad
// (constant / reflect / edge), Trilu, Compress and ReverseSequence. Composed from slice / index_select / pad /
// triangle / gather of the C runtime: the gradient of each reaches the data input; only the positions (starts,
// pads, conditions, lengths) are read on the host.
#include <algorithm>

#include "onnx/ops/shape_util.hpp"

namespace ember::onnx_import {
namespace {

using namespace shape_detail;

// The positions ONNX's Slice takes along a dim of size n for (start, end, step), with its clamping rules.
std::vector<int64_t> slice_positions(int64_t n, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start += n;
  if (end < 0) end += n;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, n);
    end = std::clamp<int64_t>(end, 0, n);
  } else {
    start = std::clamp<int64_t>(start, 0, n - 1);
    end = std::clamp<int64_t>(end, -1, n - 1);
  }
  std::vector<int64_t> out;
  for (int64_t i = start; step > 0 ? i < end : i > end; i += step) out.push_back(i);
  return out;
}

// x restricted to `positions` along dim: a plain slice when they are consecutive (its gradient is a pad), an
// index_select otherwise (its gradient scatters back).
DynTensor take(const OpContext& ctx, const DynTensor& x, int64_t dim, const std::vector<int64_t>& positions) {
  const int64_t n = capi::shape(x).dims[static_cast<std::size_t>(dim)];
  bool consecutive = true;
  for (std::size_t i = 1; i < positions.size(); ++i) consecutive = consecutive && positions[i] == positions[i - 1] + 1;
  if (consecutive) {
    if (positions.size() == static_cast<std::size_t>(n)) return x;
    std::vector<checks::SliceArg> r(static_cast<std::size_t>(dim) + 1);
    const int64_t b = positions.empty() ? 0 : positions.front();
    r.back() = {b, b + static_cast<int64_t>(positions.size())};
    return capi::slice(x, r);
  }
  return capi::index_select(x, dim, index_tensor(ctx, positions));
}

Outputs slice_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::vector<int64_t> dims = capi::shape(x).dims;
  const int64_t r = static_cast<int64_t>(dims.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset < 10) {
    starts = ctx.node.attr_ints("starts");
    ends = ctx.node.attr_ints("ends");
    axes = ctx.node.attr_ints("axes");
  } else {
    starts = ctx.ints(1);
    ends = ctx.ints(2);
    if (ctx.has_input(3)) axes = ctx.ints(3);
    if (ctx.has_input(4)) steps = ctx.ints(4);
  }
  if (axes.empty())
    for (int64_t i = 0; i < static_cast<int64_t>(starts.size()); ++i) axes.push_back(i);
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    ctx.fail(fmt::format("starts {}, ends {}, axes {} and steps {} differ in length", text(starts), text(ends),
                         text(axes), text(steps)));
  std::vector<bool> seen(dims.size(), false);
  DynTensor y = x;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    const int64_t a = norm_axis(ctx, axes[i], r);
    if (seen[static_cast<std::size_t>(a)]) ctx.fail(fmt::format("axes {} repeat a dim", text(axes)));
    seen[static_cast<std::size_t>(a)] = true;
    if (steps[i] == 0) ctx.fail("a step is 0");
    y = take(ctx, y, a, slice_positions(dims[static_cast<std::size_t>(a)], starts[i], ends[i], steps[i]));
  }
  return {y};
}

// Where output position j of a dim of size n padded by `before` reads from (numpy's reflect and edge modes).
int64_t pad_source(int64_t j, int64_t n, bool reflect) {
  if (!reflect || n == 1) return std::clamp<int64_t>(j, 0, n - 1);
  const int64_t period = 2 * (n - 1);
  j %= period;
  if (j < 0) j += period;
  return j < n ? j : period - j;
}

Outputs pad_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::vector<int64_t> dims = capi::shape(x).dims;
  const std::size_t r = dims.size();
  std::vector<int64_t> pads;
  double value = 0.0;
  if (ctx.opset < 11) {
    pads = ctx.node.attr_ints(ctx.opset < 2 ? "paddings" : "pads");
    value = ctx.node.attr_float("value", 0.0);
  } else {
    pads = ctx.ints(1);
    if (ctx.has_input(2)) {
      const DynTensor& v = ctx.input(2);
      if (capi::shape(v).num_elements() != 1) ctx.fail("constant_value must hold exactly one value");
      value = capi::to_data(v).get<double>(0);
    }
  }
  // Opset 18's axes: the pads cover those dims only.
  std::vector<int64_t> axes;
  if (ctx.has_input(3)) {
    for (int64_t a : ctx.ints(3)) axes.push_back(norm_axis(ctx, a, static_cast<int64_t>(r)));
  } else {
    for (std::size_t d = 0; d < r; ++d) axes.push_back(static_cast<int64_t>(d));
  }
  if (pads.size() != 2 * axes.size())
    ctx.fail(fmt::format("pads {} must hold a begin and an end for each of {} dims", text(pads), axes.size()));
  std::vector<int64_t> before(r, 0), after(r, 0);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    before[static_cast<std::size_t>(axes[i])] = pads[i];
    after[static_cast<std::size_t>(axes[i])] = pads[i + axes.size()];
  }
  const std::string mode = ctx.node.attr_string("mode", "constant");
  if (mode == "constant") {
    std::vector<int64_t> torch_pads;  // (left, right) pairs from the last dim, as capi::pad takes them
    for (std::size_t i = 0; i < r; ++i) {
      torch_pads.push_back(before[r - 1 - i]);
      torch_pads.push_back(after[r - 1 - i]);
    }
    return {capi::pad(x, torch_pads, PadMode::Constant, value)};
  }
  if (mode != "reflect" && mode != "edge") ctx.fail(fmt::format("mode '{}' is not supported", mode));
  // Reflect / edge at any rank: each padded dim is an index_select of source positions (negative pads crop).
  DynTensor y = x;
  for (std::size_t d = 0; d < r; ++d) {
    if (before[d] == 0 && after[d] == 0) continue;
    const int64_t n = dims[d];
    if (n == 0) ctx.fail(fmt::format("cannot {}-pad the empty dim {}", mode, d));
    std::vector<int64_t> src;
    for (int64_t j = -before[d]; j < n + after[d]; ++j) src.push_back(pad_source(j, n, mode == "reflect"));
    y = take(ctx, y, static_cast<int64_t>(d), src);
  }
  return {y};
}

Outputs trilu_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const int64_t k = ctx.has_input(1) ? ctx.ints(1).at(0) : 0;
  const bool upper = ctx.node.attr_int("upper", 1) != 0;
  if (rank_of(x) < 2) ctx.fail("input must have at least 2 dims");
  return {capi::triangle(x, k, upper)};
}

Outputs compress_op(OpContext& ctx) {
  DynTensor x = ctx.input(0);
  const std::vector<int64_t> cond = host_ints(ctx, ctx.input(1), "condition");
  int64_t axis = 0;
  if (ctx.node.has_attr("axis"))
    axis = norm_axis(ctx, ctx.node.attr_int("axis", 0), rank_of(x));
  else
    x = capi::reshape(x, {capi::shape(x).num_elements()});  // no axis: the flattened input
  const int64_t n = capi::shape(x).dims[static_cast<std::size_t>(axis)];
  if (static_cast<int64_t>(cond.size()) > n)
    ctx.fail(fmt::format("condition has {} entries for a dim of size {}", cond.size(), n));
  std::vector<int64_t> keep;
  for (std::size_t i = 0; i < cond.size(); ++i)
    if (cond[i]) keep.push_back(static_cast<int64_t>(i));
  return {take(ctx, x, axis, keep)};
}

Outputs reverse_sequence_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::vector<int64_t> dims = capi::shape(x).dims;
  const int64_t r = static_cast<int64_t>(dims.size());
  const int64_t t_axis = norm_axis(ctx, ctx.node.attr_int("time_axis", 0), r, "time_axis");
  const int64_t b_axis = norm_axis(ctx, ctx.node.attr_int("batch_axis", 1), r, "batch_axis");
  if (r < 2 || t_axis == b_axis) ctx.fail("time_axis and batch_axis must be two different dims");
  const std::vector<int64_t> lens = ctx.ints(1);
  const int64_t nb = dims[static_cast<std::size_t>(b_axis)], nt = dims[static_cast<std::size_t>(t_axis)];
  if (static_cast<int64_t>(lens.size()) != nb)
    ctx.fail(fmt::format("sequence_lens has {} entries for a batch of {}", lens.size(), nb));
  // The time index each (batch, time) position reads, as a tensor with 1 in the other dims, expanded and gathered.
  std::vector<int64_t> idx_dims(dims.size(), 1);
  idx_dims[static_cast<std::size_t>(b_axis)] = nb;
  idx_dims[static_cast<std::size_t>(t_axis)] = nt;
  std::vector<int64_t> idx(static_cast<std::size_t>(nb * nt));
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t len = lens[static_cast<std::size_t>(b)];
    if (len < 0 || len > nt) ctx.fail(fmt::format("sequence length {} is outside 0..{}", len, nt));
    for (int64_t t = 0; t < nt; ++t) {
      const std::size_t at =
          b_axis < t_axis ? static_cast<std::size_t>(b * nt + t) : static_cast<std::size_t>(t * nb + b);
      idx[at] = t < len ? len - 1 - t : t;
    }
  }
  const DynTensor index = capi::expand(int64_tensor(ctx, idx, Shape(idx_dims)), dims);
  if (capi::dtype(x) == DType::Bool)  // gather takes no bool tensors: through int64
    return {capi::cast(capi::gather(capi::cast(x, DType::I64), t_axis, index), DType::Bool)};
  return {capi::gather(x, t_axis, index)};
}

}  // namespace

void register_shape_slice_ops(OpRegistry& r) {
  r.add("Slice", slice_op);
  r.add("Pad", pad_op);
  r.add("Trilu", trilu_op);
  r.add("Compress", compress_op);
  r.add("ReverseSequence", reverse_sequence_op);
}

}  // namespace ember::onnx_import
