// The shared shape/index geometry in engine/backend/ (reduce views, pooling, matmul batches, strided views), checked
// directly on edge cases: every backend's kernels and the tensor layer's checks compute their sizes with it, so a
// mistake here would show up everywhere at once, and the op suite alone rarely reaches the corners.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "engine/backend/matmul_geometry.hpp"
#include "engine/backend/pool_geometry.hpp"
#include "engine/backend/reduce_geometry.hpp"
#include "engine/backend/sliding_window.hpp"
#include "engine/backend/strided_view.hpp"
#include "engine/tensor/checks.hpp"

namespace ember {
namespace {

using Dims = std::vector<int64_t>;

// ---- reduce views

TEST(ReduceGeometry, SplitsAroundTheReducedDim) {
  const ReduceView v = reduce_view(Shape{2, 3, 4, 5}, 2);
  EXPECT_EQ(v.outer, 6);
  EXPECT_EQ(v.len, 4);
  EXPECT_EQ(v.inner, 5);
  EXPECT_EQ(v.outputs(), 30);
}

TEST(ReduceGeometry, FirstAndLastDimHaveUnitOuterOrInner) {
  const ReduceView first = reduce_view(Shape{7, 3}, 0);
  EXPECT_EQ(first.outer, 1);
  EXPECT_EQ(first.len, 7);
  EXPECT_EQ(first.inner, 3);
  const ReduceView last = reduce_view(Shape{7, 3}, 1);
  EXPECT_EQ(last.outer, 7);
  EXPECT_EQ(last.len, 3);
  EXPECT_EQ(last.inner, 1);
}

TEST(ReduceGeometry, ZeroSizedDims) {
  const ReduceView empty_len = reduce_view(Shape{2, 0, 3}, 1);  // an empty reduction: outputs but nothing to read
  EXPECT_EQ(empty_len.len, 0);
  EXPECT_EQ(empty_len.outputs(), 6);
  const ReduceView no_outputs = reduce_view(Shape{2, 5, 0}, 1);
  EXPECT_EQ(no_outputs.len, 5);
  EXPECT_EQ(no_outputs.outputs(), 0);
}

TEST(ReduceGeometry, ReducedShapeKeepsTheDimAsOne) {
  EXPECT_EQ(reduced_shape(Shape{2, 3, 4}, 1), (Shape{2, 1, 4}));
  EXPECT_EQ(reduced_shape(Shape{0, 3}, 1), (Shape{0, 1}));
  EXPECT_EQ(reduced_shape(Shape{1}, 0), (Shape{1}));
}

TEST(ReduceGeometry, ReduceAllIsOneColumn) {
  const ReduceView v = reduce_all_view(Shape{3, 0, 2});
  EXPECT_EQ(v.outer, 1);
  EXPECT_EQ(v.len, 0);
  EXPECT_EQ(v.inner, 1);
  EXPECT_EQ(reduce_all_view(Shape{4, 5}).len, 20);
}

// ---- pooling

TEST(PoolGeometry, WindowOutSizeMatchesPyTorch) {
  // torch.nn.functional.max_pool2d(torch.zeros(1, 1, 7, 7), 3, stride=2, padding=1, dilation=2).shape == [.., 3, 3]
  EXPECT_EQ(window_out_size(7, 3, 2, 1, 2), 3);
  EXPECT_EQ(window_out_size(7, 3, 2, 1, 1), 4);
  EXPECT_EQ(window_out_size(5, 2, 2, 0, 1), 2);  // floor: the last column is dropped
  EXPECT_EQ(window_out_size(1, 1, 1, 0, 1), 1);
  EXPECT_EQ(window_out_size(1, 3, 1, 1, 1), 1);  // padding makes room for a window bigger than the input
  EXPECT_EQ(window_out_size(4, 3, 5, 0, 1), 1);  // stride larger than the input
  static_assert(window_out_size(10, 3, 1, 0, 1) == 8);
}

using Pair = std::array<int64_t, 2>;
Pool2dOptions pool_options(Pair kernel, Pair stride, Pair padding, Pair dilation = {1, 1}) {
  Pool2dOptions o;
  o.kernel = kernel, o.stride = stride, o.padding = padding, o.dilation = dilation;
  return o;
}

TEST(PoolGeometry, GeometryFromOptions) {
  const Pool2dOptions o = pool_options({3, 2}, {2, 1}, {1, 0}, {2, 1});
  const Pool2dGeometry g = pool2d_geometry(Shape{2, 3, 9, 4}, o);
  EXPECT_EQ(g.planes(), 6);
  EXPECT_EQ(g.ho, window_out_size(9, 3, 2, 1, 2));
  EXPECT_EQ(g.wo, 3);
  EXPECT_EQ(g.out_shape(), (Shape{2, 3, g.ho, 3}));
  EXPECT_EQ(g.in_plane(), 36);
  EXPECT_EQ(g.out_plane(), g.ho * 3);
}

TEST(PoolGeometry, EmptyBatchKeepsSpatialSizes) {
  const Pool2dGeometry g = pool2d_geometry(Shape{0, 3, 4, 4}, Pool2dOptions{});
  EXPECT_EQ(g.planes(), 0);
  EXPECT_EQ(g.out_shape(), (Shape{0, 3, 2, 2}));
}

TEST(PoolGeometry, AvgWindowDivisorWithAndWithoutPadding) {
  Pool2dOptions o = pool_options({3, 3}, {1, 1}, {1, 1});
  o.count_include_pad = true;
  const Pool2dGeometry with_pad = pool2d_geometry(Shape{1, 1, 4, 4}, o);
  // The corner window covers rows/cols -1..1: 2 x 2 in the image, 3 x 3 counting padding.
  const AvgPoolWindow corner = avg_pool_window(with_pad, 0, 0);
  EXPECT_EQ(corner.h0, 0);
  EXPECT_EQ(corner.h1, 2);
  EXPECT_EQ(corner.w0, 0);
  EXPECT_EQ(corner.w1, 2);
  EXPECT_EQ(corner.divisor, 9);
  o.count_include_pad = false;
  EXPECT_EQ(avg_pool_window(pool2d_geometry(Shape{1, 1, 4, 4}, o), 0, 0).divisor, 4);
  // An interior window is unaffected by the padding rule.
  EXPECT_EQ(avg_pool_window(with_pad, 1, 2).divisor, 9);
}

TEST(PoolGeometry, AvgWindowClipsPaddingAtBothEnds) {
  // Kernel 2, stride 2 on 5 columns with padding 1: the first window reads padding and column 0, the last one
  // columns 3..4; counting padding, both divide by 2.
  const Pool2dGeometry g = pool2d_geometry(Shape{1, 1, 1, 5}, pool_options({1, 2}, {1, 2}, {0, 1}));
  EXPECT_EQ(g.wo, 3);
  const AvgPoolWindow first = avg_pool_window(g, 0, 0);  // columns -1..0
  EXPECT_EQ(first.w0, 0);
  EXPECT_EQ(first.w1, 1);
  EXPECT_EQ(first.divisor, 2);
  const AvgPoolWindow last = avg_pool_window(g, 0, 2);  // columns 3..4
  EXPECT_EQ(last.w0, 3);
  EXPECT_EQ(last.w1, 5);
  EXPECT_EQ(last.divisor, 2);
}

TEST(PoolGeometry, AdaptiveWindowsCoverTheInputAndOverlapWhenUneven) {
  // 5 -> 3: [0, 2), [1, 4), [3, 5), as torch.nn.AdaptiveAvgPool2d.
  EXPECT_EQ(adaptive_start(0, 5, 3), 0);
  EXPECT_EQ(adaptive_end(0, 5, 3), 2);
  EXPECT_EQ(adaptive_start(1, 5, 3), 1);
  EXPECT_EQ(adaptive_end(1, 5, 3), 4);
  EXPECT_EQ(adaptive_start(2, 5, 3), 3);
  EXPECT_EQ(adaptive_end(2, 5, 3), 5);
  // Upsampling 2 -> 4: every window holds one pixel.
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(adaptive_end(i, 2, 4) - adaptive_start(i, 2, 4), 1);
  // Output size 1: one window over everything.
  EXPECT_EQ(adaptive_start(0, 7, 1), 0);
  EXPECT_EQ(adaptive_end(0, 7, 1), 7);
}

TEST(PoolGeometry, TensorLayerCheckUsesTheSameSizes) {
  Pool2dOptions o = pool_options({3, 3}, {2, 3}, {1, 1}, {2, 1});
  const Shape x{1, 2, 11, 8};
  EXPECT_EQ(checks::pool2d("max_pool2d", x, o), pool2d_geometry(x, o).out_shape());
  o.kernel = {6, 6};  // padding <= kernel / 2 holds, but the dilated window outgrows the padded input
  o.dilation = {3, 3};
  EXPECT_THROW(checks::pool2d("max_pool2d", x, o), ShapeError);
}

// ---- matmul batches

// m, k, n and the stored operands' leading dims.
std::array<int64_t, 5> sizes(const MatmulGeometry& g) { return {g.m, g.k, g.n, g.lda, g.ldb}; }

TEST(MatmulGeometry, PlainMatrices) {
  const MatmulGeometry g = matmul_geometry(Shape{2, 3}, Shape{3, 4}, false, false);
  EXPECT_EQ(sizes(g), (std::array<int64_t, 5>{2, 3, 4, 3, 4}));
  EXPECT_EQ(g.batches(), 1);
  EXPECT_EQ(g.out_shape(), (Shape{2, 4}));
  EXPECT_TRUE(g.batch_folds_into_rows(false));
}

TEST(MatmulGeometry, TransposedOperandsAreReadInPlace) {
  // a stored [k, m] = [3, 2], b stored [n, k] = [4, 3].
  const MatmulGeometry g = matmul_geometry(Shape{3, 2}, Shape{4, 3}, true, true);
  EXPECT_EQ(sizes(g), (std::array<int64_t, 5>{2, 3, 4, 2, 3}));
}

TEST(MatmulGeometry, BroadcastBatchDimsHaveZeroStrides) {
  const MatmulGeometry g = matmul_geometry(Shape{5, 1, 2, 3}, Shape{1, 4, 3, 6}, false, false);
  EXPECT_EQ(g.batch, (Shape{5, 4}));
  EXPECT_EQ(g.out_shape(), (Shape{5, 4, 2, 6}));
  EXPECT_EQ(g.a_strides, (Dims{6, 0}));   // one a matrix (2 x 3) per entry of dim 0, repeated along dim 1
  EXPECT_EQ(g.b_strides, (Dims{0, 18}));  // one b matrix (3 x 6) per entry of dim 1
  EXPECT_EQ(g.c_strides, (Dims{48, 12}));
  EXPECT_FALSE(g.batch_folds_into_rows(false));
  // Entry (3, 2) of the batch: a's 4th matrix, b's 3rd.
  EXPECT_EQ(strided_offset(3 * 4 + 2, g.batch.dims, g.a_strides), 18);
  EXPECT_EQ(strided_offset(3 * 4 + 2, g.batch.dims, g.b_strides), 36);
}

TEST(MatmulGeometry, SharedRightOperandFoldsTheBatchUnlessATransposes) {
  const MatmulGeometry g = matmul_geometry(Shape{4, 2, 3}, Shape{1, 3, 5}, false, false);
  EXPECT_TRUE(g.batch_folds_into_rows(false));
  EXPECT_FALSE(g.batch_folds_into_rows(true));  // transposed a: its rows do not run on across the batch
  const MatmulGeometry single = matmul_geometry(Shape{1, 3, 2}, Shape{1, 3, 5}, true, false);
  EXPECT_TRUE(single.batch_folds_into_rows(true));
}

TEST(MatmulGeometry, ZeroSizedBatchAndInnerDims) {
  const MatmulGeometry empty_batch = matmul_geometry(Shape{0, 2, 3}, Shape{1, 3, 4}, false, false);
  EXPECT_EQ(empty_batch.batches(), 0);
  EXPECT_TRUE(empty_batch.empty());
  EXPECT_EQ(empty_batch.out_shape(), (Shape{0, 2, 4}));
  const MatmulGeometry empty_k = matmul_geometry(Shape{2, 0}, Shape{0, 4}, false, false);
  EXPECT_EQ(empty_k.k, 0);
  EXPECT_FALSE(empty_k.empty());  // a [2, 4] output of zeros still has to be written
}

TEST(MatmulGeometry, TensorLayerCheckUsesTheSameShapes) {
  EXPECT_EQ(checks::matmul(Shape{5, 1, 2, 3}, Shape{1, 4, 3, 6}), (Shape{5, 4, 2, 6}));
  EXPECT_THROW(checks::matmul(Shape{2, 2, 3}, Shape{3, 3, 4}), ShapeError);  // batch 2 vs 3
  EXPECT_THROW(checks::matmul(Shape{2, 3}, Shape{4, 5}), ShapeError);        // inner dims differ
}

// ---- strided views

TEST(StridedView, PermutedStridesFollowTheAxes) {
  const StridedView v = permuted_view(Shape{2, 3, 4}, {2, 0, 1});
  EXPECT_EQ(v.shape, (Shape{4, 2, 3}));
  EXPECT_EQ(v.strides, (Dims{1, 12, 4}));
  EXPECT_EQ(v.offset, 0);
}

TEST(StridedView, PermuteKeepsMemoryOrderWhenOnlyUnitDimsMove) {
  EXPECT_TRUE(permute_keeps_memory_order(Shape{2, 3}, {0, 1}));
  EXPECT_TRUE(permute_keeps_memory_order(Shape{1, 3, 1, 4}, {2, 1, 0, 3}));
  EXPECT_FALSE(permute_keeps_memory_order(Shape{2, 3}, {1, 0}));
  EXPECT_FALSE(permute_keeps_memory_order(Shape{2, 1, 3}, {2, 1, 0}));
}

TEST(StridedView, ExpandedStridesAreZeroOnBroadcastDims) {
  const StridedView v = expanded_view(Shape{3, 1}, Shape{2, 3, 4});
  EXPECT_EQ(v.shape, (Shape{2, 3, 4}));
  EXPECT_EQ(v.strides, (Dims{0, 1, 0}));
}

TEST(StridedView, SliceOffsetAndUntouchedTrailingDims) {
  const StridedView v = sliced_view(Shape{4, 5, 6}, {Range{1, 3}, Range{2, 2}});
  EXPECT_EQ(v.shape, (Shape{2, 0, 6}));
  EXPECT_EQ(v.strides, (Dims{30, 6, 1}));
  EXPECT_EQ(v.offset, 1 * 30 + 2 * 6);
}

TEST(StridedView, FlipStartsAtTheEndWithNegativeStrides) {
  const StridedView v = flipped_view(Shape{2, 3, 4}, {0, 2});
  EXPECT_EQ(v.strides, (Dims{-12, 4, -1}));
  EXPECT_EQ(v.offset, 12 + 3);
  // Reading index (0, 0, 0) of the view gives x's last element along both flipped dims.
  EXPECT_EQ(v.offset + strided_offset(0, v.shape.dims, v.strides), 15);
  EXPECT_EQ(v.offset + strided_offset(23, v.shape.dims, v.strides), 8);  // (1, 2, 3) -> x's (0, 2, 0)
}

TEST(StridedView, FlippingUnitDimsMovesNothing) {
  const StridedView v = flipped_view(Shape{1, 5, 1}, {0, 2});
  EXPECT_EQ(v.offset, 0);
  EXPECT_EQ(v.strides, Shape({1, 5, 1}).strides());
}

TEST(StridedView, MergeJoinsDimsContiguousInEveryOperand) {
  // Same-shape operands collapse to one run.
  const auto flat = merge_contiguous_dims<2>(Dims{2, 3, 4}, {Dims{12, 4, 1}, Dims{12, 4, 1}});
  EXPECT_EQ(flat.dims, (Dims{24}));
  EXPECT_EQ(flat.strides[0], (Dims{1}));
  // A broadcast operand stops the merge where its stride breaks contiguity, but its own zero run merges.
  const auto bcast = merge_contiguous_dims<2>(Dims{2, 3, 4}, {Dims{12, 4, 1}, Dims{0, 0, 1}});
  EXPECT_EQ(bcast.dims, (Dims{6, 4}));
  EXPECT_EQ(bcast.strides[0], (Dims{4, 1}));
  EXPECT_EQ(bcast.strides[1], (Dims{0, 1}));
}

TEST(StridedView, MergeDropsUnitDimsAndKeepsNegativeStrides) {
  const auto m = merge_contiguous_dims<1>(Dims{1, 3, 1, 4}, {Dims{12, -4, 4, -1}});
  EXPECT_EQ(m.dims, (Dims{12}));  // -4 == -1 * 4: a whole flip reads backwards in one run
  EXPECT_EQ(m.strides[0], (Dims{-1}));
  const auto transposed = merge_contiguous_dims<1>(Dims{3, 2}, {Dims{1, 3}});
  EXPECT_EQ(transposed.dims, (Dims{3, 2}));
}

TEST(StridedView, MergeOfASingleElementLeavesOneUnitDim) {
  const auto one = merge_contiguous_dims<2>(Dims{1, 1}, {Dims{1, 1}, Dims{0, 0}});
  EXPECT_EQ(one.dims, (Dims{1}));
  EXPECT_EQ(one.strides[0], (Dims{0}));
  EXPECT_EQ(one.strides[1], (Dims{0}));
  const auto scalar = merge_contiguous_dims<1>(Dims{}, {Dims{}});
  EXPECT_EQ(scalar.dims, (Dims{1}));
}

TEST(StridedView, MergeKeepsAnEmptySpaceEmpty) {
  const auto m = merge_contiguous_dims<1>(Dims{2, 0, 3}, {Dims{0, 3, 1}});
  int64_t n = 1;
  for (int64_t d : m.dims) n *= d;
  EXPECT_EQ(n, 0);
}

TEST(StridedView, OffsetOfALinearIndex) {
  EXPECT_EQ(strided_offset(0, Dims{2, 3}, Dims{3, 1}), 0);
  EXPECT_EQ(strided_offset(5, Dims{2, 3}, Dims{3, 1}), 5);
  EXPECT_EQ(strided_offset(5, Dims{2, 3}, Dims{1, 2}), 1 + 4);  // transposed read: (1, 2)
  EXPECT_EQ(strided_offset(4, Dims{2, 3}, Dims{0, 1}), 1);      // broadcast dim 0
  EXPECT_EQ(strided_offset(3, Dims{}, Dims{}), 0);
}

}  // namespace
}  // namespace ember
