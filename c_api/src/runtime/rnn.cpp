// ember_module_forward_rnn's typed side: the module's one LSTM / GRU layer run on runtime tensors with initial
// states and sequence lengths (the engine's nn::LSTM / nn::GRU, so values and gradients are the typed module's).
#include <mutex>
#include <shared_mutex>

#include <fmt/format.h>

#include "c_api/src/runtime/backend_ops.hpp"
#include "c_api/src/runtime/sequential.hpp"

namespace ember::capi {
namespace {

template <class B>
struct RnnCall {
  const DynTensor& x;
  const DynTensor* h0;
  const DynTensor* c0;
  const std::vector<int64_t>& lengths;
  bool train;
  typename B::Device device;

  // A rank-3 float operand on the module's device.
  Tensor<B, 3> operand(const DynTensor& t, const char* what) const {
    const BackendTensor<B>& b = as_backend<B>(t, "forward_rnn");
    const auto& p = float_of(b, fmt::format("forward_rnn: {}", what));
    const Shape s = tensor_shape(b);
    if (s.rank() != 3) throw ShapeError(fmt::format("forward_rnn: {} must be rank 3, got {}", what, s.to_string()));
    if (!(tensor_device(b) == device))
      throw ArgumentError(fmt::format("forward_rnn: {} lives on another device than the module", what));
    return typed<B, 3>(p);
  }
  std::optional<Tensor<B, 3>> optional_operand(const DynTensor* t, const char* what) const {
    if (!t) return std::nullopt;
    return operand(*t, what);
  }
  static DynTensor dyn(const Tensor<B, 3>& t) { return wrap<B, Float>(t.primitive()); }

  std::vector<DynTensor> operator()(const nn::LSTM<B>& l) const {
    nn::LSTM<B> m = l;  // the mode flag on a copy: concurrent forwards never write shared state
    m.mode.training = train;
    const auto r = m.forward(operand(x, "x"), optional_operand(h0, "h0"), optional_operand(c0, "c0"), lengths);
    return {dyn(r.output), dyn(r.h_n), dyn(r.c_n)};
  }
  std::vector<DynTensor> operator()(const nn::GRU<B>& l) const {
    if (c0) throw ArgumentError("forward_rnn: a GRU has no cell state: c0 must be NULL");
    nn::GRU<B> m = l;
    m.mode.training = train;
    const auto r = m.forward(operand(x, "x"), optional_operand(h0, "h0"), lengths);
    return {dyn(r.output), dyn(r.h_n)};
  }
  template <class L>
  std::vector<DynTensor> operator()(const L&) const {
    throw ArgumentError("forward_rnn: the module's layer is not an LSTM or GRU");
  }
};

}  // namespace

namespace ops {

template <class B>
std::vector<DynTensor> forward_rnn(ModuleState& m, const DynTensor& x, const DynTensor* h0, const DynTensor* c0,
                                   const std::vector<int64_t>& lengths, bool train) {
  std::shared_lock lock(m.mu);
  return visit_backend<B>(
      [&](const auto& seq) -> std::vector<DynTensor> {
        if (seq.layers.size() != 1)
          throw ArgumentError(fmt::format("forward_rnn: the module must be one LSTM or GRU layer, it has {} layers",
                                          seq.layers.size()));
        const RnnCall<B> call{x, h0, c0, lengths, train, BackendTraits<B>::device(m.device)};
        return std::visit(call, seq.layers[0]);
      },
      m.module);
}

}  // namespace ops

EMBER_RUNTIME_RNN_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
