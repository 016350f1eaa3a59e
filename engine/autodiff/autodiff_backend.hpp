#pragma once
// Autodiff<B>: decorates any backend B with reverse-mode gradients.
//
// It derives from B so that Int and Bool ops (int_*, bool_*, int_arange) are B's own, untouched. Every op that
// takes or returns a float primitive is redefined here; since Autodiff's FloatPrimitive is a different type from
// B's, forgetting one is a compile error, never a silently untracked op.
#include <fmt/format.h>

#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "engine/autodiff/elementwise_backward.hpp"
#include "engine/autodiff/fft_backward.hpp"
#include "engine/autodiff/graph.hpp"
#include "engine/autodiff/reduce_backward.hpp"
#include "engine/backend/conv_transpose.hpp"
#include "engine/backend/optional_ops.hpp"
#include "engine/tensor/host_random.hpp"
#include "engine/tensor/random.hpp"

namespace ember {

template <Backend B>
struct Autodiff : B {
  using InnerBackend = B;
  using IFP = typename B::FloatPrimitive;
  using FloatPrimitive = autodiff::AdTensor<IFP>;
  using IntPrimitive = typename B::IntPrimitive;
  using BoolPrimitive = typename B::BoolPrimitive;
  using Device = typename B::Device;
  using Gradients = autodiff::Gradients<IFP>;
  using Ctx = autodiff::BackwardCtx<IFP>;
  using H = autodiff::G<B>;
  template <class K>
  using Prim = Primitive<Autodiff, K>;

  static const char* name() {
    static const std::string n = std::string("autodiff<") + B::name() + ">";
    return n.c_str();
  }

  // ---- autodiff API
  static FloatPrimitive float_require_grad(const FloatPrimitive& x, bool on) {
    if (!on) return {x.value, nullptr};
    if (x.node) return x;
    auto node = std::make_shared<autodiff::Node<IFP>>();
    node->leaf = true;
    return {x.value, std::move(node)};
  }
  static bool float_is_require_grad(const FloatPrimitive& x) { return x.node != nullptr; }
  static FloatPrimitive float_detach(const FloatPrimitive& x) { return {x.value, nullptr}; }
  static Gradients backward(const FloatPrimitive& root) {
    if (!root.node) throw ArgumentError("backward: the tensor does not require grad (no tracked input reaches it)");
    auto seed = B::template full<Float>(B::template shape<Float>(root.value), 1.0, B::template device<Float>(root.value));
    return autodiff::run_backward<IFP>(root.node, std::move(seed), [](const IFP& a, const IFP& b) { return H::add(a, b); });
  }
  // Tensor.backward(gradient, retain_graph): one pass from `roots`, each seeded with its gradient (same shape). The
  // gradients of the leaves reached, also added to their .grad when `accumulate`. The .grad slots change only when
  // the whole pass succeeded.
  static Gradients backward_seeded(const std::vector<std::pair<FloatPrimitive, IFP>>& roots, bool retain_graph,
                                   bool accumulate) {
    auto reached = run(roots, retain_graph, nullptr, "backward");
    if (accumulate) {
      std::lock_guard lock(autodiff::grad_slot_mutex());
      for (auto& r : reached) r.node->grad = r.node->grad ? H::add(*r.node->grad, r.grad) : r.grad;
    }
    Gradients out;
    for (auto& r : reached) out.put(r.node->id, std::move(r.grad));
    return out;
  }
  // torch.autograd.grad: the gradients of `roots` (seeded) w.r.t. each of `inputs` (leaves or results of recorded
  // ops; nullopt for one the roots do not reach). Leaves' .grad are left alone.
  static std::vector<std::optional<IFP>> grad_of(const std::vector<std::pair<FloatPrimitive, IFP>>& roots,
                                                 const std::vector<FloatPrimitive>& inputs, bool retain_graph) {
    std::unordered_set<const autodiff::Node<IFP>*> capture;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (!inputs[i].node)
        throw ArgumentError(fmt::format("autograd.grad: input {} does not require grad (One of the differentiated "
                                        "Tensors does not require grad)", i));
      capture.insert(inputs[i].node.get());
    }
    Gradients by_node;
    for (auto& r : run(roots, retain_graph, &capture, "autograd.grad")) by_node.put(r.node->id, std::move(r.grad));
    std::vector<std::optional<IFP>> out;
    for (const auto& x : inputs) out.push_back(by_node.get(x.node->id));
    return out;
  }
  // The leaf's accumulated gradient (.grad); nullopt for a tensor that is not a leaf requiring grad, or has none.
  static std::optional<IFP> leaf_grad(const FloatPrimitive& x) {
    if (!x.node || !x.node->leaf) return std::nullopt;
    std::lock_guard lock(autodiff::grad_slot_mutex());
    return x.node->grad;
  }
  static void set_leaf_grad(const FloatPrimitive& x, std::optional<IFP> g) {
    if (!x.node || !x.node->leaf)
      throw ArgumentError(x.node ? "set_grad: the tensor is not a leaf (the result of a recorded op keeps no .grad)"
                                 : "set_grad: the tensor does not require grad (only leaves that do keep a .grad)");
    if (g && !(B::template shape<Float>(*g) == B::template shape<Float>(x.value)))
      throw ShapeError(fmt::format("set_grad: assigned grad has data of a different size: {} for a tensor of {}",
                                   B::template shape<Float>(*g).to_string(), B::template shape<Float>(x.value).to_string()));
    std::lock_guard lock(autodiff::grad_slot_mutex());
    x.node->grad = std::move(g);
  }
  // PyTorch's is_leaf: a tensor that requires no grad is a leaf too.
  static bool float_is_leaf(const FloatPrimitive& x) { return !x.node || x.node->leaf; }

  // In-place updates (x.add_(y)): the holder of `self` computes the op as usual and takes its result through
  // inplace_commit. inplace_begin first refuses a leaf that requires grad while ops are recorded (PyTorch), then
  // counts the update in self's version, so that ops which recorded self before now fail their backward; the op
  // itself runs after that count and so records the new version. inplace_undo takes the count back when the op
  // failed before anything changed.
  static void float_inplace_begin(const FloatPrimitive& self) {
    if (!self.node) return;
    if (self.node->leaf && !autodiff::no_grad_flag())
      throw ArgumentError("a leaf Variable that requires grad is being used in an in-place operation.");
    self.node->version.fetch_add(1, std::memory_order_acq_rel);
  }
  static void float_inplace_undo(const FloatPrimitive& self) {
    if (self.node) self.node->version.fetch_sub(1, std::memory_order_acq_rel);
  }
  // The holder's new value. A recorded result is the tensor's new history (a non-leaf, as PyTorch's in-place ops on
  // tracked tensors); an unrecorded one (grad mode off) keeps self's node, so a leaf stays the same leaf: same id,
  // same .grad, same optimizer slot.
  static FloatPrimitive float_inplace_commit(const FloatPrimitive& self, FloatPrimitive result) {
    if (result.node) return result;
    return {std::move(result.value), self.node};
  }
  static uint64_t float_version(const FloatPrimitive& x) {
    return x.node ? x.node->version.load(std::memory_order_acquire) : 0;
  }

  static std::optional<IFP> grad(const FloatPrimitive& x, const Gradients& g) {
    if (!x.node) return std::nullopt;
    return g.get(x.node->id);
  }
  static std::optional<IFP> grad_remove(const FloatPrimitive& x, Gradients& g) {
    if (!x.node) return std::nullopt;
    return g.remove(x.node->id);
  }
  static IFP inner(const FloatPrimitive& x) { return x.value; }

 private:
  static std::vector<autodiff::Reached<IFP>> run(const std::vector<std::pair<FloatPrimitive, IFP>>& roots,
                                                 bool retain_graph,
                                                 const std::unordered_set<const autodiff::Node<IFP>*>* capture,
                                                 const char* what) {
    std::vector<autodiff::BackwardRoot<IFP>> starts;
    for (std::size_t i = 0; i < roots.size(); ++i) {
      const auto& [root, seed] = roots[i];
      if (!root.node)
        throw ArgumentError(fmt::format("{}: element {} of the outputs does not require grad and has no grad_fn (no "
                                        "tracked input reaches it)", what, i));
      const Shape rs = B::template shape<Float>(root.value), gs = B::template shape<Float>(seed);
      if (!(rs == gs))
        throw ShapeError(fmt::format("{}: grad of shape {} for a tensor of shape {}", what, gs.to_string(), rs.to_string()));
      starts.push_back({root.node, seed});
    }
    return autodiff::run_backward_from<IFP>(std::move(starts), autodiff::BackwardOptions{retain_graph}, capture,
                                            [](const IFP& a, const IFP& b) { return H::add(a, b); });
  }

 public:
  static FloatPrimitive from_inner(const IFP& x) { return {x, nullptr}; }

  // ---- kind-generic ops: Float is recorded, Int and Bool go straight to B
  template <class K> static Prim<K> from_data(const TensorData& d, const Device& dev) {
    if constexpr (std::is_same_v<K, Float>) return {B::template from_data<Float>(d, dev), nullptr};
    else return B::template from_data<K>(d, dev);
  }
  // A random draw B makes itself (engine/compile's Capture<B>, so that a replay draws anew) or with its Bernoulli
  // kernel (host_random.hpp); untracked, as from_data.
  template <class K>
  static Prim<K> random_draw(const Shape& s, const Distribution& dist, Rng& rng, const Device& dev)
    requires DrawsOnBackend<B, K>
  {
    if constexpr (std::is_same_v<K, Float>) return {backend_draw<B, Float>(s, dist, rng, dev), nullptr};
    else return backend_draw<B, K>(s, dist, rng, dev);
  }
  template <class K> static TensorData into_data(const Prim<K>& x) {
    if constexpr (std::is_same_v<K, Float>) return B::template into_data<Float>(x.value);
    else return B::template into_data<K>(x);
  }
  template <class K> static Shape shape(const Prim<K>& x) {
    if constexpr (std::is_same_v<K, Float>) return B::template shape<Float>(x.value);
    else return B::template shape<K>(x);
  }
  template <class K> static Device device(const Prim<K>& x) {
    if constexpr (std::is_same_v<K, Float>) return B::template device<Float>(x.value);
    else return B::template device<K>(x);
  }
  template <class K> static Prim<K> to_device(const Prim<K>& x, const Device& dev) {
    if constexpr (std::is_same_v<K, Float>) {
      const Device from = device<Float>(x);
      return autodiff::record(B::template to_device<Float>(x.value, dev), {&x},
                              [from](const IFP& g, Ctx& c) { c.grads[0] = B::template to_device<Float>(g, from); });
    } else {
      return B::template to_device<K>(x, dev);
    }
  }
  template <class K> static Prim<K> full(const Shape& s, double v, const Device& dev) {
    if constexpr (std::is_same_v<K, Float>) return {B::template full<Float>(s, v, dev), nullptr};
    else return B::template full<K>(s, v, dev);
  }
  template <class K> static Prim<K> reshape(const Prim<K>& x, const Shape& s) {
    if constexpr (std::is_same_v<K, Float>) {
      const Shape from = shape<Float>(x);
      return autodiff::record(B::template reshape<Float>(x.value, s), {&x},
                              [from](const IFP& g, Ctx& c) { c.grads[0] = B::template reshape<Float>(g, from); });
    } else {
      return B::template reshape<K>(x, s);
    }
  }
  template <class K> static Prim<K> permute(const Prim<K>& x, const std::vector<std::size_t>& axes) {
    if constexpr (std::is_same_v<K, Float>) {
      std::vector<std::size_t> inverse(axes.size());
      for (std::size_t i = 0; i < axes.size(); ++i) inverse[axes[i]] = i;
      return autodiff::record(B::template permute<Float>(x.value, axes), {&x}, [inverse](const IFP& g, Ctx& c) {
        c.grads[0] = B::template permute<Float>(g, inverse);
      });
    } else {
      return B::template permute<K>(x, axes);
    }
  }
  template <class K> static Prim<K> expand(const Prim<K>& x, const Shape& s) {
    if constexpr (std::is_same_v<K, Float>) {
      const Shape from = shape<Float>(x);
      return autodiff::record(B::template expand<Float>(x.value, s), {&x},
                              [from](const IFP& g, Ctx& c) { c.grads[0] = H::sum_to(g, from); });
    } else {
      return B::template expand<K>(x, s);
    }
  }
  template <class K> static Prim<K> slice(const Prim<K>& x, const std::vector<Range>& r) {
    if constexpr (std::is_same_v<K, Float>) {
      const Shape from = shape<Float>(x);
      return autodiff::record(B::template slice<Float>(x.value, r), {&x}, [from, r](const IFP& g, Ctx& c) {
        c.grads[0] = B::template slice_assign<Float>(H::zeros(from, g), r, g);
      });
    } else {
      return B::template slice<K>(x, r);
    }
  }
  template <class K> static Prim<K> slice_assign(const Prim<K>& x, const std::vector<Range>& r, const Prim<K>& v) {
    if constexpr (std::is_same_v<K, Float>) {
      const Shape vs = shape<Float>(v);
      return autodiff::record(B::template slice_assign<Float>(x.value, r, v.value), {&x, &v},
                              [r, vs](const IFP& g, Ctx& c) {
                                if (c.need[0]) c.grads[0] = B::template slice_assign<Float>(g, r, H::zeros(vs, g));
                                if (c.need[1]) c.grads[1] = B::template slice<Float>(g, r);
                              });
    } else {
      return B::template slice_assign<K>(x, r, v);
    }
  }
  template <class K> static Prim<K> cat(const std::vector<Prim<K>>& xs, std::size_t dim) {
    if constexpr (std::is_same_v<K, Float>) {
      std::vector<IFP> values;
      std::vector<const FloatPrimitive*> inputs;
      std::vector<int64_t> sizes;
      for (auto& x : xs) {
        values.push_back(x.value);
        inputs.push_back(&x);
        sizes.push_back(shape<Float>(x)[dim]);
      }
      return autodiff::record_many<IFP>(B::template cat<Float>(values, dim), inputs,
                                        [sizes, dim](const IFP& g, Ctx& c) {
                                          std::vector<Range> r;
                                          for (auto d : H::shape(g).dims) r.push_back({0, d});
                                          int64_t off = 0;
                                          for (std::size_t i = 0; i < sizes.size(); ++i) {
                                            r[dim] = {off, off + sizes[i]};
                                            if (c.need[i]) c.grads[i] = B::template slice<Float>(g, r);
                                            off += sizes[i];
                                          }
                                        });
    } else {
      return B::template cat<K>(xs, dim);
    }
  }
  template <class K> static Prim<K> flip(const Prim<K>& x, const std::vector<std::size_t>& dims) {
    if constexpr (std::is_same_v<K, Float>) {
      return autodiff::record(B::template flip<Float>(x.value, dims), {&x},
                              [dims](const IFP& g, Ctx& c) { c.grads[0] = B::template flip<Float>(g, dims); });
    } else {
      return B::template flip<K>(x, dims);
    }
  }
  template <class K> static Prim<K> gather(std::size_t dim, const Prim<K>& x, const IntPrimitive& idx) {
    if constexpr (std::is_same_v<K, Float>) {
      const Shape from = shape<Float>(x);
      return autodiff::record(B::template gather<Float>(dim, x.value, idx), {&x}, [dim, from, idx](const IFP& g, Ctx& c) {
        c.grads[0] = B::template scatter_add<Float>(dim, H::zeros(from, g), idx, g);
      });
    } else {
      return B::template gather<K>(dim, x, idx);
    }
  }
  template <class K>
  static Prim<K> scatter_add(std::size_t dim, const Prim<K>& x, const IntPrimitive& idx, const Prim<K>& v) {
    if constexpr (std::is_same_v<K, Float>) {
      return autodiff::record(B::template scatter_add<Float>(dim, x.value, idx, v.value), {&x, &v},
                              [dim, idx](const IFP& g, Ctx& c) {
                                if (c.need[0]) c.grads[0] = g;
                                if (c.need[1]) c.grads[1] = B::template gather<Float>(dim, g, idx);
                              });
    } else {
      return B::template scatter_add<K>(dim, x, idx, v);
    }
  }
  template <class K> static Prim<K> index_select(const Prim<K>& x, std::size_t dim, const IntPrimitive& idx) {
    if constexpr (std::is_same_v<K, Float>) {
      const Shape from = shape<Float>(x);
      return autodiff::record(B::template index_select<Float>(x.value, dim, idx), {&x},
                              [dim, from, idx](const IFP& g, Ctx& c) {
                                c.grads[0] = B::template index_select_add<Float>(H::zeros(from, g), dim, idx, g);
                              });
    } else {
      return B::template index_select<K>(x, dim, idx);
    }
  }
  template <class K>
  static Prim<K> index_select_add(const Prim<K>& x, std::size_t dim, const IntPrimitive& idx, const Prim<K>& v) {
    if constexpr (std::is_same_v<K, Float>) {
      return autodiff::record(B::template index_select_add<Float>(x.value, dim, idx, v.value), {&x, &v},
                              [dim, idx](const IFP& g, Ctx& c) {
                                if (c.need[0]) c.grads[0] = g;
                                if (c.need[1]) c.grads[1] = B::template index_select<Float>(g, dim, idx);
                              });
    } else {
      return B::template index_select_add<K>(x, dim, idx, v);
    }
  }
  template <class K> static Prim<K> where(const BoolPrimitive& cond, const Prim<K>& a, const Prim<K>& b) {
    if constexpr (std::is_same_v<K, Float>) {
      const Shape as = shape<Float>(a), bs = shape<Float>(b);
      return autodiff::record(B::template where<Float>(cond, a.value, b.value), {&a, &b},
                              [cond, as, bs](const IFP& g, Ctx& c) {
                                const IFP z = H::zeros_like(g);
                                if (c.need[0]) c.grads[0] = H::sum_to(B::template where<Float>(cond, g, z), as);
                                if (c.need[1]) c.grads[1] = H::sum_to(B::template where<Float>(cond, z, g), bs);
                              });
    } else {
      return B::template where<K>(cond, a, b);
    }
  }
  template <class K> static Prim<K> mask_fill(const Prim<K>& x, const BoolPrimitive& mask, double v) {
    if constexpr (std::is_same_v<K, Float>) {
      return autodiff::record(B::template mask_fill<Float>(x.value, mask, v), {&x}, [mask](const IFP& g, Ctx& c) {
        c.grads[0] = B::template mask_fill<Float>(g, mask, 0.0);
      });
    } else {
      return B::template mask_fill<K>(x, mask, v);
    }
  }
  template <class From, class To> static Prim<To> cast(const Prim<From>& x) {
    if constexpr (std::is_same_v<From, Float> && std::is_same_v<To, Float>) return x;
    else if constexpr (std::is_same_v<From, Float>) return B::template cast<Float, To>(x.value);  // not differentiable
    else if constexpr (std::is_same_v<To, Float>) return FloatPrimitive{B::template cast<From, Float>(x), nullptr};
    else return B::template cast<From, To>(x);
  }

  // ---- float math
  static FloatPrimitive float_unary(const FloatPrimitive& x, UnaryOp op) {
    IFP y = B::float_unary(x.value, op);
    return autodiff::record(y, {&x}, [op, xv = x.value, y](const IFP& g, Ctx& c) {
      c.grads[0] = optional_ops::float_unary_backward<B>(op, xv, y, g);  // the backend's fused step, if any
    });
  }
  static FloatPrimitive float_scalar(const FloatPrimitive& x, ScalarOp op, double s) {
    IFP y = B::float_scalar(x.value, op, s);
    return autodiff::record(y, {&x}, [op, s, xv = x.value, y](const IFP& g, Ctx& c) {
      c.grads[0] = autodiff::scalar_backward<B>(op, s, xv, y, g);
    });
  }
  static FloatPrimitive float_binary(const FloatPrimitive& a, const FloatPrimitive& b, BinaryOp op) {
    IFP y = B::float_binary(a.value, b.value, op);
    return autodiff::record(y, {&a, &b}, [op, av = a.value, bv = b.value, y](const IFP& g, Ctx& c) {
      auto [ga, gb] = autodiff::binary_backward<B>(op, av, bv, y, g, c.need[0], c.need[1]);
      c.grads[0] = std::move(ga);
      c.grads[1] = std::move(gb);
    });
  }
  static BoolPrimitive float_compare(const FloatPrimitive& a, const FloatPrimitive& b, CompareOp op) {
    return B::float_compare(a.value, b.value, op);
  }
  static BoolPrimitive float_compare_scalar(const FloatPrimitive& a, CompareOp op, double s) {
    return B::float_compare_scalar(a.value, op, s);
  }
  // Bool results carry no gradient (like torch.isnan).
  static BoolPrimitive float_predicate(const FloatPrimitive& x, PredicateOp op) {
    return B::float_predicate(x.value, op);
  }
  static FloatPrimitive float_reduce(const FloatPrimitive& x, ReduceOp op, std::size_t dim) {
    IFP y = B::float_reduce(x.value, op, dim);
    return autodiff::record(y, {&x}, [op, dim, xv = x.value, y](const IFP& g, Ctx& c) {
      c.grads[0] = autodiff::reduce_backward<B>(op, dim, xv, y, g);
    });
  }
  static FloatPrimitive float_reduce_all(const FloatPrimitive& x, ReduceOp op) {
    IFP y = B::float_reduce_all(x.value, op);
    return autodiff::record(y, {&x}, [op, xv = x.value, y](const IFP& g, Ctx& c) {
      c.grads[0] = autodiff::reduce_backward<B>(op, std::nullopt, xv, y, g);
    });
  }
  static IntPrimitive float_arg_reduce(const FloatPrimitive& x, ArgReduceOp op, std::size_t dim) {
    return B::float_arg_reduce(x.value, op, dim);
  }
  static IntPrimitive float_argsort(const FloatPrimitive& x, std::size_t dim, bool descending) {
    return B::float_argsort(x.value, dim, descending);
  }
  // y[i] = sum_{k<=i} x[k], so dx[k] = sum_{i>=k} g[i]: the cumsum of g taken from the end (flip, cumsum, flip).
  static FloatPrimitive float_cumsum(const FloatPrimitive& x, std::size_t dim) {
    return autodiff::record(B::float_cumsum(x.value, dim), {&x}, [dim](const IFP& g, Ctx& c) {
      const std::vector<std::size_t> d{dim};
      c.grads[0] = B::template flip<Float>(B::float_cumsum(B::template flip<Float>(g, d), dim), d);
    });
  }
  static FloatPrimitive float_matmul(const FloatPrimitive& a, const FloatPrimitive& b) {
    return autodiff::record(B::float_matmul(a.value, b.value), {&a, &b}, [av = a.value, bv = b.value](const IFP& g, Ctx& c) {
      // dA = g @ B^T, dB = A^T @ g; backends that can read a transposed operand in place skip the permute copy.
      if (c.need[0]) c.grads[0] = H::sum_to(optional_ops::float_matmul_transposed<B>(g, bv, false, true), H::shape(av));
      if (c.need[1]) c.grads[1] = H::sum_to(optional_ops::float_matmul_transposed<B>(av, g, true, false), H::shape(bv));
    });
  }
  static FloatPrimitive float_fft(const FloatPrimitive& x, FftOp op, int64_t n) {
    return autodiff::record(B::float_fft(x.value, op, n), {&x},
                            [op, n](const IFP& g, Ctx& c) { c.grads[0] = autodiff::fft_backward<B>(op, n, g); });
  }

  // ---- scaled-dot-product attention: one node whatever B has (optional_ops.hpp's dispatchers pick B's fused
  // kernels or the composed default). The backward recomputes from the saved output and logsumexp; a bias that
  // requires grad takes the composed backward (the fused one does not produce the bias's gradient).
  static SdpaForward<FloatPrimitive> float_sdpa(const FloatPrimitive& q, const FloatPrimitive& k,
                                                const FloatPrimitive& v, const FloatPrimitive* bias,
                                                const SdpaOptions& o) {
    const IFP* ib = bias ? &bias->value : nullptr;
    auto r = optional_ops::float_sdpa<B>(q.value, k.value, v.value, ib, o);
    const FloatPrimitive none{};
    std::optional<IFP> bv;  // not `bias ? optional(...) : nullopt`: GCC 12 warns maybe-uninitialized on that form
    if (bias) bv = bias->value;
    auto out = autodiff::record(
        r.out, {&q, &k, &v, bias ? bias : &none},
        [qv = q.value, kv = k.value, vv = v.value, bv, ov = r.out, lse = r.lse, o](const IFP& g, Ctx& c) {
          auto gr = optional_ops::float_sdpa_backward<B>(qv, kv, vv, bv ? &*bv : nullptr, ov, lse, g, o, c.need[3]);
          if (c.need[0]) c.grads[0] = std::move(gr.q);
          if (c.need[1]) c.grads[1] = std::move(gr.k);
          if (c.need[2]) c.grads[2] = std::move(gr.v);
          if (c.need[3] && gr.bias) c.grads[3] = std::move(*gr.bias);
        });
    return {std::move(out), FloatPrimitive{std::move(r.lse), nullptr}};
  }
  static SdpaGrads<FloatPrimitive> float_sdpa_backward(const FloatPrimitive& q, const FloatPrimitive& k,
                                                       const FloatPrimitive& v, const FloatPrimitive* bias,
                                                       const FloatPrimitive& out, const FloatPrimitive& lse,
                                                       const FloatPrimitive& g, const SdpaOptions& o) {
    // Not differentiable twice.
    auto r = optional_ops::float_sdpa_backward<B>(q.value, k.value, v.value, bias ? &bias->value : nullptr, out.value,
                                                  lse.value, g.value, o, false);
    return {{r.q, nullptr}, {r.k, nullptr}, {r.v, nullptr}, std::nullopt};
  }

  // ---- attention on one qkv Linear's rows (optional_ops.hpp HasPackedSdpa): one node whatever B has; the
  // backward recomputes from the saved output and logsumexp and returns dqkv in qkv's layout.
  static std::optional<SdpaForward<FloatPrimitive>> float_sdpa_packed(const FloatPrimitive& qkv, int64_t heads,
                                                                      const SdpaOptions& o) {
    auto r = optional_ops::float_sdpa_packed<B>(qkv.value, heads, o);
    auto out = autodiff::record(r.out, {&qkv},
                                [xv = qkv.value, ov = r.out, lse = r.lse, heads, o](const IFP& g, Ctx& c) {
                                  c.grads[0] = optional_ops::float_sdpa_packed_backward<B>(xv, ov, lse, g, heads, o);
                                });
    return SdpaForward<FloatPrimitive>{std::move(out), FloatPrimitive{std::move(r.lse), nullptr}};
  }
  static std::optional<FloatPrimitive> float_sdpa_packed_backward(const FloatPrimitive& qkv, const FloatPrimitive& out,
                                                                  const FloatPrimitive& lse, const FloatPrimitive& g,
                                                                  int64_t heads, const SdpaOptions& o) {
    // Not differentiable twice.
    return FloatPrimitive{
        optional_ops::float_sdpa_packed_backward<B>(qkv.value, out.value, lse.value, g.value, heads, o), nullptr};
  }

  // ---- x [M, K] @ w [K, N] + bias [N]: one node whatever B has (optional_ops.hpp picks B's fused GEMM or the
  // composed matmul + add). dx and dw as float_matmul's backward, dbias the column sums of g.
  static FloatPrimitive float_linear(const FloatPrimitive& x, const FloatPrimitive& w, const FloatPrimitive* bias) {
    const FloatPrimitive none{};
    return autodiff::record(optional_ops::float_linear<B>(x.value, w.value, bias ? &bias->value : nullptr),
                            {&x, &w, bias ? bias : &none}, [xv = x.value, wv = w.value](const IFP& g, Ctx& c) {
                              if (c.need[0]) c.grads[0] = optional_ops::float_matmul_transposed<B>(g, wv, false, true);
                              if (c.need[1]) c.grads[1] = optional_ops::float_matmul_transposed<B>(xv, g, true, false);
                              if (c.need[2]) {
                                const Shape n{H::shape(g)[1]};
                                c.grads[2] = B::template reshape<Float>(B::float_reduce(g, ReduceOp::Sum, 0), n);
                              }
                            });
  }

  // ---- act(x @ op(w) + bias) (optional_ops.hpp float_linear_act): B's fused op (the transposed weight read in place,
  // the activation in the GEMM's output pass), and one node when something is recorded. Its backward: ReLU's step
  // from the output (y > 0 exactly where x @ op(w) + bias > 0), then dx = g @ op(w)^T, dw = x^T @ g or, for a
  // transposed [N, K] weight, g^T @ x (both GEMMs reading their transposed operand in place), dbias the column sums
  // of g. Until 2026-11-25 training recorded the weight's permute (a copy of the weight forward and of its gradient
  // backward), float_linear and the ReLU as three nodes.
  static FloatPrimitive float_linear_act(const FloatPrimitive& x, const FloatPrimitive& w, const FloatPrimitive* bias,
                                         bool trans_w, LinearActivation act) {
    auto y = optional_ops::float_linear_act<B>(x.value, w.value, bias ? &bias->value : nullptr, trans_w, act);
    if (autodiff::no_grad_flag() || (!x.node && !w.node && !(bias && bias->node))) return {std::move(y), nullptr};
    const FloatPrimitive none{};
    const bool relu = act == LinearActivation::Relu;
    return autodiff::record(
        y, {&x, &w, bias ? bias : &none},
        [xv = x.value, wv = w.value, yv = relu ? std::optional<IFP>(y) : std::nullopt, trans_w](const IFP& g_out,
                                                                                                  Ctx& c) {
          const IFP g = yv ? optional_ops::float_unary_backward<B>(UnaryOp::Relu, *yv, *yv, g_out) : g_out;
          if (c.need[0]) c.grads[0] = optional_ops::float_matmul_transposed<B>(g, wv, false, !trans_w);
          if (c.need[1])
            c.grads[1] = trans_w ? optional_ops::float_matmul_transposed<B>(g, xv, true, false)
                                 : optional_ops::float_matmul_transposed<B>(xv, g, true, false);
          if (c.need[2]) {
            const Shape n{H::shape(g)[1]};
            c.grads[2] = B::template reshape<Float>(B::float_reduce(g, ReduceOp::Sum, 0), n);
          }
        });
  }

  // ---- LayerNorm over the last dim: one node whatever B has (optional_ops.hpp picks B's fused kernels or the
  // composed default), its backward from the saved row mean and rstd. Not differentiable twice.
  static LayerNormForward<FloatPrimitive> float_layer_norm(const FloatPrimitive& x, const FloatPrimitive& gamma,
                                                           const FloatPrimitive& beta, double eps) {
    auto r = optional_ops::float_layer_norm<B>(x.value, gamma.value, beta.value, eps);
    auto out = autodiff::record(
        r.out, {&x, &gamma, &beta},
        [xv = x.value, gv = gamma.value, mean = r.mean, rstd = r.rstd](const IFP& g, Ctx& c) {
          auto gr = optional_ops::float_layer_norm_backward<B>(xv, gv, mean, rstd, g);
          if (c.need[0]) c.grads[0] = std::move(gr.x);
          if (c.need[1]) c.grads[1] = std::move(gr.gamma);
          if (c.need[2]) c.grads[2] = std::move(gr.beta);
        });
    return {std::move(out), FloatPrimitive{std::move(r.mean), nullptr}, FloatPrimitive{std::move(r.rstd), nullptr}};
  }
  static LayerNormGrads<FloatPrimitive> float_layer_norm_backward(const FloatPrimitive& x, const FloatPrimitive& gamma,
                                                                  const FloatPrimitive& mean,
                                                                  const FloatPrimitive& rstd, const FloatPrimitive& g) {
    auto r = optional_ops::float_layer_norm_backward<B>(x.value, gamma.value, mean.value, rstd.value, g.value);
    return {{r.x, nullptr}, {r.gamma, nullptr}, {r.beta, nullptr}};
  }

  // ---- Cross entropy over class-index targets: one node whatever B has (optional_ops.hpp picks B's fused kernels or
  // the composed default), its backward from the saved row logsumexp. Not differentiable twice.
  static CrossEntropyForward<FloatPrimitive> float_cross_entropy(const FloatPrimitive& x, const IntPrimitive& t) {
    auto r = optional_ops::float_cross_entropy<B>(x.value, t);
    auto loss = autodiff::record(r.loss, {&x}, [xv = x.value, t, lse = r.lse](const IFP& g, Ctx& c) {
      if (c.need[0]) c.grads[0] = optional_ops::float_cross_entropy_backward<B>(xv, t, lse, g);
    });
    return {std::move(loss), FloatPrimitive{std::move(r.lse), nullptr}};
  }
  static FloatPrimitive float_cross_entropy_backward(const FloatPrimitive& x, const IntPrimitive& t,
                                                     const FloatPrimitive& lse, const FloatPrimitive& g) {
    return {optional_ops::float_cross_entropy_backward<B>(x.value, t, lse.value, g.value), nullptr};
  }

  // ---- module ops
  static FloatPrimitive conv2d(const FloatPrimitive& x, const FloatPrimitive& w, const FloatPrimitive* bias,
                               const Conv2dOptions& o) {
    const IFP* ib = bias ? &bias->value : nullptr;
    IFP y = B::conv2d(x.value, w.value, ib, o);
    const bool has_bias = bias != nullptr;
    const FloatPrimitive none{};
    return autodiff::record(std::move(y), {&x, &w, bias ? bias : &none},
                            [xv = x.value, wv = w.value, has_bias, o](const IFP& g, Ctx& c) {
                              auto gr = B::conv2d_backward(xv, wv, g, has_bias, o);
                              if (c.need[0]) c.grads[0] = std::move(gr.input);
                              if (c.need[1]) c.grads[1] = std::move(gr.weight);
                              if (c.need[2] && gr.bias) c.grads[2] = std::move(*gr.bias);
                            });
  }
  static Conv2dGrads<FloatPrimitive> conv2d_backward(const FloatPrimitive& x, const FloatPrimitive& w,
                                                     const FloatPrimitive& g, bool has_bias, const Conv2dOptions& o) {
    auto r = B::conv2d_backward(x.value, w.value, g.value, has_bias, o);  // not differentiable twice
    Conv2dGrads<FloatPrimitive> out{{r.input, nullptr}, {r.weight, nullptr}, std::nullopt};
    if (r.bias) out.bias = FloatPrimitive{*r.bias, nullptr};
    return out;
  }
  static MaxPoolResult<FloatPrimitive, IntPrimitive> max_pool2d(const FloatPrimitive& x, const Pool2dOptions& o) {
    auto r = B::max_pool2d(x.value, o);
    auto out = autodiff::record(r.output, {&x}, [xv = x.value, idx = r.indices](const IFP& g, Ctx& c) {
      c.grads[0] = B::max_pool2d_backward(xv, g, idx);
    });
    return {std::move(out), std::move(r.indices)};
  }
  static FloatPrimitive max_pool2d_backward(const FloatPrimitive& x, const FloatPrimitive& g, const IntPrimitive& i) {
    return {B::max_pool2d_backward(x.value, g.value, i), nullptr};
  }
  static FloatPrimitive avg_pool2d(const FloatPrimitive& x, const Pool2dOptions& o) {
    return autodiff::record(B::avg_pool2d(x.value, o), {&x}, [xv = x.value, o](const IFP& g, Ctx& c) {
      c.grads[0] = B::avg_pool2d_backward(xv, g, o);
    });
  }
  static FloatPrimitive avg_pool2d_backward(const FloatPrimitive& x, const FloatPrimitive& g, const Pool2dOptions& o) {
    return {B::avg_pool2d_backward(x.value, g.value, o), nullptr};
  }
  static FloatPrimitive adaptive_avg_pool2d(const FloatPrimitive& x, std::array<int64_t, 2> hw) {
    return autodiff::record(B::adaptive_avg_pool2d(x.value, hw), {&x}, [xv = x.value](const IFP& g, Ctx& c) {
      c.grads[0] = B::adaptive_avg_pool2d_backward(xv, g);
    });
  }
  static FloatPrimitive adaptive_avg_pool2d_backward(const FloatPrimitive& x, const FloatPrimitive& g) {
    return {B::adaptive_avg_pool2d_backward(x.value, g.value), nullptr};
  }

  // ---- conv_transpose2d: not a Backend op; composed from conv2d / conv2d_backward (engine/backend/conv_transpose.hpp)
  // and recorded here as one node, so its backward is the two adjoint convolutions rather than a chain of them.
  static FloatPrimitive conv_transpose2d(const FloatPrimitive& x, const FloatPrimitive& w, const FloatPrimitive* bias,
                                         const ConvTranspose2dOptions& o) {
    const IFP* ib = bias ? &bias->value : nullptr;
    IFP y = conv_transpose::forward<B>(x.value, w.value, ib, o);
    const FloatPrimitive none{};
    return autodiff::record(std::move(y), {&x, &w, bias ? bias : &none},
                            [xv = x.value, wv = w.value, has_bias = bias != nullptr, o](const IFP& g, Ctx& c) {
                              auto gr = conv_transpose::backward<B>(xv, wv, g, c.need[0], c.need[1],
                                                                    has_bias && c.need[2], o);
                              if (gr.input) c.grads[0] = std::move(*gr.input);
                              if (gr.weight) c.grads[1] = std::move(*gr.weight);
                              if (gr.bias) c.grads[2] = std::move(*gr.bias);
                            });
  }
};

using autodiff::NoGrad;

}  // namespace ember
