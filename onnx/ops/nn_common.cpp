// Shared compositions of the nn family's converters (onnx/ops/nn_common.hpp).
#include "onnx/ops/nn_common.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace ember::onnx_import::nn_ops {

const DynTensor& float_input(const OpContext& ctx, std::size_t i) {
  const DynTensor& x = ctx.input(i);
  const DType d = capi::dtype(x);
  if (!dtype_is_float(d)) ctx.fail(fmt::format("input {} must be a float tensor, got {}", i, dtype_name(d)));
  return x;
}

std::vector<double> host_doubles(const OpContext& ctx, std::size_t i, int64_t max) {
  const DynTensor& t = ctx.input(i);
  if (capi::shape(t).num_elements() > max) ctx.fail(fmt::format("input {} has more than {} values", i, max));
  return capi::to_data(t).to_vec<double>();
}

DType exact_float_for(const DynTensor& x) {
  return capi::device(x).backend == BackendId::Cpu ? DType::F64 : DType::F32;
}

DynTensor reduce_keep(const DynTensor& x, ReduceOp op, std::vector<int64_t> axes) {
  const int64_t rank = rank_of(x);
  for (int64_t& a : axes)
    if (a < 0) a += rank;
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  // Contiguous axes are one reduction over their product (one pass instead of one per axis).
  const bool contiguous = !axes.empty() && axes.back() - axes.front() + 1 == static_cast<int64_t>(axes.size());
  if (contiguous && axes.size() > 1) {
    std::vector<int64_t> d = dims_of(x), folded(d.begin(), d.begin() + axes.front());
    int64_t n = 1;
    for (int64_t a : axes) n *= d[a];
    folded.push_back(n);
    folded.insert(folded.end(), d.begin() + axes.back() + 1, d.end());
    DynTensor y = capi::reduce(capi::reshape(x, folded), op, axes.front(), true);
    for (int64_t a : axes) d[a] = 1;
    return capi::reshape(y, d);
  }
  DynTensor y = x;
  for (int64_t a : axes) y = capi::reduce(y, op, a, true);
  return y;
}

Moments moments(const DynTensor& x, const std::vector<int64_t>& axes) {
  DynTensor mean = reduce_keep(x, ReduceOp::Mean, axes);
  DynTensor centred = capi::binary(x, mean, BinaryOp::Sub);
  DynTensor var = reduce_keep(capi::binary(centred, centred, BinaryOp::Mul), ReduceOp::Mean, axes);
  return {std::move(mean), std::move(var)};
}

DynTensor per_channel(const DynTensor& v, int64_t rank) {
  std::vector<int64_t> d(static_cast<std::size_t>(std::max<int64_t>(rank, 2)), 1);
  d[1] = capi::shape(v).num_elements();
  return capi::reshape(v, d);
}

std::vector<int64_t> spatial_attr(const OpContext& ctx, const char* key, std::size_t n, int64_t def) {
  std::vector<int64_t> v = ctx.node.attr_ints(key, std::vector<int64_t>(n, def));
  if (v.size() != n) ctx.fail(fmt::format("{} has {} values for {} spatial dims", key, v.size(), n));
  for (int64_t x : v)
    if (x < 1 || x > (int64_t{1} << 31)) ctx.fail(fmt::format("{} {} must be in 1..2^31", key, fmt::join(v, ",")));
  return v;
}

Window window_geometry(const OpContext& ctx, const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                       bool ceil_mode) {
  const std::size_t n = in.size();
  Window w;
  w.kernel = kernel;
  w.strides = spatial_attr(ctx, "strides", n, 1);
  w.dilations = spatial_attr(ctx, "dilations", n, 1);
  w.pad_begin.assign(n, 0);
  w.pad_end.assign(n, 0);
  w.out.assign(n, 0);
  const std::string auto_pad = ctx.node.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    const std::vector<int64_t> pads = ctx.node.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
    if (pads.size() != 2 * n) ctx.fail(fmt::format("pads has {} values for {} spatial dims", pads.size(), n));
    for (std::size_t i = 0; i < n; ++i) {
      w.pad_begin[i] = pads[i];
      w.pad_end[i] = pads[n + i];
      if (pads[i] < 0 || pads[n + i] < 0 || pads[i] > (int64_t{1} << 31) || pads[n + i] > (int64_t{1} << 31))
        ctx.fail(fmt::format("pads [{}] must be in 0..2^31", fmt::join(pads, ",")));
    }
  } else if (auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    ctx.fail(fmt::format("auto_pad '{}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", auto_pad));
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (kernel[i] < 1) ctx.fail(fmt::format("kernel size {} must be positive", kernel[i]));
    const int64_t span = w.dilations[i] * (kernel[i] - 1) + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      // Output ceil(in / stride); the padding that takes, with the odd unit at the end (UPPER) or start (LOWER).
      w.out[i] = (in[i] + w.strides[i] - 1) / w.strides[i];
      const int64_t total = std::max<int64_t>(0, (w.out[i] - 1) * w.strides[i] + span - in[i]);
      w.pad_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_end[i] = total - w.pad_begin[i];
      continue;
    }
    const int64_t room = in[i] + w.pad_begin[i] + w.pad_end[i] - span;
    if (room < 0) ctx.fail(fmt::format("the kernel (span {}) is larger than the padded input ({})", span, room + span));
    w.out[i] = (ceil_mode ? (room + w.strides[i] - 1) / w.strides[i] : room / w.strides[i]) + 1;
  }
  return w;
}

DynTensor pad_spatial(const DynTensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                      double value) {
  bool any = false;
  std::vector<int64_t> pads;  // torch order: (left, right) pairs from the last dim
  for (std::size_t i = begin.size(); i-- > 0;) {
    pads.push_back(begin[i]);
    pads.push_back(end[i]);
    any = any || begin[i] != 0 || end[i] != 0;
  }
  return any ? capi::pad(x, pads, PadMode::Constant, value) : x;
}

}  // namespace ember::onnx_import::nn_ops
