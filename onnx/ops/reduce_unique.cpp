// ONNX's Unique (h-onnx-math, registered with the reductions): the distinct elements (or slices along `axis`),
// sorted or in order of first occurrence, with indices, inverse_indices and counts. The values are compared on the
// device, pairwise: slice i equals slice j, and slice i is lexicographically below slice j (at their first
// differing element). Only those booleans come to the host, where the groups are formed (their number decides the
// output's size); Y is then gathered from x on the device.
#include <algorithm>
#include <numeric>

#include "onnx/ops/math_util.hpp"

namespace ember::onnx_import {
namespace {

using math::Outs;

std::vector<int64_t> host_ints(const DynTensor& t) {
  const TensorData d = capi::to_data(capi::cast(t, DType::I64));
  std::vector<int64_t> out(d.num_elements());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = d.get<int64_t>(i);
  return out;
}

DynTensor ints_tensor(const DynDevice& dev, const std::vector<int64_t>& v) {
  return capi::from_data(dev, TensorData::from_vec<int64_t>(v, Shape{static_cast<int64_t>(v.size())}));
}

Outs unique(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const Shape s = capi::shape(x);
  const bool has_axis = ctx.node.has_attr("axis");
  const int64_t axis = has_axis ? math::norm_axis(ctx, ctx.node.attr_int("axis", 0), s.rank()) : 0;
  // Slices as rows [n, m]: the flattened elements without an axis, else the axis moved first.
  DynTensor rows;
  if (!has_axis) {
    rows = capi::reshape(x, {s.num_elements(), 1});
  } else {
    std::vector<int64_t> perm{axis};
    for (int64_t i = 0; i < static_cast<int64_t>(s.rank()); ++i)
      if (i != axis) perm.push_back(i);
    const int64_t n = s[static_cast<std::size_t>(axis)];
    rows = capi::reshape(capi::permute(x, perm), {n, n == 0 ? 0 : s.num_elements() / n});
  }
  const Shape rs = capi::shape(rows);
  const int64_t n = rs[0], m = rs[1];
  if (n * n * std::max<int64_t>(m, 1) > (int64_t{1} << 24))
    ctx.fail(fmt::format("{} slices of {} elements are above what Unique compares pairwise (2^24)", n, m));

  std::vector<int64_t> eq(static_cast<std::size_t>(n * n), 1), lt(static_cast<std::size_t>(n * n), 0);
  if (n > 0 && m > 0) {
    const DynTensor a = capi::reshape(rows, {n, 1, m}), b = capi::reshape(rows, {1, n, m});
    const DynTensor differ = capi::compare(a, b, CompareOp::Ne);  // [n, n, m]
    const DynTensor differ_i = capi::cast(differ, DType::I64);
    eq = host_ints(capi::compare_scalar(capi::reduce(differ_i, ReduceOp::Max, 2, false), CompareOp::Eq, 0.0));
    // Lexicographic order: compare at the first differing element (argmax finds the first 1).
    const DynTensor first = capi::arg_reduce(differ_i, ArgReduceOp::ArgMax, 2, true);  // [n, n, 1]
    const DynTensor av = capi::gather(capi::expand(a, {n, n, m}), 2, first);
    const DynTensor bv = capi::gather(capi::expand(b, {n, n, m}), 2, first);
    lt = host_ints(capi::compare(av, bv, CompareOp::Lt));
  }

  // Groups in order of first occurrence: the first index of each, and each slice's group.
  std::vector<int64_t> firsts, group(static_cast<std::size_t>(n), -1);
  for (int64_t i = 0; i < n; ++i) {
    for (std::size_t g = 0; g < firsts.size() && group[static_cast<std::size_t>(i)] < 0; ++g)
      if (eq[static_cast<std::size_t>(firsts[g] * n + i)]) group[static_cast<std::size_t>(i)] = static_cast<int64_t>(g);
    if (group[static_cast<std::size_t>(i)] < 0) {
      group[static_cast<std::size_t>(i)] = static_cast<int64_t>(firsts.size());
      firsts.push_back(i);
    }
  }
  std::vector<int64_t> rank(firsts.size());  // output position of each group
  std::iota(rank.begin(), rank.end(), int64_t{0});
  if (ctx.node.attr_int("sorted", 1) != 0) {
    std::vector<int64_t> order(firsts.size());
    std::iota(order.begin(), order.end(), int64_t{0});
    std::stable_sort(order.begin(), order.end(), [&](int64_t g, int64_t h) {
      return lt[static_cast<std::size_t>(firsts[static_cast<std::size_t>(g)] * n +
                                         firsts[static_cast<std::size_t>(h)])] != 0;
    });
    for (std::size_t p = 0; p < order.size(); ++p) rank[static_cast<std::size_t>(order[p])] = static_cast<int64_t>(p);
  }
  const std::size_t k = firsts.size();
  std::vector<int64_t> indices(k), counts(k, 0), inverse(static_cast<std::size_t>(n));
  for (std::size_t g = 0; g < k; ++g) indices[static_cast<std::size_t>(rank[g])] = firsts[g];
  for (int64_t i = 0; i < n; ++i) {
    const int64_t out_pos = rank[static_cast<std::size_t>(group[static_cast<std::size_t>(i)])];
    inverse[static_cast<std::size_t>(i)] = out_pos;
    ++counts[static_cast<std::size_t>(out_pos)];
  }
  const DynDevice dev = capi::device(x);
  const DynTensor idx = ints_tensor(dev, indices);
  const DynTensor y =
      has_axis ? capi::index_select(x, axis, idx) : capi::index_select(capi::reshape(x, {s.num_elements()}), 0, idx);
  Outs out{y, idx, ints_tensor(dev, inverse), ints_tensor(dev, counts)};
  out.resize(std::max<std::size_t>(1, std::min(out.size(), ctx.num_outputs())));
  return out;
}

}  // namespace

namespace math {
void register_unique_ops(OpRegistry& r) { r.add("Unique", unique, 11); }
}  // namespace math

}  // namespace ember::onnx_import
