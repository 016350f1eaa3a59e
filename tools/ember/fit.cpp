// `ember fit`: the engine-core demo. An MLP learns sin(x) with Autodiff<Cpu<f32>> and plain gradient descent,
// exercising creation, broadcasting, matmul, tanh, reductions, backward and parameter updates end to end.
#include "tools/ember/fit.hpp"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.hpp"
#include "engine/ember.hpp"

namespace ember::tools {
namespace {

using B = Autodiff<Cpu<float>>;
using T2 = Tensor<B, 2>;

// Kaiming-uniform-like init (PyTorch's Linear default bound 1/sqrt(fan_in)).
T2 init(int64_t fan_in, int64_t fan_out, Rng& rng) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  return T2::random({fan_in, fan_out}, Uniform{-bound, bound}, rng).require_grad();
}

}  // namespace

FitResult fit_sine(const FitOptions& o, std::ostream& log) {
  Rng rng(o.seed);
  std::vector<float> xs(static_cast<std::size_t>(o.samples));
  for (int64_t i = 0; i < o.samples; ++i) xs[i] = static_cast<float>(-M_PI + 2.0 * M_PI * i / (o.samples - 1));
  const auto x = T2::from_values(xs, {o.samples, 1});
  const auto y = x.sin().detach();

  std::vector<T2> params = {init(1, o.hidden, rng), T2::zeros({1, o.hidden}).require_grad(),
                            init(o.hidden, o.hidden, rng), T2::zeros({1, o.hidden}).require_grad(),
                            init(o.hidden, 1, rng), T2::zeros({1, 1}).require_grad()};
  FitResult result;
  for (int64_t step = 0; step <= o.steps; ++step) {
    auto h1 = x.matmul(params[0]).add(params[1]).tanh();
    auto h2 = h1.matmul(params[2]).add(params[3]).tanh();
    auto pred = h2.matmul(params[4]).add(params[5]);
    auto diff = pred.sub(y);
    auto loss = diff.mul(diff).mean();
    const double l = loss.item();
    if (step == 0) result.first_loss = l;
    result.final_loss = l;
    if (step % o.log_every == 0 || step == o.steps) {
      char line[128];
      std::snprintf(line, sizeof line, "step %6lld  loss %.6f\n", static_cast<long long>(step), l);
      log << line << std::flush;
    }
    if (step == o.steps) break;
    auto grads = loss.backward();
    for (auto& p : params) {
      auto g = p.grad(grads);
      if (!g) throw Error("fit: parameter received no gradient");
      p = T2::from_inner(p.inner().sub(g->mul_scalar(o.lr))).require_grad();
    }
  }
  return result;
}

}  // namespace ember::tools
