// LibTorch's side of the peer workloads (workloads.hpp): the same shapes, data sizes and models written with the
// C++ API of Debian's libtorch (1.13, oneDNN for convolutions and pooling, OpenBLAS for GEMM). Inference runs under
// torch::NoGradGuard; training resets the gradients each step as Ember builds fresh ones.
#include <torch/torch.h>

#include <string>

#include "bench/peers/workloads.hpp"

namespace ember::peers {
namespace {

torch::Tensor uniform(at::IntArrayRef shape, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  torch::manual_seed(seed);
  return torch::empty(shape).uniform_(lo, hi);
}

void keep(const torch::Tensor& t) {
  benchmark::DoNotOptimize(t.data_ptr());
  benchmark::ClobberMemory();
}

Workload gemm(int64_t n) {
  return {"gemm/" + std::to_string(n), [n](benchmark::State& state) {
            torch::NoGradGuard no_grad;
            const auto a = uniform({n, n}, 1), b = uniform({n, n}, 2);
            for (auto _ : state) keep(torch::mm(a, b));
            set_flops(state, 2.0 * n * n * n);
          }};
}

template <class Op>
Workload unary(const char* name, Op op) {
  return {name, [op](benchmark::State& state) {
            torch::NoGradGuard no_grad;
            const auto x = uniform({kElementwiseN}, 3, -4.0, 4.0);
            for (auto _ : state) keep(op(x));
          }};
}

Workload conv_fwd(const ConvShape& s) {
  return {std::string("conv2d_fwd/") + s.name, [s](benchmark::State& state) {
            torch::NoGradGuard no_grad;
            const auto x = uniform({kConvBatch, s.cin, s.hw, s.hw}, 1);
            const auto w = uniform({s.cout, s.cin, 3, 3}, 2) * 0.1;
            const auto b = uniform({s.cout}, 3);
            for (auto _ : state) keep(torch::conv2d(x, w, b, 1, 1));
            set_flops(state, conv_flops(s));
          }};
}

Workload conv_fwd_bwd(const ConvShape& s) {
  return {std::string("conv2d_fwdbwd/") + s.name, [s](benchmark::State& state) {
            auto x = uniform({kConvBatch, s.cin, s.hw, s.hw}, 1).requires_grad_();
            auto w = (uniform({s.cout, s.cin, 3, 3}, 2) * 0.1).detach().requires_grad_();
            auto b = uniform({s.cout}, 3).requires_grad_();
            for (auto _ : state) {
              for (auto* t : {&x, &w, &b}) t->mutable_grad() = torch::Tensor();
              torch::conv2d(x, w, b, 1, 1).sum().backward();
              keep(x.grad());
              keep(w.grad());
              keep(b.grad());
            }
            set_flops(state, 3.0 * conv_flops(s));
          }};
}

template <bool Max>
Workload pool(bool backward) {
  std::string name = std::string(Max ? "max_pool2d" : "avg_pool2d") + (backward ? "_fwdbwd" : "_fwd");
  return {name, [backward](benchmark::State& state) {
            const auto pool_op = [](const torch::Tensor& x) { return Max ? torch::max_pool2d(x, 2) : torch::avg_pool2d(x, 2); };
            auto x = uniform({kPoolShape[0], kPoolShape[1], kPoolShape[2], kPoolShape[3]}, 1);
            if (!backward) {
              torch::NoGradGuard no_grad;
              for (auto _ : state) keep(pool_op(x));
              return;
            }
            x.requires_grad_();
            for (auto _ : state) {
              x.mutable_grad() = torch::Tensor();
              pool_op(x).sum().backward();
              keep(x.grad());
            }
          }};
}

struct Digits {
  torch::Tensor x, y;
};
Digits digits() {
  return {uniform({kDigitsTrain, 64}, 7, 0.0, 1.0), torch::floor(uniform({kDigitsTrain}, 8, 0.0, 10.0)).to(torch::kLong)};
}

torch::nn::Sequential mlp() {
  return torch::nn::Sequential(torch::nn::Linear(64, 256), torch::nn::ReLU(), torch::nn::Linear(256, 256),
                               torch::nn::ReLU(), torch::nn::Linear(256, 10));
}

// tools/ember/models.hpp's DigitsCnn: [N, 1, 8, 8] -> conv 16 -> conv 32 -> 2x2 max pool -> 512 -> 64 -> 10.
torch::nn::Sequential cnn() {
  namespace nn = torch::nn;
  return nn::Sequential(nn::Unflatten(nn::UnflattenOptions(1, {1, 8, 8})),
                        nn::Conv2d(nn::Conv2dOptions(1, 16, 3).padding(1)), nn::ReLU(),
                        nn::Conv2d(nn::Conv2dOptions(16, 32, 3).padding(1)), nn::ReLU(), nn::MaxPool2d(2),
                        nn::Flatten(), nn::Linear(512, 64), nn::ReLU(), nn::Linear(64, 10));
}

void train_epoch(benchmark::State& state, torch::nn::Sequential model) {
  const Digits d = digits();
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(1e-3));
  for (auto _ : state) {
    for (int64_t start = 0; start < kDigitsTrain; start += kDigitsBatch) {
      const int64_t len = std::min(kDigitsBatch, kDigitsTrain - start);
      adam.zero_grad();
      auto loss = torch::nn::functional::cross_entropy(model->forward(d.x.narrow(0, start, len)),
                                                       d.y.narrow(0, start, len));
      benchmark::DoNotOptimize(loss.item<float>());
      loss.backward();
      adam.step();
    }
  }
}

Workload mlp_infer(int64_t batch) {
  return {"mlp_infer/b" + std::to_string(batch), [batch](benchmark::State& state) {
            torch::manual_seed(42);
            auto model = mlp();
            model->eval();
            const Digits d = digits();
            torch::NoGradGuard no_grad;
            int64_t i = 0;
            for (auto _ : state) {
              keep(model->forward(d.x.narrow(0, i, batch)));
              i = (i + batch) % (kDigitsTrain - batch);
            }
            state.counters["samples/s"] =
                benchmark::Counter(static_cast<double>(batch), benchmark::Counter::kIsIterationInvariantRate);
          }};
}

}  // namespace

std::vector<Workload> torch_workloads() {
  std::vector<Workload> w;
  for (int64_t n : kGemmSizes) w.push_back(gemm(n));
  w.push_back({"add_16M", [](benchmark::State& state) {
                 torch::NoGradGuard no_grad;
                 const auto a = uniform({kElementwiseN}, 1), b = uniform({kElementwiseN}, 2);
                 for (auto _ : state) keep(torch::add(a, b));
               }});
  w.push_back(unary("tanh_16M", [](const torch::Tensor& x) { return torch::tanh(x); }));
  w.push_back(unary("gelu_16M", [](const torch::Tensor& x) { return torch::gelu(x); }));
  w.push_back({"gelu_backward_16M", [](benchmark::State& state) {
                 torch::NoGradGuard no_grad;
                 const auto x = uniform({kElementwiseN}, 3, -4.0, 4.0);
                 const auto g = uniform({kElementwiseN}, 4, -1.0, 1.0);
                 for (auto _ : state) keep(at::gelu_backward(g, x, "none"));
               }});
  w.push_back({"sum_16M", [](benchmark::State& state) {
                 torch::NoGradGuard no_grad;
                 const auto x = uniform({kElementwiseN}, 3);
                 for (auto _ : state) keep(x.sum());
               }});
  for (int dim : {0, 1}) {
    w.push_back({"sum_dim" + std::to_string(dim) + "_4096", [dim](benchmark::State& state) {
                   torch::NoGradGuard no_grad;
                   const auto x = uniform({kSumDimN, kSumDimN}, 4);
                   for (auto _ : state) keep(x.sum(dim, /*keepdim=*/true));
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
                 torch::manual_seed(42);
                 train_epoch(state, mlp());
                 set_flops(state, kMlpEpochFlops);
               }});
  w.push_back({"cnn_epoch", [](benchmark::State& state) {
                 torch::manual_seed(42);
                 train_epoch(state, cnn());
               }});
  w.push_back(mlp_infer(1));
  w.push_back(mlp_infer(kInferBatch));
  return w;
}

}  // namespace ember::peers

namespace ember::peers {
// LibTorch's intra-op threads (OpenMP, which its oneDNN shares); inter-op threads are not used by these workloads.
void set_torch_threads(int n) { torch::set_num_threads(n); }
}  // namespace ember::peers
