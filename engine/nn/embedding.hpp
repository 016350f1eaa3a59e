#pragma once
// Embedding: a lookup table weight [n_embedding, d_model] (PyTorch's nn.Embedding layout; init N(0, 1) as in
// PyTorch). Indices of any rank D map to [..., d_model] of rank D + 1. The lookup is an index_select on the
// flattened indices, so under autodiff the gradient is scattered back into the rows that were used (repeated
// indices accumulate).
#include "engine/module/traversal.hpp"
#include "engine/nn/init.hpp"
#include "engine/nn/shape_util.hpp"

namespace ember::nn {

template <Backend B>
struct Embedding {
  BOOST_HANA_DEFINE_STRUCT(Embedding, (Param<Tensor<B, 2>>, weight));

  int64_t n_embedding() const { return weight.shape()[0]; }
  int64_t d_model() const { return weight.shape()[1]; }

  // indices [batch, seq] (or any rank) -> [batch, seq, d_model]. Out-of-range indices throw IndexError.
  template <std::size_t D>
  Tensor<B, D + 1> forward(const Tensor<B, D, Int>& indices) const {
    const auto dims = indices.dims();
    const auto flat = indices.template reshape<1>(std::array<int64_t, 1>{indices.numel()});
    const auto rows = weight.val().index_select(0, flat);  // [numel, d_model]
    std::array<int64_t, D + 1> out;
    for (std::size_t i = 0; i < D; ++i) out[i] = dims[i];
    out[D] = d_model();
    return rows.reshape(out);
  }
};

struct EmbeddingConfig {
  int64_t n_embedding = 0, d_model = 0;
  Initializer initializer = init::Normal{0.0, 1.0};

  template <Backend B>
  Embedding<B> init(const typename B::Device& device = {}) const {
    detail::require_positive("EmbeddingConfig", "n_embedding", n_embedding);
    detail::require_positive("EmbeddingConfig", "d_model", d_model);
    Embedding<B> m;
    m.weight = lazy_param<Tensor<B, 2>>(initializer, std::array<int64_t, 2>{n_embedding, d_model},
                                        Fans{n_embedding, d_model}, device);
    return m;
  }
};

}  // namespace ember::nn
