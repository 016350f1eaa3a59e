// Issue 11's small-op overhead work: ember_tensor_select (x[i] in one call), rows and slices sharing storage, freed
// handles among many live ones (the slot table: c_api/src/handle_slots.hpp), and the fast paths of same-shape binary and untracked in-place ops, each checked
// for the results the slower paths gave.
#include <algorithm>
#include <random>

#include "tests/c_api/capi_support.hpp"

namespace ember::capi_test {
namespace {

Tensor select(const ember_tensor* x, int64_t dim, int64_t index) {
  ember_tensor* out = nullptr;
  EXPECT_EQ(ember_tensor_select(x, dim, index, &out), EMBER_OK) << ember_last_error();
  return Tensor(out);
}

TEST(Select, RowsColumnsAndNegativeIndices) {
  auto x = f32({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
  auto row = select(x.get(), 0, 1);
  EXPECT_EQ(shape_of(row.get()), (std::vector<int64_t>{4}));
  EXPECT_EQ(floats(row.get()), (std::vector<float>{4, 5, 6, 7}));
  auto last = select(x.get(), 0, -1);
  EXPECT_EQ(floats(last.get()), (std::vector<float>{8, 9, 10, 11}));
  auto col = select(x.get(), 1, 2);
  EXPECT_EQ(shape_of(col.get()), (std::vector<int64_t>{3}));
  EXPECT_EQ(floats(col.get()), (std::vector<float>{2, 6, 10}));
  auto col_neg = select(x.get(), -1, -4);
  EXPECT_EQ(floats(col_neg.get()), (std::vector<float>{0, 4, 8}));
}

TEST(Select, OfRankOneIsRankZeroAndIntsStayInts) {
  auto v = i64({7, 8, 9}, {3});
  auto s = select(v.get(), 0, 2);
  EXPECT_EQ(shape_of(s.get()), (std::vector<int64_t>{}));
  EXPECT_EQ(ints(s.get()), (std::vector<int64_t>{9}));
  auto cube = f32({0, 1, 2, 3, 4, 5, 6, 7}, {2, 2, 2});
  auto mid = select(cube.get(), 1, 1);
  EXPECT_EQ(shape_of(mid.get()), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(floats(mid.get()), (std::vector<float>{2, 3, 6, 7}));
}

TEST(Select, RefusesOutOfRangeIndexDimAndScalars) {
  auto x = f32({0, 1, 2, 3}, {2, 2});
  ember_tensor* out = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_select(x.get(), 0, 2, &out), EMBER_ERR_INDEX, "index 2 out of range");
  EXPECT_EQ(out, nullptr);
  EMBER_EXPECT_ERR(ember_tensor_select(x.get(), 0, -3, &out), EMBER_ERR_INDEX, "index -3 out of range");
  EMBER_EXPECT_ERR(ember_tensor_select(x.get(), 2, 0, &out), EMBER_ERR_INDEX, "dim 2 out of range");
  auto scalar = f32({1}, {});
  EMBER_EXPECT_ERR(ember_tensor_select(scalar.get(), 0, 0, &out), EMBER_ERR_INDEX, "rank-0");
  EMBER_EXPECT_ERR(ember_tensor_select(nullptr, 0, 0, &out), EMBER_ERR_NULL_HANDLE, "x is NULL");
  EMBER_EXPECT_ERR(ember_tensor_select(x.get(), 0, 0, nullptr), EMBER_ERR_INVALID_ARGUMENT, "out is NULL");
}

TEST(Select, OrNullReturnsTheRowOrNullWithTheMessage) {
  auto x = f32({0, 1, 2, 3, 4, 5}, {3, 2});
  Tensor row(ember_tensor_select_or_null(x.get(), 0, -1));
  ASSERT_NE(row.get(), nullptr) << ember_last_error();
  EXPECT_EQ(shape_of(row.get()), (std::vector<int64_t>{2}));
  EXPECT_EQ(floats(row.get()), (std::vector<float>{4, 5}));
  Tensor col(ember_tensor_select_or_null(x.get(), 1, 0));
  ASSERT_NE(col.get(), nullptr) << ember_last_error();
  EXPECT_EQ(floats(col.get()), (std::vector<float>{0, 2, 4}));
  EXPECT_EQ(ember_tensor_select_or_null(x.get(), 0, 3), nullptr);
  EXPECT_NE(std::string(ember_last_error()).find("index 3 out of range"), std::string::npos) << ember_last_error();
  EXPECT_EQ(ember_tensor_select_or_null(nullptr, 0, 0), nullptr);
  EXPECT_NE(std::string(ember_last_error()).find("x is NULL"), std::string::npos) << ember_last_error();
}

TEST(Select, GradientReachesTheSelectedRowOnly) {
  auto x = f32({1, 2, 3, 4, 5, 6}, {3, 2});
  EMBER_ASSERT_OK(ember_tensor_set_requires_grad(x.get(), 1));
  auto row = select(x.get(), 0, 1);
  ember_tensor* loss_raw = nullptr;
  EMBER_ASSERT_OK(ember_tensor_reduce_all(row.get(), EMBER_REDUCE_SUM, &loss_raw));
  Tensor loss(loss_raw);
  ember_grads* g_raw = nullptr;
  EMBER_ASSERT_OK(ember_tensor_backward(loss.get(), nullptr, &g_raw));
  Grads g(g_raw);
  ember_tensor* gx_raw = nullptr;
  EMBER_ASSERT_OK(ember_grads_get(g.get(), x.get(), &gx_raw));
  Tensor gx(gx_raw);
  EXPECT_EQ(floats(gx.get()), (std::vector<float>{0, 0, 1, 1, 0, 0}));
}

// x[i] and contiguous slices share x's storage (backends/cpu/allocator.hpp: borrow) instead of copying it, yet
// stay values: in-place updates of either handle replace that handle's storage, so neither sees the other's
// writes (ember.h's copy semantics), and the shared block outlives x.
const float* storage(const ember_tensor* t) {
  const void* p = nullptr;
  EXPECT_EQ(ember_tensor_data_ptr(t, &p), EMBER_OK) << ember_last_error();
  return static_cast<const float*>(p);
}
Tensor slice(const ember_tensor* x, std::vector<int64_t> starts, std::vector<int64_t> ends) {
  ember_tensor* out = nullptr;
  EXPECT_EQ(ember_tensor_slice(x, starts.data(), ends.data(), starts.size(), &out), EMBER_OK) << ember_last_error();
  return Tensor(out);
}

TEST(Select, ContiguousRowsAndSlicesShareStorage) {
  auto x = f32({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
  const float* base = storage(x.get());
  auto row = select(x.get(), 0, 2);
  EXPECT_EQ(storage(row.get()), base + 8);
  auto rows = slice(x.get(), {1, 0}, {3, 4});  // x[1:3]
  EXPECT_EQ(storage(rows.get()), base + 4);
  auto part = slice(x.get(), {1, 1}, {2, 3});  // x[1, 1:3] (as [1, 2]): one run
  EXPECT_EQ(storage(part.get()), base + 5);
  auto row_of_rows = select(rows.get(), 0, 1);  // a range of a range
  EXPECT_EQ(storage(row_of_rows.get()), base + 8);
  EXPECT_EQ(floats(row_of_rows.get()), (std::vector<float>{8, 9, 10, 11}));
  // x[:, 1:3] is not one run: a copy of its own.
  auto cols = slice(x.get(), {0, 1}, {3, 3});
  EXPECT_TRUE(storage(cols.get()) < base || storage(cols.get()) >= base + 12);
  EXPECT_EQ(floats(cols.get()), (std::vector<float>{1, 2, 5, 6, 9, 10}));
  auto col = select(x.get(), 1, 3);
  EXPECT_EQ(floats(col.get()), (std::vector<float>{3, 7, 11}));
}

TEST(Select, SharedStorageIsNeverWrittenThroughAndOutlivesItsTensor) {
  auto x = f32({0, 1, 2, 3, 4, 5}, {3, 2});
  auto row = select(x.get(), 0, 1);
  auto rows = slice(x.get(), {1}, {3});
  auto ten = f32({10}, {});
  EMBER_ASSERT_OK(ember_tensor_inplace(x.get(), ten.get(), EMBER_INPLACE_ADD));  // x += 10: the row keeps its values
  EXPECT_EQ(floats(x.get()), (std::vector<float>{10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(floats(row.get()), (std::vector<float>{2, 3}));
  EMBER_ASSERT_OK(ember_tensor_inplace_scalar(row.get(), EMBER_INPLACE_FILL, 7));  // row.fill_(7): x keeps its own
  EXPECT_EQ(floats(row.get()), (std::vector<float>{7, 7}));
  EXPECT_EQ(floats(x.get()), (std::vector<float>{10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(floats(rows.get()), (std::vector<float>{2, 3, 4, 5}));
  x.reset();  // rows still reads the block x was made with (ASan builds catch a use after free)
  EXPECT_EQ(floats(rows.get()), (std::vector<float>{2, 3, 4, 5}));
  auto last = select(rows.get(), 0, -1);
  EXPECT_EQ(floats(last.get()), (std::vector<float>{4, 5}));
}

// The CPU's one-step select (backends/cpu/layout.cpp: select, a view where the row is one run, else a copy) against
// slice + reshape, for every dim and index of a tensor with a unit dim, in each dtype kind and both float widths.
TEST(Select, AgreesWithSliceAndReshapeForEveryDimIndexAndDtype) {
  const std::vector<int64_t> shape = {2, 1, 3, 2};
  std::vector<double> values(12);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i % 5);  // 0 and not 0: bools too
  for (int32_t dtype : {EMBER_DTYPE_F32, EMBER_DTYPE_F64, EMBER_DTYPE_I64, EMBER_DTYPE_BOOL}) {
    ember_tensor* f64 = nullptr;
    EMBER_ASSERT_OK(ember_tensor_from_data(nullptr, EMBER_DTYPE_F64, values.data(), values.size() * sizeof(double),
                                           shape.data(), shape.size(), &f64));
    Tensor src(f64);
    ember_tensor* cast = nullptr;
    EMBER_ASSERT_OK(ember_tensor_cast(src.get(), dtype, &cast));
    Tensor x(cast);
    for (int64_t d = 0; d < 4; ++d)
      for (int64_t i = -shape[d]; i < shape[d]; ++i) {
        SCOPED_TRACE(testing::Message() << "dtype " << dtype << " dim " << d << " index " << i);
        auto got = select(x.get(), d, i);
        std::vector<int64_t> starts(4, 0), ends(shape), kept;
        starts[d] = i < 0 ? i + shape[d] : i;
        ends[d] = starts[d] + 1;
        for (int64_t k = 0; k < 4; ++k)
          if (k != d) kept.push_back(shape[k]);
        auto part = slice(x.get(), starts, ends);
        ember_tensor* want = nullptr;
        EMBER_ASSERT_OK(ember_tensor_reshape(part.get(), kept.data(), kept.size(), &want));
        Tensor w(want);
        int32_t got_dtype = -1;
        EMBER_ASSERT_OK(ember_tensor_dtype(got.get(), &got_dtype));
        EXPECT_EQ(got_dtype, dtype);
        EXPECT_EQ(shape_of(got.get()), kept);
        int64_t numel = 1;
        for (int64_t k : kept) numel *= k;
        std::vector<double> a(static_cast<std::size_t>(numel)), b(a.size());
        size_t n = 0;
        EMBER_ASSERT_OK(ember_tensor_copy_to(got.get(), EMBER_DTYPE_F64, a.data(), a.size() * sizeof(double), &n));
        EMBER_ASSERT_OK(ember_tensor_copy_to(w.get(), EMBER_DTYPE_F64, b.data(), b.size() * sizeof(double), &n));
        EXPECT_EQ(a, b);
      }
  }
  // Unit dims before the selected one still make one run: a view of x's storage.
  auto x = f32({0, 1, 2, 3, 4, 5}, {1, 3, 2});
  auto row = select(x.get(), 1, 2);
  EXPECT_EQ(storage(row.get()), storage(x.get()) + 4);
  EXPECT_EQ(floats(row.get()), (std::vector<float>{4, 5}));
}

// The fast paths (operands of one shape, an in-place op on an untracked tensor) against the broadcasting path.
TEST(SmallOps, SameShapeAndBroadcastAgree) {
  auto a = f32({1, 2, 3, 4}, {2, 2});
  auto b = f32({10, 20, 30, 40}, {2, 2});
  ember_tensor* out = nullptr;
  EMBER_ASSERT_OK(ember_tensor_sub(a.get(), b.get(), &out));
  Tensor d(out);
  EXPECT_EQ(shape_of(d.get()), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(floats(d.get()), (std::vector<float>{-9, -18, -27, -36}));
  auto row = f32({10, 20}, {2});
  EMBER_ASSERT_OK(ember_tensor_sub(a.get(), row.get(), &out));
  Tensor e(out);
  EXPECT_EQ(floats(e.get()), (std::vector<float>{-9, -18, -7, -16}));
  auto s1 = f32({2}, {}), s2 = f32({5}, {});
  EMBER_ASSERT_OK(ember_tensor_mul(s1.get(), s2.get(), &out));
  Tensor p(out);
  EXPECT_EQ(shape_of(p.get()), (std::vector<int64_t>{}));
  EXPECT_EQ(floats(p.get()), (std::vector<float>{10}));
  auto bad = f32({1, 2, 3}, {3});
  EMBER_EXPECT_ERR(ember_tensor_add(a.get(), bad.get(), &out), EMBER_ERR_SHAPE, "not broadcastable");
}

TEST(SmallOps, UntrackedInplaceUpdatesValueAndVersion) {
  auto acc = f32({0, 0}, {2});
  auto one = f32({1, 2}, {2});
  for (int i = 0; i < 3; ++i) EMBER_ASSERT_OK(ember_tensor_inplace(acc.get(), one.get(), EMBER_INPLACE_ADD));
  EXPECT_EQ(floats(acc.get()), (std::vector<float>{3, 6}));
  int64_t version = 0;
  EMBER_ASSERT_OK(ember_tensor_version(acc.get(), &version));
  EXPECT_EQ(version, 3);
  auto wide = f32({1, 2, 3}, {3});
  EMBER_EXPECT_ERR(ember_tensor_inplace(acc.get(), wide.get(), EMBER_INPLACE_ADD), EMBER_ERR_SHAPE, "shapes [2] and [3] are not broadcastable");
  EXPECT_EQ(floats(acc.get()), (std::vector<float>{3, 6}));
}

TEST(HandleSlots, FreedHandlesStayReportedAmongManyLive) {
  std::vector<ember_tensor*> ts(300, nullptr);
  const int64_t shape[1] = {1};
  for (auto& t : ts) EMBER_ASSERT_OK(ember_tensor_zeros(nullptr, EMBER_DTYPE_F32, shape, 1, &t));
  std::vector<std::size_t> order(ts.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(3));
  for (std::size_t i = 0; i < order.size(); i += 2) EMBER_ASSERT_OK(ember_tensor_free(ts[order[i]]));
  for (std::size_t i = 0; i < order.size(); ++i) {
    size_t rank = 0;
    const ember_status s = ember_tensor_rank(ts[order[i]], &rank);
    EXPECT_EQ(s, i % 2 == 0 ? EMBER_ERR_INVALID_HANDLE : EMBER_OK) << i << ": " << ember_last_error();
  }
  for (std::size_t i = 1; i < order.size(); i += 2) EMBER_ASSERT_OK(ember_tensor_free(ts[order[i]]));
}

}  // namespace
}  // namespace ember::capi_test
