// A mid-sized CNN layer: conv2d 32 -> 64 channels, 16x16 images, batch 32, 3x3 kernel, padding 1.
// Forward alone on Cpu<float>, and forward + backward (through a sum, gradients for input, weight and bias) under
// Autodiff<Cpu<float>>.
#include "bench/bench_util.hpp"

namespace ember::bench {
namespace {

constexpr std::array<int64_t, 4> kX{32, 32, 16, 16};
constexpr std::array<int64_t, 4> kW{64, 32, 3, 3};

Conv2dOptions options() {
  Conv2dOptions o;
  o.padding = {1, 1};
  return o;
}

// 2 * N * C_out * H_out * W_out * C_in * kh * kw multiply-adds in the forward pass.
double forward_flops() { return 2.0 * 32 * 64 * 16 * 16 * 32 * 3 * 3; }

void BM_Conv2d_Fwd(benchmark::State& state) {
  const auto x = uniform<F32, 4>(kX, 1);
  const auto w = uniform<F32, 4>(kW, 2).mul_scalar(0.1);
  const auto b = uniform<F32, 1>({64}, 3);
  for (auto _ : state) {
    auto y = conv2d<F32>(x, w, b, options());
    keep(y);
  }
  state.counters["FLOP/s"] = benchmark::Counter(forward_flops(), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Conv2d_FwdBwd_Autodiff(benchmark::State& state) {
  const auto x = uniform<AdF32, 4>(kX, 1).require_grad();
  const auto w = uniform<AdF32, 4>(kW, 2).mul_scalar(0.1).detach().require_grad();
  const auto b = uniform<AdF32, 1>({64}, 3).require_grad();
  for (auto _ : state) {
    auto loss = conv2d<AdF32>(x, w, b, options()).sum();
    auto grads = loss.backward();
    const auto gx = x.grad(grads);
    const auto gw = w.grad(grads);
    const auto gb = b.grad(grads);
    if (!gx || !gw || !gb) {
      state.SkipWithError("missing gradient");
      break;
    }
    keep(*gx);
    keep(*gw);
    keep(*gb);
  }
  // Backward is two GEMMs of the forward's size (grad input, grad weight).
  state.counters["FLOP/s"] =
      benchmark::Counter(3.0 * forward_flops(), benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(BM_Conv2d_Fwd)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Conv2d_FwdBwd_Autodiff)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace ember::bench
