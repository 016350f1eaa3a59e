// ONNX's NonMaxSuppression (h-onnx-math, registered with the reductions). The float work stays on the device: the
// pairwise IoU test (IoU > iou_threshold), the score test (score > score_threshold) and the score order (argsort)
// are runtime ops whose results are booleans and indices; only those come to the host, where the greedy selection
// (inherently sequential, and of data-dependent length) builds the [num_selected, 3] int64 output.
#include <array>

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

DynTensor coord(const DynTensor& boxes, int64_t i) { return capi::select(boxes, 2, i); }  // [B, n]

// Corners y1 <= y2, x1 <= x2 of boxes [B, n, 4] in either ONNX layout.
std::array<DynTensor, 4> corners(const DynTensor& boxes, bool center_point) {
  if (center_point) {  // [x_center, y_center, width, height]
    const DynTensor xc = coord(boxes, 0), yc = coord(boxes, 1);
    const DynTensor hw = capi::scalar(coord(boxes, 2), ScalarOp::Mul, 0.5);
    const DynTensor hh = capi::scalar(coord(boxes, 3), ScalarOp::Mul, 0.5);
    return {capi::binary(yc, hh, BinaryOp::Sub), capi::binary(xc, hw, BinaryOp::Sub),
            capi::binary(yc, hh, BinaryOp::Add), capi::binary(xc, hw, BinaryOp::Add)};
  }
  const DynTensor a = coord(boxes, 0), b = coord(boxes, 1), c = coord(boxes, 2), d = coord(boxes, 3);
  return {capi::binary(a, c, BinaryOp::Min), capi::binary(b, d, BinaryOp::Min), capi::binary(a, c, BinaryOp::Max),
          capi::binary(b, d, BinaryOp::Max)};
}

// [B, n, n]: whether box i and box j overlap by IoU > threshold (a scalar tensor; boxes of zero area overlap
// nothing).
DynTensor overlaps(const DynTensor& boxes, bool center_point, const DynTensor& threshold) {
  const auto [y1, x1, y2, x2] = corners(boxes, center_point);
  const Shape s = capi::shape(y1);  // [B, n]
  const auto rows = [&](const DynTensor& t) { return capi::reshape(t, {s[0], s[1], 1}); };
  const auto cols = [&](const DynTensor& t) { return capi::reshape(t, {s[0], 1, s[1]}); };
  const auto extent = [&](const DynTensor& lo, const DynTensor& hi) {
    return capi::scalar(capi::binary(capi::binary(rows(hi), cols(hi), BinaryOp::Min),
                                     capi::binary(rows(lo), cols(lo), BinaryOp::Max), BinaryOp::Sub),
                        ScalarOp::ClampMin, 0.0);
  };
  const DynTensor inter = capi::binary(extent(y1, y2), extent(x1, x2), BinaryOp::Mul);
  const DynTensor area = capi::binary(capi::binary(y2, y1, BinaryOp::Sub), capi::binary(x2, x1, BinaryOp::Sub),
                                      BinaryOp::Mul);  // [B, n]
  const DynTensor uni = capi::binary(capi::binary(rows(area), cols(area), BinaryOp::Add), inter, BinaryOp::Sub);
  const DynTensor positive = capi::logical(capi::compare_scalar(rows(area), CompareOp::Gt, 0.0),
                                           capi::compare_scalar(cols(area), CompareOp::Gt, 0.0), LogicOp::And);
  const DynTensor safe_uni = capi::where(positive, uni, math::scalar_like(uni, 1.0));
  const DynTensor iou = capi::binary(inter, safe_uni, BinaryOp::Div);
  return capi::logical(positive, capi::compare(iou, threshold, CompareOp::Gt), LogicOp::And);
}

Outs nms(OpContext& ctx) {
  const DynTensor& boxes = ctx.input(0);
  const DynTensor& scores = ctx.input(1);
  const Shape bs = capi::shape(boxes), ss = capi::shape(scores);
  if (bs.rank() != 3 || bs[2] != 4 || ss.rank() != 3 || ss[0] != bs[0] || ss[2] != bs[1])
    ctx.fail(
        fmt::format("boxes must be [B, n, 4] and scores [B, C, n], got {} and {}", bs.to_string(), ss.to_string()));
  if (bs[1] > 4096) ctx.fail(fmt::format("{} boxes is above the 4096 this operator compares pairwise", bs[1]));
  const int64_t max_out = ctx.has_input(2) ? ctx.ints(2).at(0) : 0;
  // Thresholds stay tensors on the device (compared there), in the scores' dtype.
  const auto threshold = [&](std::size_t i) {
    return ctx.has_input(i) ? capi::reshape(capi::cast(ctx.input(i), capi::dtype(scores)), {})
                            : math::scalar_like(scores, 0.0);
  };
  const bool center_point = ctx.node.attr_int("center_point_box", 0) != 0;
  const int64_t batches = bs[0], n = bs[1], classes = ss[1];

  std::vector<int64_t> selected;  // rows of (batch, class, box)
  if (max_out > 0 && n > 0) {
    const std::vector<int64_t> over = host_ints(overlaps(boxes, center_point, threshold(3)));  // [B, n, n]
    const std::vector<int64_t> order = host_ints(capi::argsort(scores, 2, true));              // [B, C, n]
    std::vector<int64_t> passing(static_cast<std::size_t>(batches * classes * n), 1);
    if (ctx.has_input(4)) passing = host_ints(capi::compare(scores, threshold(4), CompareOp::Gt));
    for (int64_t b = 0; b < batches; ++b)
      for (int64_t c = 0; c < classes; ++c) {
        std::vector<int64_t> kept;
        for (int64_t r = 0; r < n && static_cast<int64_t>(kept.size()) < max_out; ++r) {
          const int64_t i = order[static_cast<std::size_t>((b * classes + c) * n + r)];
          if (!passing[static_cast<std::size_t>((b * classes + c) * n + i)]) continue;
          bool suppressed = false;
          for (int64_t j : kept) suppressed = suppressed || over[static_cast<std::size_t>((b * n + i) * n + j)] != 0;
          if (suppressed) continue;
          kept.push_back(i);
          selected.insert(selected.end(), {b, c, i});
        }
      }
  }
  const auto rows = static_cast<int64_t>(selected.size() / 3);
  return math::one(capi::from_data(ctx.device, TensorData::from_vec<int64_t>(selected, Shape{rows, 3})));
}

}  // namespace

namespace math {
void register_nms_ops(OpRegistry& r) { r.add("NonMaxSuppression", nms, 10); }
}  // namespace math

}  // namespace ember::onnx_import
