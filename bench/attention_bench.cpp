// ember_attention_bench: scaled-dot-product attention on the CPU, the fused flash-attention kernel
// (backends/cpu/attention.cpp) against the composed path (nn::detail::sdpa_naive: q k^T, softmax, p v as tensor
// ops), forward on Cpu<float> and forward + backward on Autodiff<Cpu<float>>, in one run.
//
// Peak extra memory: the CPU allocator's high-water mark of live bytes during the call minus the bytes live before
// it (cpu::allocator_reset_peak). Every tensor and the fused kernel's per-thread tiles come from that allocator;
// the cache is trimmed before each run so that a reused block does not hide an allocation. Outputs (and, for the
// backward, the gradients and the graph's saved tensors) are included for both paths alike.
//
// Usage: ember_attention_bench [--seq 2048] [--heads 4] [--batch 1] [--dim 64] [--threads 1] [--reps 3] [--causal]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#include "backends/cpu/allocator.hpp"
#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/parallel.hpp"
#include "engine/ember.hpp"
#include "engine/nn/functional/scaled_dot_product_attention.hpp"

namespace {

using namespace ember;

struct Result {
  double ms = 1e300;
  double peak_mib = 0;
};

Result measure(int reps, const std::function<void()>& fn) {
  Result r;
  for (int i = 0; i < reps; ++i) {
    cpu::allocator_trim();
    const std::size_t before = cpu::allocator_stats().live_bytes;
    cpu::allocator_reset_peak();
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    const auto t1 = std::chrono::steady_clock::now();
    r.ms = std::min(r.ms, std::chrono::duration<double, std::milli>(t1 - t0).count());
    r.peak_mib = std::max(r.peak_mib, static_cast<double>(cpu::allocator_stats().peak_live_bytes - before) / (1 << 20));
  }
  return r;
}

void report(const char* what, const Result& fused, const Result& naive) {
  std::printf("%-18s naive %9.1f ms %9.1f MiB | fused %9.1f ms %9.1f MiB | time x%.2f, memory 1/%.1f\n", what,
              naive.ms, naive.peak_mib, fused.ms, fused.peak_mib, naive.ms / fused.ms, naive.peak_mib / fused.peak_mib);
}

template <class B>
Tensor<B, 4> input(std::array<int64_t, 4> shape, uint64_t seed) {
  Rng rng(seed);
  return Tensor<B, 4>::random(shape, Normal{0.0, 1.0}, rng);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t seq = 2048, heads = 4, batch = 1, dim = 64;
  int threads = 1, reps = 3;
  bool causal = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::atoll(argv[++i]) : 0; };
    if (a == "--seq") seq = next();
    else if (a == "--heads") heads = next();
    else if (a == "--batch") batch = next();
    else if (a == "--dim") dim = next();
    else if (a == "--threads") threads = static_cast<int>(next());
    else if (a == "--reps") reps = static_cast<int>(next());
    else if (a == "--causal") causal = true;
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  cpu::set_num_threads(threads);
  std::printf("sdpa B=%lld H=%lld L=S=%lld E=Ev=%lld causal=%d, Cpu<float>, %d thread(s), best of %d\n",
              static_cast<long long>(batch), static_cast<long long>(heads), static_cast<long long>(seq),
              static_cast<long long>(dim), causal ? 1 : 0, threads, reps);
  const std::array<int64_t, 4> shape{batch, heads, seq, dim};
  const double scale = 1.0 / std::sqrt(static_cast<double>(dim));
  {
    using B = Cpu<float>;
    const auto q = input<B>(shape, 1), k = input<B>(shape, 2), v = input<B>(shape, 3);
    const auto fused = measure(reps, [&] { nn::scaled_dot_product_attention(q, k, v, std::nullopt, causal); });
    const auto naive = measure(reps, [&] { nn::detail::sdpa_naive(q, k, v, std::nullopt, causal, scale); });
    report("forward", fused, naive);
  }
  {
    using B = Autodiff<Cpu<float>>;
    const auto q = input<B>(shape, 1).require_grad(), k = input<B>(shape, 2).require_grad(),
               v = input<B>(shape, 3).require_grad();
    const auto fused =
        measure(reps, [&] { nn::scaled_dot_product_attention(q, k, v, std::nullopt, causal).sum().backward(); });
    const auto naive =
        measure(reps, [&] { nn::detail::sdpa_naive(q, k, v, std::nullopt, causal, scale).sum().backward(); });
    report("forward+backward", fused, naive);
  }
  return 0;
}
