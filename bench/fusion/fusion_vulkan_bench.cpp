// ember_fusion_vulkan_bench (issue 14, Vulkan part): the linear -> bias -> GELU -> dropout block's forward +
// backward on Autodiff<Fusion<Vulkan>> (chains as generated shaders, backends/vulkan/fused_chain.cpp) against
// Autodiff<Vulkan> (one dispatch per op), interleaved in one run, the same steps as ember_fusion_bench.
//
//   build/bench/ember_fusion_vulkan_bench [reps]
//
// Prints per shape the median step time of each side (every result read back to the host, so the GPU work is
// inside the step), their ratio, the relative difference of the losses, and the fused pipelines compiled (on
// the warm-up steps only: later steps find them in the cache) against the cache hits.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "backends/vulkan/context.hpp"
#include "backends/vulkan/fused_chain.hpp"
#include "backends/vulkan/vulkan_backend.hpp"
#include "engine/ember.hpp"
#include "engine/nn/dropout.hpp"

namespace {

using namespace ember;

struct Result {
  double seconds;
  double loss;
};

template <class B>
Result step(const std::array<int64_t, 3>& nkm, uint64_t seed, bool square) {
  using AD = Autodiff<B>;
  const auto [n, k, m] = nkm;
  Rng rng(7);
  const auto x = Tensor<AD, 2>::random({n, k}, Uniform{-1.0, 1.0}, rng);
  const auto w = Tensor<AD, 2>::random({k, m}, Uniform{-0.2, 0.2}, rng).require_grad();
  const auto b = Tensor<AD, 1>::random({m}, Uniform{-0.5, 0.5}, rng).require_grad();
  const nn::Dropout dropout = nn::DropoutConfig{0.1}.init();
  ember::seed(seed);  // the same mask for eager and fused
  const auto t0 = std::chrono::steady_clock::now();
  const auto y = dropout.forward((x.matmul(w) + b.template unsqueeze<2>(0)).gelu());
  const auto loss = square ? y.mul(y).sum() : y.sum();
  const auto grads = loss.backward();
  const double l = loss.into_data().template to_vec<double>()[0];
  const auto gw = w.grad(grads)->into_data();
  const auto gb = b.grad(grads)->into_data();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (gw.template to_vec<float>().empty() || gb.template to_vec<float>().empty()) std::abort();
  return {s, l};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 10;
  std::string why;
  if (!vk::available(&why)) {
    std::printf("no Vulkan device: %s\n", why.c_str());
    return 0;
  }
  auto& ctx = *vk::default_context();
  std::printf("device: %s\n", ctx.info().name.c_str());
  std::printf("%-18s %-10s %12s %12s %8s %14s %9s %6s\n", "shape [n,k,m]", "loss", "eager ms", "fused ms", "speedup",
              "loss rel diff", "compiled", "hits");
  const std::vector<std::array<int64_t, 3>> shapes{{256, 64, 1024}, {1024, 64, 512}, {512, 256, 1024}};
  for (const bool square : {false, true}) {
    for (const auto& s : shapes) {
      const auto before = vk::fused_chain_stats(ctx);
      std::vector<double> eager, fused;
      double le = 0, lf = 0;
      for (int r = 0; r < reps + 2; ++r) {  // two warm-up steps each (the fused side compiles its chains there)
        const Result e = step<Vulkan>(s, 1000 + r, square);
        const Result f = step<Fusion<Vulkan>>(s, 1000 + r, square);
        if (r < 2) continue;
        eager.push_back(e.seconds);
        fused.push_back(f.seconds);
        le = e.loss;
        lf = f.loss;
      }
      const auto after = vk::fused_chain_stats(ctx);
      const double me = median(eager), mf = median(fused);
      std::printf("[%4lld,%4lld,%5lld]   %-10s %12.3f %12.3f %7.2fx %14.2e %9llu %6llu\n",
                  static_cast<long long>(s[0]), static_cast<long long>(s[1]), static_cast<long long>(s[2]),
                  square ? "sum(y*y)" : "sum(y)", me * 1e3, mf * 1e3, me / mf, std::fabs(lf - le) / std::fabs(le),
                  static_cast<unsigned long long>(after.compiled - before.compiled),
                  static_cast<unsigned long long>(after.hits - before.hits));
    }
  }
  return 0;
}
