// The typed engine's remaining tensor ops on runtime tensors (issue 11: everything the typed engine computes is
// reachable from C): expand, flip, repeat, scatter_add, masked_fill, var, adaptive_avg_pool2d and two losses.
// Each validates as the typed op does, plus what a C caller can pass and a typed caller cannot (ranks, overflowing
// sizes), then runs the same backend primitives or typed engine function, so gradients come with them.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "c_api/src/runtime/backend_ops.hpp"
#include "engine/nn/loss/binary_cross_entropy.hpp"
#include "engine/nn/loss/huber.hpp"

namespace ember::capi {
namespace {

std::string dims_text(const std::vector<int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

// Product of dims[b, e) (the caller checked the shape, so it cannot overflow).
int64_t prod(const Shape& s, std::size_t b, std::size_t e) {
  int64_t n = 1;
  for (std::size_t k = b; k < e; ++k) n *= s[k];
  return n;
}

// A loss's two float operands of one shape, at least 1-D, as typed tensors of that rank: f(input, target) -> [1]
// loss, given back as a scalar (rank 0) like PyTorch's reduced losses.
template <class B, class F>
DynTensor same_shape_loss(const char* op, const DynTensor& a, const DynTensor& b, F&& f) {
  return visit_same<B, DynTensor>(a, b, op, [&](const auto& at, const auto& bt) -> DynTensor {
    const auto& ap = float_of(at, std::string(op) + ": input");
    const auto& bp = float_of(bt, std::string(op) + ": target");
    const Shape as = tensor_shape(at), bs = tensor_shape(bt);
    if (!(as == bs))
      throw ShapeError(fmt::format("{}: input {} and target {} must have the same shape", op, as.to_string(),
                                   bs.to_string()));
    return with_rank(op, std::max<std::size_t>(as.rank(), 1), [&](auto d) -> DynTensor {
      constexpr std::size_t D = decltype(d)::value;
      const auto loss = f(typed<B, D>(at_least_1d<B, Float>(ap)), typed<B, D>(at_least_1d<B, Float>(bp)));
      return wrap<B, Float>(to_scalar_if<B, Float>(true, loss.primitive()));
    });
  });
}

}  // namespace

namespace ops {

template <class B>
DynTensor expand(const DynTensor& x, const std::vector<int64_t>& shape) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const Shape from = tensor_shape(t);
        if (shape.size() > kMaxRank)
          throw ShapeError(fmt::format("expand: rank {} is outside 0..{}", shape.size(), kMaxRank));
        if (shape.size() < from.rank())
          throw ShapeError(fmt::format("expand: {} sizes for a tensor of rank {} (at least its rank)", shape.size(),
                                       from.rank()));
        Shape to(shape);
        const std::size_t lead = shape.size() - from.rank();
        for (std::size_t i = 0; i < to.rank(); ++i) {
          const bool has = i >= lead;
          const int64_t f = has ? from[i - lead] : 1;
          if (to[i] == -1) {
            if (!has) throw ShapeError("expand: -1 for a new leading dim in " + dims_text(shape));
            to[i] = f;
          }
          if (to[i] < 0) throw ShapeError("expand: negative size in " + dims_text(shape));
          if (f != to[i] && f != 1)
            throw ShapeError(fmt::format("expand: cannot broadcast {} to {} (size {} at dim {} is not 1)",
                                         from.to_string(), to.to_string(), f, i));
        }
        check_shape("expand", to);
        if (to.rank() == 0) return t;  // a scalar to a scalar
        return visit_kind(t, [&](auto k, const auto& p) -> DynTensor {
          using K = decltype(k);
          return wrap<B, K>(B::template expand<K>(at_least_1d<B, K>(p), to));
        });
      },
      x);
}

template <class B>
DynTensor flip(const DynTensor& x, const std::vector<int64_t>& dims) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const Shape s = tensor_shape(t);
        std::vector<std::size_t> ds;
        for (int64_t d : dims) {
          const std::size_t w = wrap_dim("flip", d, std::max<std::size_t>(s.rank(), 1));  // a scalar takes 0 / -1
          if (std::find(ds.begin(), ds.end(), w) != ds.end())
            throw ArgumentError(fmt::format("flip: dim {} appears more than once in {}", d, dims_text(dims)));
          ds.push_back(w);
        }
        if (s.rank() == 0 || ds.empty()) return t;  // nothing moves
        return visit_kind(t, [&](auto k, const auto& p) -> DynTensor {
          using K = decltype(k);
          return wrap<B, K>(B::template flip<K>(p, ds));
        });
      },
      x);
}

template <class B>
DynTensor repeat(const DynTensor& x, const std::vector<int64_t>& times) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const Shape s0 = tensor_shape(t);
        if (times.size() > kMaxRank)
          throw ShapeError(fmt::format("repeat: {} counts (at most {})", times.size(), kMaxRank));
        if (times.size() < s0.rank())
          throw ShapeError(fmt::format("repeat: {} counts for a tensor of rank {} (at least its rank)", times.size(),
                                       s0.rank()));
        Shape s = s0;  // x with leading 1s up to times.size() dims
        s.dims.insert(s.dims.begin(), times.size() - s0.rank(), 1);
        Shape out = s;
        for (std::size_t i = 0; i < s.rank(); ++i) {
          if (times[i] < 0) throw ArgumentError("repeat: negative count in " + dims_text(times));
          if (__builtin_mul_overflow(s[i], times[i], &out[i]))
            throw ShapeError(fmt::format("repeat: {} times {} has too many elements", s.to_string(), dims_text(times)));
        }
        check_shape("repeat", out);
        if (out.rank() == 0) return t;  // a scalar repeated by no counts
        return visit_kind(t, [&](auto k, const auto& p0) -> DynTensor {
          using K = decltype(k);
          Primitive<B, K> p = B::template reshape<K>(p0, s);
          if (out.num_elements() == 0) {
            // Nothing to tile: x's first dim sliced to nothing, reshaped to the result. The tiling below would build
            // intermediate shapes such as [48, 2^62, 0] whose nonzero dims overflow (a fuzzer find: x [48, 0] with
            // counts [1, 2^62]), although the result [48, 0] is fine.
            p = B::template slice<K>(p, std::vector<Range>{Range{0, 0}});
            return wrap<B, K>(B::template reshape<K>(p, out));
          }
          Shape cur = s;
          for (std::size_t w = 0; w < s.rank(); ++w) {
            if (times[w] == 1) continue;
            // Tiling along w, at rank 3 whatever x's rank: [outer, 1, rest] expanded to [outer, times, rest],
            // where rest = cur[w] * inner, laid out as cur with dim w multiplied.
            const int64_t outer = prod(cur, 0, w), rest = prod(cur, w, cur.rank());
            p = B::template reshape<K>(p, Shape{outer, 1, rest});
            p = B::template expand<K>(p, Shape{outer, times[w], rest});
            cur[w] *= times[w];
            p = B::template reshape<K>(p, cur);
          }
          return wrap<B, K>(p);
        });
      },
      x);
}

template <class B>
DynTensor scatter_add(const DynTensor& x, int64_t dim, const DynTensor& indices, const DynTensor& values) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto& idx = int_of(same_backend<B>(indices, t, "scatter_add"), "scatter_add: indices");
        const auto& v = same_backend<B>(values, t, "scatter_add");
        if (t.kind() == Kind::Bool) throw KindError("scatter_add: not defined for bool tensors");
        if (v.kind() != t.kind())
          throw KindError(fmt::format("scatter_add: values ({}) must have x's dtype ({})",
                                      dtype_name(tensor_dtype(v)), dtype_name(tensor_dtype(t))));
        const Shape xs = tensor_shape(t), is = B::template shape<Int>(idx), vs = tensor_shape(v);
        const std::size_t w = wrap_dim("scatter_add", dim, xs.rank());
        checks::gather("scatter_add", w, xs, is);
        if (!(vs == is))
          throw ShapeError(fmt::format("scatter_add: values {} must have the shape of indices {}", vs.to_string(),
                                       is.to_string()));
        return visit_kind(t, [&](auto k, const auto& p) -> DynTensor {  // index values are checked by the backend
          using K = decltype(k);
          if constexpr (std::is_same_v<K, Bool>) throw KindError("scatter_add: not defined for bool tensors");
          else return wrap<B, K>(B::template scatter_add<K>(w, p, idx, std::get<kind_index<K>()>(v.prim)));
        });
      },
      x);
}

template <class B>
DynTensor masked_fill(const DynTensor& x, const DynTensor& mask, double value) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto& m = bool_of(same_backend<B>(mask, t, "masked_fill"), "masked_fill: mask");
        const Shape xs = tensor_shape(t), ms = B::template shape<Bool>(m);
        if (!(broadcast_shapes("masked_fill", ms, xs) == xs))
          throw ShapeError(fmt::format("masked_fill: mask {} does not broadcast to x's shape {}", ms.to_string(),
                                       xs.to_string()));
        if (t.kind() == Kind::Int) {
          if (!(std::isfinite(value) && std::abs(value) < 9.2e18))
            throw ArgumentError(fmt::format("masked_fill: value {} is not representable in an int tensor", value));
          value = std::trunc(value);
        } else if (t.kind() == Kind::Bool) {
          value = value != 0 ? 1.0 : 0.0;  // NaN is true, as bool(nan) is
        }
        const std::size_t r = std::max<std::size_t>(xs.rank(), 1);
        const auto m1 = lift_rank<B, Bool>(m, r);
        return visit_kind(t, [&](auto k, const auto& p) -> DynTensor {
          using K = decltype(k);
          return wrap<B, K>(to_scalar_if<B, K>(xs.rank() == 0, B::template mask_fill<K>(at_least_1d<B, K>(p), m1, value)));
        });
      },
      x);
}

template <class B>
DynTensor var(const DynTensor& x, int64_t dim, int64_t correction, bool keepdim) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto& p0 = float_of(t, "var: x");
        const Shape s = tensor_shape(t);
        const std::size_t w = wrap_dim("var", dim, std::max<std::size_t>(s.rank(), 1));
        const auto p = at_least_1d<B, Float>(p0);
        const int64_t n = s.rank() ? s[w] : 1;
        // Typed Tensor::var's formula (keepdim throughout, so the mean broadcasts back over dim w).
        const auto centered = B::float_binary(p, B::float_reduce(p, ReduceOp::Mean, w), BinaryOp::Sub);
        const auto sq_sum = B::float_reduce(B::float_binary(centered, centered, BinaryOp::Mul), ReduceOp::Sum, w);
        // n - correction as a double: a hostile correction (INT64_MIN) must not overflow int64.
        const double dof = std::max(static_cast<double>(n) - static_cast<double>(correction), 0.0);
        auto y = B::float_scalar(sq_sum, ScalarOp::Div, dof);
        if (s.rank() == 0) return wrap<B, Float>(to_scalar_if<B, Float>(true, y));
        if (!keepdim) {
          Shape ys = s;
          ys.dims.erase(ys.dims.begin() + static_cast<std::ptrdiff_t>(w));
          y = B::template reshape<Float>(y, ys);
        }
        return wrap<B, Float>(y);
      },
      x);
}

template <class B>
DynTensor adaptive_avg_pool2d(const DynTensor& x, int64_t out_h, int64_t out_w) {
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto& p = float_of(t, "adaptive_avg_pool2d: input");
        const Shape s = tensor_shape(t);
        if (s.rank() != 4) throw ShapeError("adaptive_avg_pool2d: input must be rank 4, got " + s.to_string());
        if (out_h < 1 || out_w < 1)
          throw ArgumentError(fmt::format("adaptive_avg_pool2d: output size must be positive, got [{}, {}]", out_h,
                                          out_w));
        check_shape("adaptive_avg_pool2d", Shape{s[0], s[1], out_h, out_w});
        return wrap<B, Float>(ember::adaptive_avg_pool2d<B>(typed<B, 4>(p), {out_h, out_w}).primitive());
      },
      x);
}

template <class B>
DynTensor huber_loss(const DynTensor& input, const DynTensor& target, nn::Reduction r, double delta) {
  return same_shape_loss<B>("huber_loss", input, target,
                            [&](const auto& a, const auto& b) { return nn::huber_loss<B>(a, b, delta, r); });
}

template <class B>
DynTensor bce_with_logits(const DynTensor& logits, const DynTensor& targets, nn::Reduction r) {
  return same_shape_loss<B>("binary_cross_entropy_with_logits", logits, targets, [&](const auto& a, const auto& b) {
    return nn::binary_cross_entropy_with_logits<B>(a, b, r);
  });
}

}  // namespace ops

EMBER_RUNTIME_ENGINE_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
