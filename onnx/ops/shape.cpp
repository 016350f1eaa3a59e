// ONNX operators of the shape family that only move or relabel data (h-onnx-shape): Reshape, Transpose, Concat,
// Split, Squeeze, Unsqueeze, Flatten, Expand, Tile, DepthToSpace, SpaceToDepth, and the ones that make tensors from
// shapes (Shape, Size, ConstantOfShape, Range, EyeLike). Elsewhere: the indexing operators in shape_index.cpp, Slice
// / Pad / Trilu / Compress / ReverseSequence in shape_slice.cpp, MelWeightMatrix in shape_signal.cpp, RoiAlign in
// shape_roi_align.cpp, TfIdfVectorizer in shape_tfidf.cpp. Each is reshape / permute / cat / slice / expand / repeat
// of the C runtime, so gradients flow through them on every backend; only shapes and axes are read on the host.
#include <algorithm>
#include <cmath>

#include "onnx/ops/shape_util.hpp"

namespace ember::onnx_import {

void register_shape_index_ops(OpRegistry& r);      // onnx/ops/shape_index.cpp
void register_shape_slice_ops(OpRegistry& r);      // onnx/ops/shape_slice.cpp
void register_shape_signal_ops(OpRegistry& r);     // onnx/ops/shape_signal.cpp
void register_shape_roi_align_ops(OpRegistry& r);  // onnx/ops/shape_roi_align.cpp
void register_shape_tfidf_ops(OpRegistry& r);      // onnx/ops/shape_tfidf.cpp

namespace {

using namespace shape_detail;

// Reshape's target: 0 copies the input's dim (unless allowzero, opset 14), one -1 takes what is left.
std::vector<int64_t> reshape_target(const OpContext& ctx, const std::vector<int64_t>& in, std::vector<int64_t> dims,
                                    bool allowzero) {
  int64_t infer = -1, known = 1;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0 && !allowzero) {
      if (i >= in.size()) ctx.fail(fmt::format("shape {} copies dim {} of a rank-{} input", text(dims), i, in.size()));
      dims[i] = in[i];
    }
    if (dims[i] == -1) {
      if (infer >= 0) ctx.fail(fmt::format("shape {} has more than one -1", text(dims)));
      infer = static_cast<int64_t>(i);
    } else if (dims[i] < 0) {
      ctx.fail(fmt::format("shape {} has a negative dim", text(dims)));
    } else if (__builtin_mul_overflow(known, dims[i], &known)) {
      ctx.fail(fmt::format("shape {} has too many elements", text(dims)));
    }
  }
  const int64_t total = numel(in);
  if (infer >= 0) {
    if (known == 0 || total % known != 0)
      ctx.fail(fmt::format("cannot infer the -1 of {} for {} elements", text(dims), total));
    dims[static_cast<std::size_t>(infer)] = total / known;
  } else if (known != total) {
    ctx.fail(fmt::format("shape {} does not hold the input's {} elements", text(dims), total));
  }
  return dims;
}

Outputs reshape_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::vector<int64_t> dims = ctx.opset < 5 ? ctx.node.attr_ints("shape") : ctx.ints(1);
  const bool allowzero = ctx.opset >= 14 && ctx.node.attr_int("allowzero", 0) != 0;
  return {capi::reshape(x, reshape_target(ctx, capi::shape(x).dims, dims, allowzero))};
}

Outputs transpose_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const int64_t r = rank_of(x);
  std::vector<int64_t> perm = ctx.node.attr_ints("perm");
  if (perm.empty())  // the default reverses the dims
    for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != r) ctx.fail(fmt::format("perm {} for a rank-{} input", text(perm), r));
  return {capi::permute(x, perm)};
}

Outputs concat_op(OpContext& ctx) {
  if (ctx.num_inputs() == 0) ctx.fail("no inputs to concatenate");
  const int64_t r = rank_of(ctx.input(0));
  const int64_t axis = norm_axis(ctx, ctx.node.attr_int("axis", ctx.opset < 4 ? 1 : 0), r);
  std::vector<const DynTensor*> xs;
  for (std::size_t i = 0; i < ctx.num_inputs(); ++i) xs.push_back(&ctx.input(i));
  return {capi::cat(xs, axis)};
}

// The part [b, e) of x along axis.
DynTensor part(const DynTensor& x, int64_t axis, int64_t b, int64_t e) {
  std::vector<checks::SliceArg> ranges(static_cast<std::size_t>(axis) + 1);
  ranges.back() = {b, e};
  return capi::slice(x, ranges);
}

Outputs split_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::vector<int64_t> dims = capi::shape(x).dims;
  const int64_t axis = norm_axis(ctx, ctx.node.attr_int("axis", 0), static_cast<int64_t>(dims.size()));
  const int64_t n = dims[static_cast<std::size_t>(axis)];
  const int64_t outs = static_cast<int64_t>(ctx.num_outputs());
  std::vector<int64_t> sizes;
  if (auto split = ints_attr_or_input(ctx, "split", 1, 13)) {
    sizes = *split;
  } else {
    // Equal parts; opset 18's num_outputs makes the last one smaller when n does not divide (ceil).
    const int64_t parts = ctx.node.attr_int("num_outputs", outs);
    if (parts <= 0) ctx.fail("no outputs to split into");
    const int64_t each = ctx.node.has_attr("num_outputs") ? (n + parts - 1) / parts : n / parts;
    if (!ctx.node.has_attr("num_outputs") && n % parts != 0)
      ctx.fail(fmt::format("dim {} of size {} does not split into {} equal parts", axis, n, parts));
    for (int64_t i = 0, left = n; i < parts; ++i, left -= each) sizes.push_back(std::min(each, left));
  }
  if (static_cast<int64_t>(sizes.size()) != outs)
    ctx.fail(fmt::format("split {} has {} parts for {} outputs", text(sizes), sizes.size(), outs));
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) ctx.fail(fmt::format("split {} has a negative part", text(sizes)));
    total += s;
  }
  if (total != n) ctx.fail(fmt::format("split {} does not add up to dim {} of size {}", text(sizes), axis, n));
  Outputs out;
  int64_t at = 0;
  for (int64_t s : sizes) {
    out.emplace_back(part(x, axis, at, at + s));
    at += s;
  }
  return out;
}

Outputs squeeze_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::vector<int64_t> dims = capi::shape(x).dims;
  const int64_t r = static_cast<int64_t>(dims.size());
  std::vector<bool> drop(dims.size(), false);
  if (auto axes = ints_attr_or_input(ctx, "axes", 1, 13)) {
    for (int64_t a : *axes) {
      const auto d = static_cast<std::size_t>(norm_axis(ctx, a, r));
      if (dims[d] != 1) ctx.fail(fmt::format("cannot squeeze dim {} of size {}", a, dims[d]));
      drop[d] = true;
    }
  } else {
    for (std::size_t d = 0; d < dims.size(); ++d) drop[d] = dims[d] == 1;
  }
  std::vector<int64_t> to;
  for (std::size_t d = 0; d < dims.size(); ++d)
    if (!drop[d]) to.push_back(dims[d]);
  return {capi::reshape(x, to)};
}

Outputs unsqueeze_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::vector<int64_t> dims = capi::shape(x).dims;
  const auto axes = ints_attr_or_input(ctx, "axes", 1, 13);
  if (!axes) ctx.fail("axes are required");
  const int64_t r = static_cast<int64_t>(dims.size() + axes->size());
  std::vector<bool> added(static_cast<std::size_t>(r), false);
  for (int64_t a : *axes) {
    const auto d = static_cast<std::size_t>(norm_axis(ctx, a, r));
    if (added[d]) ctx.fail(fmt::format("axes {} repeat a dim", text(*axes)));
    added[d] = true;
  }
  std::vector<int64_t> to;
  std::size_t next = 0;
  for (std::size_t d = 0; d < added.size(); ++d) to.push_back(added[d] ? 1 : dims[next++]);
  return {capi::reshape(x, to)};
}

Outputs flatten_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::vector<int64_t> dims = capi::shape(x).dims;
  const int64_t r = static_cast<int64_t>(dims.size());
  int64_t axis = ctx.node.attr_int("axis", 1);
  if (axis < -r || axis > r) ctx.fail(fmt::format("axis {} is out of range for rank {}", axis, r));
  if (axis < 0) axis += r;
  const auto a = static_cast<std::size_t>(axis);
  return {capi::reshape(x, {numel(dims, 0, a), numel(dims, a)})};
}

// NumPy's broadcast of two shapes (Expand broadcasts both ways: a 1 in `shape` keeps the input's dim).
std::vector<int64_t> broadcast(const OpContext& ctx, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const std::size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (std::size_t i = 0; i < r; ++i) {
    const int64_t x = i + a.size() >= r ? a[i + a.size() - r] : 1;
    const int64_t y = i + b.size() >= r ? b[i + b.size() - r] : 1;
    if (x != y && x != 1 && y != 1) ctx.fail(fmt::format("shapes {} and {} do not broadcast", text(a), text(b)));
    out[i] = x == 1 ? y : x;
  }
  return out;
}

Outputs expand_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::vector<int64_t> to = broadcast(ctx, capi::shape(x).dims, ctx.ints(1));
  return {capi::expand(x, to)};
}

Outputs tile_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::vector<int64_t> repeats = ctx.ints(1);
  if (static_cast<int64_t>(repeats.size()) != rank_of(x))
    ctx.fail(fmt::format("repeats {} for a rank-{} input", text(repeats), rank_of(x)));
  return {capi::repeat(x, repeats)};
}

// DepthToSpace / SpaceToDepth on NCHW: a reshape to 6-D, a permutation, a reshape back.
Outputs depth_to_space_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::vector<int64_t> s = capi::shape(x).dims;
  const int64_t bs = ctx.node.attr_int("blocksize", 0);
  if (s.size() != 4 || bs <= 0 || s[1] % (bs * bs) != 0)
    ctx.fail(
        fmt::format("needs a 4-D input whose channels divide by blocksize^2, got {} and blocksize {}", text(s), bs));
  const int64_t n = s[0], c = s[1] / (bs * bs), h = s[2], w = s[3];
  const bool crd = ctx.node.attr_string("mode", "DCR") == "CRD";
  const DynTensor y = crd ? capi::permute(capi::reshape(x, {n, c, bs, bs, h, w}), {0, 1, 4, 2, 5, 3})
                          : capi::permute(capi::reshape(x, {n, bs, bs, c, h, w}), {0, 3, 4, 1, 5, 2});
  return {capi::reshape(y, {n, c, h * bs, w * bs})};
}

Outputs space_to_depth_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::vector<int64_t> s = capi::shape(x).dims;
  const int64_t bs = ctx.node.attr_int("blocksize", 0);
  if (s.size() != 4 || bs <= 0 || s[2] % bs != 0 || s[3] % bs != 0)
    ctx.fail(fmt::format("needs a 4-D input whose height and width divide by blocksize, got {} and blocksize {}",
                         text(s), bs));
  const int64_t n = s[0], c = s[1], h = s[2] / bs, w = s[3] / bs;
  const DynTensor y = capi::permute(capi::reshape(x, {n, c, h, bs, w, bs}), {0, 3, 5, 1, 2, 4});
  return {capi::reshape(y, {n, c * bs * bs, h, w})};
}

Outputs shape_op(OpContext& ctx) {
  const std::vector<int64_t> dims = capi::shape(ctx.input(0)).dims;
  const int64_t r = static_cast<int64_t>(dims.size());
  // Opset 15's start / end: Python-style, clamped to [0, rank].
  const auto clamp = [r](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
  const int64_t b = clamp(ctx.node.attr_int("start", 0)), e = clamp(ctx.node.attr_int("end", r));
  std::vector<int64_t> out;
  for (int64_t i = b; i < e; ++i) out.push_back(dims[static_cast<std::size_t>(i)]);
  return {int64_tensor(ctx, out, Shape{static_cast<int64_t>(out.size())})};
}

Outputs size_op(OpContext& ctx) { return {int64_tensor(ctx, {capi::shape(ctx.input(0)).num_elements()}, Shape{})}; }

Outputs constant_of_shape_op(OpContext& ctx) {
  const std::vector<int64_t> dims = ctx.ints(0);
  for (int64_t d : dims)
    if (d < 0) ctx.fail(fmt::format("shape {} has a negative dim", text(dims)));
  DType dtype = DType::F32;
  double value = 0.0;
  if (const TensorData* v = ctx.node.attr_tensor("value")) {
    if (v->num_elements() != 1) ctx.fail("value must hold exactly one element");
    dtype = v->dtype;
    value = v->get<double>(0);
  }
  // float64 is float32 on the GPU backends, as upload() makes initializers there.
  if (dtype == DType::F64 && ctx.device.backend != BackendId::Cpu) dtype = DType::F32;
  return {capi::full(ctx.device, dtype, Shape(dims), value)};
}

Outputs range_op(OpContext& ctx) {
  const DType dtype = capi::dtype(ctx.input(0));
  if (!dtype_is_float(dtype)) {
    const int64_t start = ctx.ints(0).at(0), limit = ctx.ints(1).at(0), delta = ctx.ints(2).at(0);
    if (delta == 0) ctx.fail("delta must not be 0");
    return {capi::arange(ctx.device, dtype, start, limit, delta)};
  }
  // Floats: ONNX's count max(ceil((limit - start) / delta), 0), values start + i * delta.
  const double start = host_scalar(ctx, 0), limit = host_scalar(ctx, 1), delta = host_scalar(ctx, 2);
  if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
    ctx.fail("start, limit and delta must be finite and delta non-zero");
  const double count = std::max(std::ceil((limit - start) / delta), 0.0);
  if (count > double(int64_t{1} << 32)) ctx.fail(fmt::format("the range has {} elements", count));
  std::vector<double> v(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = start + static_cast<double>(i) * delta;
  return {upload(ctx.device, TensorData::from_vec<double>(v, Shape{static_cast<int64_t>(v.size())}).convert(dtype))};
}

Outputs eye_like_op(OpContext& ctx) {
  const DynTensor& x = ctx.input(0);
  const std::vector<int64_t> s = capi::shape(x).dims;
  if (s.size() != 2) ctx.fail(fmt::format("input must be 2-D, got {}", text(s)));
  const DType dtype = ctx.node.has_attr("dtype") ? onnx_elem_dtype(ctx, ctx.node.attr_int("dtype", 1)) : capi::dtype(x);
  const int64_t k = ctx.node.attr_int("k", 0);
  std::vector<double> v(static_cast<std::size_t>(s[0] * s[1]), 0.0);
  for (int64_t i = 0; i < s[0]; ++i)
    if (i + k >= 0 && i + k < s[1]) v[static_cast<std::size_t>(i * s[1] + i + k)] = 1.0;
  return {upload(ctx.device, TensorData::from_vec<double>(v, Shape(s)).convert(dtype))};
}

}  // namespace

void register_shape_ops(OpRegistry& r) {
  r.add("Reshape", reshape_op);
  r.add("Transpose", transpose_op);
  r.add("Concat", concat_op);
  r.add("Split", split_op);
  r.add("Squeeze", squeeze_op);
  r.add("Unsqueeze", unsqueeze_op);
  r.add("Flatten", flatten_op);
  r.add("Expand", expand_op);
  r.add("Tile", tile_op);
  r.add("DepthToSpace", depth_to_space_op);
  r.add("SpaceToDepth", space_to_depth_op);
  r.add("Shape", shape_op);
  r.add("Size", size_op);
  r.add("ConstantOfShape", constant_of_shape_op);
  r.add("Range", range_op);
  r.add("EyeLike", eye_like_op);
  register_shape_index_ops(r);
  register_shape_slice_ops(r);
  register_shape_signal_ops(r);
  register_shape_roi_align_ops(r);
  register_shape_tfidf_ops(r);
}

}  // namespace ember::onnx_import
