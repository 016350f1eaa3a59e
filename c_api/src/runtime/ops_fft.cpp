// Discrete Fourier transforms on runtime tensors (ember.h: ember_tensor_fft): the backend's transforms over the last
// signal dim (engine/tensor/fft.hpp), brought to any dim and given NumPy's `n` (crop or zero-pad the input) and
// `norm`. Complex tensors are float tensors with a trailing dim 2 (re, im); `dim` counts the other dims. Every step
// is a primitive recorded under autodiff (permute, slice, cat, fft, scale), so the result is differentiable.
#include <fmt/format.h>

#include <cmath>
#include <numeric>

#include "c_api/src/runtime/backend_ops.hpp"

namespace ember::capi {
namespace {

template <class B>
using FP = typename B::FloatPrimitive;

const char* fft_name(FftOp op) {
  switch (op) {
    case FftOp::Fft: return "fft";
    case FftOp::Ifft: return "ifft";
    case FftOp::Rfft: return "rfft";
    case FftOp::Irfft: break;
  }
  return "irfft";
}

// p with dims a and b swapped (the transforms treat every other dim as a batch, so swapping back restores them).
template <class B>
FP<B> swap_dims(const FP<B>& p, std::size_t a, std::size_t b) {
  if (a == b) return p;
  std::vector<std::size_t> axes(B::template shape<Float>(p).rank());
  std::iota(axes.begin(), axes.end(), std::size_t{0});
  std::swap(axes[a], axes[b]);
  return B::template permute<Float>(p, axes);
}

// p cropped or zero-padded to length n along dim d, as NumPy's `n` argument does.
template <class B>
FP<B> resize(const FP<B>& p, std::size_t d, int64_t n, const char* op) {
  const Shape s = B::template shape<Float>(p);
  if (s[d] == n) return p;
  if (s[d] > n) {
    std::vector<Range> r;
    for (auto len : s.dims) r.push_back(Range{0, len});
    r[d].end = n;
    return B::template slice<Float>(p, r);
  }
  Shape pad = s;
  pad[d] = n - s[d];
  check_shape(op, pad);
  const auto zeros = B::template full<Float>(pad, 0.0, B::template device<Float>(p));
  return B::template cat<Float>({p, zeros}, d);
}

// The factor on top of the backend's scaling (forward transforms unscaled, inverse ones by 1/n).
double norm_factor(FftOp op, FftNorm norm, int64_t n) {
  const bool inverse = op == FftOp::Ifft || op == FftOp::Irfft;
  const double len = static_cast<double>(n);
  switch (norm) {
    case FftNorm::Backward: return 1.0;
    case FftNorm::Forward: return inverse ? len : 1.0 / len;
    case FftNorm::Ortho: break;
  }
  return inverse ? std::sqrt(len) : 1.0 / std::sqrt(len);
}

}  // namespace

namespace ops {

template <class B>
DynTensor fft(const DynTensor& x, FftOp op, int64_t n, int64_t dim, FftNorm norm) {
  const char* name = fft_name(op);
  return visit_backend<B>(
      [&](const auto& t) -> DynTensor {
        const auto& p = float_of(t, fmt::format("{}: x", name));
        const Shape s = tensor_shape(t);
        const bool real_in = op == FftOp::Rfft;
        if (real_in && s.rank() < 1) throw ShapeError("rfft: a rank-0 tensor has no signal dim");
        if (!real_in && (s.rank() < 2 || s[s.rank() - 1] != 2))
          throw ShapeError(fmt::format("{}: expected a complex tensor [..., n, 2] (last dim 2 holds re, im), got {}",
                                       name, s.to_string()));
        // The signal dim among the non-complex dims, moved to where the backend transforms (last of those).
        const std::size_t dims = real_in ? s.rank() : s.rank() - 1;
        const std::size_t w = wrap_dim(name, dim, dims), at = dims - 1;
        const int64_t len = s[w];
        int64_t length = n > 0 ? n : len;  // the transform's length
        int64_t input_len = length;        // the input's length along the signal dim
        if (op == FftOp::Irfft) {
          if (n <= 0) length = 2 * (len - 1);
          if (length < 1)
            throw ArgumentError(fmt::format("irfft: output length n must be >= 1, got {} for input {}{}", length,
                                            s.to_string(), len == 1 ? " (pass n = 1 for a one-bin spectrum)" : ""));
          input_len = length / 2 + 1;
        }
        if (length < 1) throw ShapeError(fmt::format("{}: the signal dim is empty in {}", name, s.to_string()));
        if (op == FftOp::Rfft) {
          Shape out = s;
          out[w] = length / 2 + 1;
          out.dims.push_back(2);
          check_shape(name, out);
        }
        FP<B> q = resize<B>(swap_dims<B>(p, w, at), at, input_len, name);
        q = B::float_fft(q, op, length);
        if (const double f = norm_factor(op, norm, length); f != 1.0) q = B::float_scalar(q, ScalarOp::Mul, f);
        return wrap<B, Float>(swap_dims<B>(q, w, at));
      },
      x);
}

}  // namespace ops

EMBER_RUNTIME_FFT_OPS(EMBER_INSTANTIATE_OP)

}  // namespace ember::capi
