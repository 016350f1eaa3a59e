#pragma once
// Positional information for transformers: a learned absolute embedding added to the input, and rotary embeddings
// (RoPE) applied to the query/key heads.
//
// LearnedPositionalEmbedding: weight [max_len, d_model] (an nn.Embedding's, initialized N(0, 1) like one, so a torch
// model's `pos_emb.weight` loads as is); forward adds weight[offset + t] to position t of the sequence.
//
// RotaryEmbedding, the half-rotation ("rotate_half") convention of GPT-NeoX and LLaMA's Hugging Face port (not the
// interleaved pairs of the original RoFormer / Meta's LLaMA code): the first `dim` features of each head are split
// into halves x1 = x[..., :dim/2], x2 = x[..., dim/2:dim], and position p rotates the pair (x1[i], x2[i]) by
// p * theta_i, theta_i = base^(-2i / dim):
//     out[..., :dim] = x * cos(cat(f, f)) + cat(-x2, x1) * sin(cat(f, f)),   f_i = p * theta_i
// Features past `dim` pass through unchanged (partial rotary, GPT-NeoX's rotary_pct). The angles are computed on
// the host in double precision, so every backend and precision gets the same table; there are no params.
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "engine/module/traversal.hpp"
#include "engine/nn/init.hpp"
#include "engine/nn/shape_util.hpp"

namespace ember::nn {

template <Backend B>
struct LearnedPositionalEmbedding {
  BOOST_HANA_DEFINE_STRUCT(LearnedPositionalEmbedding, (Param<Tensor<B, 2>>, weight), (bool, batch_first));

  int64_t max_len() const { return weight.shape()[0]; }
  int64_t d_model() const { return weight.shape()[1]; }

  // x [T, N, d_model] (batch_first: [N, T, d_model]) -> x + weight[offset : offset + T] at each position.
  Tensor<B, 3> forward(const Tensor<B, 3>& x, int64_t offset = 0) const {
    const int64_t T = x.dim(batch_first ? 1 : 0);
    if (x.dim(2) != d_model())
      throw ShapeError(fmt::format("LearnedPositionalEmbedding: input {} must end in d_model {}", x.shape().to_string(),
                                   d_model()));
    if (offset < 0 || offset + T > max_len())
      throw IndexError(fmt::format("LearnedPositionalEmbedding: positions [{}, {}) exceed max_len {}", offset,
                                   offset + T, max_len()));
    const auto rows = weight.val().narrow(0, offset, T);
    return x.add(batch_first ? rows.template reshape<3>({1, T, d_model()}) : rows.template reshape<3>({T, 1, d_model()}));
  }
};

struct LearnedPositionalEmbeddingConfig {
  int64_t max_len = 0, d_model = 0;
  bool batch_first = false;
  Initializer initializer = init::Normal{0.0, 1.0};

  template <Backend B>
  LearnedPositionalEmbedding<B> init(const typename B::Device& device = {}) const {
    detail::require_positive("LearnedPositionalEmbeddingConfig", "max_len", max_len);
    detail::require_positive("LearnedPositionalEmbeddingConfig", "d_model", d_model);
    LearnedPositionalEmbedding<B> m;
    m.weight = lazy_param<Tensor<B, 2>>(initializer, std::array<int64_t, 2>{max_len, d_model}, Fans{max_len, d_model},
                                        device);
    m.batch_first = batch_first;
    return m;
  }
};

struct RotaryEmbedding {
  BOOST_HANA_DEFINE_STRUCT(RotaryEmbedding, (int64_t, dim), (double, base));

  // x [N, H, T, head_dim] (head_dim >= dim) at positions offset .. offset + T - 1 -> same shape.
  template <Backend B>
  Tensor<B, 4> forward(const Tensor<B, 4>& x, int64_t offset = 0) const {
    const int64_t T = x.dim(2), hd = x.dim(3), half = dim / 2;
    if (dim <= 0 || dim % 2 != 0 || dim > hd)
      throw ShapeError(fmt::format("RotaryEmbedding: dim {} must be even, positive and <= the head dim {} of {}", dim,
                                   hd, x.shape().to_string()));
    if (offset < 0) throw ArgumentError(fmt::format("RotaryEmbedding: offset {} < 0", offset));
    std::vector<double> cos_t(static_cast<std::size_t>(T * dim)), sin_t(cos_t.size());
    for (int64_t t = 0; t < T; ++t)
      for (int64_t i = 0; i < half; ++i) {
        const double angle =
            static_cast<double>(offset + t) * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(dim));
        for (int64_t j : {i, i + half}) {
          cos_t[static_cast<std::size_t>(t * dim + j)] = std::cos(angle);
          sin_t[static_cast<std::size_t>(t * dim + j)] = std::sin(angle);
        }
      }
    const std::array<int64_t, 4> table{1, 1, T, dim};
    const auto cos = Tensor<B, 4>::from_values(cos_t, table, x.device());
    const auto sin = Tensor<B, 4>::from_values(sin_t, table, x.device());
    const auto rot = x.narrow(3, 0, dim);
    const auto x1 = rot.narrow(3, 0, half), x2 = rot.narrow(3, half, half);
    const auto rotated = rot.mul(cos).add(Tensor<B, 4>::cat({x2.neg(), x1}, 3).mul(sin));
    if (dim == hd) return rotated;
    return Tensor<B, 4>::cat({rotated, x.narrow(3, dim, hd - dim)}, 3);
  }
};

struct RotaryEmbeddingConfig {
  int64_t dim = 0;
  double base = 10000.0;
  RotaryEmbedding init() const {
    if (dim <= 0 || dim % 2 != 0)
      throw ArgumentError(fmt::format("RotaryEmbeddingConfig: dim must be even and positive, got {}", dim));
    if (!(base > 0.0)) throw ArgumentError("RotaryEmbeddingConfig: base must be > 0");
    return RotaryEmbedding{dim, base};
  }
};

}  // namespace ember::nn
