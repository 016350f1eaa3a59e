// Ember's side of the peer workloads (workloads.hpp): the public Tensor API on Cpu<float>, Autodiff<Cpu<float>> for
// backward passes and training, the same models as `ember train` (tools/ember/models.hpp).
#include <algorithm>
#include <array>
#include <string>

#include "bench/bench_util.hpp"
#include "bench/peers/workloads.hpp"
#include "engine/optim/optim.hpp"
#include "tools/ember/models.hpp"

namespace ember::peers {
namespace {

using bench::AdF32;
using bench::F32;
using bench::keep;
using bench::uniform;

Workload gemm(int64_t n) {
  return {"gemm/" + std::to_string(n), [n](benchmark::State& state) {
            const auto a = uniform<F32, 2>({n, n}, 1);
            const auto b = uniform<F32, 2>({n, n}, 2);
            for (auto _ : state) keep(a.matmul(b));
            set_flops(state, 2.0 * n * n * n);
          }};
}

template <class Op>
Workload unary(const char* name, Op op) {
  return {name, [op](benchmark::State& state) {
            const auto x = uniform<F32, 1>({kElementwiseN}, 3).mul_scalar(4.0);
            for (auto _ : state) keep(op(x));
          }};
}

Conv2dOptions same_padding() {
  Conv2dOptions o;
  o.padding = {1, 1};
  return o;
}

Workload conv_fwd(const ConvShape& s) {
  return {std::string("conv2d_fwd/") + s.name, [s](benchmark::State& state) {
            const auto x = uniform<F32, 4>({kConvBatch, s.cin, s.hw, s.hw}, 1);
            const auto w = uniform<F32, 4>({s.cout, s.cin, 3, 3}, 2).mul_scalar(0.1);
            const auto b = uniform<F32, 1>({s.cout}, 3);
            for (auto _ : state) keep(conv2d<F32>(x, w, b, same_padding()));
            set_flops(state, conv_flops(s));
          }};
}

Workload conv_fwd_bwd(const ConvShape& s) {
  return {std::string("conv2d_fwdbwd/") + s.name, [s](benchmark::State& state) {
            const auto x = uniform<AdF32, 4>({kConvBatch, s.cin, s.hw, s.hw}, 1).require_grad();
            const auto w = uniform<AdF32, 4>({s.cout, s.cin, 3, 3}, 2).mul_scalar(0.1).detach().require_grad();
            const auto b = uniform<AdF32, 1>({s.cout}, 3).require_grad();
            for (auto _ : state) {
              const auto grads = conv2d<AdF32>(x, w, b, same_padding()).sum().backward();
              keep(*x.grad(grads));
              keep(*w.grad(grads));
              keep(*b.grad(grads));
            }
            set_flops(state, 3.0 * conv_flops(s));
          }};
}

template <bool Max>
Workload pool(bool backward) {
  std::string name = std::string(Max ? "max_pool2d" : "avg_pool2d") + (backward ? "_fwdbwd" : "_fwd");
  return {name, [backward](benchmark::State& state) {
            const std::array<int64_t, 4> shape{kPoolShape[0], kPoolShape[1], kPoolShape[2], kPoolShape[3]};
            const auto pool_op = [](const auto& x) {
              using Bk = typename std::decay_t<decltype(x)>::Backend_;
              return Max ? max_pool2d<Bk>(x, Pool2dOptions{}) : avg_pool2d<Bk>(x, Pool2dOptions{});
            };
            if (!backward) {
              const auto x = uniform<F32, 4>(shape, 1);
              for (auto _ : state) keep(pool_op(x));
              return;
            }
            const auto x = uniform<AdF32, 4>(shape, 1).require_grad();
            for (auto _ : state) keep(*x.grad(pool_op(x).sum().backward()));
          }};
}

struct Digits {
  Tensor<F32, 2> x;
  Tensor<F32, 1, Int> y;
};
// Random data of the digits set's size: the work per epoch does not depend on the values.
Digits digits() {
  Rng rng(7);
  auto x = Tensor<F32, 2>::random({kDigitsTrain, 64}, Uniform{0.0, 1.0}, rng);
  auto y = Tensor<F32, 2>::random({kDigitsTrain, 1}, Uniform{0.0, 10.0}, rng).floor().to_int().reshape(
      std::array<int64_t, 1>{kDigitsTrain});
  return {x, y};
}

// One epoch of Adam (lr 1e-3) over the digits-sized data in batches of 64, as `ember train` runs it.
template <template <class> class Model>
void train_epoch(benchmark::State& state) {
  const Digits d = digits();
  seed(42);
  auto model = Model<AdF32>::init();
  Adam<AdF32> adam(AdamConfig{});
  for (auto _ : state) {
    for (int64_t start = 0; start < kDigitsTrain; start += kDigitsBatch) {
      const int64_t len = std::min(kDigitsBatch, kDigitsTrain - start);
      const auto x = Tensor<AdF32, 2>::from_inner(d.x.narrow(0, start, len));
      const auto y = Tensor<AdF32, 1, Int>(d.y.narrow(0, start, len).primitive());
      const auto loss = nn::cross_entropy(model.forward(x), y);
      benchmark::DoNotOptimize(loss.item());
      model = adam.step(1e-3, std::move(model), GradientsParams<AdF32>::from_grads(loss.backward(), model));
    }
  }
}

Workload mlp_infer(int64_t batch) {
  return {"mlp_infer/b" + std::to_string(batch), [batch](benchmark::State& state) {
            seed(42);
            const auto model = valid(tools::DigitsMlp<AdF32>::init());
            const Digits d = digits();
            // Inference records no graph, as LibTorch's side runs under torch::NoGradGuard.
            const autodiff::NoGrad no_grad;
            int64_t i = 0;
            for (auto _ : state) {
              keep(model.forward(d.x.narrow(0, i, batch)));
              i = (i + batch) % (kDigitsTrain - batch);
            }
            state.counters["samples/s"] =
                benchmark::Counter(static_cast<double>(batch), benchmark::Counter::kIsIterationInvariantRate);
          }};
}

}  // namespace

std::vector<Workload> ember_workloads() {
  std::vector<Workload> w;
  for (int64_t n : kGemmSizes) w.push_back(gemm(n));
  w.push_back({"add_16M", [](benchmark::State& state) {
                 const auto a = uniform<F32, 1>({kElementwiseN}, 1);
                 const auto b = uniform<F32, 1>({kElementwiseN}, 2);
                 for (auto _ : state) keep(a.add(b));
               }});
  w.push_back(unary("tanh_16M", [](const auto& x) { return x.tanh(); }));
  w.push_back(unary("gelu_16M", [](const auto& x) { return x.gelu(false); }));
  // GELU's backward step g * GELU'(x) alone, as autodiff runs it (the backend's fused step); LibTorch's side calls
  // the ATen op its autograd runs, at::gelu_backward.
  w.push_back({"gelu_backward_16M", [](benchmark::State& state) {
                 const auto x = uniform<F32, 1>({kElementwiseN}, 3).mul_scalar(4.0);
                 const auto g = uniform<F32, 1>({kElementwiseN}, 4);
                 for (auto _ : state)
                   keep(Tensor<F32, 1>(optional_ops::float_unary_backward<F32>(UnaryOp::Gelu, x.primitive(),
                                                                              x.primitive(), g.primitive())));
               }});
  w.push_back({"sum_16M", [](benchmark::State& state) {
                 const auto x = uniform<F32, 1>({kElementwiseN}, 3);
                 for (auto _ : state) keep(x.sum());
               }});
  for (int dim : {0, 1}) {
    w.push_back({"sum_dim" + std::to_string(dim) + "_4096", [dim](benchmark::State& state) {
                   const auto x = uniform<F32, 2>({kSumDimN, kSumDimN}, 4);
                   for (auto _ : state) keep(x.sum_dim(dim));
                 }});
  }
  for (const ConvShape& s : kConvShapes) {
    w.push_back(conv_fwd(s));
    w.push_back(conv_fwd_bwd(s));
  }
  for (bool backward : {false, true}) {
    w.push_back(pool<true>(backward));
    w.push_back(pool<false>(backward));
  }
  w.push_back({"mlp_epoch", [](benchmark::State& state) {
                 train_epoch<tools::DigitsMlp>(state);
                 set_flops(state, kMlpEpochFlops);
               }});
  w.push_back({"cnn_epoch", train_epoch<tools::DigitsCnn>});
  w.push_back(mlp_infer(1));
  w.push_back(mlp_infer(kInferBatch));
  return w;
}

}  // namespace ember::peers
