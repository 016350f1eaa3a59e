#pragma once
// Capture<B>: decorates any backend B so that the ops a step issues can be recorded and replayed
// (engine/compile/README.md). Used under Autodiff (Autodiff<Capture<Cpu<float>>>), so the backward pass and the
// optimizer's update are B ops like the forward; under Fusion too (Autodiff<Fusion<Capture<Cpu<float>>>>), where
// each fused chain is one recorded op.
//
// Every primitive (float, int and bool: a batch's labels change per step too) is a shared handle on a Cell holding
// B's value. Each op runs B's op at once (eager: results are B's, bit for bit) and, while a Tape records on this
// thread (engine/compile/tape.hpp), appends a closure reading its input cells and rewriting its output cells. Host
// scalars an op takes are copied into its closure; the ones that change per step (Adam's lr and bias corrections)
// are read from a cell the compiled step refills. Random draws redraw from ember's global generator, in the same
// order. A read to the host refuses the capture (data-dependent control flow), except inside a host_check.
#include <fmt/format.h>

#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/backend/optional_ops.hpp"
#include "engine/compile/tape.hpp"
#include "engine/tensor/host_random.hpp"
#include "engine/tensor/random.hpp"

namespace ember {

// Capture's primitive of kind K: a shared handle on the cell holding B's value (copies share the cell).
template <class B, class K>
struct CaptureTensor {
  std::shared_ptr<compile_detail::Cell<Primitive<B, K>>> cell;
  const Primitive<B, K>& value() const { return *cell->v; }
};

template <Backend B>
struct Capture : B {
  using Eager = B;
  using Device = typename B::Device;
  using FloatElem = typename B::FloatElem;
  using IntElem = typename B::IntElem;
  using FloatPrimitive = CaptureTensor<B, Float>;
  using IntPrimitive = CaptureTensor<B, Int>;
  using BoolPrimitive = CaptureTensor<B, Bool>;
  using IFP = typename B::FloatPrimitive;
  using IIP = typename B::IntPrimitive;
  using IBP = typename B::BoolPrimitive;
  template <class K>
  using Prim = Primitive<Capture, K>;

  static const char* name() {
    static const std::string n = std::string("capture<") + B::name() + ">";
    return n.c_str();
  }

  // ---- cells
  template <class K>
  static Prim<K> wrap(Primitive<B, K> v) {
    auto c = std::make_shared<compile_detail::Cell<Primitive<B, K>>>();
    c->v = std::move(v);
    if (auto* t = tape()) t->cells.push_back(c);
    return {std::move(c)};
  }
  // The tape recording on this thread, if any; none inside a host_check, whose ops the check re-runs itself.
  static compile_detail::Tape* tape() {
    compile_detail::Tape* t = compile_detail::active_tape();
    return t && !t->reading_allowed() ? t : nullptr;
  }

 private:
  // What a recorded closure keeps of an operand, and what B's op is given at run time: a cell handle gives its
  // value, an optional handle (a nullable operand) a pointer, a list its values; anything else is a host value,
  // copied into the closure.
  template <class K>
  static const Primitive<B, K>& arg(const CaptureTensor<B, K>& x) {
    return x.value();
  }
  template <class K>
  static const Primitive<B, K>* arg(const std::optional<CaptureTensor<B, K>>& x) {
    return x ? &x->value() : nullptr;
  }
  template <class K>
  static std::vector<Primitive<B, K>> arg(const std::vector<CaptureTensor<B, K>>& xs) {
    std::vector<Primitive<B, K>> out;
    out.reserve(xs.size());
    for (const auto& x : xs) out.push_back(x.value());
    return out;
  }
  template <class T>
  static const T& arg(const T& x) {
    return x;
  }

  // Results: B's values become new cells; a replay stores into the same cells.
  template <class K>
  static CaptureTensor<B, K> out_of(Primitive<B, K> v) {
    return wrap<K>(std::move(v));
  }
  static FloatPrimitive out_float(IFP v) { return wrap<Float>(std::move(v)); }
  template <class K>
  static void store(const CaptureTensor<B, K>& c, Primitive<B, K> v) {
    c.cell->v = std::move(v);
  }

  // Runs f on the operands' values now and, while recording, appends the closure that reruns it into the same
  // output cell. `Out` is the kind of f's result.
  template <class Out, class F, class... A>
  static Prim<Out> rec(F f, A... a) {
    Prim<Out> out = wrap<Out>(f(arg(a)...));
    if (auto* t = tape()) t->ops.push_back([f, a..., out] { store<Out>(out, f(arg(a)...)); });
    return out;
  }
  template <class F, class... A>
  static FloatPrimitive recf(F f, A... a) {
    return rec<Float>(std::move(f), std::move(a)...);
  }
  static std::optional<FloatPrimitive> opt(const FloatPrimitive* x) {
    return x ? std::optional<FloatPrimitive>(*x) : std::nullopt;
  }

 public:
  // ---- creation and transfer. from_data and full are constants of the step: a replay reuses their values.
  template <class K>
  static Prim<K> from_data(const TensorData& d, const Device& dev) {
    return wrap<K>(B::template from_data<K>(d, dev));
  }
  template <class K>
  static TensorData into_data(const Prim<K>& x) {
    if (auto* t = tape()) {
      t->refuse(
          fmt::format("a {} tensor of shape {} was read to the host during the step (data-dependent: the "
                      "step runs eagerly)",
                      kind_name<K>(), B::template shape<K>(x.value()).to_string()));
    }
    return B::template into_data<K>(x.value());
  }
  template <class K>
  static Shape shape(const Prim<K>& x) {
    return B::template shape<K>(x.value());
  }
  template <class K>
  static Device device(const Prim<K>& x) {
    return B::template device<K>(x.value());
  }
  template <class K>
  static Prim<K> to_device(const Prim<K>& x, const Device& dev) {
    return rec<K>([](const auto& v, const Device& d) { return B::template to_device<K>(v, d); }, x, dev);
  }
  template <class K>
  static Prim<K> full(const Shape& s, double v, const Device& dev) {
    return wrap<K>(B::template full<K>(s, v, dev));
  }
  // A random draw (Tensor::random): a replay draws again from ember's global generator, in the step's order, so
  // a replayed dropout mask is the one an eager step would have drawn. A caller's own Rng is not replayed (the
  // compiled step would have to outlive it): the capture is refused.
  template <class K>
  static Prim<K> random_draw(const Shape& s, const Distribution& dist, Rng& rng, const Device& dev) {
    Prim<K> out = wrap<K>(draw<K>(s, dist, rng, dev));
    if (auto* t = tape()) {
      if (&rng != &global_rng().rng) {
        t->refuse("a random draw from a caller's Rng (only ember's global generator is replayed)");
      } else {
        t->random_ops.push_back(t->ops.size());
        t->ops.push_back([s, dist, dev, out] {
          std::lock_guard lock(global_rng().mu);
          store<K>(out, draw<K>(s, dist, global_rng().rng, dev));
        });
      }
    }
    return out;
  }

  // ---- layout and indexing, every kind
  template <class K>
  static Prim<K> reshape(const Prim<K>& x, const Shape& s) {
    return rec<K>([](const auto& v, const Shape& to) { return B::template reshape<K>(v, to); }, x, s);
  }
  template <class K>
  static Prim<K> permute(const Prim<K>& x, const std::vector<std::size_t>& axes) {
    return rec<K>([](const auto& v, const auto& a) { return B::template permute<K>(v, a); }, x, axes);
  }
  template <class K>
  static Prim<K> expand(const Prim<K>& x, const Shape& s) {
    return rec<K>([](const auto& v, const Shape& to) { return B::template expand<K>(v, to); }, x, s);
  }
  template <class K>
  static Prim<K> slice(const Prim<K>& x, const std::vector<Range>& r) {
    return rec<K>([](const auto& v, const auto& rr) { return B::template slice<K>(v, rr); }, x, r);
  }
  template <class K>
  static Prim<K> select(const Prim<K>& x, std::size_t dim, int64_t index,
                        Shape to) requires optional_ops::HasSelect<B> {
    return rec<K>(
        [](const auto& v, std::size_t d, int64_t i, const Shape& s) { return B::template select<K>(v, d, i, s); }, x,
        dim, index, std::move(to));
  }
  template <class K>
  static Prim<K> slice_assign(const Prim<K>& x, const std::vector<Range>& r, const Prim<K>& v) {
    return rec<K>([](const auto& a, const auto& rr, const auto& b) { return B::template slice_assign<K>(a, rr, b); }, x,
                  r, v);
  }
  template <class K>
  static Prim<K> cat(const std::vector<Prim<K>>& xs, std::size_t dim) {
    return rec<K>([](const auto& vs, std::size_t d) { return B::template cat<K>(vs, d); }, xs, dim);
  }
  template <class K>
  static Prim<K> flip(const Prim<K>& x, const std::vector<std::size_t>& dims) {
    return rec<K>([](const auto& v, const auto& d) { return B::template flip<K>(v, d); }, x, dims);
  }
  template <class K>
  static Prim<K> gather(std::size_t dim, const Prim<K>& x, const IntPrimitive& idx) {
    return rec<K>([](std::size_t d, const auto& v, const auto& i) { return B::template gather<K>(d, v, i); }, dim, x,
                  idx);
  }
  template <class K>
  static Prim<K> scatter_add(std::size_t dim, const Prim<K>& x, const IntPrimitive& idx, const Prim<K>& v) {
    return rec<K>([](std::size_t d, const auto& a, const auto& i,
                     const auto& b) { return B::template scatter_add<K>(d, a, i, b); },
                  dim, x, idx, v);
  }
  template <class K>
  static Prim<K> index_select(const Prim<K>& x, std::size_t dim, const IntPrimitive& idx) {
    return rec<K>([](const auto& v, std::size_t d, const auto& i) { return B::template index_select<K>(v, d, i); }, x,
                  dim, idx);
  }
  template <class K>
  static Prim<K> index_select_add(const Prim<K>& x, std::size_t dim, const IntPrimitive& idx, const Prim<K>& v) {
    return rec<K>([](const auto& a, std::size_t d, const auto& i,
                     const auto& b) { return B::template index_select_add<K>(a, d, i, b); },
                  x, dim, idx, v);
  }
  template <class K>
  static Prim<K> where(const BoolPrimitive& cond, const Prim<K>& a, const Prim<K>& b) {
    return rec<K>([](const auto& c, const auto& x, const auto& y) { return B::template where<K>(c, x, y); }, cond, a,
                  b);
  }
  template <class K>
  static Prim<K> mask_fill(const Prim<K>& x, const BoolPrimitive& mask, double v) {
    return rec<K>([](const auto& a, const auto& m, double s) { return B::template mask_fill<K>(a, m, s); }, x, mask, v);
  }
  template <class From, class To>
  static Prim<To> cast(const Prim<From>& x) {
    return rec<To>([](const auto& v) { return B::template cast<From, To>(v); }, x);
  }
  static IntPrimitive int_arange(int64_t start, int64_t end, const Device& dev) {
    return wrap<Int>(B::int_arange(start, end, dev));
  }

  // ---- float math
  static FloatPrimitive float_unary(const FloatPrimitive& x, UnaryOp op) {
    return recf([](const IFP& v, UnaryOp o) { return B::float_unary(v, o); }, x, op);
  }
  static FloatPrimitive float_scalar(const FloatPrimitive& x, ScalarOp op, double s) {
    return recf([](const IFP& v, ScalarOp o, double c) { return B::float_scalar(v, o, c); }, x, op, s);
  }
  static FloatPrimitive float_binary(const FloatPrimitive& a, const FloatPrimitive& b, BinaryOp op) {
    return recf([](const IFP& x, const IFP& y, BinaryOp o) { return B::float_binary(x, y, o); }, a, b, op);
  }
  static BoolPrimitive float_compare(const FloatPrimitive& a, const FloatPrimitive& b, CompareOp op) {
    return rec<Bool>([](const IFP& x, const IFP& y, CompareOp o) { return B::float_compare(x, y, o); }, a, b, op);
  }
  static BoolPrimitive float_compare_scalar(const FloatPrimitive& a, CompareOp op, double s) {
    return rec<Bool>([](const IFP& x, CompareOp o, double c) { return B::float_compare_scalar(x, o, c); }, a, op, s);
  }
  static BoolPrimitive float_predicate(const FloatPrimitive& x, PredicateOp op) {
    return rec<Bool>([](const IFP& v, PredicateOp o) { return B::float_predicate(v, o); }, x, op);
  }
  static FloatPrimitive float_reduce(const FloatPrimitive& x, ReduceOp op, std::size_t dim) {
    return recf([](const IFP& v, ReduceOp o, std::size_t d) { return B::float_reduce(v, o, d); }, x, op, dim);
  }
  static FloatPrimitive float_reduce_all(const FloatPrimitive& x, ReduceOp op) {
    return recf([](const IFP& v, ReduceOp o) { return B::float_reduce_all(v, o); }, x, op);
  }
  static IntPrimitive float_arg_reduce(const FloatPrimitive& x, ArgReduceOp op, std::size_t dim) {
    return rec<Int>([](const IFP& v, ArgReduceOp o, std::size_t d) { return B::float_arg_reduce(v, o, d); }, x, op,
                    dim);
  }
  static IntPrimitive float_argsort(const FloatPrimitive& x, std::size_t dim, bool descending) {
    return rec<Int>([](const IFP& v, std::size_t d, bool desc) { return B::float_argsort(v, d, desc); }, x, dim,
                    descending);
  }
  static FloatPrimitive float_cumsum(const FloatPrimitive& x, std::size_t dim) {
    return recf([](const IFP& v, std::size_t d) { return B::float_cumsum(v, d); }, x, dim);
  }
  static FloatPrimitive float_matmul(const FloatPrimitive& a, const FloatPrimitive& b) {
    return recf([](const IFP& x, const IFP& y) { return B::float_matmul(x, y); }, a, b);
  }
  static FloatPrimitive float_fft(const FloatPrimitive& x, FftOp op, int64_t n) {
    return recf([](const IFP& v, FftOp o, int64_t len) { return B::float_fft(v, o, len); }, x, op, n);
  }

  // ---- int and bool math
  static IntPrimitive int_unary(const IntPrimitive& x, UnaryOp op) {
    return rec<Int>([](const IIP& v, UnaryOp o) { return B::int_unary(v, o); }, x, op);
  }
  static IntPrimitive int_scalar(const IntPrimitive& x, ScalarOp op, double s) {
    return rec<Int>([](const IIP& v, ScalarOp o, double c) { return B::int_scalar(v, o, c); }, x, op, s);
  }
  static IntPrimitive int_binary(const IntPrimitive& a, const IntPrimitive& b, BinaryOp op) {
    return rec<Int>([](const IIP& x, const IIP& y, BinaryOp o) { return B::int_binary(x, y, o); }, a, b, op);
  }
  static BoolPrimitive int_compare(const IntPrimitive& a, const IntPrimitive& b, CompareOp op) {
    return rec<Bool>([](const IIP& x, const IIP& y, CompareOp o) { return B::int_compare(x, y, o); }, a, b, op);
  }
  static BoolPrimitive int_compare_scalar(const IntPrimitive& a, CompareOp op, double s) {
    return rec<Bool>([](const IIP& x, CompareOp o, double c) { return B::int_compare_scalar(x, o, c); }, a, op, s);
  }
  static IntPrimitive int_reduce(const IntPrimitive& x, ReduceOp op, std::size_t dim) {
    return rec<Int>([](const IIP& v, ReduceOp o, std::size_t d) { return B::int_reduce(v, o, d); }, x, op, dim);
  }
  static IntPrimitive int_reduce_all(const IntPrimitive& x, ReduceOp op) {
    return rec<Int>([](const IIP& v, ReduceOp o) { return B::int_reduce_all(v, o); }, x, op);
  }
  static IntPrimitive int_arg_reduce(const IntPrimitive& x, ArgReduceOp op, std::size_t dim) {
    return rec<Int>([](const IIP& v, ArgReduceOp o, std::size_t d) { return B::int_arg_reduce(v, o, d); }, x, op, dim);
  }
  static BoolPrimitive bool_not(const BoolPrimitive& x) {
    return rec<Bool>([](const IBP& v) { return B::bool_not(v); }, x);
  }
  static BoolPrimitive bool_logic(const BoolPrimitive& a, const BoolPrimitive& b, LogicOp op) {
    return rec<Bool>([](const IBP& x, const IBP& y, LogicOp o) { return B::bool_logic(x, y, o); }, a, b, op);
  }

  // ---- B's optional ops that training uses, where B has them (the same kernels as eager, so the same bits).
  static std::optional<FloatPrimitive> float_unary_backward(UnaryOp op, const FloatPrimitive& x,
                                                            const FloatPrimitive& y, const FloatPrimitive& g) requires
      optional_ops::HasFusedUnaryBackward<B> {
    // Whether B has a fused step for `op` does not depend on the values: a replay takes the same branch.
    auto r = B::float_unary_backward(op, x.value(), y.value(), g.value());
    if (!r) return std::nullopt;
    FloatPrimitive out = out_float(std::move(*r));
    if (auto* t = tape())
      t->ops.push_back(
          [op, x, y, g, out] { store<Float>(out, *B::float_unary_backward(op, x.value(), y.value(), g.value())); });
    return out;
  }
  static FloatPrimitive float_matmul_transposed(const FloatPrimitive& a, const FloatPrimitive& b, bool ta,
                                                bool tb) requires optional_ops::HasMatmulTransposed<B> {
    return recf([](const IFP& x, const IFP& y, bool t1, bool t2) { return B::float_matmul_transposed(x, y, t1, t2); },
                a, b, ta, tb);
  }
  static FloatPrimitive float_linear(const FloatPrimitive& x, const FloatPrimitive& w,
                                     const FloatPrimitive* bias) requires optional_ops::HasFusedLinear<B> {
    return recf([](const IFP& a, const IFP& b, const IFP* c) { return B::float_linear(a, b, c); }, x, w, opt(bias));
  }
  static FloatPrimitive float_linear_act(const FloatPrimitive& x, const FloatPrimitive& w, const FloatPrimitive* bias,
                                         bool trans_w,
                                         LinearActivation act) requires optional_ops::HasFusedLinearAct<B> {
    return recf([](const IFP& a, const IFP& b, const IFP* c, bool t,
                   LinearActivation f) { return B::float_linear_act(a, b, c, t, f); },
                x, w, opt(bias), trans_w, act);
  }
  // Fused attention and LayerNorm (the transformer's step). Whether B answers a size at all (the packed kernels'
  // nullopt) depends on shapes only, which a signature fixes: a replay takes the captured branch.
  static SdpaForward<FloatPrimitive> float_sdpa(const FloatPrimitive& q, const FloatPrimitive& k,
                                                const FloatPrimitive& v, const FloatPrimitive* bias,
                                                const SdpaOptions& o) requires optional_ops::HasFusedSdpa<B> {
    const auto ob = opt(bias);
    auto r = B::float_sdpa(q.value(), k.value(), v.value(), arg(ob), o);
    SdpaForward<FloatPrimitive> out{out_float(std::move(r.out)), out_float(std::move(r.lse))};
    if (auto* t = tape()) {
      t->ops.push_back([q, k, v, ob, o, out] {
        auto n = B::float_sdpa(q.value(), k.value(), v.value(), arg(ob), o);
        store<Float>(out.out, std::move(n.out));
        store<Float>(out.lse, std::move(n.lse));
      });
    }
    return out;
  }
  static SdpaGrads<FloatPrimitive> float_sdpa_backward(const FloatPrimitive& q, const FloatPrimitive& k,
                                                       const FloatPrimitive& v, const FloatPrimitive* bias,
                                                       const FloatPrimitive& y, const FloatPrimitive& lse,
                                                       const FloatPrimitive& g,
                                                       const SdpaOptions& o) requires optional_ops::HasFusedSdpa<B> {
    const auto ob = opt(bias);
    auto r = B::float_sdpa_backward(q.value(), k.value(), v.value(), arg(ob), y.value(), lse.value(), g.value(), o);
    SdpaGrads<FloatPrimitive> out{out_float(std::move(r.q)), out_float(std::move(r.k)), out_float(std::move(r.v)),
                                  std::nullopt};
    if (r.bias) out.bias = out_float(std::move(*r.bias));
    if (auto* t = tape()) {
      t->ops.push_back([q, k, v, ob, y, lse, g, o, out] {
        auto n = B::float_sdpa_backward(q.value(), k.value(), v.value(), arg(ob), y.value(), lse.value(), g.value(), o);
        store<Float>(out.q, std::move(n.q));
        store<Float>(out.k, std::move(n.k));
        store<Float>(out.v, std::move(n.v));
        if (out.bias) store<Float>(*out.bias, std::move(*n.bias));
      });
    }
    return out;
  }
  static std::optional<SdpaForward<FloatPrimitive>> float_sdpa_packed(
      const FloatPrimitive& qkv, int64_t heads, const SdpaOptions& o) requires optional_ops::HasPackedSdpa<B> {
    auto r = B::float_sdpa_packed(qkv.value(), heads, o);
    if (!r) return std::nullopt;
    SdpaForward<FloatPrimitive> out{out_float(std::move(r->out)), out_float(std::move(r->lse))};
    if (auto* t = tape()) {
      t->ops.push_back([qkv, heads, o, out] {
        auto n = B::float_sdpa_packed(qkv.value(), heads, o);
        store<Float>(out.out, std::move(n->out));
        store<Float>(out.lse, std::move(n->lse));
      });
    }
    return out;
  }
  static std::optional<FloatPrimitive> float_sdpa_packed_backward(
      const FloatPrimitive& qkv, const FloatPrimitive& y, const FloatPrimitive& lse, const FloatPrimitive& g,
      int64_t heads, const SdpaOptions& o) requires optional_ops::HasPackedSdpa<B> {
    auto r = B::float_sdpa_packed_backward(qkv.value(), y.value(), lse.value(), g.value(), heads, o);
    if (!r) return std::nullopt;
    FloatPrimitive out = out_float(std::move(*r));
    if (auto* t = tape()) {
      t->ops.push_back([qkv, y, lse, g, heads, o, out] {
        store<Float>(out, *B::float_sdpa_packed_backward(qkv.value(), y.value(), lse.value(), g.value(), heads, o));
      });
    }
    return out;
  }
  static LayerNormForward<FloatPrimitive> float_layer_norm(const FloatPrimitive& x, const FloatPrimitive& gamma,
                                                           const FloatPrimitive& beta,
                                                           double eps) requires optional_ops::HasFusedLayerNorm<B> {
    auto r = B::float_layer_norm(x.value(), gamma.value(), beta.value(), eps);
    LayerNormForward<FloatPrimitive> out{out_float(std::move(r.out)), out_float(std::move(r.mean)),
                                         out_float(std::move(r.rstd))};
    if (auto* t = tape()) {
      t->ops.push_back([x, gamma, beta, eps, out] {
        auto n = B::float_layer_norm(x.value(), gamma.value(), beta.value(), eps);
        store<Float>(out.out, std::move(n.out));
        store<Float>(out.mean, std::move(n.mean));
        store<Float>(out.rstd, std::move(n.rstd));
      });
    }
    return out;
  }
  static LayerNormGrads<FloatPrimitive> float_layer_norm_backward(
      const FloatPrimitive& x, const FloatPrimitive& gamma, const FloatPrimitive& mean, const FloatPrimitive& rstd,
      const FloatPrimitive& g) requires optional_ops::HasFusedLayerNorm<B> {
    auto r = B::float_layer_norm_backward(x.value(), gamma.value(), mean.value(), rstd.value(), g.value());
    LayerNormGrads<FloatPrimitive> out{out_float(std::move(r.x)), out_float(std::move(r.gamma)),
                                       out_float(std::move(r.beta))};
    if (auto* t = tape()) {
      t->ops.push_back([x, gamma, mean, rstd, g, out] {
        auto n = B::float_layer_norm_backward(x.value(), gamma.value(), mean.value(), rstd.value(), g.value());
        store<Float>(out.x, std::move(n.x));
        store<Float>(out.gamma, std::move(n.gamma));
        store<Float>(out.beta, std::move(n.beta));
      });
    }
    return out;
  }
  // A replay re-runs B's kernels, which check the targets of that replay's batch.
  static CrossEntropyForward<FloatPrimitive> float_cross_entropy(const FloatPrimitive& x, const IntPrimitive& t)
    requires optional_ops::HasFusedCrossEntropy<B>
  {
    auto r = B::float_cross_entropy(x.value(), t.value());
    CrossEntropyForward<FloatPrimitive> out{out_float(std::move(r.loss)), out_float(std::move(r.lse))};
    if (auto* tp = tape()) {
      tp->ops.push_back([x, t, out] {
        auto n = B::float_cross_entropy(x.value(), t.value());
        store<Float>(out.loss, std::move(n.loss));
        store<Float>(out.lse, std::move(n.lse));
      });
    }
    return out;
  }
  static FloatPrimitive float_cross_entropy_backward(const FloatPrimitive& x, const IntPrimitive& t,
                                                     const FloatPrimitive& lse, const FloatPrimitive& g)
    requires optional_ops::HasFusedCrossEntropy<B>
  {
    FloatPrimitive out = out_float(B::float_cross_entropy_backward(x.value(), t.value(), lse.value(), g.value()));
    if (auto* tp = tape()) {
      tp->ops.push_back([x, t, lse, g, out] {
        store<Float>(out, B::float_cross_entropy_backward(x.value(), t.value(), lse.value(), g.value()));
      });
    }
    return out;
  }

  // A chain Fusion<Capture<B>> materializes (Autodiff<Fusion<Capture<B>>>): recorded as one op, so a replay runs
  // B's fused kernel straight away, without Fusion's nodes and program building.
  static FloatPrimitive float_fused_chain(const fusion::Program& p, const std::vector<fusion::OperandOf<Capture>>& in,
                                          const Device& dev) requires optional_ops::HasFusedChain<B> {
    return recf(
        [](const fusion::Program& prog, const std::vector<fusion::OperandOf<Capture>>& ops, const Device& d) {
          std::vector<fusion::OperandOf<B>> inner;
          inner.reserve(ops.size());
          for (const auto& o : ops) {
            fusion::OperandOf<B> io;
            io.kind = o.kind;
            if (o.f) io.f = o.f->value();
            if (o.i) io.i = o.i->value();
            if (o.b) io.b = o.b->value();
            inner.push_back(std::move(io));
          }
          return optional_ops::float_fused_chain<B>(prog, inner, d);
        },
        p, in, dev);
  }
  static FloatPrimitive float_fused_chain(const fusion::Program& p,
                                          const std::vector<fusion::OperandOf<Capture>>& in) requires
      optional_ops::HasFusedChain<B> {
    return float_fused_chain(p, in, in.empty() ? Device{} : device<Float>(*in.front().f));
  }

  // Adam's update: its lr and bias corrections change per step, so the closure reads them from the cell the
  // compiled step refills before each replay (compile_detail::AdamScalars), never the captured values.
  static AdamStepResult<FloatPrimitive> float_adam_step(
      const FloatPrimitive& w, const FloatPrimitive& g, const FloatPrimitive* m, const FloatPrimitive* v,
      const AdamStepArgs& a) requires optional_ops::HasFusedAdamStep<B> {
    const auto om = opt(m), ov = opt(v);
    auto r = B::float_adam_step(w.value(), g.value(), arg(om), arg(ov), a);
    AdamStepResult<FloatPrimitive> out{out_float(std::move(r.param)), out_float(std::move(r.exp_avg)),
                                       out_float(std::move(r.exp_avg_sq))};
    if (auto* t = tape()) {
      auto args = t->take_adam_scalars(a);
      t->ops.push_back([w, g, om, ov, args, out] {
        auto n = B::float_adam_step(w.value(), g.value(), arg(om), arg(ov), *args);
        store<Float>(out.param, std::move(n.param));
        store<Float>(out.exp_avg, std::move(n.exp_avg));
        store<Float>(out.exp_avg_sq, std::move(n.exp_avg_sq));
      });
    }
    return out;
  }

  // ---- module ops
  static FloatPrimitive conv2d(const FloatPrimitive& x, const FloatPrimitive& w, const FloatPrimitive* bias,
                               const Conv2dOptions& o) {
    return recf(
        [](const IFP& a, const IFP& b, const IFP* c, const Conv2dOptions& opts) { return B::conv2d(a, b, c, opts); }, x,
        w, opt(bias), o);
  }
  static Conv2dGrads<FloatPrimitive> conv2d_backward(const FloatPrimitive& x, const FloatPrimitive& w,
                                                     const FloatPrimitive& g, bool has_bias, const Conv2dOptions& o) {
    auto r = B::conv2d_backward(x.value(), w.value(), g.value(), has_bias, o);
    Conv2dGrads<FloatPrimitive> out{out_float(std::move(r.input)), out_float(std::move(r.weight)), std::nullopt};
    if (r.bias) out.bias = out_float(std::move(*r.bias));
    if (auto* t = tape()) {
      t->ops.push_back([x, w, g, has_bias, o, out] {
        auto n = B::conv2d_backward(x.value(), w.value(), g.value(), has_bias, o);
        store<Float>(out.input, std::move(n.input));
        store<Float>(out.weight, std::move(n.weight));
        if (out.bias) store<Float>(*out.bias, std::move(*n.bias));
      });
    }
    return out;
  }
  static MaxPoolResult<FloatPrimitive, IntPrimitive> max_pool2d(const FloatPrimitive& x, const Pool2dOptions& o) {
    auto r = B::max_pool2d(x.value(), o);
    MaxPoolResult<FloatPrimitive, IntPrimitive> out{out_float(std::move(r.output)), wrap<Int>(std::move(r.indices))};
    if (auto* t = tape()) {
      t->ops.push_back([x, o, out] {
        auto n = B::max_pool2d(x.value(), o);
        store<Float>(out.output, std::move(n.output));
        store<Int>(out.indices, std::move(n.indices));
      });
    }
    return out;
  }
  static FloatPrimitive max_pool2d_backward(const FloatPrimitive& x, const FloatPrimitive& g, const IntPrimitive& i) {
    return recf([](const IFP& a, const IFP& b, const IIP& c) { return B::max_pool2d_backward(a, b, c); }, x, g, i);
  }
  static FloatPrimitive avg_pool2d(const FloatPrimitive& x, const Pool2dOptions& o) {
    return recf([](const IFP& a, const Pool2dOptions& opts) { return B::avg_pool2d(a, opts); }, x, o);
  }
  static FloatPrimitive avg_pool2d_backward(const FloatPrimitive& x, const FloatPrimitive& g, const Pool2dOptions& o) {
    return recf(
        [](const IFP& a, const IFP& b, const Pool2dOptions& opts) { return B::avg_pool2d_backward(a, b, opts); }, x, g,
        o);
  }
  static FloatPrimitive adaptive_avg_pool2d(const FloatPrimitive& x, std::array<int64_t, 2> hw) {
    return recf([](const IFP& a, std::array<int64_t, 2> s) { return B::adaptive_avg_pool2d(a, s); }, x, hw);
  }
  static FloatPrimitive adaptive_avg_pool2d_backward(const FloatPrimitive& x, const FloatPrimitive& g) {
    return recf([](const IFP& a, const IFP& b) { return B::adaptive_avg_pool2d_backward(a, b); }, x, g);
  }

 private:
  template <class K>
  static const char* kind_name() {
    if constexpr (std::is_same_v<K, Float>)
      return "float";
    else if constexpr (std::is_same_v<K, Int>)
      return "int";
    else
      return "bool";
  }
  // The values Tensor::random makes for B (engine/tensor/tensor.hpp), drawn from `rng`.
  template <class K>
  static Primitive<B, K> draw(const Shape& s, const Distribution& dist, Rng& rng, const Device& dev) {
    return backend_draw<B, K>(s, dist, rng, dev);  // B's Bernoulli kernel where it has one
  }
};

}  // namespace ember
