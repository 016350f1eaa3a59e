// The `ember` command line: train / eval / inspect (the digits classifier and its records), fit (a small
// autodiff demo), version. Every failure prints a message and exits non-zero; nothing aborts.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>
#include <stdexcept>
#include <vector>
#include <string>

#include "backends/cpu/parallel.hpp"
#include "records/recorder.hpp"
#include "tools/ember/fit.hpp"
#include "tools/ember/train.hpp"

namespace {

const char* kUsage =
    "usage: ember <command> [options]\n"
    "commands:\n"
    "  train    train a digits classifier and save its record (+ an SVG training curve)\n"
    "           --model mlp|cnn (mlp)  --backend cpu|vulkan|cuda  --epochs N (20)  --batch-size N (64)  --lr X (0.001)\n"
    "           --precision full|half|double (full)  --out FILE (digits-<model>.emr)  --data FILE  --seed N\n"
    "           --threads N  --no-progress\n"
    "  eval     FILE [--data FILE]: test accuracy of a record written by train\n"
    "  inspect  FILE: print a record's tree (paths, kinds, dtypes, shapes, counts, precision, versions)\n"
    "  fit      fit an MLP to sin(x) with autodiff and gradient descent\n"
    "           --steps N (2000)  --lr X (0.1)  --hidden N (32)  --seed N (42)\n"
    "  version  print the engine version\n";

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// --key value options (and bare flags listed in `flags`), plus positional arguments.
struct Args {
  std::map<std::string, std::string> opts;
  std::vector<std::string> positional;

  Args(int argc, char** argv, int first, std::initializer_list<const char*> flags) {
    for (int i = first; i < argc; ++i) {
      std::string a = argv[i];
      if (a.rfind("--", 0) != 0) {
        positional.push_back(a);
        continue;
      }
      bool is_flag = false;
      for (auto* f : flags) is_flag = is_flag || a == f;
      if (!is_flag && i + 1 >= argc) throw UsageError(a + " needs a value");
      opts.insert_or_assign(std::move(a), std::string(is_flag ? "1" : argv[++i]));
    }
  }
  bool has(const std::string& k) const { return opts.count(k) != 0; }
  std::string str(const std::string& k, const std::string& def) const {
    auto it = opts.find(k);
    return it == opts.end() ? def : it->second;
  }
  long long integer(const std::string& k, long long def, long long min = 0) const {
    auto it = opts.find(k);
    if (it == opts.end()) return def;
    char* end = nullptr;
    const long long v = std::strtoll(it->second.c_str(), &end, 10);
    if (!end || *end || end == it->second.c_str() || v < min)
      throw UsageError(k + " expects an integer >= " + std::to_string(min) + ", got '" + it->second + "'");
    return v;
  }
  double real(const std::string& k, double def) const {
    auto it = opts.find(k);
    if (it == opts.end()) return def;
    char* end = nullptr;
    const double v = std::strtod(it->second.c_str(), &end);
    if (!end || *end || end == it->second.c_str()) throw UsageError(k + " expects a number, got '" + it->second + "'");
    return v;
  }
  void only(std::initializer_list<const char*> known) const {
    for (const auto& [k, v] : opts) {
      bool ok = false;
      for (auto* n : known) ok = ok || k == n;
      if (!ok) throw UsageError("unknown option " + k);
    }
  }
};

int cmd_train(const Args& a) {
  a.only({"--model", "--backend", "--epochs", "--batch-size", "--lr", "--precision", "--out", "--data", "--seed",
          "--threads", "--no-progress"});
  ember::tools::TrainOptions o;
  o.model = ember::tools::model_kind_from_name(a.str("--model", "mlp"));
  o.backend = a.str("--backend", "cpu");
  o.epochs = a.integer("--epochs", 20, 1);
  o.batch_size = a.integer("--batch-size", 64, 1);
  o.lr = a.real("--lr", 1e-3);
  o.precision = a.str("--precision", "full");
  o.out = a.str("--out", "");
  o.data = a.str("--data", "");
  o.seed = static_cast<uint64_t>(a.integer("--seed", 42));
  o.progress = !a.has("--no-progress");
  if (a.has("--threads")) ember::cpu::set_num_threads(static_cast<int>(a.integer("--threads", 1, 1)));
  std::cout << "training " << ember::tools::model_name(o.model) << " on digits (" << o.backend
            << " f32 + autodiff), " << o.epochs << " epochs, batch " << o.batch_size << ", Adam lr " << o.lr << "\n";
  const auto r = ember::tools::run_train(o, std::cout);
  std::cout << "saved " << r.record_path.string() << " (" << o.precision << " precision), curve "
            << r.curve_path.string() << "\n";
  return 0;
}

int cmd_eval(const Args& a) {
  a.only({"--data"});
  if (a.positional.size() != 1) throw UsageError("eval takes one record file");
  const auto r = ember::tools::run_eval(a.positional[0], a.str("--data", ""));
  std::printf("%s: %s model, test accuracy %.2f%% on %lld held-out samples\n", a.positional[0].c_str(),
              ember::tools::model_name(r.model), 100.0 * r.test_accuracy, static_cast<long long>(r.test_samples));
  return 0;
}

int cmd_inspect(const Args& a) {
  a.only({});
  if (a.positional.size() != 1) throw UsageError("inspect takes one record file");
  std::cout << ember::format_record_tree(ember::inspect_record_file(a.positional[0]));
  return 0;
}

int cmd_fit(const Args& a) {
  a.only({"--steps", "--lr", "--hidden", "--seed", "--threads"});
  ember::tools::FitOptions o;
  o.steps = a.integer("--steps", o.steps);
  o.hidden = a.integer("--hidden", o.hidden, 1);
  o.seed = static_cast<uint64_t>(a.integer("--seed", static_cast<long long>(o.seed)));
  o.lr = a.real("--lr", o.lr);
  if (a.has("--threads")) ember::cpu::set_num_threads(static_cast<int>(a.integer("--threads", 1, 1)));
  std::cout << "fitting sin(x) with a 1-" << o.hidden << "-" << o.hidden << "-1 tanh MLP, " << o.steps
            << " steps of gradient descent (lr " << o.lr << ") on cpu<f32> + autodiff\n";
  const auto r = ember::tools::fit_sine(o, std::cout);
  std::cout << "loss " << r.first_loss << " -> " << r.final_loss << "\n";
  return r.final_loss < r.first_loss ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string cmd = argv[1];
  try {
    if (cmd == "version") {
      std::printf("ember %s\n", ember::engine_version());
      return 0;
    }
    if (cmd == "train") return cmd_train(Args(argc, argv, 2, {"--no-progress"}));
    if (cmd == "eval") return cmd_eval(Args(argc, argv, 2, {}));
    if (cmd == "inspect") return cmd_inspect(Args(argc, argv, 2, {}));
    if (cmd == "fit") return cmd_fit(Args(argc, argv, 2, {}));
    std::fprintf(stderr, "ember: unknown command '%s'\n%s", cmd.c_str(), kUsage);
    return 2;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ember %s: %s\n%s", cmd.c_str(), e.what(), kUsage);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ember %s: error: %s\n", cmd.c_str(), e.what());
    return 1;
  }
}
