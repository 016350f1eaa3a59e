// Fourier transforms over the last signal dim with VkFFT (see FftOp in engine/backend/ops.hpp for layouts and
// scaling; the plans are in fft_plans.cpp). Complex values are a trailing dim of 2 floats, VkFFT's own complex
// layout. Every op is three recorded commands: copy the input into the plan's scratch, the transform, copy the
// scratch into a fresh output (a plan's buffers are fixed when it is first recorded, see fft_plans.hpp).
#include <array>
#include <mutex>

#include "backends/vulkan/fft_plans.hpp"
#include "backends/vulkan/launch.hpp"
#include "backends/vulkan/strided.hpp"
#include "backends/vulkan/vulkan_tensor.hpp"

namespace ember::vk {
namespace {

struct Layout {
  Shape out;
  int64_t batch = 0;
};

// Shapes were validated by the tensor layer: complex inputs end in [signal, 2], Rfft's real input in [signal].
Layout layout_of(const Shape& in, FftOp op, int64_t n) {
  const std::size_t batch_rank = in.rank() - (op == FftOp::Rfft ? 1 : 2);
  std::vector<int64_t> dims(in.dims.begin(), in.dims.begin() + static_cast<std::ptrdiff_t>(batch_rank));
  Layout l;
  l.batch = 1;
  for (auto d : dims) l.batch *= d;
  switch (op) {
    case FftOp::Fft:
    case FftOp::Ifft: dims.insert(dims.end(), {n, 2}); break;
    case FftOp::Rfft: dims.insert(dims.end(), {n / 2 + 1, 2}); break;
    case FftOp::Irfft: dims.push_back(n); break;
  }
  l.out = Shape(std::move(dims));
  return l;
}

// A length-1 transform is its own spectrum (VkFFT has no plan for it): Fft / Ifft copy, Rfft pairs each value
// with a zero imaginary part, Irfft keeps each real part. Done with the strided copy kernel.
FloatT unit_length_fft(const FloatT& x, FftOp op, const Layout& l) {
  switch (op) {
    case FftOp::Fft:
    case FftOp::Ifft: return reshape(x, l.out);
    case FftOp::Rfft: {
      auto out = full<float>(x.ctx, l.out, 0.0);
      copy_strided(x, 0, {1}, out, 0, {2}, {l.batch});
      return out;
    }
    case FftOp::Irfft: {
      auto out = empty<float>(x.ctx, l.out);
      copy_strided(x, 0, {2}, out, 0, {1}, {l.batch});
      return out;
    }
  }
  return x;
}

}  // namespace

FloatT fft(const FloatT& x, FftOp op, int64_t n) {
  const Layout l = layout_of(x.shape, op, n);
  if (l.batch == 0) return empty<float>(x.ctx, l.out);
  check_elements(x.numel(), "fft");
  check_elements(l.out.num_elements(), "fft");
  if (n == 1) return unit_length_fft(x, op, l);

  auto out = empty<float>(x.ctx, l.out);
  Context& ctx = *x.ctx;
  std::lock_guard lock(ctx.mutex());
  const auto plan = fft_plan(ctx, op, n, l.batch);
  Stream& stream = ctx.stream();
  stream.copy(x.alloc, 0, plan->scratch(), plan->input_offset(), x.bytes());
  const std::array<BufferArg, 1> args{BufferArg{plan->scratch(), true}};
  stream.retain(plan);  // into the batch that records the transform: a full batch is submitted after it
  stream.record(args, [&](VkCommandBuffer cb) { plan->record(cb); });
  stream.copy(plan->scratch(), plan->output_offset(), out.alloc, 0, out.bytes());
  return out;
}

}  // namespace ember::vk
