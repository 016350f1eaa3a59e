// ONNX's indexing operators (h-onnx-shape): Gather, GatherElements, GatherND, Scatter, ScatterElements, ScatterND,
// OneHot, NonZero, TopK and Unique. Gathers are index_select / gather of the C runtime (their gradients
// scatter back into the data); scatters are an index_select of the updates and a where over the data, or
// scatter_add, so both the data and the updates get gradients. Index tensors are integers: ScatterND / GatherND /
// ScatterElements read them on the host to compute flat positions; no float data goes there (NonZero and Unique
// read their input because their output's size depends on it).
#include <algorithm>
#include <map>
#include <numeric>

#include "onnx/ops/shape_util.hpp"

namespace ember::onnx_import {
namespace {

using namespace shape_detail;

// gather along dim, bool tensors through int64 (the runtime's gather takes floats and ints).
DynTensor gather_any(const DynTensor& x, int64_t dim, const DynTensor& idx) {
  if (capi::dtype(x) == DType::Bool) return capi::cast(capi::gather(capi::cast(x, DType::I64), dim, idx), DType::Bool);
  return capi::gather(x, dim, idx);
}

Outputs gather_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const DynTensor& idx = ctx.input(1);
  const std::vector<int64_t> xs = capi::shape(x).dims, is = capi::shape(idx).dims;
  const int64_t axis = norm_axis(ctx, ctx.node.attr_int("axis", 0), static_cast<int64_t>(xs.size()));
  const auto a = static_cast<std::size_t>(axis);
  // out = x.shape[:axis] + indices.shape + x.shape[axis+1:]: one index_select by the flattened indices, reshaped.
  const DynTensor flat = capi::reshape(wrap_negative(idx, xs[a]), {numel(is)});
  std::vector<int64_t> out(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(a));
  out.insert(out.end(), is.begin(), is.end());
  out.insert(out.end(), xs.begin() + static_cast<std::ptrdiff_t>(a) + 1, xs.end());
  return {capi::reshape(capi::index_select(x, axis, flat), out)};
}

Outputs gather_elements_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::vector<int64_t> xs = capi::shape(x).dims;
  const int64_t axis = norm_axis(ctx, ctx.node.attr_int("axis", 0), static_cast<int64_t>(xs.size()));
  return {gather_any(x, axis, wrap_negative(ctx.input(1), xs[static_cast<std::size_t>(axis)]))};
}

// Row-major strides of dims.
std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (std::size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * dims[i];
  return s;
}

// The flat row (over data's dims [b, b + k), after the batch) of each index tuple of a GatherND / ScatterND
// indices tensor [..., k]; negative entries count from the end. Rows of batch j are offset by j * rows-per-batch.
std::vector<int64_t> nd_rows(const OpContext& ctx, const std::vector<int64_t>& data, const std::vector<int64_t>& ishape,
                             const std::vector<int64_t>& idx, std::size_t batch_dims) {
  const std::size_t k = static_cast<std::size_t>(ishape.back());
  if (k < 1 || batch_dims + k > data.size())
    ctx.fail(fmt::format("index tuples of length {} for data {} with {} batch dims", k, text(data), batch_dims));
  const std::vector<int64_t> indexed(data.begin() + static_cast<std::ptrdiff_t>(batch_dims),
                                     data.begin() + static_cast<std::ptrdiff_t>(batch_dims + k));
  const std::vector<int64_t> st = strides_of(indexed);
  const int64_t per_batch = numel(indexed);
  const int64_t tuples = static_cast<int64_t>(idx.size() / k);
  const int64_t batches = numel(ishape, 0, batch_dims);
  const int64_t per = batches ? tuples / batches : 0;
  std::vector<int64_t> rows(static_cast<std::size_t>(tuples));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t row = (per ? t / per : 0) * per_batch;
    for (std::size_t j = 0; j < k; ++j) {
      int64_t v = idx[static_cast<std::size_t>(t) * k + j];
      const int64_t n = indexed[j];
      if (v < 0) v += n;
      if (v < 0 || v >= n)
        ctx.fail(
            fmt::format("index {} is out of range for a dim of size {}", idx[static_cast<std::size_t>(t) * k + j], n));
      row += v * st[j];
    }
    rows[static_cast<std::size_t>(t)] = row;
  }
  return rows;
}

Outputs gather_nd_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::vector<int64_t> xs = capi::shape(x).dims, is = capi::shape(ctx.input(1)).dims;
  const auto b = static_cast<std::size_t>(ctx.node.attr_int("batch_dims", 0));
  if (is.empty() || b >= is.size() || b > xs.size()) ctx.fail("indices must have a last dim after the batch dims");
  for (std::size_t i = 0; i < b; ++i)
    if (xs[i] != is[i]) ctx.fail(fmt::format("batch dims of data {} and indices {} differ", text(xs), text(is)));
  const std::vector<int64_t> rows = nd_rows(ctx, xs, is, ctx.ints(1), b);
  const std::size_t k = static_cast<std::size_t>(is.back());
  // data as [rows, rest]: each index tuple selects one row.
  const std::vector<int64_t> rest(xs.begin() + static_cast<std::ptrdiff_t>(b + k), xs.end());
  const DynTensor table = capi::reshape(x, {numel(xs, 0, b + k), numel(rest)});
  std::vector<int64_t> out(is.begin(), is.end() - 1);
  out.insert(out.end(), rest.begin(), rest.end());
  return {capi::reshape(capi::index_select(table, 0, index_tensor(ctx, rows)), out)};
}

// data [R, S] with rows[k] of it combined with updates [K, S] row k: replaced ("none"), added, multiplied, or the
// max / min taken. Replacement selects each row's last update (index_select) and keeps data elsewhere (where), so
// data and updates both get gradients; products and extrema go in rounds, one per repetition of a row.
DynTensor scatter_rows(const OpContext& ctx, const DynTensor& data, const std::vector<int64_t>& rows,
                       const DynTensor& updates, const std::string& reduction) {
  const int64_t R = capi::shape(data).dims.at(0);
  if (rows.empty()) return data;
  if (reduction == "add") {
    const int64_t S = capi::shape(data).dims.at(1);
    const DynTensor idx = capi::expand(int64_tensor(ctx, rows, Shape{static_cast<int64_t>(rows.size()), 1}),
                                       {static_cast<int64_t>(rows.size()), S});
    return capi::scatter_add(data, 0, idx, updates);
  }
  std::vector<std::vector<int64_t>> rounds;  // rounds[j][r]: the (j+1)-th update of row r, or -1
  std::vector<int64_t> seen(static_cast<std::size_t>(R), 0);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const auto r = static_cast<std::size_t>(rows[k]);
    const auto j = static_cast<std::size_t>(reduction == "none" ? 0 : seen[r]++);
    if (rounds.size() <= j) rounds.emplace_back(static_cast<std::size_t>(R), -1);
    rounds[j][r] = static_cast<int64_t>(k);  // "none": the last update wins
  }
  DynTensor out = data;
  for (const auto& round : rounds) {
    std::vector<int64_t> src(round.size());
    std::vector<bool> mask(round.size());
    for (std::size_t r = 0; r < round.size(); ++r) {
      src[r] = std::max<int64_t>(round[r], 0);
      mask[r] = round[r] >= 0;
    }
    const DynTensor picked = capi::index_select(updates, 0, index_tensor(ctx, src));
    const DynTensor m = capi::from_data(ctx.device, TensorData::from_vec<bool>(mask, Shape{R, 1}));
    if (reduction == "none") {
      out = capi::where(m, picked, out);
    } else if (reduction == "mul") {
      out = capi::where(m, capi::binary(out, picked, BinaryOp::Mul), out);
    } else if (reduction == "max" || reduction == "min") {
      out = capi::where(m, capi::binary(out, picked, reduction == "max" ? BinaryOp::Max : BinaryOp::Min), out);
    } else {
      ctx.fail(fmt::format("reduction '{}' is not supported", reduction));
    }
  }
  return out;
}

Outputs scatter_nd_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::vector<int64_t> xs = capi::shape(x).dims, is = capi::shape(ctx.input(1)).dims;
  if (is.empty()) ctx.fail("indices must have a last dim");
  const std::vector<int64_t> rows = nd_rows(ctx, xs, is, ctx.ints(1), 0);
  const std::size_t k = static_cast<std::size_t>(is.back());
  const int64_t S = numel(xs, k);
  const DynTensor table = capi::reshape(x, {numel(xs, 0, k), S});
  const DynTensor updates = capi::reshape(ctx.input(2), {static_cast<int64_t>(rows.size()), S});
  const DynTensor y = scatter_rows(ctx, table, rows, updates, ctx.node.attr_string("reduction", "none"));
  return {capi::reshape(y, xs)};
}

// ScatterElements (and opset 9's Scatter): each index element names one data element (its own position with the
// axis coordinate replaced), so data and updates flatten to [n, 1] rows for scatter_rows.
Outputs scatter_elements_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::vector<int64_t> xs = capi::shape(x).dims, is = capi::shape(ctx.input(1)).dims;
  const int64_t axis = norm_axis(ctx, ctx.node.attr_int("axis", 0), static_cast<int64_t>(xs.size()));
  if (is.size() != xs.size()) ctx.fail(fmt::format("indices {} and data {} differ in rank", text(is), text(xs)));
  const std::vector<int64_t> idx = ctx.ints(1);
  const std::vector<int64_t> xst = strides_of(xs), ist = strides_of(is);
  std::vector<int64_t> rows(idx.size());
  for (std::size_t e = 0; e < idx.size(); ++e) {
    int64_t pos = 0;
    for (std::size_t d = 0; d < xs.size(); ++d) {
      int64_t c = (static_cast<int64_t>(e) / ist[d]) % is[d];
      if (static_cast<int64_t>(d) == axis) {
        c = idx[e] < 0 ? idx[e] + xs[d] : idx[e];
        if (c < 0 || c >= xs[d]) ctx.fail(fmt::format("index {} is out of range for a dim of size {}", idx[e], xs[d]));
      } else if (c >= xs[d]) {
        ctx.fail(fmt::format("indices {} do not fit data {}", text(is), text(xs)));
      }
      pos += c * xst[d];
    }
    rows[e] = pos;
  }
  const DynTensor table = capi::reshape(x, {numel(xs), 1});
  const DynTensor updates = capi::reshape(ctx.input(2), {static_cast<int64_t>(idx.size()), 1});
  const DynTensor y = scatter_rows(ctx, table, rows, updates, ctx.node.attr_string("reduction", "none"));
  return {capi::reshape(y, xs)};
}

Outputs one_hot_op(OpContext& ctx) {
  const DynTensor& indices = ctx.input(0);
  const DynTensor& values = ctx.input(2);
  const int64_t depth = static_cast<int64_t>(host_scalar(ctx, 1));
  if (depth <= 0) ctx.fail(fmt::format("depth {} must be positive", depth));
  if (capi::shape(values).num_elements() != 2) ctx.fail("values must hold [off_value, on_value]");
  std::vector<int64_t> is = capi::shape(indices).dims;
  const int64_t r = static_cast<int64_t>(is.size()) + 1;
  const int64_t axis = norm_axis(ctx, ctx.node.attr_int("axis", -1), r);
  // indices with a 1 at axis == classes with depth at axis (1 elsewhere), broadcast: the mask of the on positions.
  std::vector<int64_t> idx_dims = is, cls_dims(static_cast<std::size_t>(r), 1);
  idx_dims.insert(idx_dims.begin() + axis, 1);
  cls_dims[static_cast<std::size_t>(axis)] = depth;
  const DynTensor idx = capi::reshape(wrap_negative(indices, depth), idx_dims);
  const DynTensor classes = capi::reshape(capi::arange(ctx.device, DType::I64, 0, depth, 1), cls_dims);
  const DynTensor on = capi::compare(idx, classes, CompareOp::Eq);
  const DynTensor flat = capi::reshape(values, {2});
  return {capi::where(on, capi::slice(flat, {{1, 2}}), capi::slice(flat, {{0, 1}}))};
}

Outputs non_zero_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::vector<int64_t> xs = capi::shape(x).dims;
  const DynTensor nz = capi::dtype(x) == DType::Bool ? x : capi::compare_scalar(x, CompareOp::Ne, 0.0);
  const std::vector<int64_t> keep = host_ints(ctx, nz, "the non-zero mask");
  const std::vector<int64_t> st = strides_of(xs);
  std::vector<int64_t> at;
  for (std::size_t i = 0; i < keep.size(); ++i)
    if (keep[i]) at.push_back(static_cast<int64_t>(i));
  // [rank, count]: row d holds the d-th coordinate of each non-zero element, in row-major order.
  const std::size_t rank = std::max<std::size_t>(xs.size(), 1);
  std::vector<int64_t> out(rank * at.size());
  for (std::size_t j = 0; j < at.size(); ++j)
    for (std::size_t d = 0; d < xs.size(); ++d) out[d * at.size() + j] = (at[j] / st[d]) % xs[d];
  return {int64_tensor(ctx, out, Shape{static_cast<int64_t>(rank), static_cast<int64_t>(at.size())})};
}

Outputs top_k_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::vector<int64_t> xs = capi::shape(x).dims;
  const int64_t axis = norm_axis(ctx, ctx.node.attr_int("axis", -1), static_cast<int64_t>(xs.size()));
  const int64_t k = ctx.opset < 10 ? ctx.node.attr_int("k", 0) : ctx.ints(1).at(0);
  if (k < 0 || k > xs[static_cast<std::size_t>(axis)])
    ctx.fail(fmt::format("k = {} is out of range for a dim of size {}", k, xs[static_cast<std::size_t>(axis)]));
  const bool largest = ctx.node.attr_int("largest", 1) != 0;
  // The runtime's topk orders floats; integers are ordered as float32 (exact up to 2^24).
  const DynTensor keys = dtype_is_float(capi::dtype(x)) ? x : capi::cast(x, DType::F32);
  const DynTensor idx = capi::topk_indices(keys, k, axis, largest);
  return {gather_any(x, axis, idx), idx};
}

// Unique: which values (or slices along axis) are distinct depends on the data, so x is read to the host once to
// find them; Y itself is an index_select of x by each value's first position, so it stays on x's graph and device.
Outputs unique_op(OpContext& ctx) {
  DynTensor x = ctx.input(0);
  const bool sorted = ctx.node.attr_int("sorted", 1) != 0;
  int64_t axis = 0;
  if (ctx.node.has_attr("axis"))
    axis = norm_axis(ctx, ctx.node.attr_int("axis", 0), rank_of(x));
  else
    x = capi::reshape(x, {capi::shape(x).num_elements()});
  const std::vector<int64_t> xs = capi::shape(x).dims;
  const int64_t n = xs[static_cast<std::size_t>(axis)];
  const int64_t width = n ? capi::shape(x).num_elements() / n : 0;
  if (capi::shape(x).num_elements() > (int64_t{1} << 20)) ctx.fail("at most 2^20 elements are supported");
  // The slices along axis as rows of doubles: axis moved to the front, then flattened.
  std::vector<int64_t> perm{axis};
  for (int64_t d = 0; d < static_cast<int64_t>(xs.size()); ++d)
    if (d != axis) perm.push_back(d);
  const TensorData host = capi::to_data(capi::permute(x, perm));
  const std::vector<double> v = host.to_vec<double>();
  const auto row_less = [&](int64_t a, int64_t b) {
    return std::lexicographical_compare(v.begin() + a * width, v.begin() + (a + 1) * width, v.begin() + b * width,
                                        v.begin() + (b + 1) * width);
  };
  std::map<int64_t, int64_t, decltype(row_less)> first(row_less);  // a representative row -> its unique slot
  std::vector<int64_t> firsts, inverse(static_cast<std::size_t>(n)), counts;
  for (int64_t i = 0; i < n; ++i) {
    const auto [it, fresh] = first.emplace(i, static_cast<int64_t>(firsts.size()));
    if (fresh) {
      firsts.push_back(i);
      counts.push_back(0);
    }
    inverse[static_cast<std::size_t>(i)] = it->second;
    ++counts[static_cast<std::size_t>(it->second)];
  }
  std::vector<int64_t> order(firsts.size());  // output slot -> slot in first-occurrence order
  std::iota(order.begin(), order.end(), int64_t{0});
  if (sorted)
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return row_less(firsts[a], firsts[b]); });
  std::vector<int64_t> rank(order.size()), idx, cnt;
  for (std::size_t o = 0; o < order.size(); ++o) {
    rank[static_cast<std::size_t>(order[o])] = static_cast<int64_t>(o);
    idx.push_back(firsts[static_cast<std::size_t>(order[o])]);
    cnt.push_back(counts[static_cast<std::size_t>(order[o])]);
  }
  for (auto& i : inverse) i = rank[static_cast<std::size_t>(i)];
  const auto k = static_cast<int64_t>(idx.size());
  Outputs out{capi::index_select(x, axis, index_tensor(ctx, idx)), int64_tensor(ctx, idx, Shape{k}),
              int64_tensor(ctx, inverse, Shape{n}), int64_tensor(ctx, cnt, Shape{k})};
  out.resize(ctx.num_outputs());
  return out;
}

}  // namespace

void register_shape_index_ops(OpRegistry& r) {
  r.add("Gather", gather_op);
  r.add("GatherElements", gather_elements_op);
  r.add("GatherND", gather_nd_op);
  r.add("ScatterND", scatter_nd_op);
  r.add("ScatterElements", scatter_elements_op);
  r.add("Scatter", scatter_elements_op);
  r.add("OneHot", one_hot_op);
  r.add("NonZero", non_zero_op);
  r.add("TopK", top_k_op);
  r.add("Unique", unique_op);
}

}  // namespace ember::onnx_import
