#pragma once
#include <cstdint>
#include <ostream>

namespace ember::tools {

struct FitOptions {
  int64_t steps = 2000;
  int64_t hidden = 32;
  int64_t samples = 256;
  double lr = 0.1;
  uint64_t seed = 42;
  int64_t log_every = 200;
};

struct FitResult {
  double first_loss = 0.0;
  double final_loss = 0.0;
};

// Fits y = sin(x) on [-pi, pi] with a 1-H-H-1 tanh MLP under Autodiff<Cpu<f32>>, full-batch gradient descent.
FitResult fit_sine(const FitOptions& o, std::ostream& log);

}  // namespace ember::tools
