// The `ember` command line. Subcommands: fit (engine demo), version.
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include "backends/cpu/parallel.hpp"
#include "tools/ember/fit.hpp"

namespace {

void usage() {
  std::puts(
      "usage: ember <command> [options]\n"
      "commands:\n"
      "  fit      fit an MLP to sin(x) with autodiff and gradient descent (CPU)\n"
      "           --steps N (2000)  --lr X (0.1)  --hidden N (32)  --seed N (42)  --threads N\n"
      "  version  print the engine version");
}

bool parse_int(const char* s, long long& out) {
  char* end = nullptr;
  out = std::strtoll(s, &end, 10);
  return end && *end == '\0' && end != s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    usage();
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  try {
    if (cmd == "version") {
      std::puts("ember 0.1.0");
      return 0;
    }
    if (cmd == "fit") {
      ember::tools::FitOptions o;
      for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 >= argc) {
          std::fprintf(stderr, "ember fit: %s needs a value\n", a.c_str());
          return 2;
        }
        const char* v = argv[++i];
        long long n = 0;
        if (a == "--lr") {
          o.lr = std::strtod(v, nullptr);
        } else if (!parse_int(v, n) || n < 0) {
          std::fprintf(stderr, "ember fit: %s expects a non-negative integer, got '%s'\n", a.c_str(), v);
          return 2;
        } else if (a == "--steps") {
          o.steps = n;
        } else if (a == "--hidden") {
          o.hidden = n;
        } else if (a == "--seed") {
          o.seed = static_cast<uint64_t>(n);
        } else if (a == "--threads") {
          ember::cpu::set_num_threads(static_cast<int>(n));
        } else {
          std::fprintf(stderr, "ember fit: unknown option %s\n", a.c_str());
          return 2;
        }
      }
      std::cout << "fitting sin(x) with a 1-" << o.hidden << "-" << o.hidden << "-1 tanh MLP, " << o.steps
                << " steps of gradient descent (lr " << o.lr << ") on cpu<f32> + autodiff\n";
      const auto r = ember::tools::fit_sine(o, std::cout);
      std::cout << "loss " << r.first_loss << " -> " << r.final_loss << "\n";
      return r.final_loss < r.first_loss ? 0 : 1;
    }
    std::fprintf(stderr, "ember: unknown command '%s'\n", cmd.c_str());
    usage();
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ember %s: error: %s\n", cmd.c_str(), e.what());
    return 1;
  }
}
