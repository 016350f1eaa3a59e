// Issue 11's small-op overhead work: ember_tensor_select (x[i] in one call), the registry of live handles
// (c_api/src/handle_table.hpp), and the fast paths of same-shape binary and untracked in-place ops, each checked
// for the results the slower paths gave.
#include <algorithm>
#include <random>
#include <unordered_map>

#include "c_api/src/handle_table.hpp"
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

// The open-addressing table against std::unordered_map over random inserts and erases, dense enough that probe
// runs wrap around the table's end and erases shift entries back across it.
TEST(HandleTable, MatchesAMapUnderRandomInsertsAndErases) {
  capi::HandleTable<int> table;
  std::unordered_map<const void*, int> ref;
  std::mt19937_64 rng(7);
  std::vector<const void*> keys;
  for (int i = 1; i <= 600; ++i) keys.push_back(reinterpret_cast<const void*>(static_cast<std::uintptr_t>(i) * 16));
  for (int step = 0; step < 20000; ++step) {
    const void* k = keys[rng() % keys.size()];
    const int kind = static_cast<int>(rng() % 5);
    if (rng() % 3 == 0) {
      EXPECT_EQ(table.erase(k), ref.erase(k) == 1);
    } else {
      table.insert_or_assign(k, kind);
      ref[k] = kind;
    }
    if (step % 97 == 0) {
      ASSERT_EQ(table.size(), ref.size());
      for (const void* q : keys) {
        const int* found = table.find(q);
        auto it = ref.find(q);
        ASSERT_EQ(found != nullptr, it != ref.end()) << "key " << q << " at step " << step;
        if (found) {
          EXPECT_EQ(*found, it->second);
        }
      }
    }
  }
}

TEST(HandleTable, FreedHandlesStayReportedAmongManyLive) {
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
