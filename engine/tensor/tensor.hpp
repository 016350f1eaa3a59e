#pragma once
// Tensor<B, D, K>: a rank-D tensor of kind K (Float, Int, Bool) on backend B. Cheap to copy (the primitive shares
// storage); every op returns a new tensor. Arguments are validated here (engine/tensor/checks.hpp), once for every
// backend, and the op is dispatched to B at compile time.
#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "engine/backend/backend.hpp"
#include "engine/tensor/checks.hpp"
#include "engine/tensor/host_random.hpp"
#include "engine/tensor/random.hpp"
#include "engine/tensor/shape_ops.hpp"

namespace ember {

template <Backend B, std::size_t D, TensorKind K = Float>
class Tensor;

namespace detail {
template <class B>
concept HasGradTracking = requires(const typename B::FloatPrimitive& p) { B::float_require_grad(p, true); };

inline std::vector<int64_t> vec(std::span<const int64_t> s) { return {s.begin(), s.end()}; }

// B::InnerBackend for autodiff backends, B itself otherwise (so signatures stay valid on every backend).
template <class BB>
struct InnerOf {
  using type = BB;
};
template <class BB>
  requires requires { typename BB::InnerBackend; }
struct InnerOf<BB> {
  using type = typename BB::InnerBackend;
};
}  // namespace detail

template <Backend B, std::size_t D, TensorKind K>
class Tensor {
  static_assert(D >= 1, "Tensor rank must be at least 1");

 public:
  using Backend_ = B;
  using Kind = K;
  using Prim = Primitive<B, K>;
  using Device = typename B::Device;
  using Inner = typename detail::InnerOf<B>::type;
  static constexpr std::size_t rank = D;
  static constexpr bool is_float = std::is_same_v<K, Float>;
  static constexpr bool is_int = std::is_same_v<K, Int>;
  static constexpr bool is_bool = std::is_same_v<K, Bool>;

  explicit Tensor(Prim p) : p_(std::move(p)) {}

  const Prim& primitive() const { return p_; }

  // ---------------------------------------------------------------- creation and transfer
  static Tensor from_data(const TensorData& data, const Device& dev = {}) {
    data.validate();
    if (data.shape.rank() != D)
      throw ShapeError("from_data: data of shape " + data.shape.to_string() + " has rank " +
                       std::to_string(data.shape.rank()) + ", tensor rank is " + std::to_string(D));
    return Tensor(B::template from_data<K>(data, dev));
  }
  template <class T>
  static Tensor from_values(std::span<const T> values, std::array<int64_t, D> shape, const Device& dev = {}) {
    return from_data(TensorData::from_span<T>(values, Shape(detail::vec(shape))), dev);
  }
  template <class T>
  static Tensor from_values(const std::vector<T>& values, std::array<int64_t, D> shape, const Device& dev = {}) {
    return from_data(TensorData::from_vec<T>(values, Shape(detail::vec(shape))), dev);
  }
  // Braced lists: Tensor<B, 2>::from_values({1.0, 2.0, 3.0, 4.0}, {2, 2}).
  template <class T>
  static Tensor from_values(std::initializer_list<T> values, std::array<int64_t, D> shape, const Device& dev = {}) {
    return from_values(std::vector<T>(values), shape, dev);
  }
  static Tensor full(std::array<int64_t, D> shape, double value, const Device& dev = {}) {
    Shape s(detail::vec(shape));
    check_dims("full", s);
    return Tensor(B::template full<K>(s, value, dev));
  }
  static Tensor zeros(std::array<int64_t, D> shape, const Device& dev = {}) { return full(shape, 0.0, dev); }
  static Tensor ones(std::array<int64_t, D> shape, const Device& dev = {}) { return full(shape, 1.0, dev); }
  Tensor zeros_like() const { return Tensor(B::template full<K>(shape(), 0.0, device())); }
  Tensor ones_like() const { return Tensor(B::template full<K>(shape(), 1.0, device())); }
  Tensor full_like(double v) const { return Tensor(B::template full<K>(shape(), v, device())); }

  // Seeded random values; `rng` defaults to the process-wide generator (ember::seed).
  static Tensor random(std::array<int64_t, D> shape, const Distribution& dist, Rng& rng, const Device& dev = {}) {
    Shape s(detail::vec(shape));
    check_dims("random", s);
    return Tensor(backend_draw<B, K>(s, dist, rng, dev));  // host_random.hpp: the host's values on every path
  }
  static Tensor random(std::array<int64_t, D> shape, const Distribution& dist, const Device& dev = {}) {
    std::lock_guard lock(global_rng().mu);
    return random(shape, dist, global_rng().rng, dev);
  }
  // [start, end) with step 1 (Int, rank 1).
  static Tensor arange(int64_t start, int64_t end, const Device& dev = {})
    requires(is_int && D == 1)
  {
    if (end < start) throw ArgumentError("arange: end " + std::to_string(end) + " < start " + std::to_string(start));
    return Tensor(B::int_arange(start, end, dev));
  }
  // n x n identity.
  static Tensor eye(int64_t n, const Device& dev = {})
    requires(D == 2)
  {
    auto r = Tensor<B, 1, Int>::arange(0, n, dev);
    auto m = r.reshape(std::array<int64_t, 2>{n, 1}).eq(r.reshape(std::array<int64_t, 2>{1, n}));
    if constexpr (is_bool) return m;
    else return Tensor(B::template cast<Bool, K>(m.primitive()));
  }

  TensorData into_data() const { return B::template into_data<K>(p_); }
  template <class T>
  std::vector<T> to_vec() const {
    return into_data().template to_vec<T>();
  }
  // The single value of a one-element tensor.
  double item() const {
    if (numel() != 1) throw ShapeError("item: tensor of shape " + shape().to_string() + " is not one element");
    return into_data().template get<double>(0);
  }

  Shape shape() const { return B::template shape<K>(p_); }
  std::array<int64_t, D> dims() const {
    std::array<int64_t, D> a;
    const Shape s = shape();
    for (std::size_t i = 0; i < D; ++i) a[i] = s[i];
    return a;
  }
  int64_t dim(int64_t i) const { return shape()[wrap_dim("dim", i, D)]; }
  int64_t numel() const { return shape().num_elements(); }
  Device device() const { return B::template device<K>(p_); }
  Tensor to_device(const Device& dev) const { return Tensor(B::template to_device<K>(p_, dev)); }

  // ---------------------------------------------------------------- casts between kinds
  Tensor<B, D, Float> to_float() const { return Tensor<B, D, Float>(cast_to<Float>()); }
  Tensor<B, D, Int> to_int() const { return Tensor<B, D, Int>(cast_to<Int>()); }
  Tensor<B, D, Bool> to_bool() const { return Tensor<B, D, Bool>(cast_to<Bool>()); }

  // ---------------------------------------------------------------- arithmetic (Float and Int)
  Tensor add(const Tensor& o) const requires(!is_bool) { return binary(o, BinaryOp::Add, "add"); }
  Tensor sub(const Tensor& o) const requires(!is_bool) { return binary(o, BinaryOp::Sub, "sub"); }
  Tensor mul(const Tensor& o) const requires(!is_bool) { return binary(o, BinaryOp::Mul, "mul"); }
  Tensor div(const Tensor& o) const requires(!is_bool) { return binary(o, BinaryOp::Div, "div"); }
  Tensor pow(const Tensor& o) const requires(!is_bool) { return binary(o, BinaryOp::Pow, "pow"); }
  Tensor maximum(const Tensor& o) const requires(!is_bool) { return binary(o, BinaryOp::Max, "maximum"); }
  Tensor minimum(const Tensor& o) const requires(!is_bool) { return binary(o, BinaryOp::Min, "minimum"); }
  // torch.remainder: a - floor(a / b) * b, the sign of b; Int division by zero throws ArgumentError like div.
  Tensor remainder(const Tensor& o) const requires(!is_bool) { return binary(o, BinaryOp::Remainder, "remainder"); }
  Tensor add_scalar(double s) const requires(!is_bool) { return scalar(ScalarOp::Add, s); }
  Tensor sub_scalar(double s) const requires(!is_bool) { return scalar(ScalarOp::Sub, s); }
  Tensor mul_scalar(double s) const requires(!is_bool) { return scalar(ScalarOp::Mul, s); }
  Tensor div_scalar(double s) const requires(!is_bool) { return scalar(ScalarOp::Div, s); }
  Tensor pow_scalar(double s) const requires(!is_bool) { return scalar(ScalarOp::Pow, s); }
  Tensor rsub_scalar(double s) const requires(!is_bool) { return scalar(ScalarOp::RSub, s); }
  Tensor rdiv_scalar(double s) const requires(!is_bool) { return scalar(ScalarOp::RDiv, s); }
  Tensor remainder_scalar(double s) const requires(!is_bool) { return scalar(ScalarOp::Remainder, s); }
  Tensor clamp_min(double lo) const requires(!is_bool) { return scalar(ScalarOp::ClampMin, lo); }
  Tensor clamp_max(double hi) const requires(!is_bool) { return scalar(ScalarOp::ClampMax, hi); }
  Tensor clamp(double lo, double hi) const requires(!is_bool) {
    if (lo > hi) throw ArgumentError("clamp: min " + std::to_string(lo) + " > max " + std::to_string(hi));
    return clamp_min(lo).clamp_max(hi);
  }
  Tensor neg() const requires(!is_bool) { return unary(UnaryOp::Neg); }
  Tensor abs() const requires(!is_bool) { return unary(UnaryOp::Abs); }
  Tensor sign() const requires(!is_bool) { return unary(UnaryOp::Sign); }

  // ---------------------------------------------------------------- float math
  Tensor exp() const requires is_float { return unary(UnaryOp::Exp); }
  Tensor log() const requires is_float { return unary(UnaryOp::Log); }
  Tensor log1p() const requires is_float { return unary(UnaryOp::Log1p); }
  Tensor sqrt() const requires is_float { return unary(UnaryOp::Sqrt); }
  Tensor sin() const requires is_float { return unary(UnaryOp::Sin); }
  Tensor cos() const requires is_float { return unary(UnaryOp::Cos); }
  Tensor tanh() const requires is_float { return unary(UnaryOp::Tanh); }
  Tensor sigmoid() const requires is_float { return unary(UnaryOp::Sigmoid); }
  Tensor erf() const requires is_float { return unary(UnaryOp::Erf); }
  Tensor recip() const requires is_float { return unary(UnaryOp::Recip); }
  Tensor floor() const requires is_float { return unary(UnaryOp::Floor); }
  Tensor ceil() const requires is_float { return unary(UnaryOp::Ceil); }
  Tensor round() const requires is_float { return unary(UnaryOp::Round); }
  Tensor relu() const requires is_float { return unary(UnaryOp::Relu); }
  Tensor gelu(bool tanh_approximation = false) const requires is_float {
    return unary(tanh_approximation ? UnaryOp::GeluTanh : UnaryOp::Gelu);
  }
  Tensor asin() const requires is_float { return unary(UnaryOp::Asin); }
  Tensor acos() const requires is_float { return unary(UnaryOp::Acos); }
  Tensor atan() const requires is_float { return unary(UnaryOp::Atan); }
  Tensor sinh() const requires is_float { return unary(UnaryOp::Sinh); }
  Tensor cosh() const requires is_float { return unary(UnaryOp::Cosh); }
  Tensor asinh() const requires is_float { return unary(UnaryOp::Asinh); }
  Tensor acosh() const requires is_float { return unary(UnaryOp::Acosh); }
  Tensor atanh() const requires is_float { return unary(UnaryOp::Atanh); }
  // atan(self / o) in the quadrant of (o, self), NumPy broadcasting (torch.atan2(self, o)).
  Tensor atan2(const Tensor& o) const requires is_float { return binary(o, BinaryOp::Atan2, "atan2"); }
  Tensor<B, D, Bool> isnan() const requires is_float { return predicate(PredicateOp::IsNan); }
  Tensor<B, D, Bool> isinf() const requires is_float { return predicate(PredicateOp::IsInf); }
  Tensor matmul(const Tensor& o) const requires is_float {
    checks::matmul(shape(), o.shape());
    return Tensor(B::float_matmul(p_, o.p_));
  }

  // ---------------------------------------------------------------- comparisons (Float and Int) and logic
  Tensor<B, D, Bool> eq(const Tensor& o) const { return compare(o, CompareOp::Eq, "eq"); }
  Tensor<B, D, Bool> ne(const Tensor& o) const { return compare(o, CompareOp::Ne, "ne"); }
  Tensor<B, D, Bool> lt(const Tensor& o) const requires(!is_bool) { return compare(o, CompareOp::Lt, "lt"); }
  Tensor<B, D, Bool> le(const Tensor& o) const requires(!is_bool) { return compare(o, CompareOp::Le, "le"); }
  Tensor<B, D, Bool> gt(const Tensor& o) const requires(!is_bool) { return compare(o, CompareOp::Gt, "gt"); }
  Tensor<B, D, Bool> ge(const Tensor& o) const requires(!is_bool) { return compare(o, CompareOp::Ge, "ge"); }
  Tensor<B, D, Bool> eq(double s) const requires(!is_bool) { return compare_scalar(CompareOp::Eq, s); }
  Tensor<B, D, Bool> ne(double s) const requires(!is_bool) { return compare_scalar(CompareOp::Ne, s); }
  Tensor<B, D, Bool> lt(double s) const requires(!is_bool) { return compare_scalar(CompareOp::Lt, s); }
  Tensor<B, D, Bool> le(double s) const requires(!is_bool) { return compare_scalar(CompareOp::Le, s); }
  Tensor<B, D, Bool> gt(double s) const requires(!is_bool) { return compare_scalar(CompareOp::Gt, s); }
  Tensor<B, D, Bool> ge(double s) const requires(!is_bool) { return compare_scalar(CompareOp::Ge, s); }

  Tensor logical_and(const Tensor& o) const requires is_bool { return logic(o, LogicOp::And, "logical_and"); }
  Tensor logical_or(const Tensor& o) const requires is_bool { return logic(o, LogicOp::Or, "logical_or"); }
  Tensor logical_xor(const Tensor& o) const requires is_bool { return logic(o, LogicOp::Xor, "logical_xor"); }
  Tensor logical_not() const requires is_bool { return Tensor(B::bool_not(p_)); }
  Tensor<B, 1, Bool> any() const requires is_bool { return to_int().sum().gt(0.0); }
  Tensor<B, 1, Bool> all() const requires is_bool { return to_int().sum().eq(static_cast<double>(numel())); }
  Tensor any_dim(int64_t d) const requires is_bool { return to_int().sum_dim(d).gt(0.0); }
  Tensor all_dim(int64_t d) const requires is_bool { return to_int().sum_dim(d).eq(static_cast<double>(dim(d))); }
  // Number of true elements (Int, shape [1]).
  Tensor<B, 1, Int> count() const requires is_bool { return to_int().sum(); }

  // Elementwise select: where mask is true take `value`, else this (Burn's mask_where). Broadcasts.
  Tensor mask_where(const Tensor<B, D, Bool>& mask, const Tensor& value) const {
    broadcast_to_self("mask_where", broadcast_shapes("mask_where", mask.shape(), value.shape()));
    return Tensor(B::template where<K>(mask.primitive(), value.p_, p_));
  }
  Tensor mask_fill(const Tensor<B, D, Bool>& mask, double value) const {
    broadcast_to_self("mask_fill", mask.shape());
    return Tensor(B::template mask_fill<K>(p_, mask.primitive(), value));
  }

  // ---------------------------------------------------------------- reductions
  // Over all elements: shape [1]. Over one dim: that dim kept with size 1 (use squeeze to drop it).
  Tensor<B, 1, K> sum() const requires(!is_bool) { return reduce_all(ReduceOp::Sum, "sum"); }
  Tensor<B, 1, K> mean() const requires(!is_bool) { return reduce_all(ReduceOp::Mean, "mean"); }
  Tensor<B, 1, K> prod() const requires(!is_bool) { return reduce_all(ReduceOp::Prod, "prod"); }
  Tensor<B, 1, K> max() const requires(!is_bool) { return reduce_all(ReduceOp::Max, "max"); }
  Tensor<B, 1, K> min() const requires(!is_bool) { return reduce_all(ReduceOp::Min, "min"); }
  Tensor sum_dim(int64_t d) const requires(!is_bool) { return reduce(ReduceOp::Sum, d, "sum_dim"); }
  Tensor mean_dim(int64_t d) const requires(!is_bool) { return reduce(ReduceOp::Mean, d, "mean_dim"); }
  Tensor prod_dim(int64_t d) const requires(!is_bool) { return reduce(ReduceOp::Prod, d, "prod_dim"); }
  Tensor max_dim(int64_t d) const requires(!is_bool) { return reduce(ReduceOp::Max, d, "max_dim"); }
  Tensor min_dim(int64_t d) const requires(!is_bool) { return reduce(ReduceOp::Min, d, "min_dim"); }
  Tensor<B, D, Int> argmax(int64_t d) const requires(!is_bool) { return arg_reduce(ArgReduceOp::ArgMax, d, "argmax"); }
  Tensor<B, D, Int> argmin(int64_t d) const requires(!is_bool) { return arg_reduce(ArgReduceOp::ArgMin, d, "argmin"); }
  // Max along d with the index where it was found; the values are gathered at the argmax, so under autodiff the
  // gradient flows to exactly one element per row.
  std::pair<Tensor, Tensor<B, D, Int>> max_dim_with_indices(int64_t d) const requires is_float {
    auto idx = argmax(d);
    return {gather(d, idx), idx};
  }
  std::pair<Tensor, Tensor<B, D, Int>> min_dim_with_indices(int64_t d) const requires is_float {
    auto idx = argmin(d);
    return {gather(d, idx), idx};
  }
  // Variance along d (keepdim) with Bessel's correction `correction` (1 = unbiased, like torch.var).
  Tensor var(int64_t d, int64_t correction = 1) const requires is_float {
    const std::size_t w = wrap_dim("var", d, D);
    const int64_t n = shape()[w];
    const auto centered = sub(mean_dim(d));
    return centered.mul(centered).sum_dim(d).div_scalar(static_cast<double>(std::max<int64_t>(n - correction, 0)));
  }
  // exp(x - max) / sum: stable for large logits. The max is detached: softmax is invariant to the shift.
  Tensor softmax(int64_t d) const requires is_float {
    wrap_dim("softmax", d, D);
    const auto e = sub(max_dim(d).detach()).exp();
    return e.div(e.sum_dim(d));
  }
  Tensor log_softmax(int64_t d) const requires is_float {
    wrap_dim("log_softmax", d, D);
    const auto shifted = sub(max_dim(d).detach());
    return shifted.sub(shifted.exp().sum_dim(d).log());
  }

  // ---------------------------------------------------------------- sort, scan and masks (issue 13)
  // The indices that sort along d (torch.argsort). Every sort here is stable (ties keep their order) and counts NaN
  // as the largest value, like torch.sort; `stable` is accepted for torch's signature and changes nothing.
  Tensor<B, D, Int> argsort(int64_t d = -1, bool descending = false, bool /*stable*/ = false) const
    requires is_float
  {
    return Tensor<B, D, Int>(B::float_argsort(p_, wrap_dim("argsort", d, D), descending));
  }
  // Sorted values and their indices (torch.sort). The values are gathered at the indices, so under autodiff the
  // gradient is scattered back through them.
  std::pair<Tensor, Tensor<B, D, Int>> sort(int64_t d = -1, bool descending = false, bool stable = false) const
    requires is_float
  {
    auto idx = argsort(d, descending, stable);
    return {gather(d, idx), idx};
  }
  // The k largest (or smallest) values along d and their indices (torch.topk), always in sorted order, which is one
  // of the orders torch allows for sorted=false; NaN counts as the largest value.
  std::pair<Tensor, Tensor<B, D, Int>> topk(int64_t k, int64_t d = -1, bool largest = true,
                                            bool /*sorted*/ = true) const requires is_float {
    const std::size_t w = wrap_dim("topk", d, D);
    if (k < 0 || k > shape()[w])
      throw ArgumentError(fmt::format("topk: k = {} is out of range for dim {} of size {}", k, d, shape()[w]));
    auto idx = argsort(d, largest).narrow(static_cast<int64_t>(w), 0, k);
    return {gather(d, idx), idx};
  }
  // Running sum along d (torch.cumsum).
  Tensor cumsum(int64_t d) const requires is_float { return Tensor(B::float_cumsum(p_, wrap_dim("cumsum", d, D))); }
  // The lower (tril) or upper (triu) triangle of the last two dims, the rest zero: element (i, j) is kept when
  // j - i <= diagonal (tril) or j - i >= diagonal (triu), as torch.tril / torch.triu. Composed: an Int
  // [rows, cols] table of j - i compared once, broadcast over the leading dims by mask_fill.
  Tensor tril(int64_t diagonal = 0) const requires(D >= 2) { return keep_triangle(diagonal, CompareOp::Gt); }
  Tensor triu(int64_t diagonal = 0) const requires(D >= 2) { return keep_triangle(diagonal, CompareOp::Lt); }
  // The elements where mask (broadcast with this tensor) is true, in row-major order (torch.masked_select). The
  // result's size depends on the mask's values, so the mask is read back to the host once; the gather is an
  // index_select, whose gradient goes back to the selected elements.
  Tensor<B, 1, K> masked_select(const Tensor<B, D, Bool>& mask) const {
    const Shape s = broadcast_shapes("masked_select", shape(), mask.shape());
    std::array<int64_t, D> to{};
    for (std::size_t i = 0; i < D; ++i) to[i] = s[i];
    const int64_t n = s.num_elements();
    const auto flat = expand(to).template reshape<1>({n});
    const auto keep = mask.expand(to).template reshape<1>({n}).template to_vec<uint8_t>();
    std::vector<int64_t> at;
    for (int64_t i = 0; i < n; ++i)
      if (keep[static_cast<std::size_t>(i)]) at.push_back(i);
    const int64_t count = static_cast<int64_t>(at.size());
    return flat.index_select(0, Tensor<B, 1, Int>::from_values(at, {count}, device()));
  }
  // A new last dim of num_classes where element c of the vector for value c is 1 and the rest 0
  // (torch.nn.functional.one_hot). num_classes = -1 takes max + 1. A value outside [0, num_classes) is an error,
  // as in torch: the values are read back once to check them.
  Tensor<B, D + 1, Int> one_hot(int64_t num_classes = -1) const requires is_int {
    if (num_classes < -1) throw ArgumentError(fmt::format("one_hot: num_classes = {} is negative", num_classes));
    if (numel() == 0 && num_classes == -1)
      throw ArgumentError("one_hot: cannot infer the number of classes from an empty tensor");
    if (numel() > 0) {
      const auto lo = static_cast<int64_t>(min().item()), hi = static_cast<int64_t>(max().item());
      if (lo < 0) throw ArgumentError(fmt::format("one_hot: class values must be non-negative, found {}", lo));
      if (num_classes == -1) num_classes = hi + 1;
      if (hi >= num_classes)
        throw ArgumentError(fmt::format("one_hot: class value {} is out of range for {} classes", hi, num_classes));
    }
    std::array<int64_t, D + 1> cls{};
    cls.fill(1);
    cls[D] = num_classes;
    const auto classes = Tensor<B, 1, Int>::arange(0, num_classes, device()).template reshape<D + 1>(cls);
    return unsqueeze<D + 1>(static_cast<int64_t>(D)).eq(classes).to_int();
  }

  // ---------------------------------------------------------------- layout
  template <std::size_t D2>
  Tensor<B, D2, K> reshape(std::array<int64_t, D2> dims) const {
    const Shape s = checks::reshape("reshape", shape(), detail::vec(dims));
    return Tensor<B, D2, K>(B::template reshape<K>(p_, s));
  }
  // Merges dims [start, end] into one.
  template <std::size_t D2>
  Tensor<B, D2, K> flatten(int64_t start, int64_t end) const {
    const std::size_t s = wrap_dim("flatten", start, D), e = wrap_dim("flatten", end, D);
    if (s > e || D - (e - s) != D2)
      throw ShapeError("flatten: dims " + std::to_string(start) + ".." + std::to_string(end) + " of rank " +
                       std::to_string(D) + " do not give rank " + std::to_string(D2));
    Shape from = shape(), to;
    for (std::size_t i = 0; i < D; ++i) {
      if (i <= s || i > e) to.dims.push_back(from[i]);
      else to.dims.back() *= from[i];
    }
    return Tensor<B, D2, K>(B::template reshape<K>(p_, to));
  }
  template <std::size_t D2>
  Tensor<B, D2, K> squeeze(int64_t d) const {
    static_assert(D2 + 1 == D, "squeeze removes one dim");
    const std::size_t w = wrap_dim("squeeze", d, D);
    Shape s = shape();
    if (s[w] != 1) throw ShapeError("squeeze: dim " + std::to_string(d) + " of " + s.to_string() + " is not 1");
    s.dims.erase(s.dims.begin() + static_cast<std::ptrdiff_t>(w));
    return Tensor<B, D2, K>(B::template reshape<K>(p_, s));
  }
  template <std::size_t D2>
  Tensor<B, D2, K> unsqueeze(int64_t d) const {
    static_assert(D2 == D + 1, "unsqueeze adds one dim");
    const std::size_t w = wrap_dim("unsqueeze", d, D + 1);
    Shape s = shape();
    s.dims.insert(s.dims.begin() + static_cast<std::ptrdiff_t>(w), 1);
    return Tensor<B, D2, K>(B::template reshape<K>(p_, s));
  }
  Tensor permute(std::array<int64_t, D> axes) const {
    return Tensor(B::template permute<K>(p_, checks::permutation("permute", detail::vec(axes), D)));
  }
  Tensor swap_dims(int64_t a, int64_t b) const {
    std::array<int64_t, D> axes;
    for (std::size_t i = 0; i < D; ++i) axes[i] = static_cast<int64_t>(i);
    std::swap(axes[wrap_dim("swap_dims", a, D)], axes[wrap_dim("swap_dims", b, D)]);
    return permute(axes);
  }
  // Swaps the last two dims.
  Tensor transpose() const requires(D >= 2) { return swap_dims(-2, -1); }
  // Broadcasts to `dims` (-1 keeps a dim), NumPy rules; the result is materialized.
  template <std::size_t D2>
  Tensor<B, D2, K> expand(std::array<int64_t, D2> dims) const {
    static_assert(D2 >= D, "expand cannot lower the rank");
    const Shape from = shape();
    Shape to(detail::vec(dims));
    for (std::size_t i = 0; i < D2; ++i) {
      const bool has = i >= D2 - D;
      const int64_t f = has ? from[i - (D2 - D)] : 1;
      if (to[i] == -1) {
        if (!has) throw ShapeError("expand: -1 for a new leading dim in " + to.to_string());
        to[i] = f;
      }
      if (to[i] < 0) throw ShapeError("expand: negative dim in " + to.to_string());
      if (f != to[i] && f != 1)
        throw ShapeError("expand: cannot broadcast " + from.to_string() + " to " + to.to_string());
    }
    check_dims("expand", to);
    return Tensor<B, D2, K>(B::template expand<K>(p_, to));
  }
  // Tiles the tensor `times[i]` times along each dim (torch.Tensor.repeat), via unsqueeze + expand + reshape.
  Tensor repeat(std::array<int64_t, D> times) const {
    Tensor out = *this;
    for (std::size_t i = 0; i < D; ++i) {
      if (times[i] < 0) throw ArgumentError("repeat: negative count " + std::to_string(times[i]));
      if (times[i] != 1) out = out.repeat_dim(static_cast<int64_t>(i), times[i]);
    }
    return out;
  }
  Tensor repeat_dim(int64_t d, int64_t times) const {
    const std::size_t w = wrap_dim("repeat_dim", d, D);
    if (times < 0) throw ArgumentError("repeat_dim: negative count " + std::to_string(times));
    Shape s = shape();
    Shape with_axis = s;  // [..., 1, s[w], ...]: the new axis goes before d so copies are laid out one after another
    with_axis.dims.insert(with_axis.dims.begin() + static_cast<std::ptrdiff_t>(w), 1);
    Shape expanded = with_axis;
    expanded[w] = times;
    Shape out = s;
    out[w] *= times;
    auto p = B::template reshape<K>(p_, with_axis);
    p = B::template expand<K>(p, expanded);
    return Tensor(B::template reshape<K>(p, out));
  }
  Tensor flip(const std::vector<int64_t>& dims_to_flip) const {
    std::vector<std::size_t> ds;
    for (auto d : dims_to_flip) {
      ds.push_back(wrap_dim("flip", d, D));
      if (std::count(ds.begin(), ds.end(), ds.back()) > 1)
        throw ArgumentError("flip: dim " + std::to_string(d) + " appears more than once");
    }
    return Tensor(B::template flip<K>(p_, ds));
  }
  // Python-style ranges, one per leading dim ({start, end}; end nullopt = to the end; negatives from the end).
  Tensor slice(const std::vector<checks::SliceArg>& ranges) const {
    return Tensor(B::template slice<K>(p_, checks::slice_ranges("slice", shape(), ranges)));
  }
  Tensor narrow(int64_t d, int64_t start, int64_t length) const {
    const std::size_t w = wrap_dim("narrow", d, D);
    const int64_t n = shape()[w];
    if (start < 0) start += n;
    if (start < 0 || length < 0 || start + length > n)
      throw IndexError("narrow: [" + std::to_string(start) + ", " + std::to_string(start + length) +
                       ") out of range for dim " + std::to_string(d) + " of shape " + shape().to_string());
    std::vector<Range> r;
    for (auto x : shape().dims) r.push_back({0, x});
    r[w] = {start, start + length};
    return Tensor(B::template slice<K>(p_, r));
  }
  Tensor slice_assign(const std::vector<checks::SliceArg>& ranges, const Tensor& values) const {
    auto r = checks::slice_ranges("slice_assign", shape(), ranges);
    const Shape want = checks::sliced_shape(r);
    if (!(values.shape() == want))
      throw ShapeError("slice_assign: values " + values.shape().to_string() + " do not match the slice " +
                       want.to_string() + " of " + shape().to_string());
    return Tensor(B::template slice_assign<K>(p_, r, values.p_));
  }
  static Tensor cat(const std::vector<Tensor>& xs, int64_t d) {
    const std::size_t w = wrap_dim("cat", d, D);
    std::vector<Shape> shapes;
    std::vector<Prim> ps;
    for (auto& x : xs) {
      shapes.push_back(x.shape());
      ps.push_back(x.p_);
    }
    checks::cat("cat", shapes, w);
    if (ps.size() == 1) return xs[0];
    return Tensor(B::template cat<K>(ps, w));
  }
  // Pieces of `size` along d (the last may be smaller).
  std::vector<Tensor> split(int64_t size, int64_t d) const {
    const std::size_t w = wrap_dim("split", d, D);
    if (size <= 0) throw ArgumentError("split: size must be positive, got " + std::to_string(size));
    std::vector<Tensor> out;
    const int64_t n = shape()[w];
    for (int64_t s = 0; s < n; s += size) out.push_back(narrow(static_cast<int64_t>(w), s, std::min(size, n - s)));
    return out;
  }
  // At most `chunks` pieces of equal size along d (torch.chunk).
  std::vector<Tensor> chunk(int64_t chunks, int64_t d) const {
    if (chunks <= 0) throw ArgumentError("chunk: chunks must be positive, got " + std::to_string(chunks));
    const int64_t n = shape()[wrap_dim("chunk", d, D)];
    return split(std::max<int64_t>(1, (n + chunks - 1) / chunks), d);
  }
  Tensor gather(int64_t d, const Tensor<B, D, Int>& indices) const requires(!is_bool) {
    const std::size_t w = wrap_dim("gather", d, D);
    checks::gather("gather", w, shape(), indices.shape());
    return Tensor(B::template gather<K>(w, p_, indices.primitive()));
  }
  // A copy with values added at `indices` along d (torch.scatter_add).
  Tensor scatter_add(int64_t d, const Tensor<B, D, Int>& indices, const Tensor& values) const requires(!is_bool) {
    const std::size_t w = wrap_dim("scatter_add", d, D);
    checks::gather("scatter_add", w, shape(), indices.shape());
    check_same_shape("scatter_add", indices.shape(), values.shape());
    return Tensor(B::template scatter_add<K>(w, p_, indices.primitive(), values.p_));
  }
  Tensor index_select(int64_t d, const Tensor<B, 1, Int>& indices) const {
    const std::size_t w = wrap_dim("index_select", d, D);
    return Tensor(B::template index_select<K>(p_, w, indices.primitive()));
  }
  // A copy with values added to the slices at `indices` along d (Burn's select_assign, torch.index_add).
  Tensor select_assign(int64_t d, const Tensor<B, 1, Int>& indices, const Tensor& values) const requires(!is_bool) {
    const std::size_t w = wrap_dim("select_assign", d, D);
    checks::index_select_add(shape(), w, indices.shape(), values.shape());
    return Tensor(B::template index_select_add<K>(p_, w, indices.primitive(), values.p_));
  }

  // ---------------------------------------------------------------- shape ops (engine/tensor/shape_ops.hpp)
  // torch.nn.functional.pad: (left, right) pairs from the last dim; see shape_ops::pad for the modes' ranks.
  Tensor pad(const std::vector<int64_t>& pads, PadMode mode = PadMode::Constant, double value = 0.0) const {
    return Tensor(shape_ops::pad<B, K>(p_, pads, mode, value));
  }
  // x[start:end:step, ...] per leading dim (step > 0).
  Tensor slice_step(const std::vector<StepSlice>& slices) const {
    return Tensor(shape_ops::slice_step<B, K>(p_, slices));
  }
  // log(sum(exp(x))) over d (or dims; empty = all), kept with size 1 like sum_dim; numerically stable.
  Tensor logsumexp(int64_t d) const requires is_float { return logsumexp(std::vector<int64_t>{d}); }
  Tensor logsumexp(const std::vector<int64_t>& dims) const requires is_float {
    return Tensor(shape_ops::logsumexp<B>(p_, dims));
  }
  // Standard deviation over d (or dims; empty = all), kept with size 1; correction 1 = unbiased (torch.std).
  Tensor std(int64_t d, double correction = 1) const requires is_float {
    return std(std::vector<int64_t>{d}, correction);
  }
  Tensor std(const std::vector<int64_t>& dims, double correction = 1) const requires is_float {
    return Tensor(shape_ops::std_dev<B>(p_, dims, correction));
  }
  // beta * self + alpha * (batch1 @ batch2) (torch.baddbmm); self broadcasts to [b, n, p].
  Tensor baddbmm(const Tensor& batch1, const Tensor& batch2, double beta = 1, double alpha = 1) const
    requires(is_float && D == 3)
  {
    return Tensor(shape_ops::baddbmm<B>(p_, batch1.p_, batch2.p_, beta, alpha));
  }

  // ---------------------------------------------------------------- autodiff
  // On a non-autodiff backend these are no-ops, so generic code can call them.
  Tensor require_grad(bool on = true) const requires is_float {
    if constexpr (detail::HasGradTracking<B>) return Tensor(B::float_require_grad(p_, on));
    else return *this;
  }
  bool is_require_grad() const requires is_float {
    if constexpr (detail::HasGradTracking<B>) return B::float_is_require_grad(p_);
    else return false;
  }
  Tensor detach() const requires is_float {
    if constexpr (detail::HasGradTracking<B>) return Tensor(B::float_detach(p_));
    else return *this;
  }
  auto backward() const requires(is_float && detail::HasGradTracking<B>) { return B::backward(p_); }
  // Gradient of this tensor in `grads`, on the inner backend.
  template <class G>
  std::optional<Tensor<Inner, D>> grad(const G& grads) const requires(is_float && detail::HasGradTracking<B>) {
    auto g = B::grad(p_, grads);
    if (!g) return std::nullopt;
    return Tensor<Inner, D>(std::move(*g));
  }
  template <class G>
  std::optional<Tensor<Inner, D>> grad_remove(G& grads) const requires(is_float && detail::HasGradTracking<B>) {
    auto g = B::grad_remove(p_, grads);
    if (!g) return std::nullopt;
    return Tensor<Inner, D>(std::move(*g));
  }
  Tensor<Inner, D> inner() const requires(is_float && detail::HasGradTracking<B>) {
    return Tensor<Inner, D>(B::inner(p_));
  }
  static Tensor from_inner(const Tensor<Inner, D>& t) requires(is_float && detail::HasGradTracking<B>) {
    return Tensor(B::from_inner(t.primitive()));
  }

 private:
  template <TensorKind K2>
  Primitive<B, K2> cast_to() const {
    if constexpr (std::is_same_v<K, K2>) return p_;
    else return B::template cast<K, K2>(p_);
  }
  Tensor unary(UnaryOp op) const {
    if constexpr (is_float) return Tensor(B::float_unary(p_, op));
    else return Tensor(B::int_unary(p_, op));
  }
  Tensor scalar(ScalarOp op, double s) const {
    if constexpr (is_float) return Tensor(B::float_scalar(p_, op, s));
    else return Tensor(B::int_scalar(p_, op, s));
  }
  Tensor<B, D, Bool> predicate(PredicateOp op) const { return Tensor<B, D, Bool>(B::float_predicate(p_, op)); }
  Tensor binary(const Tensor& o, BinaryOp op, const char* name) const {
    broadcast_shapes(name, shape(), o.shape());
    if constexpr (is_float) return Tensor(B::float_binary(p_, o.p_, op));
    else return Tensor(B::int_binary(p_, o.p_, op));
  }
  Tensor<B, D, Bool> compare(const Tensor& o, CompareOp op, const char* name) const {
    broadcast_shapes(name, shape(), o.shape());
    if constexpr (is_float) return Tensor<B, D, Bool>(B::float_compare(p_, o.p_, op));
    else if constexpr (is_int) return Tensor<B, D, Bool>(B::int_compare(p_, o.p_, op));
    else return Tensor<B, D, Bool>(op == CompareOp::Eq ? B::bool_not(B::bool_logic(p_, o.p_, LogicOp::Xor))
                                                       : B::bool_logic(p_, o.p_, LogicOp::Xor));
  }
  Tensor<B, D, Bool> compare_scalar(CompareOp op, double s) const {
    if constexpr (is_float) return Tensor<B, D, Bool>(B::float_compare_scalar(p_, op, s));
    else return Tensor<B, D, Bool>(B::int_compare_scalar(p_, op, s));
  }
  Tensor logic(const Tensor& o, LogicOp op, const char* name) const {
    broadcast_shapes(name, shape(), o.shape());
    return Tensor(B::bool_logic(p_, o.p_, op));
  }
  Tensor<B, 1, K> reduce_all(ReduceOp op, const char* name) const {
    if (op == ReduceOp::Max || op == ReduceOp::Min) checks::nonempty(name, shape());
    if constexpr (is_float) return Tensor<B, 1, K>(B::float_reduce_all(p_, op));
    else return Tensor<B, 1, K>(B::int_reduce_all(p_, op));
  }
  Tensor reduce(ReduceOp op, int64_t d, const char* name) const {
    const std::size_t w = wrap_dim(name, d, D);
    if (op == ReduceOp::Max || op == ReduceOp::Min) checks::nonempty(name, shape(), w);
    if constexpr (is_float) return Tensor(B::float_reduce(p_, op, w));
    else return Tensor(B::int_reduce(p_, op, w));
  }
  Tensor<B, D, Int> arg_reduce(ArgReduceOp op, int64_t d, const char* name) const {
    const std::size_t w = wrap_dim(name, d, D);
    checks::nonempty(name, shape(), w);
    if constexpr (is_float) return Tensor<B, D, Int>(B::float_arg_reduce(p_, op, w));
    else return Tensor<B, D, Int>(B::int_arg_reduce(p_, op, w));
  }
  // tril / triu: zero where (j - i) `drop` diagonal, i.e. Gt for tril and Lt for triu.
  Tensor keep_triangle(int64_t diagonal, CompareOp drop) const {
    const int64_t rows = shape()[D - 2], cols = shape()[D - 1];
    const auto i = Tensor<B, 1, Int>::arange(0, rows, device()).template reshape<2>({rows, 1});
    const auto j = Tensor<B, 1, Int>::arange(0, cols, device()).template reshape<2>({1, cols});
    const auto offset = j.sub(i);  // [rows, cols] by broadcasting
    auto dropped = drop == CompareOp::Gt ? offset.gt(static_cast<double>(diagonal))
                                         : offset.lt(static_cast<double>(diagonal));
    std::array<int64_t, D> ms{};
    ms.fill(1);
    ms[D - 2] = rows;
    ms[D - 1] = cols;
    return mask_fill(dropped.template reshape<D>(ms), 0.0);
  }
  void broadcast_to_self(const char* name, const Shape& other) const {
    if (!(broadcast_shapes(name, shape(), other) == shape()))
      throw ShapeError(std::string(name) + ": " + other.to_string() + " does not broadcast to " + shape().to_string());
  }

  Prim p_;
};

// ---------------------------------------------------------------- free functions and operators
template <Backend B, std::size_t D, TensorKind K>
Tensor<B, D, K> where(const Tensor<B, D, Bool>& cond, const Tensor<B, D, K>& a, const Tensor<B, D, K>& b) {
  broadcast_shapes("where", broadcast_shapes("where", cond.shape(), a.shape()), b.shape());
  return Tensor<B, D, K>(B::template where<K>(cond.primitive(), a.primitive(), b.primitive()));
}

// Stacks same-shape tensors along a new dim d.
template <Backend B, std::size_t D, TensorKind K>
Tensor<B, D + 1, K> stack(const std::vector<Tensor<B, D, K>>& xs, int64_t d) {
  if (xs.empty()) throw ArgumentError("stack: empty list of tensors");
  std::vector<Tensor<B, D + 1, K>> ys;
  for (auto& x : xs) {
    check_same_shape("stack", xs[0].shape(), x.shape());
    ys.push_back(x.template unsqueeze<D + 1>(d));
  }
  return Tensor<B, D + 1, K>::cat(ys, d);
}

template <Backend B, std::size_t D, TensorKind K>
Tensor<B, D, K> operator+(const Tensor<B, D, K>& a, const Tensor<B, D, K>& b) { return a.add(b); }
template <Backend B, std::size_t D, TensorKind K>
Tensor<B, D, K> operator-(const Tensor<B, D, K>& a, const Tensor<B, D, K>& b) { return a.sub(b); }
template <Backend B, std::size_t D, TensorKind K>
Tensor<B, D, K> operator*(const Tensor<B, D, K>& a, const Tensor<B, D, K>& b) { return a.mul(b); }
template <Backend B, std::size_t D, TensorKind K>
Tensor<B, D, K> operator/(const Tensor<B, D, K>& a, const Tensor<B, D, K>& b) { return a.div(b); }
template <Backend B, std::size_t D, TensorKind K>
Tensor<B, D, K> operator-(const Tensor<B, D, K>& a) { return a.neg(); }
template <Backend B, std::size_t D, TensorKind K>
Tensor<B, D, K> operator+(const Tensor<B, D, K>& a, double s) { return a.add_scalar(s); }
template <Backend B, std::size_t D, TensorKind K>
Tensor<B, D, K> operator-(const Tensor<B, D, K>& a, double s) { return a.sub_scalar(s); }
template <Backend B, std::size_t D, TensorKind K>
Tensor<B, D, K> operator*(const Tensor<B, D, K>& a, double s) { return a.mul_scalar(s); }
template <Backend B, std::size_t D, TensorKind K>
Tensor<B, D, K> operator/(const Tensor<B, D, K>& a, double s) { return a.div_scalar(s); }
template <Backend B, std::size_t D, TensorKind K>
Tensor<B, D, K> operator*(double s, const Tensor<B, D, K>& a) { return a.mul_scalar(s); }
template <Backend B, std::size_t D, TensorKind K>
Tensor<B, D, K> operator+(double s, const Tensor<B, D, K>& a) { return a.add_scalar(s); }
template <Backend B, std::size_t D, TensorKind K>
Tensor<B, D, K> operator-(double s, const Tensor<B, D, K>& a) { return a.rsub_scalar(s); }
template <Backend B, std::size_t D, TensorKind K>
Tensor<B, D, K> operator/(double s, const Tensor<B, D, K>& a) { return a.rdiv_scalar(s); }

}  // namespace ember
