// Bad input raises the right typed exception (ember::ShapeError / IndexError / ArgumentError / KindError), whose
// message names the op and the shapes involved, on every backend; nothing crashes, and the engine stays usable
// afterwards (including after an error raised inside the thread pool).
#include <limits>
#include <string>
#include <typeinfo>

#include "tests/support/test_backends.hpp"

namespace errors_cases {

using namespace ember;
using namespace ember::test;
using S = checks::SliceArg;

template <class B>
class ErrorsTest : public ::testing::Test {};
TYPED_TEST_SUITE(ErrorsTest, TestBackends, BackendNames);

// EXPECT_THROW with a check of what(): f must throw exactly an E (not another ember::Error) whose message holds
// every string in `parts`.
template <class E, class F>
::testing::AssertionResult raises(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
  } catch (const E& e) {
    const std::string m = e.what();
    for (auto& p : parts)
      if (m.find(p) == std::string::npos)
        return ::testing::AssertionFailure() << "message '" << m << "' lacks '" << p << "'";
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw " << typeid(e).name() << " (" << e.what() << ") instead of "
                                         << typeid(E).name();
  } catch (...) {
    return ::testing::AssertionFailure() << "threw a non-std exception";
  }
  return ::testing::AssertionFailure() << "did not throw";
}

TYPED_TEST(ErrorsTest, MismatchedBroadcastShapes) {
  using B = TypeParam;
  auto a = Tensor<B, 2>::ones({2, 3});
  auto b = Tensor<B, 2>::ones({2, 4});
  EXPECT_TRUE(raises<ShapeError>([&] { a.add(b); }, {"add", "[2, 3]", "[2, 4]", "broadcast"}));
  EXPECT_TRUE(raises<ShapeError>([&] { a + b; }, {"add", "[2, 3]", "[2, 4]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { a.sub(b); }, {"sub", "[2, 3]", "[2, 4]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { b.mul(a); }, {"mul", "[2, 4]", "[2, 3]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { a / b; }, {"div", "[2, 3]", "[2, 4]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { a.pow(b); }, {"pow", "[2, 3]", "[2, 4]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { a.maximum(b); }, {"maximum", "[2, 3]", "[2, 4]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { a.eq(b); }, {"eq", "[2, 3]", "[2, 4]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { a.lt(b); }, {"lt", "[2, 3]", "[2, 4]"}));
  auto ia = Tensor<B, 2, Int>::ones({3, 2});
  auto ib = Tensor<B, 2, Int>::ones({2, 2});
  EXPECT_TRUE(raises<ShapeError>([&] { ia.add(ib); }, {"add", "[3, 2]", "[2, 2]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { ia.mul(ib); }, {"mul", "[3, 2]", "[2, 2]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { ia.ne(ib); }, {"ne", "[3, 2]", "[2, 2]"}));
  auto ba = Tensor<B, 2, Bool>::ones({1, 3});
  auto bb = Tensor<B, 2, Bool>::ones({1, 2});
  EXPECT_TRUE(raises<ShapeError>([&] { ba.eq(bb); }, {"eq", "[1, 3]", "[1, 2]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { ba.logical_and(bb); }, {"logical_and", "[1, 3]", "[1, 2]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { ba.logical_xor(bb); }, {"logical_xor", "[1, 3]", "[1, 2]"}));
  // where: condition, then either branch, must broadcast together.
  auto cond = Tensor<B, 2, Bool>::ones({2, 3});
  EXPECT_TRUE(raises<ShapeError>([&] { where(cond, a, b); }, {"where", "[2, 4]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { where(cond, b, a); }, {"where", "[2, 4]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { where(Tensor<B, 2, Bool>::ones({3, 3}), a, a); }, {"where", "[3, 3]", "[2, 3]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { a.mask_where(cond, b); }, {"where", "[2, 4]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { a.mask_fill(Tensor<B, 2, Bool>::ones({2, 2}), 0.0); },
                                 {"mask_fill", "[2, 3]", "[2, 2]"}));
  // The mask may broadcast to the tensor, not beyond it.
  EXPECT_TRUE(raises<ShapeError>([&] { Tensor<B, 2>::ones({1, 3}).mask_fill(cond, 0.0); },
                                 {"mask_fill", "[2, 3]", "[1, 3]"}));
  // Valid broadcasting still works.
  EXPECT_EQ((Tensor<B, 2>::ones({2, 1}).add(Tensor<B, 2>::ones({1, 3})).shape()), (Shape{2, 3}));
}

TYPED_TEST(ErrorsTest, DimsOutOfRange) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::ones({2, 3});
  EXPECT_TRUE(raises<IndexError>([&] { x.sum_dim(5); }, {"sum_dim", "5", "rank 2"}));
  EXPECT_TRUE(raises<IndexError>([&] { x.mean_dim(-3); }, {"mean_dim", "-3", "rank 2"}));
  EXPECT_TRUE(raises<IndexError>([&] { x.max_dim(2); }, {"max_dim", "2"}));
  EXPECT_TRUE(raises<IndexError>([&] { x.argmax(2); }, {"argmax", "2"}));
  EXPECT_TRUE(raises<IndexError>([&] { x.var(4); }, {"var", "4"}));
  EXPECT_TRUE(raises<IndexError>([&] { x.softmax(2); }, {"softmax", "2"}));
  EXPECT_TRUE(raises<IndexError>([&] { x.log_softmax(-3); }, {"log_softmax", "-3"}));
  EXPECT_TRUE(raises<IndexError>([&] { Tensor<B, 2, Int>::ones({2, 2}).sum_dim(2); }, {"sum_dim", "2"}));
  EXPECT_TRUE(raises<IndexError>([&] { Tensor<B, 2, Bool>::ones({2, 2}).any_dim(3); }, {"3"}));
  EXPECT_TRUE(raises<ShapeError>([&] { x.permute({0, 0}); }, {"permute", "repeated", "[0, 0]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { Tensor<B, 3>::ones({1, 2, 3}).permute({2, -1, 0}); },
                                 {"permute", "repeated", "[2, -1, 0]"}));
  EXPECT_TRUE(raises<IndexError>([&] { x.permute({0, 2}); }, {"permute", "2"}));
  EXPECT_TRUE(raises<IndexError>([&] { x.swap_dims(0, 3); }, {"swap_dims", "3"}));
  EXPECT_TRUE(raises<IndexError>([&] { x.flip({-3}); }, {"flip", "-3"}));
  EXPECT_TRUE(raises<IndexError>([&] { x.template unsqueeze<3>(4); }, {"unsqueeze", "4"}));
  EXPECT_TRUE(raises<ShapeError>([&] { x.template squeeze<1>(1); }, {"squeeze", "[2, 3]"}));
  EXPECT_TRUE(raises<IndexError>([&] { Tensor<B, 2>::cat({x, x}, 2); }, {"cat", "2"}));
  EXPECT_TRUE(raises<IndexError>([&] { x.split(1, 2); }, {"split", "2"}));
}

TYPED_TEST(ErrorsTest, BadReshapeExpandRepeat) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::ones({2, 3});
  EXPECT_TRUE(raises<ShapeError>([&] { x.reshape(std::array<int64_t, 2>{4, 2}); }, {"reshape", "[2, 3]", "[4, 2]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { x.reshape(std::array<int64_t, 2>{4, -1}); }, {"reshape", "[2, 3]", "[4, -1]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { x.reshape(std::array<int64_t, 3>{-1, 2, -1}); }, {"reshape", "-1"}));
  EXPECT_TRUE(raises<ShapeError>([&] { Tensor<B, 1, Int>::ones({5}).reshape(std::array<int64_t, 2>{2, 2}); },
                                 {"reshape", "[5]", "[2, 2]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { x.template flatten<1>(1, 1); }, {"flatten"}));
  EXPECT_TRUE(raises<ShapeError>([&] { x.template expand<2>({4, 3}); }, {"expand", "[2, 3]", "[4, 3]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { x.template expand<3>({-1, 2, 3}); }, {"expand", "[-1, 2, 3]"}));
  EXPECT_TRUE(raises<ArgumentError>([&] { x.repeat({2, -1}); }, {"repeat", "-1"}));
  EXPECT_TRUE(raises<ArgumentError>([&] { x.split(0, 0); }, {"split", "0"}));
  EXPECT_TRUE(raises<ArgumentError>([&] { x.chunk(-2, 0); }, {"chunk", "-2"}));
  EXPECT_TRUE(raises<ShapeError>([&] { Tensor<B, 2>::zeros({-1, 3}); }, {"full", "[-1, 3]"}));
  EXPECT_TRUE(raises<ArgumentError>([&] { Tensor<B, 1, Int>::arange(5, 2); }, {"arange", "5", "2"}));
  EXPECT_TRUE(raises<ShapeError>([&] { x.item(); }, {"item", "[2, 3]"}));
}

TYPED_TEST(ErrorsTest, MatmulShapes) {
  using B = TypeParam;
  EXPECT_TRUE(raises<ShapeError>([&] { Tensor<B, 2>::ones({2, 3}).matmul(Tensor<B, 2>::ones({4, 5})); },
                                 {"matmul", "[2, 3]", "[4, 5]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { Tensor<B, 3>::ones({2, 2, 3}).matmul(Tensor<B, 3>::ones({3, 3, 4})); },
                                 {"matmul", "[2, 2, 3]", "[3, 3, 4]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { Tensor<B, 1>::ones({3}).matmul(Tensor<B, 1>::ones({3})); }, {"matmul", "[3]"}));
}

TYPED_TEST(ErrorsTest, CatStackSliceShapes) {
  using B = TypeParam;
  using T2 = Tensor<B, 2>;
  EXPECT_TRUE(raises<ShapeError>([&] { T2::cat({T2::ones({2, 3}), T2::ones({2, 4})}, 0); },
                                 {"cat", "[2, 3]", "[2, 4]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { Tensor<B, 2, Int>::cat({Tensor<B, 2, Int>::ones({2, 3}), Tensor<B, 2, Int>::ones({3, 2})}, 1); },
                                 {"cat", "[2, 3]", "[3, 2]"}));
  EXPECT_TRUE(raises<ArgumentError>([&] { T2::cat({}, 0); }, {"cat", "empty"}));
  EXPECT_TRUE(raises<ShapeError>([&] { stack(std::vector{T2::ones({2, 3}), T2::ones({3, 2})}, 0); },
                                 {"stack", "[2, 3]", "[3, 2]"}));
  EXPECT_TRUE(raises<ArgumentError>([&] { stack(std::vector<T2>{}, 0); }, {"stack", "empty"}));
  auto x = T2::zeros({3, 4});
  EXPECT_TRUE(raises<ShapeError>([&] { x.slice_assign({S{0, 1}, S{0, 2}}, T2::ones({2, 2})); },
                                 {"slice_assign", "[2, 2]", "[1, 2]", "[3, 4]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { x.slice_assign({S{1}}, T2::ones({3, 4})); },
                                 {"slice_assign", "[3, 4]", "[2, 4]"}));
  EXPECT_TRUE(raises<IndexError>([&] { x.slice({S{0}, S{0}, S{0}}); }, {"slice", "[3, 4]"}));
  EXPECT_TRUE(raises<IndexError>([&] { x.slice_assign({S{0}, S{0}, S{0}}, x); }, {"slice_assign", "[3, 4]"}));
  EXPECT_TRUE(raises<IndexError>([&] { x.narrow(1, 3, 2); }, {"narrow", "[3, 4]"}));
}

TYPED_TEST(ErrorsTest, IndexingShapes) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::ones({2, 3});
  EXPECT_TRUE(raises<ShapeError>([&] { x.gather(1, Tensor<B, 2, Int>::zeros({3, 3})); }, {"gather", "[3, 3]", "[2, 3]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { x.gather(0, Tensor<B, 2, Int>::zeros({1, 4})); }, {"gather", "[1, 4]", "[2, 3]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { x.scatter_add(1, Tensor<B, 2, Int>::zeros({2, 2}), Tensor<B, 2>::ones({2, 3})); },
                                 {"scatter_add", "[2, 2]", "[2, 3]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { x.scatter_add(0, Tensor<B, 2, Int>::zeros({3, 4}), Tensor<B, 2>::ones({3, 4})); },
                                 {"scatter_add", "[3, 4]", "[2, 3]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { x.select_assign(0, Tensor<B, 1, Int>::zeros({2}), Tensor<B, 2>::ones({3, 3})); },
                                 {"select_assign", "[3, 3]", "[2, 3]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { x.select_assign(1, Tensor<B, 1, Int>::zeros({1}), Tensor<B, 2>::ones({1, 2})); },
                                 {"select_assign", "[1, 2]", "[2, 1]"}));
}

TYPED_TEST(ErrorsTest, ConvAndPoolOptions) {
  using B = TypeParam;
  using T4 = Tensor<B, 4>;
  auto x = T4::ones({1, 3, 5, 5});
  auto w = T4::ones({4, 3, 3, 3});
  EXPECT_TRUE(raises<ShapeError>([&] { conv2d<B>(x, T4::ones({4, 2, 3, 3}), std::nullopt); },
                                 {"conv2d", "[1, 3, 5, 5]", "[4, 2, 3, 3]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { conv2d<B>(T4::ones({1, 1, 2, 2}), T4::ones({1, 1, 3, 3}), std::nullopt); },
                                 {"conv2d", "[1, 1, 2, 2]", "[1, 1, 3, 3]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { conv2d<B>(x, w, Tensor<B, 1>::ones({3})); }, {"conv2d", "[3]", "[4]"}));
  Conv2dOptions o;
  o.groups = 2;  // 3 input channels
  EXPECT_TRUE(raises<ArgumentError>([&] { conv2d<B>(x, w, std::nullopt, o); }, {"conv2d", "groups", "[1, 3, 5, 5]"}));
  o = {};
  o.groups = 0;
  EXPECT_TRUE(raises<ArgumentError>([&] { conv2d<B>(x, w, std::nullopt, o); }, {"conv2d", "groups"}));
  o = {};
  o.stride = {0, 1};
  EXPECT_TRUE(raises<ArgumentError>([&] { conv2d<B>(x, w, std::nullopt, o); }, {"conv2d", "stride"}));
  o = {};
  o.padding = {0, -1};
  EXPECT_TRUE(raises<ArgumentError>([&] { conv2d<B>(x, w, std::nullopt, o); }, {"conv2d", "padding"}));
  o = {};
  o.dilation = {0, 0};
  EXPECT_TRUE(raises<ArgumentError>([&] { conv2d<B>(x, w, std::nullopt, o); }, {"conv2d", "dilation"}));
  Conv1dOptions o1;
  o1.stride = 0;
  EXPECT_TRUE(raises<ArgumentError>([&] { conv1d<B>(Tensor<B, 3>::ones({1, 2, 5}), Tensor<B, 3>::ones({1, 2, 3}), std::nullopt, o1); },
                                    {"conv1d", "stride"}));
  EXPECT_TRUE(raises<ShapeError>([&] { conv1d<B>(Tensor<B, 3>::ones({1, 2, 5}), Tensor<B, 3>::ones({1, 3, 3}), std::nullopt); },
                                 {"conv"}));

  auto p = T4::ones({1, 1, 2, 2});
  Pool2dOptions po;
  po.kernel = {0, 2};
  EXPECT_TRUE(raises<ArgumentError>([&] { max_pool2d<B>(p, po); }, {"max_pool2d", "kernel"}));
  po = {};
  po.stride = {1, 0};
  EXPECT_TRUE(raises<ArgumentError>([&] { max_pool2d<B>(p, po); }, {"max_pool2d", "stride"}));
  po = {};
  po.padding = {2, 0};  // more than half of kernel 2
  EXPECT_TRUE(raises<ArgumentError>([&] { max_pool2d<B>(p, po); }, {"max_pool2d", "padding"}));
  po = {};
  po.kernel = {3, 3};
  po.stride = {1, 1};
  EXPECT_TRUE(raises<ShapeError>([&] { max_pool2d<B>(p, po); }, {"max_pool2d", "[1, 1, 2, 2]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { max_pool2d_with_indices<B>(p, po); }, {"max_pool2d", "[1, 1, 2, 2]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { avg_pool2d<B>(p, po); }, {"avg_pool2d", "[1, 1, 2, 2]"}));
  po = {};
  po.dilation = {2, 2};
  EXPECT_TRUE(raises<ArgumentError>([&] { avg_pool2d<B>(p, po); }, {"avg_pool2d", "dilation"}));
  po = {};
  po.padding = {-1, 0};
  EXPECT_TRUE(raises<ArgumentError>([&] { avg_pool2d<B>(p, po); }, {"avg_pool2d", "padding"}));
  EXPECT_TRUE(raises<ArgumentError>([&] { adaptive_avg_pool2d<B>(p, {0, 2}); }, {"adaptive_avg_pool2d", "[0, 2]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { adaptive_avg_pool2d<B>(T4::ones({1, 1, 0, 3}), {1, 1}); },
                                 {"adaptive_avg_pool2d", "[1, 1, 0, 3]"}));
}

TYPED_TEST(ErrorsTest, FromDataRankBytesAndDType) {
  using B = TypeParam;
  const auto d23 = TensorData::from_vec<float>(std::vector<float>(6, 1.0f), Shape{2, 3});
  EXPECT_TRUE(raises<ShapeError>([&] { Tensor<B, 1>::from_data(d23); }, {"from_data", "[2, 3]", "rank 2"}));
  EXPECT_TRUE(raises<ShapeError>([&] { Tensor<B, 3, Int>::from_data(d23); }, {"from_data", "[2, 3]", "rank 2"}));
  auto bad = d23;
  bad.bytes.pop_back();
  EXPECT_TRUE(raises<ShapeError>([&] { Tensor<B, 2>::from_data(bad); }, {"TensorData", "23 bytes", "[2, 3]", "f32"}));
  EXPECT_TRUE(raises<ShapeError>([&] { Tensor<B, 2, Int>::from_data(bad); }, {"23 bytes", "[2, 3]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { Tensor<B, 2, Bool>::from_data(bad); }, {"23 bytes", "[2, 3]"}));
  bad = d23;
  bad.shape = Shape{3, 3};
  EXPECT_TRUE(raises<ShapeError>([&] { Tensor<B, 2>::from_data(bad); }, {"24 bytes", "[3, 3]"}));
  bad = d23;
  bad.shape = Shape{-2, -3};
  EXPECT_TRUE(raises<ShapeError>([&] { Tensor<B, 2>::from_data(bad); }, {"negative", "[-2, -3]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { Tensor<B, 2>::from_values(std::vector<double>{1, 2, 3}, {2, 2}); },
                                 {"3 values", "[2, 2]"}));
  bad = d23;
  bad.dtype = static_cast<DType>(99);
  EXPECT_THROW((Tensor<B, 2>::from_data(bad)), ember::Error);
}

TYPED_TEST(ErrorsTest, ClampAndIntegerDivisionByZero) {
  using B = TypeParam;
  auto x = Tensor<B, 2>::ones({2, 2});
  EXPECT_TRUE(raises<ArgumentError>([&] { x.clamp(3.0, 1.0); }, {"clamp", "3", "1"}));
  EXPECT_TRUE(raises<ArgumentError>([&] { Tensor<B, 1, Int>::ones({2}).clamp(0.0, -1.0); }, {"clamp", "0", "-1"}));
  EXPECT_NO_THROW(x.clamp(1.0, 1.0));
  auto a = make_int<B, 2>({4, 5, 6, 7}, {2, 2});
  auto z = make_int<B, 2>({1, 0, 2, 3}, {2, 2});
  EXPECT_TRUE(raises<ArgumentError>([&] { a.div(z); }, {"div", "zero"}));
  EXPECT_TRUE(raises<ArgumentError>([&] { a / z; }, {"div", "zero"}));
  EXPECT_TRUE(raises<ArgumentError>([&] { a.div_scalar(0); }, {"div", "zero"}));
  EXPECT_TRUE(raises<ArgumentError>([&] { z.rdiv_scalar(6); }, {"div", "zero"}));
  EXPECT_TRUE(raises<ArgumentError>([&] { a.div(make_int<B, 2>({3, 0}, {1, 2})); }, {"div", "zero"}));  // broadcast
  // Large enough to run on the thread pool: the error comes back from a worker.
  std::vector<int64_t> d(400 * 400, 2);
  d.back() = 0;
  auto num = Tensor<B, 2, Int>::full({400, 400}, 8);
  EXPECT_TRUE(raises<ArgumentError>([&] { num.div(make_int<B, 2>(d, {400, 400})); }, {"div", "zero"}));
  // The pool is still healthy afterwards.
  const auto q = num.div(Tensor<B, 2, Int>::full({400, 400}, 2)).template to_vec<int64_t>();
  EXPECT_EQ(q, std::vector<int64_t>(400 * 400, 4));
  // Float division by zero is IEEE, not an error.
  EXPECT_TRUE(matches(make<B, 1>({1, -1}, {2}).div(make<B, 1>({0, 0}, {2})), Shape{2},
                      {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}, 0.0));
}

TYPED_TEST(ErrorsTest, EmptyReductionsAndKindErrors) {
  using B = TypeParam;
  auto e = Tensor<B, 2>::zeros({0, 3});
  EXPECT_TRUE(raises<ShapeError>([&] { e.max(); }, {"max", "[0, 3]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { e.min(); }, {"min", "[0, 3]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { e.argmax(0); }, {"argmax", "[0, 3]"}));
  EXPECT_TRUE(raises<ShapeError>([&] { Tensor<B, 2, Int>::zeros({2, 0}).min_dim(1); }, {"min_dim", "[2, 0]"}));
  EXPECT_NO_THROW(e.sum());  // an empty sum is 0
  // Float-only math requested of an Int primitive at the backend level is a KindError, not a crash.
  auto i = make_int<B, 1>({1, 2}, {2});
  EXPECT_TRUE(raises<KindError>([&] { B::int_unary(i.primitive(), UnaryOp::Exp); }, {"unary", "Int"}));
  EXPECT_TRUE(raises<KindError>([&] { B::int_unary(i.primitive(), UnaryOp::Sqrt); }, {"unary"}));
  EXPECT_TRUE(raises<KindError>([&] { B::int_unary(i.primitive(), UnaryOp::Asinh); }, {"unary", "asinh", "Int"}));
  // Float-only binary ops too (the op table's kinds: atan2 is Float).
  EXPECT_TRUE(raises<KindError>([&] { B::int_binary(i.primitive(), i.primitive(), BinaryOp::Atan2); }, {"atan2", "Int"}));
  if constexpr (detail::HasGradTracking<B>) {
    EXPECT_TRUE(raises<ArgumentError>([&] { Tensor<B, 1>::ones({2}).sum().backward(); }, {"backward"}));
  }
}

// Sizes that would overflow int64 arithmetic are refused up front instead of wrapping (found by review: a wrapped
// pool span read far outside the input; a zero-element [0, 2^32, 2^32] reduced to a 2^64-element tensor).
TYPED_TEST(ErrorsTest, SizesThatWouldOverflowAreRefused) {
  using B = TypeParam;
  const int64_t big = int64_t(1) << 32;
  EXPECT_TRUE(raises<ShapeError>([&] { Tensor<B, 3>::zeros({0, big, big}); }, {"full", "too many elements"}));
  EXPECT_TRUE(raises<ShapeError>([&] { Tensor<B, 2>::zeros({big, big}); }, {"full", "too many elements"}));
  auto empty = Tensor<B, 1>::zeros({0});
  EXPECT_TRUE(raises<ShapeError>([&] { empty.reshape(std::array<int64_t, 3>{0, big, big}); }, {"reshape"}));
  EXPECT_TRUE(raises<ShapeError>([&] { empty.reshape(std::array<int64_t, 2>{0, -1}); }, {"reshape"}));
  auto one = Tensor<B, 2>::ones({1, 1});
  EXPECT_TRUE(raises<ShapeError>([&] { one.expand(std::array<int64_t, 2>{big, big}); }, {"expand"}));
  auto img = Tensor<B, 4>::ones({1, 1, 1, 1});
  Pool2dOptions p;
  p.kernel = {3, 3};
  p.stride = {1, 1};
  p.padding = {(int64_t(1) << 62) + 1, (int64_t(1) << 62) + 1};
  p.dilation = p.padding;
  EXPECT_TRUE(raises<ArgumentError>([&] { max_pool2d<B>(img, p); }, {"max_pool2d"}));
  p.dilation = {1, 1};
  EXPECT_TRUE(raises<ArgumentError>([&] { avg_pool2d<B>(img, p); }, {"avg_pool2d", "padding"}));
  Conv2dOptions c;
  c.dilation = {(int64_t(1) << 62) + 1, 1};
  auto w = Tensor<B, 4>::ones({1, 1, 5, 1});
  EXPECT_TRUE(raises<ArgumentError>([&] { conv2d<B>(img, w, std::nullopt, c); }, {"conv2d", "2^31"}));
  c.dilation = {1, 1};
  c.groups = int64_t(1) << 40;
  EXPECT_TRUE(raises<ArgumentError>([&] { conv2d<B>(img, w, std::nullopt, c); }, {"conv2d", "groups"}));
}

}  // namespace errors_cases
