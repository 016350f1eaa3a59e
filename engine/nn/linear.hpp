#pragma once
// Linear: y = x W + b.
//
// Layout: W is stored [d_input, d_output], as in Burn, so forward is x.matmul(W) with no transpose. PyTorch's
// nn.Linear stores [out_features, in_features] and computes x W^T; to import a PyTorch state dict, transpose
// "weight". Fans are given explicitly to the initializer (fan_in = d_input), so the defaults match PyTorch's
// (U(+-1/sqrt(d_input)) for both weight and bias) despite the transposed layout.
#include <optional>

#include <fmt/format.h>

#include "engine/backend/optional_ops.hpp"
#include "engine/module/traversal.hpp"
#include "engine/nn/init.hpp"
#include "engine/nn/shape_util.hpp"

namespace ember::nn {

template <Backend B>
struct Linear {
  BOOST_HANA_DEFINE_STRUCT(Linear, (Param<Tensor<B, 2>>, weight), (std::optional<Param<Tensor<B, 1>>>, bias));

  int64_t d_input() const { return weight.shape()[0]; }
  int64_t d_output() const { return weight.shape()[1]; }

  // x [..., d_input] -> [..., d_output], any rank. Rank >= 3 inputs matmul against W reshaped to
  // [1, ..., 1, d_input, d_output] (batch-broadcast matmul); a rank-1 input is treated as one row.
  template <std::size_t D>
  Tensor<B, D> forward(const Tensor<B, D>& x) const {
    if constexpr (D == 1) {
      return forward(x.template unsqueeze<2>(0)).template squeeze<1>(0);
    } else {
      const int64_t din = d_input(), dout = d_output();
      if (x.dim(-1) != din)
        throw ShapeError(fmt::format("Linear: input {} has last dim {}, expected d_input {}", x.shape().to_string(),
                                     x.dim(-1), din));
      // weight before bias: a lazy param draws its initial values at its first val(), so this order is the order
      // of the generator's draws (torch's, and the one records and the pinned training runs were made with).
      const auto& w = weight.val();
      const auto* b = bias ? &bias->val().primitive() : nullptr;
      // The bias goes in through the optional fused op (optional_ops.hpp HasFusedLinear), one Autodiff node.
      if constexpr (D == 2) {
        // Already the GEMM's [rows, d_input]: no reshapes (two ops and their shape checks per call, a tenth of a
        // batch-1 MLP's time).
        return Tensor<B, 2>(optional_ops::float_linear<B>(x.primitive(), w.primitive(), b));
      } else {
        // Leading dims fold into the rows of one GEMM, which is what the batch-broadcast matmul against W computed.
        std::array<int64_t, D> ys;
        for (std::size_t i = 0; i + 1 < D; ++i) ys[i] = x.dim(static_cast<int64_t>(i));
        ys[D - 1] = dout;
        const auto x2 = x.reshape(std::array<int64_t, 2>{x.numel() / din, din});
        return Tensor<B, 2>(optional_ops::float_linear<B>(x2.primitive(), w.primitive(), b)).reshape(ys);
      }
    }
  }

  // relu(forward(x)) for x [rows, d_input] as one op (optional_ops.hpp float_linear_act): the ReLU in the GEMM's
  // output pass when nothing is recorded (inference), the separate recorded ops otherwise (same gradients).
  Tensor<B, 2> forward_relu(const Tensor<B, 2>& x) const {
    if (x.dim(-1) != d_input())
      throw ShapeError(fmt::format("Linear: input {} has last dim {}, expected d_input {}", x.shape().to_string(),
                                   x.dim(-1), d_input()));
    const auto& w = weight.val();
    const auto* b = bias ? &bias->val().primitive() : nullptr;
    return Tensor<B, 2>(optional_ops::float_linear_act<B>(x.primitive(), w.primitive(), b, false,
                                                         LinearActivation::Relu));
  }
};

struct LinearConfig {
  int64_t d_input = 0, d_output = 0;
  bool bias = true;
  Initializer initializer = torch_default_initializer();

  // Lazy: no value is sampled or allocated until first use.
  template <Backend B>
  Linear<B> init(const typename B::Device& device = {}) const {
    detail::require_positive("LinearConfig", "d_input", d_input);
    detail::require_positive("LinearConfig", "d_output", d_output);
    const Fans fans{d_input, d_output};
    Linear<B> m;
    m.weight = lazy_param<Tensor<B, 2>>(initializer, std::array<int64_t, 2>{d_input, d_output}, fans, device);
    if (bias) m.bias = lazy_param<Tensor<B, 1>>(initializer, std::array<int64_t, 1>{d_output}, fans, device);
    return m;
  }
};

}  // namespace ember::nn
