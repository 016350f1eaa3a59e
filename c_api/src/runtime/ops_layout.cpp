// Layout and indexing ops on runtime tensors: kind-generic, straight on the backend primitives. A scalar (rank 0)
// reshapes to and from any one-element shape and permutes by no axes; slicing, cat and indexing need a dim.
#include "c_api/src/runtime/backend_ops.hpp"
#include "engine/backend/optional_ops.hpp"

namespace ember::capi {
namespace {

// A float primitive that requires no grad is sliced or reshaped by the backend under Autodiff<B> directly: Autodiff's
// op would first build its backward closure (the ranges, the shapes) only to drop it, a large part of the C cost of
// x[i] and x[:, a:b] on small tensors. (ops_math.cpp does the same for elementwise ops.)
template <class B>
concept AutodiffOver = requires { typename B::InnerBackend; };

template <class B, class K>
Primitive<B, K> slice_of(const Primitive<B, K>& p, const std::vector<Range>& r) {
  if constexpr (std::is_same_v<K, Float> && AutodiffOver<B>)
    if (!p.node) return {B::InnerBackend::template slice<Float>(p.value, r), nullptr};
  return B::template slice<K>(p, r);
}
template <class B, class K>
Primitive<B, K> reshape_of(const Primitive<B, K>& p, const Shape& to) {
  if constexpr (std::is_same_v<K, Float> && AutodiffOver<B>)
    if (!p.node) return {B::InnerBackend::template reshape<Float>(p.value, to), nullptr};
  return B::template reshape<K>(p, to);
}

// p[index] along dim d (index in range), the dim dropped: `to` is that shape. Through the optional-ops dispatcher
// (the CPU's one-step select, a slice + reshape elsewhere); under Autodiff straight on the inner backend unless a
// float primitive requires grad (then Autodiff's slice and reshape record the backward).
template <class B, class K>
Primitive<B, K> select_of(const Primitive<B, K>& p, std::size_t d, int64_t index, Shape to) {
  if constexpr (AutodiffOver<B>) {
    using Inner = typename B::InnerBackend;
    if constexpr (!std::is_same_v<K, Float>) return optional_ops::select<Inner, K>(p, d, index, std::move(to));
    else if (!p.node) return {optional_ops::select<Inner, Float>(p.value, d, index, std::move(to)), nullptr};
  }
  return optional_ops::select<B, K>(p, d, index, std::move(to));
}

}  // namespace

namespace ops {

template <class B>
DynTensor reshape(const DynTensor& x, const std::vector<int64_t>& dims) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const Shape from = tensor_shape(t);
        if (dims.size() > kMaxRank)
          throw ShapeError("reshape: rank " + std::to_string(dims.size()) + " is outside 0.." + std::to_string(kMaxRank));
        Shape probe;  // nonzero requested dims must not overflow checks::reshape's product, whatever their order
        for (auto d : dims) probe.dims.push_back(d == -1 || d == 0 ? 1 : d);
        check_shape("reshape", probe);
        const Shape to = checks::reshape("reshape", from, dims);
        return visit_kind(t, [&](auto k, const auto& p) -> DynTensor {
          using K = decltype(k);
          return wrap<B, K>(reshape_of<B, K>(p, to));
        });
      },
      x);
}

template <class B>
DynTensor permute(const DynTensor& x, const std::vector<int64_t>& axes) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto perm = checks::permutation("permute", axes, tensor_shape(t).rank());
        if (perm.empty()) return t;  // a scalar
        return visit_kind(t, [&](auto k, const auto& p) -> DynTensor {
          using K = decltype(k);
          return wrap<B, K>(B::template permute<K>(p, perm));
        });
      },
      x);
}

template <class B>
DynTensor slice(const DynTensor& x, const std::vector<checks::SliceArg>& ranges) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const Shape s = tensor_shape(t);
        if (s.rank() == 0) throw IndexError("slice: a rank-0 tensor has no dim to slice");
        const auto r = checks::slice_ranges("slice", s, ranges);
        return visit_kind(t, [&](auto k, const auto& p) -> DynTensor {
          using K = decltype(k);
          return wrap<B, K>(slice_of<B, K>(p, r));
        });
      },
      x);
}

// x[index] along dim (PyTorch's select): the slice and the reshape dropping the dim in one runtime call, on one
// primitive (a contiguous row of a CPU tensor shares its storage: backends/cpu/allocator.hpp, borrow).
template <class B>
DynTensor select(const DynTensor& x, int64_t dim, int64_t index) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        Shape s = tensor_shape(t);
        if (s.rank() == 0) throw IndexError("select: a rank-0 tensor has no dim to select from");
        const std::size_t d = wrap_dim("select", dim, s.rank());
        const int64_t size = s[d];
        if (index < -size || index >= size)
          throw IndexError(fmt::format("select(): index {} out of range for tensor of size {} at dimension {}",
                                       index, s.to_string(), dim));
        const int64_t at = index < 0 ? index + size : index;
        s.dims.erase(s.dims.begin() + static_cast<std::ptrdiff_t>(d));
        return visit_kind(t, [&](auto k, const auto& p) -> DynTensor {
          using K = decltype(k);
          return wrap<B, K>(select_of<B, K>(p, d, at, std::move(s)));
        });
      },
      x);
}

template <class B>
DynTensor cat(const std::vector<const DynTensor*>& xs, int64_t dim) {
  if (xs.empty()) throw ArgumentError("cat: empty list of tensors");
  return visit_backend<B>(
      [&](const auto& first) -> DynTensor {
        std::vector<const BackendTensor<B>*> ts;
        std::vector<Shape> shapes;
        for (const DynTensor* x : xs) {
          const auto& t = same_backend<B>(*x, first, "cat");
          if (t.kind() != first.kind())
            throw KindError("cat: tensors of kinds " + std::string(kind_name(first.kind())) + " and " +
                            kind_name(t.kind()));
          ts.push_back(&t);
          shapes.push_back(tensor_shape(t));
        }
        if (shapes[0].rank() == 0) throw ShapeError("cat: a rank-0 tensor cannot be concatenated (reshape it to [1])");
        const std::size_t w = wrap_dim("cat", dim, shapes[0].rank());
        checks::cat("cat", shapes, w);
        Shape out = shapes[0];
        out[w] = 0;
        for (const auto& s : shapes) {
          if (s[w] > (int64_t(1) << 59) - out[w]) throw ShapeError("cat: the result has too many elements");
          out[w] += s[w];
        }
        check_shape("cat", out);
        if (ts.size() == 1) return first;
        return visit_kind(first, [&](auto k, const auto&) -> DynTensor {
          using K = decltype(k);
          std::vector<Primitive<B, K>> ps;
          for (auto* t : ts) ps.push_back(std::get<kind_index<K>()>(t->prim));
          return wrap<B, K>(B::template cat<K>(ps, w));
        });
      },
      *xs[0]);
}

template <class B>
DynTensor index_select(const DynTensor& x, int64_t dim, const DynTensor& indices) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto& idx = int_of(same_backend<B>(indices, t, "index_select"), "index_select: indices");
        const Shape is = B::template shape<Int>(idx);
        if (is.rank() != 1) throw ShapeError("index_select: indices must be rank 1, got " + is.to_string());
        const std::size_t w = wrap_dim("index_select", dim, tensor_shape(t).rank());
        return visit_kind(t, [&](auto k, const auto& p) -> DynTensor {  // index values are checked by the backend
          using K = decltype(k);
          return wrap<B, K>(B::template index_select<K>(p, w, idx));
        });
      },
      x);
}

template <class B>
DynTensor gather(const DynTensor& x, int64_t dim, const DynTensor& indices) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto& idx = int_of(same_backend<B>(indices, t, "gather"), "gather: indices");
        const Shape xs = tensor_shape(t);
        const std::size_t w = wrap_dim("gather", dim, xs.rank());
        checks::gather("gather", w, xs, B::template shape<Int>(idx));
        if (t.kind() == Kind::Bool) throw KindError("gather: not defined for bool tensors");
        return visit_kind(t, [&](auto k, const auto& p) -> DynTensor {
          using K = decltype(k);
          return wrap<B, K>(B::template gather<K>(w, p, idx));
        });
      },
      x);
}

}  // namespace ops

EMBER_RUNTIME_LAYOUT_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
