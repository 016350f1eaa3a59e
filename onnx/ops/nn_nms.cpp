// NonMaxSuppression (opsets 10..17) (h-onnx-nn).
//
// The one nn operator computed on the host: its output is a list of box indices whose length depends on the data,
// found by a sequential greedy scan, and nothing flows back through it (indices have no gradient). Boxes and scores
// are read to the host once; the indices go back to the input's device.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "onnx/ops/nn_common.hpp"

namespace ember::onnx_import::nn_ops {
namespace {

struct Box {
  double y1, x1, y2, x2;
  double area() const { return (y2 - y1) * (x2 - x1); }
};

// Corners in either order (center_point_box 0: [y1, x1, y2, x2]) or centre and size (1: [x_c, y_c, w, h]).
Box to_box(const double* v, bool center) {
  if (center) return {v[1] - v[3] / 2, v[0] - v[2] / 2, v[1] + v[3] / 2, v[0] + v[2] / 2};
  return {std::min(v[0], v[2]), std::min(v[1], v[3]), std::max(v[0], v[2]), std::max(v[1], v[3])};
}

double iou(const Box& a, const Box& b) {
  const double h = std::min(a.y2, b.y2) - std::max(a.y1, b.y1), w = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (h <= 0 || w <= 0) return 0.0;
  const double inter = h * w, uni = a.area() + b.area() - inter;
  return uni > 0 ? inter / uni : 0.0;
}

Outputs non_max_suppression(OpContext& ctx) {
  const DynTensor& boxes_t = float_input(ctx, 0);
  const DynTensor& scores_t = float_input(ctx, 1);
  const std::vector<int64_t> bd = dims_of(boxes_t), sd = dims_of(scores_t);
  if (bd.size() != 3 || bd[2] != 4) ctx.fail("boxes must be [batches, boxes, 4]");
  if (sd.size() != 3 || sd[0] != bd[0] || sd[2] != bd[1]) ctx.fail("scores must be [batches, classes, boxes]");
  const auto one = [&](std::size_t i, double def) {
    if (!ctx.has_input(i) || capi::shape(ctx.input(i)).num_elements() == 0) return def;
    const std::vector<double> v = host_doubles(ctx, i, 1);
    if (v.size() != 1) ctx.fail(fmt::format("input {} must hold one value", i));
    return v[0];
  };
  const int64_t max_out = static_cast<int64_t>(std::min(one(2, 0.0), 1e15));
  const double iou_threshold = one(3, 0.0);
  const bool has_score_threshold = ctx.has_input(4) && capi::shape(ctx.input(4)).num_elements() > 0;
  const double score_threshold = one(4, 0.0);
  const bool center = ctx.node.attr_int("center_point_box", 0) != 0;
  const std::vector<double> boxes = capi::to_data(boxes_t).to_vec<double>();
  const std::vector<double> scores = capi::to_data(scores_t).to_vec<double>();
  const int64_t nb = bd[1];

  std::vector<int64_t> selected;  // (batch, class, box) triples
  for (int64_t b = 0; b < bd[0]; ++b) {
    std::vector<Box> bx(static_cast<std::size_t>(nb));
    for (int64_t i = 0; i < nb; ++i) bx[i] = to_box(&boxes[(b * nb + i) * 4], center);
    for (int64_t c = 0; c < sd[1]; ++c) {
      const double* s = &scores[(b * sd[1] + c) * nb];
      std::vector<int64_t> order;
      for (int64_t i = 0; i < nb; ++i)
        if (!has_score_threshold || s[i] > score_threshold) order.push_back(i);
      std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) { return s[i] > s[j]; });
      std::vector<int64_t> kept;
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        if (std::all_of(kept.begin(), kept.end(), [&](int64_t k) { return iou(bx[i], bx[k]) <= iou_threshold; })) {
          kept.push_back(i);
          selected.insert(selected.end(), {b, c, i});
        }
      }
    }
  }
  const int64_t rows = static_cast<int64_t>(selected.size() / 3);
  return {capi::from_data(capi::device(boxes_t), TensorData::from_vec<int64_t>(selected, Shape{rows, 3}))};
}

}  // namespace

void register_nms(OpRegistry& r) { r.add("NonMaxSuppression", non_max_suppression, 10); }

}  // namespace ember::onnx_import::nn_ops
