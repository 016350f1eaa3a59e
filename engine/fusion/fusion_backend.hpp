#pragma once
// Fusion<B>: decorates any backend B with lazy, fused elementwise ops (Burn's Fusion<B>; engine/fusion/README.md).
//
// A float op of the elementwise families (unary, scalar, binary with broadcasting, where, mask_fill, casts from Int
// and Bool, expand, full) returns a pending tensor at once; nothing runs. When a value is needed (read to the host,
// the operand of any other op, a chain grown past kMaxChain) the pending ops under it run as one program: on a
// backend with the optional op float_fused_chain (the CPU) one pass over the output, each input read once and no
// intermediate tensor written; on others op by op (fusion::replay). Every other op materializes its float operands
// and forwards to B, so results are B's.
//
// Like Autodiff<B> it derives from B, so Int and Bool ops are B's own; every op that takes or returns a float is
// redefined here (Fusion's FloatPrimitive is a different type from B's, so forgetting one does not compile).
// Autodiff<Fusion<B>> fuses the backward pass as well: the chain rules are elementwise ops on Fusion's tensors.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/backend/backend.hpp"
#include "engine/backend/optional_ops.hpp"
#include "engine/fusion/node.hpp"
#include "engine/tensor/host_random.hpp"
#include "engine/tensor/random.hpp"

namespace ember {

// Fusion's float primitive: a shared handle on a node (copies share it, as B's tensors share storage).
template <class B>
struct FusionTensor {
  fusion::NodePtr<B> node;
};

template <Backend B>
struct Fusion : B {
  using Eager = B;  // the backend the ops run on
  using IFP = typename B::FloatPrimitive;
  using FloatPrimitive = FusionTensor<B>;
  using IntPrimitive = typename B::IntPrimitive;
  using BoolPrimitive = typename B::BoolPrimitive;
  using Device = typename B::Device;
  template <class K>
  using Prim = Primitive<Fusion, K>;
  using Node = fusion::Node<B>;
  using Instr = fusion::Instr;
  using InstrKind = fusion::InstrKind;

  static const char* name() {
    static const std::string n = std::string("fusion<") + B::name() + ">";
    return n.c_str();
  }

  // ---- the lazy tensors
  // A tensor that holds B's value.
  static FloatPrimitive wrap(IFP v) {
    auto n = std::make_shared<Node>();
    n->shape = B::template shape<Float>(v);
    n->device = B::template device<Float>(v);
    n->value = std::move(v);
    return {std::move(n)};
  }
  // B's value of x, running its pending chain if any.
  static IFP value(const FloatPrimitive& x) { return fusion::materialize<B>(x.node); }
  // Whether x is still pending (tests and benchmarks).
  static bool is_pending(const FloatPrimitive& x) {
    std::lock_guard lock(fusion::node_mutex());
    return !x.node->value;
  }

 private:
  static Instr instr(InstrKind kind, int32_t op = 0, double s = 0.0) {
    Instr i;
    i.kind = kind;
    i.op = op;
    i.s = s;
    return i;
  }
  // A pending node computing `op` over `args` (and an Int or Bool operand). A chain that would grow past
  // kMaxChain has its pending operands materialized first.
  static FloatPrimitive pending(Instr op, Shape shape, Device dev, std::vector<fusion::NodePtr<B>> args,
                                std::optional<IntPrimitive> ints = std::nullopt,
                                std::optional<BoolPrimitive> mask = std::nullopt) {
    auto n = std::make_shared<Node>();
    n->shape = std::move(shape);
    n->device = std::move(dev);
    n->op = std::move(op);
    n->ints = std::move(ints);
    n->mask = std::move(mask);
    std::lock_guard lock(fusion::node_mutex());
    int32_t cost = 1;
    for (const auto& a : args) cost += a->value ? 0 : a->cost;
    if (cost > fusion::kMaxChain) {
      for (const auto& a : args) fusion::materialize_locked<B>(a);
      cost = 1;
    }
    n->cost = cost;
    n->args = std::move(args);
    return {std::move(n)};
  }
  static std::vector<IFP> values(const std::vector<FloatPrimitive>& xs) {
    std::vector<IFP> out;
    out.reserve(xs.size());
    for (const auto& x : xs) out.push_back(value(x));
    return out;
  }
  static std::optional<IFP> value_of(const FloatPrimitive* x) {
    return x ? std::optional<IFP>(value(*x)) : std::nullopt;
  }

 public:
  // ---- kind-generic ops: Float is lazy where elementwise, materialized and forwarded otherwise; Int and Bool are B's
  template <class K> static Prim<K> from_data(const TensorData& d, const Device& dev) {
    if constexpr (std::is_same_v<K, Float>) return wrap(B::template from_data<Float>(d, dev));
    else return B::template from_data<K>(d, dev);
  }
  // A random draw B makes itself (engine/compile's Capture<B>, so that a replay draws anew) or with its Bernoulli
  // kernel (host_random.hpp), held like from_data's.
  template <class K>
  static Prim<K> random_draw(const Shape& s, const Distribution& dist, Rng& rng, const Device& dev)
    requires DrawsOnBackend<B, K>
  {
    if constexpr (std::is_same_v<K, Float>) return wrap(backend_draw<B, Float>(s, dist, rng, dev));
    else return backend_draw<B, K>(s, dist, rng, dev);
  }
  template <class K> static TensorData into_data(const Prim<K>& x) {
    if constexpr (std::is_same_v<K, Float>) return B::template into_data<Float>(value(x));
    else return B::template into_data<K>(x);
  }
  template <class K> static Shape shape(const Prim<K>& x) {
    if constexpr (std::is_same_v<K, Float>) return x.node->shape;
    else return B::template shape<K>(x);
  }
  template <class K> static Device device(const Prim<K>& x) {
    if constexpr (std::is_same_v<K, Float>) return x.node->device;
    else return B::template device<K>(x);
  }
  template <class K> static Prim<K> to_device(const Prim<K>& x, const Device& dev) {
    if constexpr (std::is_same_v<K, Float>) return wrap(B::template to_device<Float>(value(x), dev));
    else return B::template to_device<K>(x, dev);
  }
  template <class K> static Prim<K> full(const Shape& s, double v, const Device& dev) {
    if constexpr (std::is_same_v<K, Float>) return pending(instr(InstrKind::Fill, 0, v), s, dev, {});
    else return B::template full<K>(s, v, dev);
  }
  template <class K> static Prim<K> reshape(const Prim<K>& x, const Shape& s) {
    if constexpr (std::is_same_v<K, Float>) return wrap(B::template reshape<Float>(value(x), s));
    else return B::template reshape<K>(x, s);
  }
  template <class K> static Prim<K> permute(const Prim<K>& x, const std::vector<std::size_t>& axes) {
    if constexpr (std::is_same_v<K, Float>) return wrap(B::template permute<Float>(value(x), axes));
    else return B::template permute<K>(x, axes);
  }
  // A broadcast read: free inside a chain (the CPU's expand would copy).
  template <class K> static Prim<K> expand(const Prim<K>& x, const Shape& s) {
    if constexpr (std::is_same_v<K, Float>) return pending(instr(InstrKind::Expand), s, x.node->device, {x.node});
    else return B::template expand<K>(x, s);
  }
  template <class K> static Prim<K> slice(const Prim<K>& x, const std::vector<Range>& r) {
    if constexpr (std::is_same_v<K, Float>) return wrap(B::template slice<Float>(value(x), r));
    else return B::template slice<K>(x, r);
  }
  template <class K>
  static Prim<K> select(const Prim<K>& x, std::size_t dim, int64_t index, Shape to)
    requires optional_ops::HasSelect<B>
  {
    if constexpr (std::is_same_v<K, Float>) return wrap(B::template select<Float>(value(x), dim, index, std::move(to)));
    else return B::template select<K>(x, dim, index, std::move(to));
  }
  template <class K> static Prim<K> slice_assign(const Prim<K>& x, const std::vector<Range>& r, const Prim<K>& v) {
    if constexpr (std::is_same_v<K, Float>) return wrap(B::template slice_assign<Float>(value(x), r, value(v)));
    else return B::template slice_assign<K>(x, r, v);
  }
  template <class K> static Prim<K> cat(const std::vector<Prim<K>>& xs, std::size_t dim) {
    if constexpr (std::is_same_v<K, Float>) return wrap(B::template cat<Float>(values(xs), dim));
    else return B::template cat<K>(xs, dim);
  }
  template <class K> static Prim<K> flip(const Prim<K>& x, const std::vector<std::size_t>& dims) {
    if constexpr (std::is_same_v<K, Float>) return wrap(B::template flip<Float>(value(x), dims));
    else return B::template flip<K>(x, dims);
  }
  template <class K> static Prim<K> gather(std::size_t dim, const Prim<K>& x, const IntPrimitive& idx) {
    if constexpr (std::is_same_v<K, Float>) return wrap(B::template gather<Float>(dim, value(x), idx));
    else return B::template gather<K>(dim, x, idx);
  }
  template <class K>
  static Prim<K> scatter_add(std::size_t dim, const Prim<K>& x, const IntPrimitive& idx, const Prim<K>& v) {
    if constexpr (std::is_same_v<K, Float>) return wrap(B::template scatter_add<Float>(dim, value(x), idx, value(v)));
    else return B::template scatter_add<K>(dim, x, idx, v);
  }
  template <class K> static Prim<K> index_select(const Prim<K>& x, std::size_t dim, const IntPrimitive& idx) {
    if constexpr (std::is_same_v<K, Float>) return wrap(B::template index_select<Float>(value(x), dim, idx));
    else return B::template index_select<K>(x, dim, idx);
  }
  template <class K>
  static Prim<K> index_select_add(const Prim<K>& x, std::size_t dim, const IntPrimitive& idx, const Prim<K>& v) {
    if constexpr (std::is_same_v<K, Float>)
      return wrap(B::template index_select_add<Float>(value(x), dim, idx, value(v)));
    else return B::template index_select_add<K>(x, dim, idx, v);
  }
  template <class K> static Prim<K> where(const BoolPrimitive& cond, const Prim<K>& a, const Prim<K>& b) {
    if constexpr (std::is_same_v<K, Float>) {
      const Shape s = broadcast_shapes("where", broadcast_shapes("where", B::template shape<Bool>(cond), a.node->shape),
                                       b.node->shape);
      return pending(instr(InstrKind::Where), s, a.node->device, {a.node, b.node}, std::nullopt, cond);
    } else {
      return B::template where<K>(cond, a, b);
    }
  }
  template <class K> static Prim<K> mask_fill(const Prim<K>& x, const BoolPrimitive& mask, double v) {
    if constexpr (std::is_same_v<K, Float>)
      return pending(instr(InstrKind::MaskFill, 0, v), x.node->shape, x.node->device, {x.node}, std::nullopt, mask);
    else return B::template mask_fill<K>(x, mask, v);
  }
  template <class From, class To> static Prim<To> cast(const Prim<From>& x) {
    if constexpr (std::is_same_v<From, Float> && std::is_same_v<To, Float>) {
      return x;
    } else if constexpr (std::is_same_v<From, Float>) {
      return B::template cast<Float, To>(value(x));
    } else if constexpr (std::is_same_v<To, Float>) {
      const Shape s = B::template shape<From>(x);
      const Device dev = B::template device<From>(x);
      if constexpr (std::is_same_v<From, Int>) return pending(instr(InstrKind::Cast), s, dev, {}, x);
      else return pending(instr(InstrKind::Cast), s, dev, {}, std::nullopt, x);
    } else {
      return B::template cast<From, To>(x);
    }
  }

  // ---- float math: the elementwise families are recorded, the rest runs on B
  static FloatPrimitive float_unary(const FloatPrimitive& x, UnaryOp op) {
    return pending(instr(InstrKind::Unary, static_cast<int32_t>(op)), x.node->shape, x.node->device, {x.node});
  }
  static FloatPrimitive float_scalar(const FloatPrimitive& x, ScalarOp op, double s) {
    return pending(instr(InstrKind::Scalar, static_cast<int32_t>(op), s), x.node->shape, x.node->device, {x.node});
  }
  static FloatPrimitive float_binary(const FloatPrimitive& a, const FloatPrimitive& b, BinaryOp op) {
    const Shape s = a.node->shape == b.node->shape ? a.node->shape
                                                   : broadcast_shapes(op_name(op), a.node->shape, b.node->shape);
    return pending(instr(InstrKind::Binary, static_cast<int32_t>(op)), s, a.node->device, {a.node, b.node});
  }
  static BoolPrimitive float_compare(const FloatPrimitive& a, const FloatPrimitive& b, CompareOp op) {
    return B::float_compare(value(a), value(b), op);
  }
  static BoolPrimitive float_compare_scalar(const FloatPrimitive& a, CompareOp op, double s) {
    return B::float_compare_scalar(value(a), op, s);
  }
  static BoolPrimitive float_predicate(const FloatPrimitive& x, PredicateOp op) {
    return B::float_predicate(value(x), op);
  }
  static FloatPrimitive float_reduce(const FloatPrimitive& x, ReduceOp op, std::size_t dim) {
    return wrap(B::float_reduce(value(x), op, dim));
  }
  // A sum or mean over everything (a loss) ends its operand's chain: one pass, the operand never stored.
  static FloatPrimitive float_reduce_all(const FloatPrimitive& x, ReduceOp op) {
    if (op == ReduceOp::Sum || op == ReduceOp::Mean) return wrap(fusion::reduce_all<B>(x.node, op));
    return wrap(B::float_reduce_all(value(x), op));
  }
  static IntPrimitive float_arg_reduce(const FloatPrimitive& x, ArgReduceOp op, std::size_t dim) {
    return B::float_arg_reduce(value(x), op, dim);
  }
  static IntPrimitive float_argsort(const FloatPrimitive& x, std::size_t dim, bool descending) {
    return B::float_argsort(value(x), dim, descending);
  }
  static FloatPrimitive float_cumsum(const FloatPrimitive& x, std::size_t dim) {
    return wrap(B::float_cumsum(value(x), dim));
  }
  static FloatPrimitive float_matmul(const FloatPrimitive& a, const FloatPrimitive& b) {
    return wrap(B::float_matmul(value(a), value(b)));
  }
  static FloatPrimitive float_fft(const FloatPrimitive& x, FftOp op, int64_t n) {
    return wrap(B::float_fft(value(x), op, n));
  }

  // ---- GELU's and ReLU's backward steps, each recorded as one instruction (autodiff calls this through
  // optional_ops' float_unary_backward): they fuse with the ops around them (dropout's mask, the loss's gradient)
  // and run the backend's own one-pass formula inside the chain. ReLU's composed rule would compare x (running its
  // chain and storing a Bool tensor) before it could fuse. Other ops return nullopt: their composed chain rule is
  // elementwise, so it fuses as it is.
  static std::optional<FloatPrimitive> float_unary_backward(UnaryOp op, const FloatPrimitive& x,
                                                            const FloatPrimitive&, const FloatPrimitive& g) {
    if (op != UnaryOp::Gelu && op != UnaryOp::Relu) return std::nullopt;
    const Shape s = x.node->shape == g.node->shape ? g.node->shape
                                                   : broadcast_shapes("unary backward", x.node->shape, g.node->shape);
    const InstrKind kind = op == UnaryOp::Gelu ? InstrKind::GeluBackward : InstrKind::ReluBackward;
    return pending(instr(kind), s, g.node->device, {x.node, g.node});
  }

  // ---- B's optional ops, where B has them (engine/backend/optional_ops.hpp): operands materialized, B's kernel.
  static FloatPrimitive float_matmul_transposed(const FloatPrimitive& a, const FloatPrimitive& b, bool ta, bool tb)
    requires optional_ops::HasMatmulTransposed<B>
  {
    return wrap(B::float_matmul_transposed(value(a), value(b), ta, tb));
  }
  static FloatPrimitive float_linear(const FloatPrimitive& x, const FloatPrimitive& w, const FloatPrimitive* bias)
    requires optional_ops::HasFusedLinear<B>
  {
    const auto ib = value_of(bias);
    return wrap(B::float_linear(value(x), value(w), ib ? &*ib : nullptr));
  }
  static AdamStepResult<FloatPrimitive> float_adam_step(const FloatPrimitive& w, const FloatPrimitive& g,
                                                        const FloatPrimitive* m, const FloatPrimitive* v,
                                                        const AdamStepArgs& a)
    requires optional_ops::HasFusedAdamStep<B>
  {
    const auto im = value_of(m), iv = value_of(v);
    auto r = B::float_adam_step(value(w), value(g), im ? &*im : nullptr, iv ? &*iv : nullptr, a);
    return {wrap(std::move(r.param)), wrap(std::move(r.exp_avg)), wrap(std::move(r.exp_avg_sq))};
  }
  static SdpaForward<FloatPrimitive> float_sdpa(const FloatPrimitive& q, const FloatPrimitive& k,
                                                const FloatPrimitive& v, const FloatPrimitive* bias,
                                                const SdpaOptions& o)
    requires optional_ops::HasFusedSdpa<B>
  {
    const auto ib = value_of(bias);
    auto r = B::float_sdpa(value(q), value(k), value(v), ib ? &*ib : nullptr, o);
    return {wrap(std::move(r.out)), wrap(std::move(r.lse))};
  }
  static SdpaGrads<FloatPrimitive> float_sdpa_backward(const FloatPrimitive& q, const FloatPrimitive& k,
                                                       const FloatPrimitive& v, const FloatPrimitive* bias,
                                                       const FloatPrimitive& out, const FloatPrimitive& lse,
                                                       const FloatPrimitive& g, const SdpaOptions& o)
    requires optional_ops::HasFusedSdpa<B>
  {
    const auto ib = value_of(bias);
    auto r = B::float_sdpa_backward(value(q), value(k), value(v), ib ? &*ib : nullptr, value(out), value(lse),
                                    value(g), o);
    SdpaGrads<FloatPrimitive> out_grads{wrap(std::move(r.q)), wrap(std::move(r.k)), wrap(std::move(r.v)), std::nullopt};
    if (r.bias) out_grads.bias = wrap(std::move(*r.bias));
    return out_grads;
  }
  static std::optional<SdpaForward<FloatPrimitive>> float_sdpa_packed(const FloatPrimitive& qkv, int64_t heads,
                                                                      const SdpaOptions& o)
    requires optional_ops::HasPackedSdpa<B>
  {
    auto r = B::float_sdpa_packed(value(qkv), heads, o);
    if (!r) return std::nullopt;
    return SdpaForward<FloatPrimitive>{wrap(std::move(r->out)), wrap(std::move(r->lse))};
  }
  static std::optional<FloatPrimitive> float_sdpa_packed_backward(const FloatPrimitive& qkv, const FloatPrimitive& out,
                                                                  const FloatPrimitive& lse, const FloatPrimitive& g,
                                                                  int64_t heads, const SdpaOptions& o)
    requires optional_ops::HasPackedSdpa<B>
  {
    auto r = B::float_sdpa_packed_backward(value(qkv), value(out), value(lse), value(g), heads, o);
    if (!r) return std::nullopt;
    return wrap(std::move(*r));
  }
  static LayerNormForward<FloatPrimitive> float_layer_norm(const FloatPrimitive& x, const FloatPrimitive& gamma,
                                                           const FloatPrimitive& beta, double eps)
    requires optional_ops::HasFusedLayerNorm<B>
  {
    auto r = B::float_layer_norm(value(x), value(gamma), value(beta), eps);
    return {wrap(std::move(r.out)), wrap(std::move(r.mean)), wrap(std::move(r.rstd))};
  }
  static LayerNormGrads<FloatPrimitive> float_layer_norm_backward(const FloatPrimitive& x, const FloatPrimitive& gamma,
                                                                  const FloatPrimitive& mean,
                                                                  const FloatPrimitive& rstd, const FloatPrimitive& g)
    requires optional_ops::HasFusedLayerNorm<B>
  {
    auto r = B::float_layer_norm_backward(value(x), value(gamma), value(mean), value(rstd), value(g));
    return {wrap(std::move(r.x)), wrap(std::move(r.gamma)), wrap(std::move(r.beta))};
  }
  static CrossEntropyForward<FloatPrimitive> float_cross_entropy(const FloatPrimitive& x, const IntPrimitive& t)
    requires optional_ops::HasFusedCrossEntropy<B>
  {
    auto r = B::float_cross_entropy(value(x), t);
    return {wrap(std::move(r.loss)), wrap(std::move(r.lse))};
  }
  static FloatPrimitive float_cross_entropy_backward(const FloatPrimitive& x, const IntPrimitive& t,
                                                     const FloatPrimitive& lse, const FloatPrimitive& g)
    requires optional_ops::HasFusedCrossEntropy<B>
  {
    return wrap(B::float_cross_entropy_backward(value(x), t, value(lse), value(g)));
  }

  // ---- module ops
  static FloatPrimitive conv2d(const FloatPrimitive& x, const FloatPrimitive& w, const FloatPrimitive* bias,
                               const Conv2dOptions& o) {
    const auto ib = value_of(bias);
    return wrap(B::conv2d(value(x), value(w), ib ? &*ib : nullptr, o));
  }
  static Conv2dGrads<FloatPrimitive> conv2d_backward(const FloatPrimitive& x, const FloatPrimitive& w,
                                                     const FloatPrimitive& g, bool has_bias, const Conv2dOptions& o) {
    auto r = B::conv2d_backward(value(x), value(w), value(g), has_bias, o);
    Conv2dGrads<FloatPrimitive> out{wrap(std::move(r.input)), wrap(std::move(r.weight)), std::nullopt};
    if (r.bias) out.bias = wrap(std::move(*r.bias));
    return out;
  }
  static MaxPoolResult<FloatPrimitive, IntPrimitive> max_pool2d(const FloatPrimitive& x, const Pool2dOptions& o) {
    auto r = B::max_pool2d(value(x), o);
    return {wrap(std::move(r.output)), std::move(r.indices)};
  }
  static FloatPrimitive max_pool2d_backward(const FloatPrimitive& x, const FloatPrimitive& g, const IntPrimitive& i) {
    return wrap(B::max_pool2d_backward(value(x), value(g), i));
  }
  static FloatPrimitive avg_pool2d(const FloatPrimitive& x, const Pool2dOptions& o) {
    return wrap(B::avg_pool2d(value(x), o));
  }
  static FloatPrimitive avg_pool2d_backward(const FloatPrimitive& x, const FloatPrimitive& g, const Pool2dOptions& o) {
    return wrap(B::avg_pool2d_backward(value(x), value(g), o));
  }
  static FloatPrimitive adaptive_avg_pool2d(const FloatPrimitive& x, std::array<int64_t, 2> hw) {
    return wrap(B::adaptive_avg_pool2d(value(x), hw));
  }
  static FloatPrimitive adaptive_avg_pool2d_backward(const FloatPrimitive& x, const FloatPrimitive& g) {
    return wrap(B::adaptive_avg_pool2d_backward(value(x), value(g)));
  }
};

}  // namespace ember
