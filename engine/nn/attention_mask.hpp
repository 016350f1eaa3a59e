#pragma once
// Attention masks as PyTorch 1.13's MultiheadAttention takes them, turned into one additive float bias.
//
// A bool mask marks the positions that may NOT be attended (true = masked out) and becomes -inf there, 0 elsewhere;
// a float mask is added to the scores as it is. PyTorch 1.13 merges a bool key_padding_mask into a float attn_mask
// with masked_fill(-inf) and converts bool to float the same way, so adding the two biases gives its result for
// every combination (and PyTorch 2's, where float key padding masks are added too).
//
//   attn_mask         [L, S]  or [N * H, L, S] (head-major per batch element, as torch's 3-D mask)
//   key_padding_mask  [N, S]
//   bias              [N or 1, H or 1, L or 1, S]  (broadcastable to [N, H, L, S], the shape SDPA takes)
#include <limits>
#include <optional>
#include <variant>

#include <fmt/format.h>

#include "engine/tensor/tensor.hpp"

namespace ember::nn {

// A mask of rank D, bool (true = masked out) or float (added to the scores). Implicit from either tensor, so
// callers write forward(q, k, v, {.key_padding_mask = padding}) with whichever they have.
template <Backend B, std::size_t D>
class AttentionMask {
 public:
  AttentionMask(Tensor<B, D, Bool> mask) : mask_(std::move(mask)) {}  // NOLINT(google-explicit-constructor)
  AttentionMask(Tensor<B, D> bias) : mask_(std::move(bias)) {}       // NOLINT(google-explicit-constructor)

  std::array<int64_t, D> dims() const {
    return std::visit([](const auto& t) { return t.dims(); }, mask_);
  }
  bool is_bool() const { return std::holds_alternative<Tensor<B, D, Bool>>(mask_); }

  // The additive bias: -inf where a bool mask is true, 0 elsewhere; a float mask unchanged.
  Tensor<B, D> bias() const {
    if (const auto* b = std::get_if<Tensor<B, D, Bool>>(&mask_))
      return Tensor<B, D>::zeros(b->dims(), b->device()).mask_fill(*b, -std::numeric_limits<double>::infinity());
    return std::get<Tensor<B, D>>(mask_);
  }

 private:
  std::variant<Tensor<B, D, Bool>, Tensor<B, D>> mask_;
};

// attn_mask is 2-D or 3-D in PyTorch.
template <Backend B>
using AttnMask = std::variant<AttentionMask<B, 2>, AttentionMask<B, 3>>;

namespace detail {

// The merged additive bias for `batch` x `heads` attention of `tgt_len` queries over `src_len` keys, or nullopt
// when neither mask is given. Shapes are checked against torch's rules with messages naming the expected shape.
template <Backend B>
std::optional<Tensor<B, 4>> attention_bias(const std::optional<AttnMask<B>>& attn_mask,
                                           const std::optional<AttentionMask<B, 2>>& key_padding_mask, int64_t batch,
                                           int64_t heads, int64_t tgt_len, int64_t src_len) {
  std::optional<Tensor<B, 4>> bias;
  if (attn_mask) {
    if (const auto* m2 = std::get_if<AttentionMask<B, 2>>(&*attn_mask)) {
      const auto d = m2->dims();
      if (d[0] != tgt_len || d[1] != src_len)
        throw ShapeError(fmt::format("MultiheadAttention: 2-D attn_mask is [{}, {}], expected [{}, {}]", d[0], d[1],
                                     tgt_len, src_len));
      bias = m2->bias().template reshape<4>({1, 1, tgt_len, src_len});
    } else {
      const auto& m3 = std::get<AttentionMask<B, 3>>(*attn_mask);
      const auto d = m3.dims();
      if (d[0] != batch * heads || d[1] != tgt_len || d[2] != src_len)
        throw ShapeError(fmt::format("MultiheadAttention: 3-D attn_mask is [{}, {}, {}], expected [{}, {}, {}]",
                                     d[0], d[1], d[2], batch * heads, tgt_len, src_len));
      bias = m3.bias().template reshape<4>({batch, heads, tgt_len, src_len});
    }
  }
  if (key_padding_mask) {
    const auto d = key_padding_mask->dims();
    if (d[0] != batch || d[1] != src_len)
      throw ShapeError(fmt::format("MultiheadAttention: key_padding_mask is [{}, {}], expected [{}, {}]", d[0], d[1],
                                   batch, src_len));
    auto kp = key_padding_mask->bias().template reshape<4>({batch, 1, 1, src_len});
    bias = bias ? bias->add(kp) : kp;
  }
  return bias;
}

}  // namespace detail
}  // namespace ember::nn
