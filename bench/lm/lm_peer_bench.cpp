// ember_lm_peer_bench: one training step of the character transformer (forward, cross-entropy, backward, AdamW) in
// Ember and in LibTorch's C++ API, in ONE process: "lm_train_step/ember" and "lm_train_step/torch" (the naming of
// bench/peers). Run with --benchmark_enable_random_interleaving=true so the two sides alternate and a shared
// machine's load hits both alike (bench/README.md has the command). Both use 1 thread unless --threads=N.
// The target: Ember's time <= 0.8x LibTorch's on 1 thread.
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/parallel.hpp"
#include "bench/lm/lm_shape.hpp"
#include "engine/optim/optim.hpp"
#include "tools/ember/lm_model.hpp"

namespace {

using namespace ember::lm_bench;

// ---- Ember ----
void ember_step(benchmark::State& state) {
  using Inner = ember::Cpu<float>;
  using AB = ember::Autodiff<Inner>;
  ember::seed(42);
  auto model = ember::tools::CharTransformer<AB>::init(ember::tools::LmConfig{kVocab, kContext, kDModel, kHeads, kLayers});
  ember::AdamW<AB> opt(ember::AdamWConfig{});
  const auto x = ember::Tensor<AB, 2, ember::Int>::from_values(token_ids(kBatch * kContext, 1), {kBatch, kContext});
  const auto y = ember::Tensor<AB, 1, ember::Int>::from_values(token_ids(kBatch * kContext, 2), {kBatch * kContext});
  for (auto _ : state) {
    const auto logits = model.forward(x).reshape(std::array<int64_t, 2>{kBatch * kContext, kVocab});
    const auto loss = ember::nn::cross_entropy(logits, y);
    benchmark::DoNotOptimize(loss.item());
    model = opt.step(kLr, std::move(model), ember::GradientsParams<AB>::from_grads(loss.backward(), model));
  }
}

// ---- LibTorch: the same model (gen_lm_fixture.py's PyTorch twin, in C++) ----
struct BlockImpl : torch::nn::Module {
  torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  torch::nn::Linear qkv{nullptr}, proj{nullptr}, fc1{nullptr}, fc2{nullptr};
  BlockImpl() {
    ln1 = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kDModel})));
    qkv = register_module("qkv", torch::nn::Linear(kDModel, 3 * kDModel));
    proj = register_module("proj", torch::nn::Linear(kDModel, kDModel));
    ln2 = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kDModel})));
    fc1 = register_module("fc1", torch::nn::Linear(kDModel, 4 * kDModel));
    fc2 = register_module("fc2", torch::nn::Linear(4 * kDModel, kDModel));
  }
  torch::Tensor attention(const torch::Tensor& x) {
    const int64_t n = x.size(0), t = x.size(1), e = kDModel / kHeads;
    auto parts = qkv->forward(x).chunk(3, -1);
    auto heads = [&](const torch::Tensor& p) { return p.view({n, t, kHeads, e}).transpose(1, 2); };
    auto scores = torch::matmul(heads(parts[0]), heads(parts[1]).transpose(-2, -1)) / std::sqrt(double(e));
    const auto causal = torch::ones({t, t}, torch::kBool).triu(1);
    auto y = torch::matmul(scores.masked_fill(causal, -INFINITY).softmax(-1), heads(parts[2]));
    return proj->forward(y.transpose(1, 2).reshape({n, t, kDModel}));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = x + attention(ln1->forward(x));
    return x + fc2->forward(torch::gelu(fc1->forward(ln2->forward(x))));
  }
};
TORCH_MODULE(Block);

struct LmImpl : torch::nn::Module {
  torch::nn::Embedding tok_emb{nullptr}, pos_emb{nullptr};
  torch::nn::ModuleList blocks;
  torch::nn::LayerNorm ln_f{nullptr};
  torch::nn::Linear head{nullptr};
  LmImpl() {
    tok_emb = register_module("tok_emb", torch::nn::Embedding(kVocab, kDModel));
    pos_emb = register_module("pos_emb", torch::nn::Embedding(kContext, kDModel));
    blocks = register_module("blocks", torch::nn::ModuleList());
    for (int64_t i = 0; i < kLayers; ++i) blocks->push_back(Block());
    ln_f = register_module("ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({kDModel})));
    head = register_module("head", torch::nn::Linear(kDModel, kVocab));
  }
  torch::Tensor forward(const torch::Tensor& ids) {
    auto x = tok_emb->forward(ids) + pos_emb->forward(torch::arange(ids.size(1))).unsqueeze(0);
    for (const auto& b : *blocks) x = b->as<Block>()->forward(x);
    return head->forward(ln_f->forward(x));
  }
};
TORCH_MODULE(Lm);

void torch_step(benchmark::State& state) {
  torch::manual_seed(42);
  Lm model;
  torch::optim::AdamW opt(model->parameters(), torch::optim::AdamWOptions(kLr));
  auto ids = [](uint64_t seed, std::vector<int64_t> shape) {
    auto v = token_ids(kBatch * kContext, seed);
    return torch::tensor(v, torch::kLong).view(shape);
  };
  const auto x = ids(1, {kBatch, kContext}), y = ids(2, {kBatch * kContext});
  for (auto _ : state) {
    opt.zero_grad();
    const auto loss = torch::nn::functional::cross_entropy(model->forward(x).view({kBatch * kContext, kVocab}), y);
    benchmark::DoNotOptimize(loss.item<float>());
    loss.backward();
    opt.step();
  }
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && std::strncmp(argv[i], "--threads=", 10) == 0) {
      if (std::atoi(argv[i] + 10) > 0) threads = std::atoi(argv[i] + 10);
      continue;
    }
    args.push_back(argv[i]);
  }
  ember::cpu::set_num_threads(threads);
  torch::set_num_threads(threads);
  benchmark::AddCustomContext("threads", std::to_string(threads));
  benchmark::RegisterBenchmark("lm_train_step/ember", ember_step)->Unit(benchmark::kMillisecond)->UseRealTime();
  benchmark::RegisterBenchmark("lm_train_step/torch", torch_step)->Unit(benchmark::kMillisecond)->UseRealTime();
  int n = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
