// Issue 11's tensor core through ember.h: rank-0 tensors, float64 end to end (with PyTorch's f32/f64 promotion),
// FFT against a naive DFT computed here in double, and zero-copy views of CPU storage.
#include <cmath>
#include <complex>
#include <cstring>
#include <numbers>

#include "tests/c_api/capi_support.hpp"

namespace ember::capi_test {
namespace {

Tensor f64(const std::vector<double>& v, const std::vector<int64_t>& shape) {
  ember_tensor* t = nullptr;
  EXPECT_EQ(ember_tensor_from_data(nullptr, EMBER_DTYPE_F64, v.data(), v.size() * sizeof(double), shape.data(),
                                   shape.size(), &t),
            EMBER_OK)
      << ember_last_error();
  return Tensor(t);
}
Tensor scalar_f32(float v) {
  ember_tensor* t = nullptr;
  EXPECT_EQ(ember_tensor_from_data(nullptr, EMBER_DTYPE_F32, &v, sizeof v, nullptr, 0, &t), EMBER_OK)
      << ember_last_error();
  return Tensor(t);
}
std::vector<double> doubles(const ember_tensor* t) {
  int64_t n = 0;
  EXPECT_EQ(ember_tensor_numel(t, &n), EMBER_OK) << ember_last_error();
  std::vector<double> v(static_cast<std::size_t>(n));
  EXPECT_EQ(ember_tensor_copy_to(t, EMBER_DTYPE_F64, v.data(), v.size() * sizeof(double), nullptr), EMBER_OK)
      << ember_last_error();
  return v;
}
int32_t dtype_of(const ember_tensor* t) {
  int32_t d = -1;
  EXPECT_EQ(ember_tensor_dtype(t, &d), EMBER_OK) << ember_last_error();
  return d;
}
Tensor binary(const Tensor& a, const Tensor& b, int32_t op) {
  ember_tensor* out = nullptr;
  EXPECT_EQ(ember_tensor_binary(a.get(), b.get(), op, &out), EMBER_OK) << ember_last_error();
  return Tensor(out);
}
Tensor reduce_all(const ember_tensor* x, int32_t op = EMBER_REDUCE_SUM) {
  ember_tensor* out = nullptr;
  EXPECT_EQ(ember_tensor_reduce_all(x, op, &out), EMBER_OK) << ember_last_error();
  return Tensor(out);
}
// The gradient of `loss` w.r.t. leaf `x` from a fresh backward pass.
Tensor grad_of(const ember_tensor* loss, const ember_tensor* x) {
  ember_grads* g = nullptr;
  EXPECT_EQ(ember_tensor_backward(loss, nullptr, &g), EMBER_OK) << ember_last_error();
  Grads grads(g);
  ember_tensor* gx = nullptr;
  EXPECT_EQ(ember_grads_get(g, x, &gx), EMBER_OK) << ember_last_error();
  return Tensor(gx);
}

// ---------------------------------------------------------------- rank 0
TEST(CApiRank0, CreationQueriesAndHostCopies) {
  ember_tensor* t = nullptr;
  EMBER_ASSERT_OK(ember_tensor_full(nullptr, EMBER_DTYPE_F32, nullptr, 0, 2.5, &t));
  Tensor s(t);
  size_t rank = 9;
  EMBER_ASSERT_OK(ember_tensor_rank(t, &rank));
  EXPECT_EQ(rank, 0u);
  rank = 9;
  EMBER_ASSERT_OK(ember_tensor_shape(t, nullptr, 0, &rank));
  EXPECT_EQ(rank, 0u);
  int64_t numel = 0;
  EMBER_ASSERT_OK(ember_tensor_numel(t, &numel));
  EXPECT_EQ(numel, 1);
  double v = 0;
  EMBER_ASSERT_OK(ember_tensor_item(t, &v));
  EXPECT_EQ(v, 2.5);
  int64_t as_int = 0;
  size_t written = 0;
  EMBER_ASSERT_OK(ember_tensor_copy_to(t, EMBER_DTYPE_I64, &as_int, sizeof as_int, &written));
  EXPECT_EQ(written, sizeof(int64_t));
  EXPECT_EQ(as_int, 2);
  const int64_t i = -7;
  EMBER_ASSERT_OK(ember_tensor_from_data(nullptr, EMBER_DTYPE_I64, &i, sizeof i, nullptr, 0, &t));
  Tensor si(t);
  EXPECT_EQ(shape_of(t), std::vector<int64_t>{});
  EXPECT_EQ(ints(t), std::vector<int64_t>{-7});
  // A scalar is one element: two elements of data do not fit.
  const float two[2] = {1, 2};
  EMBER_EXPECT_ERR(ember_tensor_from_data(nullptr, EMBER_DTYPE_F32, two, sizeof two, nullptr, 0, &t), EMBER_ERR_SHAPE,
                   "bytes of data for shape []");
  // reshape to and from rank 0
  auto one = f32({4}, {1});
  EMBER_ASSERT_OK(ember_tensor_reshape(one.get(), nullptr, 0, &t));
  Tensor r0(t);
  EXPECT_EQ(shape_of(t), std::vector<int64_t>{});
  const int64_t back[] = {1, 1};
  EMBER_ASSERT_OK(ember_tensor_reshape(t, back, 2, &t));
  Tensor r2(t);
  EXPECT_EQ(shape_of(t), (std::vector<int64_t>{1, 1}));
  auto three = f32({1, 2, 3}, {3});
  EMBER_EXPECT_ERR(ember_tensor_reshape(three.get(), nullptr, 0, &t), EMBER_ERR_SHAPE, "reshape");
}

TEST(CApiRank0, ElementwiseOpsBroadcastLikeNumPy) {
  auto s = scalar_f32(10);
  auto m = f32({1, 2, 3, 4, 5, 6}, {2, 3});
  auto sum = binary(m, s, EMBER_BINARY_ADD);
  EXPECT_EQ(shape_of(sum.get()), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(floats(sum.get()), (std::vector<float>{11, 12, 13, 14, 15, 16}));
  auto rsub = binary(s, m, EMBER_BINARY_SUB);  // the scalar first
  EXPECT_EQ(floats(rsub.get()), (std::vector<float>{9, 8, 7, 6, 5, 4}));
  // scalar (op) scalar stays a scalar, for every elementwise family
  auto t = scalar_f32(4);
  auto prod = binary(s, t, EMBER_BINARY_MUL);
  EXPECT_EQ(shape_of(prod.get()), std::vector<int64_t>{});
  EXPECT_EQ(floats(prod.get()), std::vector<float>{40});
  ember_tensor* out = nullptr;
  EMBER_ASSERT_OK(ember_tensor_unary(t.get(), EMBER_UNARY_SQRT, &out));
  Tensor sq(out);
  EXPECT_EQ(shape_of(out), std::vector<int64_t>{});
  EXPECT_EQ(floats(out), std::vector<float>{2});
  EMBER_ASSERT_OK(ember_tensor_scalar(t.get(), EMBER_SCALAR_MUL, 0.5, &out));
  Tensor half(out);
  EXPECT_EQ(shape_of(out), std::vector<int64_t>{});
  EMBER_ASSERT_OK(ember_tensor_compare(s.get(), t.get(), EMBER_CMP_GT, &out));
  Tensor gt(out);
  EXPECT_EQ(shape_of(out), std::vector<int64_t>{});
  EXPECT_EQ(ints(out), std::vector<int64_t>{1});
  EMBER_ASSERT_OK(ember_tensor_compare(m.get(), t.get(), EMBER_CMP_GE, &out));  // [2, 3] vs scalar
  Tensor ge(out);
  EXPECT_EQ(ints(out), (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
  EMBER_ASSERT_OK(ember_tensor_where(gt.get(), s.get(), t.get(), &out));
  Tensor w(out);
  EXPECT_EQ(shape_of(out), std::vector<int64_t>{});
  EXPECT_EQ(floats(out), std::vector<float>{10});
  EMBER_ASSERT_OK(ember_tensor_softmax(t.get(), 0, &out));
  Tensor sm(out);
  EXPECT_EQ(shape_of(out), std::vector<int64_t>{});
  EXPECT_EQ(floats(out), std::vector<float>{1});
}

TEST(CApiRank0, ReductionsAndLossesGiveScalars) {
  auto m = f32({1, 5, 3, 4, 2, 6}, {2, 3});
  for (int32_t op : {EMBER_REDUCE_SUM, EMBER_REDUCE_MEAN, EMBER_REDUCE_MAX}) {
    auto r = reduce_all(m.get(), op);
    EXPECT_EQ(shape_of(r.get()), std::vector<int64_t>{});
  }
  EXPECT_EQ(floats(reduce_all(m.get()).get()), std::vector<float>{21});
  ember_tensor* out = nullptr;
  auto v = f32({4, 9}, {2});
  EMBER_ASSERT_OK(ember_tensor_argmax(v.get(), 0, 0, &out));
  Tensor am(out);
  EXPECT_EQ(shape_of(out), std::vector<int64_t>{});
  EXPECT_EQ(ints(out), std::vector<int64_t>{1});
  EMBER_ASSERT_OK(ember_tensor_reduce(v.get(), EMBER_REDUCE_SUM, 0, 1, &out));  // keepdim keeps [1]
  Tensor kept(out);
  EXPECT_EQ(shape_of(out), std::vector<int64_t>{1});
  // A scalar reduces along dim 0 or -1 (PyTorch) and stays a scalar; dim 1 is out of range.
  auto s = scalar_f32(3);
  EMBER_ASSERT_OK(ember_tensor_reduce(s.get(), EMBER_REDUCE_SUM, -1, 1, &out));
  Tensor rs(out);
  EXPECT_EQ(shape_of(out), std::vector<int64_t>{});
  EXPECT_EQ(floats(out), std::vector<float>{3});
  EMBER_EXPECT_ERR(ember_tensor_reduce(s.get(), EMBER_REDUCE_SUM, 1, 0, &out), EMBER_ERR_INDEX, "dim 1");
  EXPECT_EQ(shape_of(reduce_all(s.get()).get()), std::vector<int64_t>{});
  auto p = f32({1, 2}, {2});
  auto q = f32({0, 0}, {2});
  EMBER_ASSERT_OK(ember_loss_mse(p.get(), q.get(), EMBER_REDUCTION_SUM, &out));
  Tensor mse(out);
  EXPECT_EQ(shape_of(out), std::vector<int64_t>{});
  EXPECT_EQ(floats(out), std::vector<float>{5});
  auto logits = f32({0, 0, 0, 0}, {2, 2});
  auto labels = i64({0, 1}, {2});
  EMBER_ASSERT_OK(ember_loss_cross_entropy(logits.get(), labels.get(), EMBER_REDUCTION_MEAN, &out));
  Tensor ce(out);
  EXPECT_EQ(shape_of(out), std::vector<int64_t>{});
  // Indexing needs a dim.
  const int64_t start = 0, end = 1;
  EMBER_EXPECT_ERR(ember_tensor_slice(s.get(), &start, &end, 1, &out), EMBER_ERR_INDEX, "rank-0");
  const ember_tensor* two[] = {s.get(), s.get()};
  EMBER_EXPECT_ERR(ember_tensor_cat(two, 2, 0, &out), EMBER_ERR_SHAPE, "rank-0");
}

TEST(CApiRank0, BackwardFromAScalarLossReachesScalarLeaves) {
  auto x = f32({1, 2, 3}, {3});
  auto w = scalar_f32(2);
  EMBER_ASSERT_OK(ember_tensor_set_requires_grad(x.get(), 1));
  EMBER_ASSERT_OK(ember_tensor_set_requires_grad(w.get(), 1));
  auto wx = binary(w, x, EMBER_BINARY_MUL);  // loss = sum(w * x * x)
  auto wxx = binary(wx, x, EMBER_BINARY_MUL);
  auto loss = reduce_all(wxx.get());
  ASSERT_EQ(shape_of(loss.get()), std::vector<int64_t>{});
  ember_grads* g = nullptr;
  EMBER_ASSERT_OK(ember_tensor_backward(loss.get(), nullptr, &g));
  Grads grads(g);
  ember_tensor* gw = nullptr;
  ember_tensor* gx = nullptr;
  EMBER_ASSERT_OK(ember_grads_get(g, w.get(), &gw));
  EMBER_ASSERT_OK(ember_grads_get(g, x.get(), &gx));
  Tensor gwt(gw), gxt(gx);
  ASSERT_NE(gw, nullptr);
  ASSERT_NE(gx, nullptr);
  EXPECT_EQ(shape_of(gw), std::vector<int64_t>{});  // a scalar leaf's gradient is a scalar
  EXPECT_EQ(floats(gw), std::vector<float>{14});     // sum(x * x)
  EXPECT_EQ(floats(gx), (std::vector<float>{4, 8, 12}));  // 2 w x
}

// ---------------------------------------------------------------- float64
TEST(CApiFloat64, ComputesInDouble) {
  const double tiny = 1e-12;  // lost in float32: 1 + 1e-12 == 1
  auto a = f64({1 + tiny, 2}, {2});
  EXPECT_EQ(dtype_of(a.get()), EMBER_DTYPE_F64);
  EXPECT_EQ(doubles(a.get()), (std::vector<double>{1 + tiny, 2}));
  ember_tensor* t = nullptr;
  EMBER_ASSERT_OK(ember_tensor_ones(nullptr, EMBER_DTYPE_F64, std::vector<int64_t>{2}.data(), 1, &t));
  Tensor ones(t);
  EXPECT_EQ(dtype_of(t), EMBER_DTYPE_F64);
  auto diff = binary(a, ones, EMBER_BINARY_SUB);
  EXPECT_EQ(dtype_of(diff.get()), EMBER_DTYPE_F64);
  const auto d = doubles(diff.get());
  EXPECT_EQ(d[0], (1 + tiny) - 1.0);  // exactly double's rounding (float32 gives 0)
  EXPECT_EQ(d[1], 1.0);
  // exp in double: float32 would be off in the 8th digit
  EMBER_ASSERT_OK(ember_tensor_unary(a.get(), EMBER_UNARY_EXP, &t));
  Tensor e(t);
  EXPECT_NEAR(doubles(t)[1], std::exp(2.0), 1e-14);
  auto m = f64({1, 2, 3, 4}, {2, 2});
  EMBER_ASSERT_OK(ember_tensor_matmul(m.get(), m.get(), &t));
  Tensor mm(t);
  EXPECT_EQ(dtype_of(t), EMBER_DTYPE_F64);
  EXPECT_EQ(doubles(t), (std::vector<double>{7, 10, 15, 22}));
  auto s = reduce_all(a.get());
  EXPECT_EQ(dtype_of(s.get()), EMBER_DTYPE_F64);
  EXPECT_EQ(shape_of(s.get()), std::vector<int64_t>{});
  double v = 0;
  EMBER_ASSERT_OK(ember_tensor_item(s.get(), &v));
  EXPECT_EQ(v, 3 + tiny);
  // ints and bools made from float64 tensors
  EMBER_ASSERT_OK(ember_tensor_argmax(a.get(), 0, 0, &t));
  Tensor am(t);
  EXPECT_EQ(dtype_of(t), EMBER_DTYPE_I64);
  EXPECT_EQ(ints(t), std::vector<int64_t>{1});
}

TEST(CApiFloat64, MixedOperandsPromoteToFloat64) {
  auto a = f32({0.1f, 2}, {2});
  auto b = f64({0.2, 1e-12}, {2});
  auto ab = binary(a, b, EMBER_BINARY_ADD);  // float32 first: still float64, as torch
  auto ba = binary(b, a, EMBER_BINARY_ADD);
  for (const Tensor* t : {&ab, &ba}) {
    EXPECT_EQ(dtype_of(t->get()), EMBER_DTYPE_F64);
    const auto v = doubles(t->get());
    EXPECT_EQ(v[0], double(0.1f) + 0.2);  // the float32 value widened exactly
    EXPECT_EQ(v[1], 2 + 1e-12);
  }
  // A rank-0 float64 scalar with a float32 matrix.
  double sv = 0.5;
  ember_tensor* t = nullptr;
  EMBER_ASSERT_OK(ember_tensor_from_data(nullptr, EMBER_DTYPE_F64, &sv, sizeof sv, nullptr, 0, &t));
  Tensor s(t);
  auto m = f32({1, 2, 3, 4}, {2, 2});
  auto ms = binary(m, s, EMBER_BINARY_MUL);
  EXPECT_EQ(dtype_of(ms.get()), EMBER_DTYPE_F64);
  EXPECT_EQ(shape_of(ms.get()), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(doubles(ms.get()), (std::vector<double>{0.5, 1, 1.5, 2}));
  // Comparisons and where across the two precisions.
  EMBER_ASSERT_OK(ember_tensor_compare(a.get(), b.get(), EMBER_CMP_LT, &t));
  Tensor lt(t);
  EXPECT_EQ(ints(t), (std::vector<int64_t>{1, 0}));
  EMBER_ASSERT_OK(ember_tensor_where(lt.get(), a.get(), a.get(), &t));  // float64-made cond, float32 values
  Tensor w(t);
  EXPECT_EQ(dtype_of(t), EMBER_DTYPE_F32);
  EMBER_ASSERT_OK(ember_tensor_where(lt.get(), a.get(), b.get(), &t));
  Tensor w2(t);
  EXPECT_EQ(dtype_of(t), EMBER_DTYPE_F64);
  EXPECT_EQ(doubles(t), (std::vector<double>{double(0.1f), 1e-12}));
  const ember_tensor* both[] = {a.get(), b.get()};
  EMBER_ASSERT_OK(ember_tensor_cat(both, 2, 0, &t));
  Tensor c(t);
  EXPECT_EQ(dtype_of(t), EMBER_DTYPE_F64);
  EXPECT_EQ(doubles(t), (std::vector<double>{double(0.1f), 2, 0.2, 1e-12}));
  // Int indices (made on the float32 side) select float64 rows.
  auto idx = i64({1}, {1});
  EMBER_ASSERT_OK(ember_tensor_index_select(b.get(), 0, idx.get(), &t));
  Tensor sel(t);
  EXPECT_EQ(doubles(t), std::vector<double>{1e-12});
  // Mixed kinds stay an error, whatever the precision.
  EMBER_EXPECT_ERR(ember_tensor_add(b.get(), idx.get(), &t), EMBER_ERR_DTYPE, "f64 and i64");
}

TEST(CApiFloat64, CastConvertsBetweenPrecisions) {
  auto a = f32({0.1f, 3}, {2});
  ember_tensor* t = nullptr;
  EMBER_ASSERT_OK(ember_tensor_cast(a.get(), EMBER_DTYPE_F64, &t));
  Tensor up(t);
  EXPECT_EQ(dtype_of(t), EMBER_DTYPE_F64);
  EXPECT_EQ(doubles(t), (std::vector<double>{double(0.1f), 3}));
  auto b = f64({0.1, 1 + 1e-12}, {2});
  EMBER_ASSERT_OK(ember_tensor_cast(b.get(), EMBER_DTYPE_F32, &t));
  Tensor down(t);
  EXPECT_EQ(dtype_of(t), EMBER_DTYPE_F32);
  EXPECT_EQ(floats(t), (std::vector<float>{0.1f, 1.0f}));
  EMBER_ASSERT_OK(ember_tensor_cast(b.get(), EMBER_DTYPE_I64, &t));
  Tensor i(t);
  EXPECT_EQ(ints(t), (std::vector<int64_t>{0, 1}));
  EMBER_ASSERT_OK(ember_tensor_cast(i.get(), EMBER_DTYPE_F64, &t));
  Tensor back(t);
  EXPECT_EQ(dtype_of(t), EMBER_DTYPE_F64);
}

TEST(CApiFloat64, BackwardAndGradsInDouble) {
  const double x0 = 1 + 1e-10;
  auto x = f64({x0, -2}, {2});
  EMBER_ASSERT_OK(ember_tensor_set_requires_grad(x.get(), 1));
  auto sq = binary(x, x, EMBER_BINARY_MUL);
  auto loss = reduce_all(sq.get());
  EXPECT_EQ(dtype_of(loss.get()), EMBER_DTYPE_F64);
  auto gx = grad_of(loss.get(), x.get());
  ASSERT_NE(gx.get(), nullptr);
  EXPECT_EQ(dtype_of(gx.get()), EMBER_DTYPE_F64);
  EXPECT_EQ(doubles(gx.get()), (std::vector<double>{2 * x0, -4}));
  // A float32 tensor that requires grad does not silently leave its graph for float64 ...
  auto w = f32({1, 2}, {2});
  EMBER_ASSERT_OK(ember_tensor_set_requires_grad(w.get(), 1));
  ember_tensor* t = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_mul(w.get(), x.get(), &t), EMBER_ERR_INVALID_ARGUMENT, "not differentiable");
  EMBER_EXPECT_ERR(ember_tensor_cast(w.get(), EMBER_DTYPE_F64, &t), EMBER_ERR_INVALID_ARGUMENT, "requires grad");
  // ... but converts under no_grad, where nothing is recorded anyway.
  EMBER_ASSERT_OK(ember_no_grad_enter());
  const ember_status st = ember_tensor_mul(w.get(), x.get(), &t);
  EMBER_ASSERT_OK(ember_no_grad_exit());
  ASSERT_EQ(st, EMBER_OK) << ember_last_error();
  Tensor wx(t);
  EXPECT_EQ(doubles(t), (std::vector<double>{x0, -4}));
}

// ---------------------------------------------------------------- FFT
using C = std::complex<double>;

// The DFT of each row of `rows` x n complex values, NumPy's sign convention, unscaled; inverse: e^{+i}, scaled 1/n.
std::vector<C> dft(const std::vector<C>& x, std::size_t rows, std::size_t n, bool inverse) {
  std::vector<C> out(rows * n);
  const double sign = inverse ? 1 : -1;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t k = 0; k < n; ++k) {
      C acc = 0;
      for (std::size_t j = 0; j < n; ++j)
        acc += x[r * n + j] * std::polar(1.0, sign * 2 * std::numbers::pi * double(k * j % n) / double(n));
      out[r * n + k] = inverse ? acc / double(n) : acc;
    }
  return out;
}
std::vector<double> interleave(const std::vector<C>& v) {
  std::vector<double> out;
  for (auto c : v) {
    out.push_back(c.real());
    out.push_back(c.imag());
  }
  return out;
}
Tensor fft(const Tensor& x, int32_t op, int64_t n = 0, int64_t dim = -1, int32_t norm = EMBER_FFT_NORM_BACKWARD) {
  ember_tensor* out = nullptr;
  EXPECT_EQ(ember_tensor_fft(x.get(), op, n, dim, norm, &out), EMBER_OK) << ember_last_error();
  return Tensor(out);
}
void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

const std::vector<C> kSignal = {{1, 0.5}, {-2, 1}, {0.25, -3}, {4, 0}, {-1, -1},  // row 0
                                {0, 2},   {3, 3},  {-0.5, 1},  {2, -2}, {1, 1}};  // row 1

TEST(CApiFft, FftAndIfftMatchTheDft) {
  auto x = f64(interleave(kSignal), {2, 5, 2});
  auto y = fft(x, EMBER_FFT_FFT);
  EXPECT_EQ(shape_of(y.get()), (std::vector<int64_t>{2, 5, 2}));
  EXPECT_EQ(dtype_of(y.get()), EMBER_DTYPE_F64);
  expect_near(doubles(y.get()), interleave(dft(kSignal, 2, 5, false)), 1e-12);
  auto yi = fft(x, EMBER_FFT_IFFT);
  expect_near(doubles(yi.get()), interleave(dft(kSignal, 2, 5, true)), 1e-12);
  // norms: forward scales the forward transform by 1/n, ortho by 1/sqrt(n); the inverse by n and sqrt(n)
  auto yf = fft(x, EMBER_FFT_FFT, 0, -1, EMBER_FFT_NORM_FORWARD);
  auto yo = fft(x, EMBER_FFT_FFT, 0, -1, EMBER_FFT_NORM_ORTHO);
  auto yio = fft(x, EMBER_FFT_IFFT, 0, -1, EMBER_FFT_NORM_ORTHO);
  auto scaled = [](std::vector<double> v, double f) {
    for (auto& e : v) e *= f;
    return v;
  };
  const auto ref = interleave(dft(kSignal, 2, 5, false));
  const auto iref = interleave(dft(kSignal, 2, 5, true));
  expect_near(doubles(yf.get()), scaled(ref, 0.2), 1e-12);
  expect_near(doubles(yo.get()), scaled(ref, 1 / std::sqrt(5.0)), 1e-12);
  expect_near(doubles(yio.get()), scaled(iref, std::sqrt(5.0)), 1e-12);
  // float32 input gives float32, within float32's rounding
  std::vector<float> xf;
  for (double v : interleave(kSignal)) xf.push_back(static_cast<float>(v));
  auto y32 = fft(f32(xf, {2, 5, 2}), EMBER_FFT_FFT);
  EXPECT_EQ(dtype_of(y32.get()), EMBER_DTYPE_F32);
  expect_near(doubles(y32.get()), ref, 1e-5);
}

TEST(CApiFft, AlongAnotherDimWithCropAndPad) {
  // [5, 2, 2] with the signal along dim 0: the transpose of kSignal's layout.
  std::vector<C> cols(10);
  for (std::size_t r = 0; r < 2; ++r)
    for (std::size_t j = 0; j < 5; ++j) cols[j * 2 + r] = kSignal[r * 5 + j];
  auto x = f64(interleave(cols), {5, 2, 2});
  for (int64_t n : {3, 5, 8}) {  // crop, as is, zero-pad
    std::vector<C> rows(2 * static_cast<std::size_t>(n), C(0, 0));
    for (std::size_t r = 0; r < 2; ++r)
      for (std::size_t j = 0; j < std::min<std::size_t>(5, n); ++j) rows[r * n + j] = kSignal[r * 5 + j];
    const auto want = dft(rows, 2, static_cast<std::size_t>(n), false);
    auto y = fft(x, EMBER_FFT_FFT, n, 0);
    ASSERT_EQ(shape_of(y.get()), (std::vector<int64_t>{n, 2, 2}));
    std::vector<C> back(want.size());
    for (std::size_t r = 0; r < 2; ++r)
      for (std::size_t k = 0; k < static_cast<std::size_t>(n); ++k) back[k * 2 + r] = want[r * n + k];
    expect_near(doubles(y.get()), interleave(back), 1e-12);
  }
}

TEST(CApiFft, RfftAndIrfft) {
  const std::vector<double> real = {1, -2, 0.5, 3, 0, -1, 2, 0.25, -0.75, 1.5, 4, -3};  // [2, 6]
  auto x = f64(real, {2, 6});
  for (int64_t n : {0, 4, 7}) {
    const std::size_t len = n > 0 ? static_cast<std::size_t>(n) : 6;
    std::vector<C> rows(2 * len, C(0, 0));
    for (std::size_t r = 0; r < 2; ++r)
      for (std::size_t j = 0; j < std::min<std::size_t>(6, len); ++j) rows[r * len + j] = real[r * 6 + j];
    const auto full = dft(rows, 2, len, false);
    std::vector<C> half;
    for (std::size_t r = 0; r < 2; ++r)
      for (std::size_t k = 0; k < len / 2 + 1; ++k) half.push_back(full[r * len + k]);
    auto y = fft(x, EMBER_FFT_RFFT, n);
    ASSERT_EQ(shape_of(y.get()), (std::vector<int64_t>{2, static_cast<int64_t>(len / 2 + 1), 2}));
    expect_near(doubles(y.get()), interleave(half), 1e-12);
    // irfft with the signal's length gives the (cropped / padded) signal back
    auto z = fft(y, EMBER_FFT_IRFFT, static_cast<int64_t>(len));
    std::vector<double> want;
    for (auto c : rows) want.push_back(c.real());
    expect_near(doubles(z.get()), want, 1e-12);
  }
  // irfft's default length 2 * (m - 1), and its norm
  auto y = fft(x, EMBER_FFT_RFFT);  // m = 4 bins
  auto z = fft(y, EMBER_FFT_IRFFT, 0, -1, EMBER_FFT_NORM_FORWARD);
  EXPECT_EQ(shape_of(z.get()), (std::vector<int64_t>{2, 6}));
  std::vector<double> want = real;
  for (auto& v : want) v *= 6;
  expect_near(doubles(z.get()), want, 1e-11);
}

TEST(CApiFft, DifferentiableParsevalGradient) {
  // With the unitary (ortho) norm, sum |fft(x)|^2 = sum |x|^2, so its gradient is 2x; along dim 0 it also runs
  // the permutes' backward.
  const std::vector<double> v = {1, -2, 0.5, 3, 0, -1, 2, 0.25, -0.75, 1.5, 4, -3};
  auto x = f64(v, {3, 2, 2});
  EMBER_ASSERT_OK(ember_tensor_set_requires_grad(x.get(), 1));
  auto y = fft(x, EMBER_FFT_FFT, 0, 0, EMBER_FFT_NORM_ORTHO);
  auto yy = binary(y, y, EMBER_BINARY_MUL);
  auto loss = reduce_all(yy.get());
  double l = 0;
  EMBER_ASSERT_OK(ember_tensor_item(loss.get(), &l));
  double want_l = 0;
  for (double e : v) want_l += e * e;
  EXPECT_NEAR(l, want_l, 1e-12);
  auto gx = grad_of(loss.get(), x.get());
  ASSERT_NE(gx.get(), nullptr);
  std::vector<double> want;
  for (double e : v) want.push_back(2 * e);
  expect_near(doubles(gx.get()), want, 1e-12);
}

TEST(CApiFft, Errors) {
  auto real = f64({1, 2, 3}, {3});
  ember_tensor* out = nullptr;
  EMBER_EXPECT_ERR(ember_tensor_fft(real.get(), EMBER_FFT_FFT, 0, -1, 0, &out), EMBER_ERR_SHAPE, "complex tensor");
  EMBER_EXPECT_ERR(ember_tensor_fft(real.get(), 7, 0, -1, 0, &out), EMBER_ERR_INVALID_ARGUMENT, "unknown fft op 7");
  EMBER_EXPECT_ERR(ember_tensor_fft(real.get(), EMBER_FFT_RFFT, 0, -1, 5, &out), EMBER_ERR_INVALID_ARGUMENT,
                   "unknown fft norm 5");
  EMBER_EXPECT_ERR(ember_tensor_fft(real.get(), EMBER_FFT_RFFT, 0, 1, 0, &out), EMBER_ERR_INDEX, "dim 1");
  auto ints = i64({1, 2}, {2});
  EMBER_EXPECT_ERR(ember_tensor_fft(ints.get(), EMBER_FFT_RFFT, 0, -1, 0, &out), EMBER_ERR_DTYPE, "float");
  auto one_bin = f64({1, 0}, {1, 2});
  EMBER_EXPECT_ERR(ember_tensor_fft(one_bin.get(), EMBER_FFT_IRFFT, 0, -1, 0, &out), EMBER_ERR_INVALID_ARGUMENT,
                   "n = 1");
}

// ---------------------------------------------------------------- data_ptr
TEST(CApiDataPtr, ZeroCopyViewsOfCpuStorage) {
  auto a = f32({1.5f, -2, 3}, {3});
  const void* p = nullptr;
  EMBER_ASSERT_OK(ember_tensor_data_ptr(a.get(), &p));
  ASSERT_NE(p, nullptr);
  const auto* fp = static_cast<const float*>(p);
  EXPECT_EQ(std::vector<float>(fp, fp + 3), (std::vector<float>{1.5f, -2, 3}));
  ember_tensor* c = nullptr;
  EMBER_ASSERT_OK(ember_tensor_clone(a.get(), &c));  // another handle, the same storage: no copy
  Tensor clone(c);
  const void* q = nullptr;
  EMBER_ASSERT_OK(ember_tensor_data_ptr(c, &q));
  EXPECT_EQ(p, q);
  auto d = f64({0.1, 1e-300}, {2});
  EMBER_ASSERT_OK(ember_tensor_data_ptr(d.get(), &p));
  const auto* dp = static_cast<const double*>(p);
  EXPECT_EQ(dp[0], 0.1);
  EXPECT_EQ(dp[1], 1e-300);
  auto i = i64({7, -9}, {2});
  EMBER_ASSERT_OK(ember_tensor_data_ptr(i.get(), &p));
  EXPECT_EQ(static_cast<const int64_t*>(p)[1], -9);
  ember_tensor* b = nullptr;
  EMBER_ASSERT_OK(ember_tensor_compare_scalar(i.get(), EMBER_CMP_GT, 0, &b));
  Tensor bt(b);
  EMBER_ASSERT_OK(ember_tensor_data_ptr(b, &p));
  EXPECT_EQ(static_cast<const uint8_t*>(p)[0], 1);
  EXPECT_EQ(static_cast<const uint8_t*>(p)[1], 0);
  EMBER_EXPECT_ERR(ember_tensor_data_ptr(a.get(), nullptr), EMBER_ERR_INVALID_ARGUMENT, "data is NULL");
}

}  // namespace
}  // namespace ember::capi_test
