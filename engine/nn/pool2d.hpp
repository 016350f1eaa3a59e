#pragma once
// MaxPool2d, AvgPool2d and AdaptiveAvgPool2d over NCHW input (PyTorch semantics, ceil_mode = false). No params:
// plain structs with a templated forward, usable on every backend.
#include <optional>

#include "engine/tensor/module_ops.hpp"

namespace ember::nn {

struct MaxPool2d {
  Pool2dOptions options;
  template <Backend B>
  Tensor<B, 4> forward(const Tensor<B, 4>& x) const {
    return max_pool2d<B>(x, options);
  }
};

struct AvgPool2d {
  Pool2dOptions options;
  template <Backend B>
  Tensor<B, 4> forward(const Tensor<B, 4>& x) const {
    return avg_pool2d<B>(x, options);
  }
};

struct AdaptiveAvgPool2d {
  std::array<int64_t, 2> output_size{1, 1};
  template <Backend B>
  Tensor<B, 4> forward(const Tensor<B, 4>& x) const {
    return adaptive_avg_pool2d<B>(x, output_size);
  }
};

// stride defaults to kernel_size, as in PyTorch.
struct MaxPool2dConfig {
  std::array<int64_t, 2> kernel_size{2, 2};
  std::optional<std::array<int64_t, 2>> stride = std::nullopt;
  std::array<int64_t, 2> padding{0, 0};
  std::array<int64_t, 2> dilation{1, 1};
  MaxPool2d init() const {
    MaxPool2d m;
    m.options.kernel = kernel_size;
    m.options.stride = stride.value_or(kernel_size);
    m.options.padding = padding;
    m.options.dilation = dilation;
    checks::pool2d("MaxPool2dConfig", Shape{1, 1, 1 << 20, 1 << 20}, m.options);  // validates the options now
    return m;
  }
};

struct AvgPool2dConfig {
  std::array<int64_t, 2> kernel_size{2, 2};
  std::optional<std::array<int64_t, 2>> stride = std::nullopt;
  std::array<int64_t, 2> padding{0, 0};
  bool count_include_pad = true;
  AvgPool2d init() const {
    AvgPool2d m;
    m.options.kernel = kernel_size;
    m.options.stride = stride.value_or(kernel_size);
    m.options.padding = padding;
    m.options.count_include_pad = count_include_pad;
    checks::pool2d("AvgPool2dConfig", Shape{1, 1, 1 << 20, 1 << 20}, m.options);
    return m;
  }
};

struct AdaptiveAvgPool2dConfig {
  std::array<int64_t, 2> output_size{1, 1};
  AdaptiveAvgPool2d init() const {
    if (output_size[0] < 1 || output_size[1] < 1)
      throw ArgumentError("AdaptiveAvgPool2dConfig: output size must be positive");
    return AdaptiveAvgPool2d{output_size};
  }
};

}  // namespace ember::nn
