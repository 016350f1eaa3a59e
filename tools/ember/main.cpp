// The `ember` command line: train / eval / inspect (the digits classifier and its records; `train --model
// transformer` the character language model), generate (text from that model), import / export (safetensors),
// fit (a small autodiff demo), version. Parsing is CLI11's: every command has --help and --version;
// a usage error prints the problem and the command's usage line and exits 2; any other failure prints "error: ..." and exits 1. Nothing
// aborts.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <exception>
#include <iostream>
#include <string>

#include "backends/backend_list.hpp"
#include "backends/cpu/parallel.hpp"
#include "records/recorder.hpp"
#include "records/safetensors.hpp"
#include "tools/ember/convert.hpp"
#include "tools/ember/fit.hpp"
#include "tools/ember/lm.hpp"
#include "tools/ember/run_onnx.hpp"
#include "tools/ember/train.hpp"

namespace {

constexpr int kUsageExit = 2;

std::string version_line() { return fmt::format("ember {}", ember::engine_version()); }

// Bounds of numeric options, with messages a person can read (CLI11's Range and PositiveNumber print the whole
// numeric range). The bound is in each option's help text, so the validators add nothing to the type column.
CLI::Validator integer_at_least(long long min) {
  return CLI::Validator(
      [min](std::string& s) -> std::string {
        long long v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc{} || end != s.data() + s.size() || v < min)
          return fmt::format("expects an integer >= {}, got '{}'", min, s);
        return {};
      },
      "");
}
CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        double v = 0;
        try {
          std::size_t used = 0;
          v = std::stod(s, &used);
          if (used == s.size() && v > 0) return {};
        } catch (const std::exception&) {
        }
        return fmt::format("expects a number > 0, got '{}'", s);
      },
      "");
}

// Every command answers --version like the top level does.
CLI::App* add_command(CLI::App& app, const std::string& name, const std::string& description) {
  CLI::App* cmd = app.add_subcommand(name, description);
  cmd->set_version_flag("--version", version_line());
  return cmd;
}

// --threads N: the CPU worker count (0, the default, keeps the hardware's).
void add_threads_option(CLI::App& cmd, int& threads) {
  cmd.add_option("--threads", threads, "CPU worker threads, >= 1 (default: one per core)")->check(integer_at_least(1));
}
void apply_threads(int threads) {
  if (threads > 0) ember::cpu::set_num_threads(threads);
}

// --backend's choices and help come from backends/backend_list.hpp: every listed backend is a choice (one not
// built here is refused by run_train with the list of those that are), the help names the built ones.
std::vector<std::string> backend_names(bool compiled_only) {
  std::vector<std::string> names;
  for (const auto& b : ember::kBackends)
    if (b.compiled || !compiled_only) names.emplace_back(b.name);
  return names;
}

struct TrainArgs {
  ember::tools::TrainOptions options;
  ember::tools::LmTrainOptions lm;  // --model transformer
  std::string model = "mlp";
  int threads = 0;
  bool no_progress = false;
  CLI::Option *lr = nullptr, *epochs = nullptr, *batch_size = nullptr, *out = nullptr;
};

// The language model's options; the shared ones (--lr, --batch-size, --out, --data, --seed, --precision, --backend)
// are copied from the digits' in run_train_transformer.
void add_transformer_options(CLI::App& cmd, ember::tools::LmTrainOptions& lm) {
  const std::string group = "transformer (--model transformer)";
  cmd.add_option("--steps", lm.steps, "AdamW steps, >= 1")
      ->check(integer_at_least(1))
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--context", lm.model.context, "characters the model sees, >= 1")
      ->check(integer_at_least(1))
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--d-model", lm.model.d_model, "width of the residual stream, >= 1")
      ->check(integer_at_least(1))
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--heads", lm.model.num_heads, "attention heads (dividing --d-model), >= 1")
      ->check(integer_at_least(1))
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--layers", lm.model.num_layers, "transformer blocks, >= 1")
      ->check(integer_at_least(1))
      ->capture_default_str()
      ->group(group);
  cmd.add_option("--log-every", lm.log_every, "a log line and curve point every this many steps, >= 1")
      ->check(integer_at_least(1))
      ->capture_default_str()
      ->group(group);
}

CLI::App* add_train(CLI::App& app, TrainArgs& a) {
  CLI::App* cmd = add_command(app, "train",
                              "train a digits classifier or a character language model and save its record (+ an SVG "
                              "training curve)");
  auto& o = a.options;
  cmd->add_option("--model", a.model, "the model: digits mlp / cnn, or the fortunes transformer")
      ->check(CLI::IsMember({"mlp", "cnn", "transformer"}))
      ->capture_default_str();
  cmd->add_option("--backend", o.backend,
                  fmt::format("the backend that trains (built here: {})", fmt::join(backend_names(true), ", ")))
      ->check(CLI::IsMember(backend_names(false)))
      ->capture_default_str();
  a.epochs = cmd->add_option("--epochs", o.epochs, "passes over the training split, >= 1 (digits)")
      ->check(integer_at_least(1))
      ->capture_default_str();
  a.batch_size = cmd->add_option("--batch-size", o.batch_size, "samples per Adam step, >= 1 (transformer: 32)")
      ->check(integer_at_least(1))
      ->capture_default_str();
  a.lr = cmd->add_option("--lr", o.lr, "Adam learning rate, > 0 (transformer: AdamW, 2e-3)")
             ->check(positive_number())
             ->capture_default_str();
  cmd->add_option("--precision", o.precision, "how the record stores elements")
      ->check(CLI::IsMember({"full", "half", "double"}))
      ->capture_default_str();
  a.out = cmd->add_option("--out", o.out,
                          "the record to write (default: digits-<model>.emr or fortunes-transformer.emr; the curve "
                          "goes beside it as .svg)");
  cmd->add_option("--data", o.data,
                  "the digits CSV (default: data/digits.csv.gz); for the transformer a text file or a fortunes "
                  "directory (default: fortunes-min's files in /usr/share/games/fortunes)");
  cmd->add_option("--seed", o.seed, "seed of initialization and shuffling")->capture_default_str();
  add_threads_option(*cmd, a.threads);
  cmd->add_flag("--no-progress", a.no_progress, "no per-batch progress bar (it is drawn only on a terminal)");
  add_transformer_options(*cmd, a.lm);
  return cmd;
}

int run_train_transformer(TrainArgs& a) {
  const auto& o = a.options;
  auto& lm = a.lm;
  if (a.epochs->count()) throw ember::ArgumentError("train: --epochs is the digits'; the transformer counts --steps");
  lm.backend = o.backend;
  if (a.lr->count()) lm.lr = o.lr;
  if (a.batch_size->count()) lm.batch_size = o.batch_size;
  lm.precision = o.precision;
  lm.out = o.out;
  lm.data = o.data;
  lm.seed = o.seed;
  lm.progress = !a.no_progress;
  apply_threads(a.threads);
  fmt::print("training a {}-layer character transformer (d_model {}, {} heads, context {}) on {} ({} f32 + autodiff), "
             "{} steps, batch {}, AdamW lr {:g}\n",
             lm.model.num_layers, lm.model.d_model, lm.model.num_heads, lm.model.context,
             lm.data.empty() ? std::string("fortunes") : lm.data.string(), lm.backend, lm.steps, lm.batch_size, lm.lr);
  const auto r = ember::tools::run_train_lm(lm, std::cout);
  fmt::print("corpus {} characters, vocabulary {}; saved {} ({} precision), curve {}\n", r.corpus_chars, r.vocab_size,
             r.record_path.string(), lm.precision, r.curve_path.string());
  return 0;
}

int run_train(TrainArgs& a) {
  if (a.model == "transformer") return run_train_transformer(a);
  auto& o = a.options;
  o.model = ember::tools::model_kind_from_name(a.model);
  o.progress = !a.no_progress;
  apply_threads(a.threads);
  fmt::print("training {} on digits ({} f32 + autodiff), {} epochs, batch {}, Adam lr {:g}\n",
             ember::tools::model_name(o.model), o.backend, o.epochs, o.batch_size, o.lr);
  const auto r = ember::tools::run_train(o, std::cout);
  fmt::print("saved {} ({} precision), curve {}\n", r.record_path.string(), o.precision, r.curve_path.string());
  return 0;
}

struct EvalArgs {
  std::string record;
  std::string data;
};

CLI::App* add_eval(CLI::App& app, EvalArgs& a) {
  CLI::App* cmd = add_command(app, "eval", "test accuracy of a record written by train, on the same held-out split");
  cmd->add_option("FILE", a.record, "the record")->required();
  cmd->add_option("--data", a.data, "the digits CSV (default: data/digits.csv.gz)");
  return cmd;
}

int run_eval(const EvalArgs& a) {
  const auto r = ember::tools::run_eval(a.record, a.data);
  fmt::print("{}: {} model, test accuracy {:.2f}% on {} held-out samples\n", a.record,
             ember::tools::model_name(r.model), 100.0 * r.test_accuracy, r.test_samples);
  return 0;
}

CLI::App* add_inspect(CLI::App& app, std::string& record) {
  CLI::App* cmd =
      add_command(app, "inspect", "print a record's tree (paths, kinds, dtypes, shapes, counts, precision, versions)");
  cmd->add_option("FILE", record, "the record")->required();
  return cmd;
}

// A safetensors file is listed as such; anything else is read as an Ember record (whose errors say what it is not).
int run_inspect(const std::string& record) {
  if (ember::looks_like_safetensors(record))
    fmt::print("{}", ember::format_safetensors(ember::SafetensorsFile::open(record)));
  else
    fmt::print("{}", ember::format_record_tree(ember::inspect_record_file(record)));
  return 0;
}

struct ImportArgs {
  ember::tools::ImportOptions options;
  std::string input, out, model;
};

CLI::App* add_import(CLI::App& app, ImportArgs& a) {
  CLI::App* cmd = add_command(app, "import",
                              "convert a safetensors file (a PyTorch state_dict) into an Ember record");
  cmd->add_option("FILE", a.input, "the .safetensors file")->required();
  cmd->add_option("--out", a.out, "the record to write (default: FILE with the extension .emr)");
  cmd->add_option("--model", a.model,
                  "load it into this digits model through the PyTorch name map, for `ember eval` (default: keep "
                  "names and layouts)")
      ->check(CLI::IsMember({"mlp", "cnn"}));
  cmd->add_flag("--partial", a.options.partial, "with --model: load what matches and report the rest");
  cmd->add_option("--precision", a.options.precision, "how the record stores elements")
      ->check(CLI::IsMember({"full", "half", "double"}))
      ->capture_default_str();
  return cmd;
}

int run_import(ImportArgs& a) {
  a.options.input = a.input;
  a.options.out = a.out;
  if (!a.model.empty()) a.options.model = ember::tools::model_kind_from_name(a.model);
  ember::tools::run_import(a.options, std::cout);
  return 0;
}

struct ExportArgs {
  std::string input, out;
};

CLI::App* add_export(CLI::App& app, ExportArgs& a) {
  CLI::App* cmd = add_command(app, "export",
                              "write an Ember record as safetensors (a record of `ember train`: PyTorch's names)");
  cmd->add_option("FILE", a.input, "the record")->required();
  cmd->add_option("--out", a.out, "the file to write (default: FILE with the extension .safetensors)");
  return cmd;
}

int run_export(const ExportArgs& a) {
  ember::tools::run_export({a.input, a.out}, std::cout);
  return 0;
}

struct GenerateArgs {
  ember::tools::GenerateOptions options;
  std::string record;
  int threads = 0;
};

CLI::App* add_generate(CLI::App& app, GenerateArgs& a) {
  CLI::App* cmd = add_command(app, "generate", "sample text from a language model written by `train --model transformer`");
  auto& o = a.options;
  cmd->add_option("FILE", a.record, "the record")->required();
  cmd->add_option("--prompt", o.prompt, "the text to continue (its characters must be in the model's vocabulary)");
  cmd->add_option("--temperature", o.temperature, "divides the logits, > 0 (lower: safer text)")
      ->check(positive_number())
      ->capture_default_str();
  cmd->add_option("--top-k", o.top_k, "sample among the k likeliest characters, >= 0 (0: all)")
      ->check(integer_at_least(0))
      ->capture_default_str();
  cmd->add_option("--length", o.length, "characters to generate, >= 0")->check(integer_at_least(0))->capture_default_str();
  cmd->add_option("--seed", o.seed, "seed of the sampling")->capture_default_str();
  cmd->add_option("--backend", o.backend,
                  fmt::format("the backend that runs the model (built here: {})", fmt::join(backend_names(true), ", ")))
      ->check(CLI::IsMember(backend_names(false)))
      ->capture_default_str();
  add_threads_option(*cmd, a.threads);
  return cmd;
}

int run_generate(GenerateArgs& a) {
  a.options.record = a.record;
  apply_threads(a.threads);
  fmt::print("{}\n", ember::tools::run_generate(a.options));
  return 0;
}

struct FitArgs {
  ember::tools::FitOptions options;
  int threads = 0;
};

CLI::App* add_fit(CLI::App& app, FitArgs& a) {
  CLI::App* cmd = add_command(app, "fit", "fit an MLP to sin(x) with autodiff and gradient descent");
  auto& o = a.options;
  cmd->add_option("--steps", o.steps, "gradient-descent steps, >= 0")->check(integer_at_least(0))->capture_default_str();
  cmd->add_option("--lr", o.lr, "learning rate")->capture_default_str();
  cmd->add_option("--hidden", o.hidden, "width of both hidden layers, >= 1")
      ->check(integer_at_least(1))
      ->capture_default_str();
  cmd->add_option("--seed", o.seed, "seed of initialization")->capture_default_str();
  add_threads_option(*cmd, a.threads);
  return cmd;
}

int run_fit(const FitArgs& a) {
  const auto& o = a.options;
  apply_threads(a.threads);
  fmt::print("fitting sin(x) with a 1-{0}-{0}-1 tanh MLP, {1} steps of gradient descent (lr {2:g}) on cpu<f32> + "
             "autodiff\n",
             o.hidden, o.steps, o.lr);
  const auto r = ember::tools::fit_sine(o, std::cout);
  fmt::print("loss {:g} -> {:g}\n", r.first_loss, r.final_loss);
  return r.final_loss < r.first_loss ? 0 : 1;
}

// The innermost command the parser had reached, for the usage line of an error.
const CLI::App* failing_command(const CLI::App& app) {
  const CLI::App* at = &app;
  for (auto subs = at->get_subcommands(); !subs.empty(); subs = at->get_subcommands()) at = subs.front();
  return at;
}

std::string command_path(const CLI::App* cmd) {
  return cmd->get_parent() ? fmt::format("{} {}", command_path(cmd->get_parent()), cmd->get_name()) : "ember";
}

// issue 19: `ember run MODEL.onnx --input x.npy ...` (tools/ember/run_onnx.hpp).
CLI::App* add_run(CLI::App& app, ember::tools::RunOnnxOptions& o) {
  CLI::App* cmd = add_command(app, "run",
                              "run an ONNX model on .npy inputs; print its outputs, the load and forward times");
  cmd->add_option("model", o.model, "the .onnx file (not needed with --list-ops)")->check(CLI::ExistingFile);
  cmd->add_option("--input,-i", o.inputs, "a .npy file per graph input, in the graph's order")
      ->check(CLI::ExistingFile)
      ->take_all();
  cmd->add_option("--output,-o", o.outputs, "write the first outputs to these .npy files, in order")->take_all();
  cmd->add_option("--backend", o.backend, "the backend that runs the model (cpu, vulkan, cuda)")
      ->check(CLI::IsMember(backend_names(false)))
      ->capture_default_str();
  cmd->add_option("--show", o.shown, "leading values printed per output, >= 0")
      ->check(integer_at_least(0))
      ->capture_default_str();
  cmd->add_option("--repeat", o.repeat, "forward runs, >= 1; the mean time of those after the first is printed too")
      ->check(integer_at_least(1))
      ->capture_default_str();
  cmd->add_flag("--list-ops", o.list_ops, "print the ONNX operators the importer supports, and their count");
  return cmd;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Ember: train, evaluate and inspect models from the command line", "ember"};
  app.set_version_flag("--version", version_line());
  app.require_subcommand(1);

  TrainArgs train_args;
  EvalArgs eval_args;
  std::string inspect_record;
  FitArgs fit_args;
  ImportArgs import_args;
  ExportArgs export_args;
  GenerateArgs generate_args;
  CLI::App* train = add_train(app, train_args);
  CLI::App* eval = add_eval(app, eval_args);
  CLI::App* inspect = add_inspect(app, inspect_record);
  CLI::App* fit = add_fit(app, fit_args);
  CLI::App* import_cmd = add_import(app, import_args);
  CLI::App* export_cmd = add_export(app, export_args);
  CLI::App* generate = add_generate(app, generate_args);
  ember::tools::RunOnnxOptions run_args;
  CLI::App* run = add_run(app, run_args);
  CLI::App* version = add_command(app, "version", "print the engine version");
  app.footer("Run 'ember COMMAND --help' for a command's options.");  // after the commands: they would inherit it

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const CLI::App* cmd = failing_command(app);
    const std::string path = command_path(cmd);
    // CLI11 reports a mistyped command as a missing one; name it.
    const bool unknown_command = cmd == &app && argc > 1 && argv[1][0] != '-';
    const std::string what = unknown_command ? fmt::format("unknown command '{}'", argv[1]) : e.what();
    fmt::print(stderr, "{}: {}\n{}Run '{} --help' for more information.\n", path, what,
               CLI::Formatter().make_usage(cmd, path), path);
    return kUsageExit;
  }

  const std::string name = command_path(failing_command(app));
  try {
    if (*train) return run_train(train_args);
    if (*eval) return run_eval(eval_args);
    if (*inspect) return run_inspect(inspect_record);
    if (*fit) return run_fit(fit_args);
    if (*import_cmd) return run_import(import_args);
    if (*export_cmd) return run_export(export_args);
    if (*generate) return run_generate(generate_args);
    if (*run) return ember::tools::run_onnx(run_args, std::cout);
    if (*version) {
      fmt::print("{}\n", version_line());
      return 0;
    }
    return kUsageExit;  // unreachable: require_subcommand(1) made the parser insist on one of the above
  } catch (const std::exception& e) {
    std::cout.flush();
    fmt::print(stderr, "{}: error: {}\n", name, e.what());
    return 1;
  }
}
