#pragma once
// Parameter initializers (Burn's Initializer, PyTorch's torch.nn.init) and the lazy-param helper every layer uses.
//
// An Initializer is a variant of small structs, so a config can say `.initializer = init::XavierUniform{}`.
// Fans are passed in by the layer, never derived from the tensor shape: Ember's Linear stores its weight
// [d_input, d_output] (PyTorch: [out, in]), so a shape-based rule would swap them.
//
// PyTorch's defaults for Linear and Conv are kaiming_uniform_(w, a=sqrt(5)): gain sqrt(2 / (1 + a^2)) = sqrt(1/3),
// bound gain * sqrt(3 / fan_in) = 1 / sqrt(fan_in); the bias is uniform(+-1 / sqrt(fan_in)). Applying the same
// KaimingUniform{sqrt(1/3)} to the bias with the layer's fan_in gives exactly that bound (this is what Burn does).
//
// Values come from ember's global Rng (ember::seed) when the param is first materialized (Param::val), not when
// the module is constructed: two runs with the same seed and the same order of first use get the same values.
#include <cmath>
#include <optional>
#include <string>
#include <variant>

#include <fmt/format.h>

#include "engine/module/param.hpp"

namespace ember::nn {

enum class FanMode { FanIn, FanOut };

namespace init {
struct Zeros {};
struct Ones {};
struct Constant {
  double value = 0.0;
};
struct Uniform {
  double low = 0.0, high = 1.0;
};
struct Normal {
  double mean = 0.0, std = 1.0;
};
// U(-b, b), b = gain * sqrt(3 / fan) (torch.nn.init.kaiming_uniform_ with gain = calculate_gain(nonlinearity, a)).
struct KaimingUniform {
  double gain = std::sqrt(2.0);
  FanMode mode = FanMode::FanIn;
};
// N(0, s), s = gain / sqrt(fan).
struct KaimingNormal {
  double gain = std::sqrt(2.0);
  FanMode mode = FanMode::FanIn;
};
// U(-b, b), b = gain * sqrt(6 / (fan_in + fan_out)).
struct XavierUniform {
  double gain = 1.0;
};
// N(0, s), s = gain * sqrt(2 / (fan_in + fan_out)).
struct XavierNormal {
  double gain = 1.0;
};

// torch.nn.init.calculate_gain("leaky_relu", a); a = sqrt(5) gives PyTorch's Linear/Conv default sqrt(1/3).
inline double leaky_relu_gain(double negative_slope) {
  return std::sqrt(2.0 / (1.0 + negative_slope * negative_slope));
}
}  // namespace init

using Initializer = std::variant<init::Zeros, init::Ones, init::Constant, init::Uniform, init::Normal,
                                 init::KaimingUniform, init::KaimingNormal, init::XavierUniform, init::XavierNormal>;

// PyTorch's default for Linear / Conv weights and biases (see the header comment).
inline Initializer torch_default_initializer() {
  return init::KaimingUniform{init::leaky_relu_gain(std::sqrt(5.0)), FanMode::FanIn};
}

struct Fans {
  std::optional<int64_t> fan_in, fan_out;
};

namespace detail {
inline int64_t need_fan(const std::optional<int64_t>& f, const char* which, const char* who) {
  if (!f) throw ArgumentError(fmt::format("{}: needs {}, which the layer did not provide", who, which));
  if (*f <= 0) throw ArgumentError(fmt::format("{}: {} must be positive, got {}", who, which, *f));
  return *f;
}
inline int64_t kaiming_fan(FanMode mode, const Fans& f, const char* who) {
  return mode == FanMode::FanIn ? need_fan(f.fan_in, "fan_in", who) : need_fan(f.fan_out, "fan_out", who);
}
inline int64_t xavier_fans(const Fans& f, const char* who) {
  return need_fan(f.fan_in, "fan_in", who) + need_fan(f.fan_out, "fan_out", who);
}

// What to sample: a Distribution, or a constant.
inline std::variant<Distribution, double> resolve(const Initializer& init, const Fans& f) {
  using R = std::variant<Distribution, double>;
  return std::visit(
      [&](const auto& i) -> R {
        using I = std::decay_t<decltype(i)>;
        if constexpr (std::is_same_v<I, init::Zeros>)
          return 0.0;
        else if constexpr (std::is_same_v<I, init::Ones>)
          return 1.0;
        else if constexpr (std::is_same_v<I, init::Constant>)
          return i.value;
        else if constexpr (std::is_same_v<I, init::Uniform>)
          return Distribution{ember::Uniform{i.low, i.high}};
        else if constexpr (std::is_same_v<I, init::Normal>)
          return Distribution{ember::Normal{i.mean, i.std}};
        else if constexpr (std::is_same_v<I, init::KaimingUniform>) {
          const double b = i.gain * std::sqrt(3.0 / static_cast<double>(kaiming_fan(i.mode, f, "KaimingUniform")));
          return Distribution{ember::Uniform{-b, b}};
        } else if constexpr (std::is_same_v<I, init::KaimingNormal>) {
          const double s = i.gain / std::sqrt(static_cast<double>(kaiming_fan(i.mode, f, "KaimingNormal")));
          return Distribution{ember::Normal{0.0, s}};
        } else if constexpr (std::is_same_v<I, init::XavierUniform>) {
          const double b = i.gain * std::sqrt(6.0 / static_cast<double>(xavier_fans(f, "XavierUniform")));
          return Distribution{ember::Uniform{-b, b}};
        } else {
          const double s = i.gain * std::sqrt(2.0 / static_cast<double>(xavier_fans(f, "XavierNormal")));
          return Distribution{ember::Normal{0.0, s}};
        }
      },
      init);
}
}  // namespace detail

// Throws now (at config.init time) if `init` needs a fan the layer does not have, rather than at first use.
inline void check_initializer(const Initializer& init, const Fans& fans) { (void)detail::resolve(init, fans); }

// A tensor of `shape` drawn from `init` (global Rng).
template <class T, std::size_t D>
T initialize(const Initializer& init, std::array<int64_t, D> shape, const Fans& fans = {},
             const typename T::Device& device = {}) {
  const auto r = detail::resolve(init, fans);
  if (const double* c = std::get_if<double>(&r)) return T::full(shape, *c, device);
  return T::random(shape, std::get<Distribution>(r), device);
}

// A lazy param: nothing is sampled or allocated until the first Param::val().
template <class T, std::size_t D>
Param<T> lazy_param(const Initializer& init, std::array<int64_t, D> shape, const Fans& fans,
                    const typename T::Device& device, ParamRole role = ParamRole::Trainable) {
  check_initializer(init, fans);
  return Param<T>::uninitialized(
      ParamId::next(),
      [init, shape, fans](const typename T::Device& d) { return initialize<T, D>(init, shape, fans, d); }, device,
      role == ParamRole::Trainable, Shape(std::vector<int64_t>(shape.begin(), shape.end())), role);
}

}  // namespace ember::nn
