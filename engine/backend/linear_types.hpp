#pragma once
// The activation a fused linear applies in its output pass (optional_ops.hpp float_linear_act), in a header of its
// own so that backends name it without including the optional-op dispatchers.
namespace ember {

enum class LinearActivation { None, Relu };

}  // namespace ember
