// ember_module_forward_attention / _encoder / _decoder's typed side (issue 13, h-mha): the module's one
// MultiheadAttention / TransformerEncoderLayer / TransformerDecoderLayer run on runtime tensors with its masks (the
// engine's nn:: layers, so values and gradients are the typed module's).
#include <mutex>
#include <shared_mutex>

#include <fmt/format.h>

#include "c_api/src/runtime/backend_ops.hpp"
#include "c_api/src/runtime/sequential.hpp"

namespace ember::capi {
namespace {

template <class B>
struct Operands {
  typename B::Device device;
  const char* who;

  template <std::size_t R>
  Tensor<B, R> value(const DynTensor& t, const char* what) const {
    const BackendTensor<B>& b = as_backend<B>(t, who);
    const auto& p = float_of(b, fmt::format("{}: {}", who, what));
    const Shape s = tensor_shape(b);
    if (s.rank() != R) throw ShapeError(fmt::format("{}: {} must be rank {}, got {}", who, what, R, s.to_string()));
    if (!(tensor_device(b) == device))
      throw ArgumentError(fmt::format("{}: {} lives on another device than the module", who, what));
    return typed<B, R>(p);
  }
  // A bool (true = masked out) or float (added) mask of rank R.
  template <std::size_t R>
  nn::AttentionMask<B, R> mask(const DynTensor& t, const char* what) const {
    const BackendTensor<B>& b = as_backend<B>(t, who);
    const Shape s = tensor_shape(b);
    if (s.rank() != R) throw ShapeError(fmt::format("{}: {} must be rank {}, got {}", who, what, R, s.to_string()));
    if (!(tensor_device(b) == device))
      throw ArgumentError(fmt::format("{}: {} lives on another device than the module", who, what));
    if (b.kind() == Kind::Bool) return typed<B, R, Bool>(bool_of(b, what));
    return typed<B, R>(float_of(b, fmt::format("{}: {} (bool or float)", who, what)));
  }
  std::optional<nn::AttentionMask<B, 2>> padding(const DynTensor* t, const char* what) const {
    if (!t) return std::nullopt;
    return mask<2>(*t, what);
  }
  // attn_mask: [L, S] or [N * H, L, S].
  std::optional<nn::AttnMask<B>> attn(const DynTensor* t, const char* what) const {
    if (!t) return std::nullopt;
    const std::size_t r = tensor_shape(as_backend<B>(*t, who)).rank();
    if (r == 2) return nn::AttnMask<B>(mask<2>(*t, what));
    if (r == 3) return nn::AttnMask<B>(mask<3>(*t, what));
    throw ShapeError(fmt::format("{}: {} must be rank 2 or 3, got rank {}", who, what, r));
  }
};

template <class B>
DynTensor dyn(const Tensor<B, 3>& t) {
  return wrap<B, Float>(t.primitive());
}

// The module's one layer of type L, or an error naming what the function needs.
template <class L, class B>
const L& only_layer(const Sequential<B>& seq, const char* who, const char* what) {
  if (seq.layers.size() != 1)
    throw ArgumentError(fmt::format("{}: the module must be one {} layer, it has {} layers", who, what,
                                    seq.layers.size()));
  const L* l = std::get_if<L>(&seq.layers[0]);
  if (!l) throw ArgumentError(fmt::format("{}: the module's layer is not a {}", who, what));
  return *l;
}

}  // namespace

namespace ops {

template <class B>
std::vector<DynTensor> forward_attention(ModuleState& m, const DynTensor& q, const DynTensor& k, const DynTensor& v,
                                         const DynTensor* key_padding_mask, const DynTensor* attn_mask,
                                         bool need_weights, bool average, bool train) {
  std::shared_lock lock(m.mu);
  return visit_backend<B>(
      [&](const auto& seq) -> std::vector<DynTensor> {
        const char* who = "forward_attention";
        // the dropout flag on a copy: concurrent forwards never write shared state
        const auto l = set_training(only_layer<nn::MultiheadAttention<B>>(seq, who, "multihead_attention"), train);
        const Operands<B> o{BackendTraits<B>::device(m.device), who};
        nn::MhaInputs<B> in;
        in.key_padding_mask = o.padding(key_padding_mask, "key_padding_mask");
        in.attn_mask = o.attn(attn_mask, "attn_mask");
        in.need_weights = need_weights;
        in.average_attn_weights = average;
        const auto r = l.forward(o.template value<3>(q, "query"), o.template value<3>(k, "key"),
                                 o.template value<3>(v, "value"), in);
        std::vector<DynTensor> out{dyn(r.output)};
        if (r.weights) out.push_back(dyn(*r.weights));
        if (r.head_weights) out.push_back(wrap<B, Float>(r.head_weights->primitive()));
        return out;
      },
      m.module);
}

template <class B>
DynTensor forward_encoder(ModuleState& m, const DynTensor& src, const DynTensor* mask,
                          const DynTensor* key_padding_mask, bool train) {
  std::shared_lock lock(m.mu);
  return visit_backend<B>(
      [&](const auto& seq) -> DynTensor {
        const char* who = "forward_encoder";
        const auto l =
            set_training(only_layer<nn::TransformerEncoderLayer<B>>(seq, who, "transformer_encoder_layer"), train);
        const Operands<B> o{BackendTraits<B>::device(m.device), who};
        nn::EncoderMasks<B> masks;
        masks.mask = o.attn(mask, "mask");
        masks.src_key_padding_mask = o.padding(key_padding_mask, "src_key_padding_mask");
        return dyn(l.forward(o.template value<3>(src, "src"), masks));
      },
      m.module);
}

template <class B>
DynTensor forward_decoder(ModuleState& m, const DynTensor& tgt, const DynTensor& memory, const DynTensor* tgt_mask,
                          const DynTensor* memory_mask, const DynTensor* tgt_key_padding_mask,
                          const DynTensor* memory_key_padding_mask, bool train) {
  std::shared_lock lock(m.mu);
  return visit_backend<B>(
      [&](const auto& seq) -> DynTensor {
        const char* who = "forward_decoder";
        const auto l =
            set_training(only_layer<nn::TransformerDecoderLayer<B>>(seq, who, "transformer_decoder_layer"), train);
        const Operands<B> o{BackendTraits<B>::device(m.device), who};
        nn::DecoderMasks<B> masks;
        masks.tgt_mask = o.attn(tgt_mask, "tgt_mask");
        masks.memory_mask = o.attn(memory_mask, "memory_mask");
        masks.tgt_key_padding_mask = o.padding(tgt_key_padding_mask, "tgt_key_padding_mask");
        masks.memory_key_padding_mask = o.padding(memory_key_padding_mask, "memory_key_padding_mask");
        return dyn(l.forward(o.template value<3>(tgt, "tgt"), o.template value<3>(memory, "memory"), masks));
      },
      m.module);
}

}  // namespace ops

EMBER_RUNTIME_MHA_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
