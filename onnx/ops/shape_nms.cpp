// ONNX's NonMaxSuppression (h-onnx-shape): greedy selection per batch and class. Its output is box indices, whose
// number depends on the scores, and no gradient flows through it, so boxes and scores are read to the host and the
// selection runs there, as ONNX's reference does.
#include <algorithm>
#include <numeric>

#include "onnx/ops/shape_util.hpp"

namespace ember::onnx_import {
namespace {

using namespace shape_detail;

struct Box {
  double y0, x0, y1, x1;  // corners, y0 <= y1 and x0 <= x1
};

// A box from its four numbers: [y1, x1, y2, x2] with the corners in any order, or [x_center, y_center, w, h].
Box make_box(const double* b, bool center) {
  if (center) return {b[1] - b[3] / 2, b[0] - b[2] / 2, b[1] + b[3] / 2, b[0] + b[2] / 2};
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

// Intersection over union; 0 for boxes that do not overlap or have no area.
double iou(const Box& a, const Box& b) {
  const double h = std::min(a.y1, b.y1) - std::max(a.y0, b.y0), w = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
  if (h <= 0 || w <= 0) return 0.0;
  const double inter = h * w;
  const double area_a = (a.y1 - a.y0) * (a.x1 - a.x0), area_b = (b.y1 - b.y0) * (b.x1 - b.x0);
  const double uni = area_a + area_b - inter;
  if (area_a <= 0 || area_b <= 0 || uni <= 0) return 0.0;
  return inter / uni;
}

Outputs non_max_suppression_op(OpContext& ctx) {
  const std::vector<int64_t> bs = capi::shape(ctx.input(0)).dims, ss = capi::shape(ctx.input(1)).dims;
  if (bs.size() != 3 || bs[2] != 4 || ss.size() != 3 || ss[0] != bs[0] || ss[2] != bs[1])
    ctx.fail(fmt::format("boxes {} must be [batches, boxes, 4] and scores {} [batches, classes, boxes]", text(bs),
                         text(ss)));
  if (numel(bs) > (int64_t{1} << 20) || numel(ss) > (int64_t{1} << 20))
    ctx.fail("at most 2^20 boxes and scores are supported");
  const int64_t max_out = ctx.has_input(2) ? ctx.ints(2).at(0) : 0;
  const double iou_max = ctx.has_input(3) ? host_scalar(ctx, 3) : 0.0;
  const bool has_min_score = ctx.has_input(4);
  const double min_score = has_min_score ? host_scalar(ctx, 4) : 0.0;
  const bool center = ctx.node.attr_int("center_point_box", 0) != 0;
  const std::vector<double> boxes = capi::to_data(ctx.input(0)).to_vec<double>();
  const std::vector<double> scores = capi::to_data(ctx.input(1)).to_vec<double>();
  const int64_t n = bs[1];
  std::vector<int64_t> selected;  // [batch, class, box] triples
  for (int64_t b = 0; b < bs[0] && max_out > 0; ++b) {
    std::vector<Box> bx(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      bx[static_cast<std::size_t>(i)] = make_box(&boxes[static_cast<std::size_t>((b * n + i) * 4)], center);
    for (int64_t c = 0; c < ss[1]; ++c) {
      const double* sc = &scores[static_cast<std::size_t>((b * ss[1] + c) * n)];
      std::vector<int64_t> order;
      for (int64_t i = 0; i < n; ++i)
        if (!has_min_score || sc[i] > min_score) order.push_back(i);
      std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return sc[i] > sc[j]; });
      std::vector<int64_t> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        bool keep = true;
        for (int64_t j : kept)
          keep = keep && !(iou(bx[static_cast<std::size_t>(i)], bx[static_cast<std::size_t>(j)]) > iou_max);
        if (!keep) continue;
        kept.push_back(i);
        selected.insert(selected.end(), {b, c, i});
      }
    }
  }
  return {int64_tensor(ctx, selected, Shape{static_cast<int64_t>(selected.size() / 3), 3})};
}

}  // namespace

void register_shape_nms_ops(OpRegistry& r) { r.add("NonMaxSuppression", non_max_suppression_op, 10); }

}  // namespace ember::onnx_import
