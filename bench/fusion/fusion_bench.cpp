// ember_fusion_bench (issue 14): a linear -> bias -> GELU -> dropout block's forward + backward, fused
// (Autodiff<Fusion<Cpu<float>>>) against eager (Autodiff<Cpu<float>>) in the same run, on one thread.
//
//   build/bench/ember_fusion_bench [reps] [eager|fused|both] [row]
//
// A second argument other than "both" runs only that side (for perf record); a third runs only the row with that
// number (0-11, in the printed order).
// Per shape it times `reps` steps of each, interleaved (eager, fused, eager, ...) so both see the same machine
// load, and prints the median step time of each, their ratio, and the loss of both (the dropout mask comes from
// the same seed each step, so the losses must agree to float rounding). The step: y = dropout(gelu(x @ w + b)),
// loss = sum(y) (the block's own backward, seeded with ones) or sum(y * y) (whose backward needs y itself: the
// fused backward recomputes GELU from x @ w + b rather than reading a stored y), backward to w and b. The same
// block without dropout is timed too: the mask (Philox words computed in place by the CPU, engine/nn/dropout.hpp)
// costs the same fused or not.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "backends/cpu/fused_jit.hpp"
#include "engine/ember.hpp"
#include "engine/nn/dropout.hpp"

namespace {

using namespace ember;

struct Result {
  double seconds;
  double loss;
};

template <class B>
Result step(const std::array<int64_t, 3>& nkm, uint64_t seed, bool with_dropout, bool square) {
  using AD = Autodiff<B>;
  const auto [n, k, m] = nkm;
  Rng rng(7);
  const auto x = Tensor<AD, 2>::random({n, k}, Uniform{-1.0, 1.0}, rng);
  const auto w = Tensor<AD, 2>::random({k, m}, Uniform{-0.2, 0.2}, rng).require_grad();
  const auto b = Tensor<AD, 1>::random({m}, Uniform{-0.5, 0.5}, rng).require_grad();
  const nn::Dropout dropout = nn::DropoutConfig{with_dropout ? 0.1 : 0.0}.init();
  ember::seed(seed);  // the same mask for eager and fused
  const auto t0 = std::chrono::steady_clock::now();
  const auto y = dropout.forward((x.matmul(w) + b.template unsqueeze<2>(0)).gelu());
  const auto loss = square ? y.mul(y).sum() : y.sum();
  const auto grads = loss.backward();
  // Read every result to the host: a lazy backend must have computed them.
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

// Median step times of eager and fused for one shape, interleaved, and the line that reports them.
void compare(const std::array<int64_t, 3>& s, bool with_dropout, bool square, int reps, const std::string& only) {
  std::vector<double> eager, fused;
  double le = 0, lf = 0;
  for (int r = 0; r < reps + 2; ++r) {  // two warm-up steps each
    const Result e = only != "fused" ? step<Cpu<float>>(s, 1000 + r, with_dropout, square) : Result{1, 1};
    const Result f = only != "eager" ? step<Fusion<Cpu<float>>>(s, 1000 + r, with_dropout, square) : Result{1, 1};
    if (r < 2) continue;
    eager.push_back(e.seconds);
    fused.push_back(f.seconds);
    le = e.loss;
    lf = f.loss;
  }
  const double me = median(eager), mf = median(fused);
  std::printf("[%4lld,%4lld,%5lld]   %-8s %-10s %12.3f %12.3f %7.2fx %14.2e\n", static_cast<long long>(s[0]),
              static_cast<long long>(s[1]), static_cast<long long>(s[2]), with_dropout ? "p=0.1" : "none",
              square ? "sum(y*y)" : "sum(y)",
              me * 1e3, mf * 1e3, me / mf,
              std::fabs(lf - le) / std::fabs(le));
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 30;
  const std::string only = argc > 2 ? argv[2] : "";
  const int only_row = argc > 3 ? std::atoi(argv[3]) : -1;
  int row = 0;
  cpu::set_num_threads(1);
  // [rows, in, out]: two narrow-input layers (k = 64), where the elementwise part is most of the step, and a
  // transformer-FFN-like one (k = 256), where the GEMMs are.
  const std::vector<std::array<int64_t, 3>> shapes{{256, 64, 1024}, {1024, 64, 512}, {512, 256, 1024}};
  std::printf("%-18s %-8s %-10s %12s %12s %8s %14s\n", "shape [n,k,m]", "dropout", "loss", "eager ms", "fused ms",
              "speedup", "loss rel diff");
  for (const bool square : {false, true}) {
    for (const bool with_dropout : {true, false}) {
      for (const auto& s : shapes) {
        if (only_row < 0 || row == only_row) compare(s, with_dropout, square, reps, only);
        ++row;
      }
    }
  }
  const auto jit = cpu::fused_jit_stats();
  std::printf("fused chains as machine code (backends/cpu/fused_jit.hpp): %s; %llu compiled, %llu cache hits, %llu left to "
              "the interpreter%s%s\n",
              cpu::fused_jit_usable() ? "on" : "off (no Xbyak, no AVX-512F, or EMBER_FUSED_JIT=0)",
              static_cast<unsigned long long>(jit.compiled), static_cast<unsigned long long>(jit.hits),
              static_cast<unsigned long long>(jit.declined), jit.last_declined.empty() ? "" : ", the last: ",
              jit.last_declined.c_str());
  return 0;
}
