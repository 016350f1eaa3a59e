// Sorting, scanning and mask ops on runtime tensors (issue 13; ember.h: ember_tensor_sort, _argsort, _topk,
// _cumsum, _tril, _triu, _masked_select, ember_one_hot). Each runs the typed Tensor API's op at the operand's rank
// (with_rank), so validation, errors and gradients are the typed engine's. A rank-0 operand is met as [1] and its
// result given back as [] where torch gives a scalar (argsort, cumsum). sort and topk's values are a gather at
// these indices (api_sort.cpp), so under autodiff the gradient is scattered back through them.
#include <fmt/format.h>

#include "c_api/src/runtime/backend_ops.hpp"

namespace ember::capi {
namespace {

constexpr std::size_t at_least_one(std::size_t rank) { return rank < 1 ? 1 : rank; }

}  // namespace

namespace ops {

template <class B>
DynTensor argsort(const DynTensor& x, int64_t dim, bool descending) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto& p = float_of(t, "argsort: x");
        const Shape s = tensor_shape(t);
        return with_rank("argsort", at_least_one(s.rank()), [&](auto d) -> DynTensor {
          constexpr std::size_t D = decltype(d)::value;
          const auto idx = typed<B, D>(at_least_1d<B, Float>(p)).argsort(dim, descending);
          return wrap<B, Int>(to_scalar_if<B, Int>(s.rank() == 0, idx.primitive()));
        });
      },
      x);
}

template <class B>
DynTensor topk_indices(const DynTensor& x, int64_t k, int64_t dim, bool largest) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto& p = float_of(t, "topk: x");
        const Shape s = tensor_shape(t);
        if (s.rank() == 0) throw ShapeError("topk: x is a scalar (rank 0); topk needs a dim to select along");
        return with_rank("topk", s.rank(), [&](auto d) -> DynTensor {
          constexpr std::size_t D = decltype(d)::value;
          return wrap<B, Int>(typed<B, D>(p).topk(k, dim, largest).second.primitive());
        });
      },
      x);
}

template <class B>
DynTensor cumsum(const DynTensor& x, int64_t dim) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto& p = float_of(t, "cumsum: x");
        const Shape s = tensor_shape(t);
        return with_rank("cumsum", at_least_one(s.rank()), [&](auto d) -> DynTensor {
          constexpr std::size_t D = decltype(d)::value;
          const auto y = typed<B, D>(at_least_1d<B, Float>(p)).cumsum(dim);
          return wrap<B, Float>(to_scalar_if<B, Float>(s.rank() == 0, y.primitive()));
        });
      },
      x);
}

template <class B>
DynTensor triangle(const DynTensor& x, int64_t diagonal, bool upper) {
  const char* name = upper ? "triu" : "tril";
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const Shape s = tensor_shape(t);
        if (s.rank() < 2)
          throw ShapeError(fmt::format("{}: x must have at least 2 dims, got shape {}", name, s.to_string()));
        return with_rank(name, s.rank(), [&](auto d) -> DynTensor {
          constexpr std::size_t D = decltype(d)::value;
          if constexpr (D < 2) {
            throw ShapeError(fmt::format("{}: x must have at least 2 dims", name));
          } else {
            return visit_kind(t, [&](auto k, const auto& pk) -> DynTensor {
              using K = decltype(k);
              const auto tk = typed<B, D, K>(pk);
              return wrap<B, K>((upper ? tk.triu(diagonal) : tk.tril(diagonal)).primitive());
            });
          }
        });
      },
      x);
}

template <class B>
DynTensor masked_select(const DynTensor& x, const DynTensor& mask) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto& m = bool_of(same_backend<B>(mask, t, "masked_select"), "masked_select: mask");
        const Shape xs = tensor_shape(t), ms = B::template shape<Bool>(m);
        // Both at the larger rank (NumPy alignment), at least 1: the typed op broadcasts same-rank operands.
        const std::size_t r = at_least_one(std::max(xs.rank(), ms.rank()));
        return with_rank("masked_select", r, [&](auto d) -> DynTensor {
          constexpr std::size_t D = decltype(d)::value;
          const auto tm = typed<B, D, Bool>(lift_rank<B, Bool>(m, D));
          return visit_kind(t, [&](auto k, const auto& pk) -> DynTensor {
            using K = decltype(k);
            return wrap<B, K>(typed<B, D, K>(lift_rank<B, K>(pk, D)).masked_select(tm).primitive());
          });
        });
      },
      x);
}

template <class B>
DynTensor one_hot(const DynTensor& x, int64_t num_classes) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto& p = int_of(t, "one_hot: x");
        const Shape s = tensor_shape(t);
        if (s.rank() + 1 > kMaxRank)
          throw ShapeError(fmt::format("one_hot: x of rank {} would give rank {} (at most {})", s.rank(),
                                       s.rank() + 1, kMaxRank));
        if (s.rank() == 0) {  // a scalar class gives one vector [num_classes]
          const auto y = typed<B, 1, Int>(at_least_1d<B, Int>(p)).one_hot(num_classes);
          return wrap<B, Int>(y.template squeeze<1>(0).primitive());
        }
        return with_rank("one_hot", s.rank(), [&](auto d) -> DynTensor {
          constexpr std::size_t D = decltype(d)::value;
          if constexpr (D + 1 > kMaxRank) {
            throw ShapeError("one_hot: the result's rank is too large");
          } else {
            return wrap<B, Int>(typed<B, D, Int>(p).one_hot(num_classes).primitive());
          }
        });
      },
      x);
}

}  // namespace ops

EMBER_RUNTIME_SORT_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
