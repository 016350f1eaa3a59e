// The ONNX conformance runner (issue 19): every case of ONNX's backend test suite (Debian's libonnx-testdata:
// node, pytorch-converted, pytorch-operator, simple; each a model.onnx and test_data_set_*/{input,output}_N.pb) run
// through the importer on one backend, compared like ONNX's own backend tests (compare.hpp).
//
// Each case ends in one category: passed; unsupported-op (an operator, opset or domain without a converter, or the
// backend refusing an op: UnsupportedError); unsupported-dtype (an element type or value kind Ember does not have);
// numerical (ran, values differ); bug (anything else: a wrong shape, an exception while converting). A numerical or
// bug failure not listed in the known-failures file makes the exit status 1; missing data exits 77 (meson: skip).
//
//   onnx_conformance [--data DIR] [--backend cpu|vulkan] [--filter REGEX] [--table FILE] [--known FILE] [--verbose]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "onnx/model.hpp"
#include "onnx/parse.hpp"
#include "tests/onnx/conformance/compare.hpp"

namespace fs = std::filesystem;
using namespace ember;
using namespace ember::onnx_import;

namespace {

const char* const kSuites[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};

enum class Category { Passed, UnsupportedOp, UnsupportedDType, Numerical, Bug };

const char* category_name(Category c) {
  switch (c) {
    case Category::Passed: return "passed";
    case Category::UnsupportedOp: return "unsupported-op";
    case Category::UnsupportedDType: return "unsupported-dtype";
    case Category::Numerical: return "numerical";
    case Category::Bug: return "bug";
  }
  return "?";
}
bool is_failure(Category c) { return c == Category::Numerical || c == Category::Bug; }
bool is_unsupported(Category c) { return c == Category::UnsupportedOp || c == Category::UnsupportedDType; }

struct Outcome {
  Category category = Category::Passed;
  std::string why;
};

struct Known {
  std::string category, reason;
};

struct Options {
  fs::path data = "/usr/share/libonnx-testdata/data";
  std::string backend = "cpu";
  std::string filter;
  fs::path table, known;
  bool verbose = false;
};

// The backend refusing a valid call: float64 where it computes in float32 is a dtype; anything else (an op or a
// rank it lacks) counts as an unsupported operator.
Category unsupported_category(const capi::UnsupportedError& e) {
  return std::string(e.what()).find("float64") != std::string::npos ? Category::UnsupportedDType
                                                                     : Category::UnsupportedOp;
}

void collect_ops(const Graph& g, std::set<std::string>& ops) {
  for (const Node& n : g.nodes) {
    ops.insert(n.domain.empty() ? n.op_type : n.domain + "." + n.op_type);
    for (const auto& [key, a] : n.attrs)
      if (a.type == Attribute::Type::Graph && a.g) collect_ops(*a.g, ops);
  }
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.size() > 300) s = s.substr(0, 300) + "...";
  return s;
}

// The sorted test_data_set_* directories of a case.
std::vector<fs::path> data_sets(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<TensorData> read_tensors(const fs::path& dir, const char* prefix) {
  std::vector<TensorData> out;
  for (int i = 0;; ++i) {
    const fs::path p = dir / fmt::format("{}_{}.pb", prefix, i);
    if (!fs::exists(p)) break;
    out.push_back(parse_tensor_file(p));
  }
  return out;
}

// Outputs compared over the whole run (printed in the summary, so a run that compares nothing cannot pass unseen).
int64_t g_outputs_compared = 0;

Outcome run_case(const fs::path& dir, const DynDevice& device, std::set<std::string>& ops) {
  Model model;
  try {
    model = parse_model_file(dir / "model.onnx");
  } catch (const UnsupportedDTypeError& e) {
    return {Category::UnsupportedDType, e.what()};
  } catch (const std::exception& e) {
    return {Category::Bug, std::string("load: ") + e.what()};
  }
  collect_ops(model.graph, ops);
  for (const auto* list : {&model.graph.inputs, &model.graph.outputs})
    for (const ValueInfo& v : *list) {
      if (!v.non_tensor_kind.empty())
        return {Category::UnsupportedDType, fmt::format("{} is not a tensor ({})", v.name, v.non_tensor_kind)};
      if (!v.dtype && v.onnx_elem_type != 0)
        return {Category::UnsupportedDType, fmt::format("{} has ONNX element type {}", v.name, v.onnx_elem_type)};
    }
  std::optional<OnnxModel> m;
  try {
    m.emplace(OnnxModel::from_ir(std::move(model), device));
  } catch (const UnsupportedOperatorError& e) {
    return {Category::UnsupportedOp, e.what()};
  } catch (const UnsupportedDTypeError& e) {
    return {Category::UnsupportedDType, e.what()};
  } catch (const capi::UnsupportedError& e) {
    return {unsupported_category(e), e.what()};
  } catch (const std::exception& e) {
    return {Category::Bug, std::string("prepare: ") + e.what()};
  }
  const std::vector<fs::path> sets = data_sets(dir);
  if (sets.empty()) return {Category::Bug, "no test_data_set_* directory"};
  for (const fs::path& set : sets) {
    std::vector<TensorData> ins, want;
    try {
      ins = read_tensors(set, "input");
      want = read_tensors(set, "output");
    } catch (const UnsupportedDTypeError& e) {
      return {Category::UnsupportedDType, e.what()};
    } catch (const std::exception& e) {
      return {Category::UnsupportedDType, std::string("test data: ") + e.what()};  // sequences / optionals
    }
    if (want.empty()) return {Category::Bug, fmt::format("{}: no output_0.pb", set.filename().string())};
    std::vector<TensorData> got;
    try {
      std::vector<DynTensor> inputs;
      for (const TensorData& d : ins) inputs.push_back(upload(device, d));  // float64 as float32 on a GPU
      capi::no_grad_enter();
      struct Exit {
        ~Exit() { capi::no_grad_exit(); }
      } exit_scope;
      for (const DynTensor& t : m->forward(inputs, false)) got.push_back(capi::to_data(t));
    } catch (const UnsupportedOperatorError& e) {
      return {Category::UnsupportedOp, e.what()};
    } catch (const UnsupportedDTypeError& e) {
      return {Category::UnsupportedDType, e.what()};
    } catch (const capi::UnsupportedError& e) {
      return {unsupported_category(e), e.what()};
    } catch (const std::exception& e) {
      return {Category::Bug, e.what()};
    }
    if (got.size() < want.size())
      return {Category::Bug, fmt::format("{} outputs expected, got {}", want.size(), got.size())};
    for (std::size_t i = 0; i < want.size(); ++i) {
      bool shape_error = false;
      const std::string diff = conformance::compare_output(got[i], want[i], shape_error);
      if (!diff.empty())
        return {shape_error ? Category::Bug : Category::Numerical,
                fmt::format("{}: output {}: {}", set.filename().string(), i, diff)};
      ++g_outputs_compared;
    }
  }
  return {Category::Passed, {}};
}

// Lines "[backend:]suite/case category reason...", '#' comments. Entries for another backend are skipped.
std::map<std::string, Known> read_known(const fs::path& path, const std::string& backend) {
  std::map<std::string, Known> out;
  if (path.empty()) return out;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read known-failures file " + path.string());
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string id, category, reason;
    ls >> id >> category;
    std::getline(ls, reason);
    if (const auto colon = id.find(':'); colon != std::string::npos) {
      if (id.substr(0, colon) != backend) continue;
      id = id.substr(colon + 1);
    }
    out[id] = {category, reason};
  }
  return out;
}

int usage() {
  std::fprintf(stderr,
               "usage: onnx_conformance [--data DIR] [--backend cpu|vulkan] [--filter REGEX] [--table FILE] "
               "[--known FILE] [--verbose]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--data") opt.data = value();
      else if (a == "--backend") opt.backend = value();
      else if (a == "--filter") opt.filter = value();
      else if (a == "--table") opt.table = value();
      else if (a == "--known") opt.known = value();
      else if (a == "--verbose") opt.verbose = true;
      else return usage();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return usage();
    }
  }
  if (!parser_available()) {
    std::puts("SKIP: this build has no ONNX parser (meson -Donnx)");
    return 77;
  }
  if (!fs::is_directory(opt.data / "node")) {
    std::printf("SKIP: no ONNX backend test data in %s (Debian: libonnx-testdata)\n", opt.data.string().c_str());
    return 77;
  }
  DynDevice device;
  try {
    if (opt.backend == "cpu") {
      device = capi::cpu_device();
    } else if (opt.backend == "vulkan") {
      if (capi::device_count(BackendId::Vulkan) == 0) {
        std::puts("SKIP: no Vulkan device");
        return 77;
      }
      device = capi::make_device(BackendId::Vulkan, 0);
    } else {
      return usage();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "backend %s: %s\n", opt.backend.c_str(), e.what());
    return 1;
  }
  std::map<std::string, Known> known;
  try {
    known = read_known(opt.known, opt.backend);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  const std::regex filter(opt.filter.empty() ? std::string(".") : opt.filter);

  struct OpRow {
    int passed = 0, failed = 0, unsupported = 0;
  };
  std::map<std::string, OpRow> by_op;
  std::map<Category, int> counts;
  int total = 0, unlisted = 0, stale = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const char* suite : kSuites) {
    const fs::path sdir = opt.data / suite;
    if (!fs::is_directory(sdir)) continue;
    std::vector<fs::path> cases;
    for (const auto& e : fs::directory_iterator(sdir))
      if (e.is_directory() && fs::exists(e.path() / "model.onnx")) cases.push_back(e.path());
    std::sort(cases.begin(), cases.end());
    for (const fs::path& dir : cases) {
      const std::string id = std::string(suite) + "/" + dir.filename().string();
      if (!std::regex_search(id, filter)) continue;
      std::set<std::string> ops;
      const Outcome o = run_case(dir, device, ops);
      ++total;
      ++counts[o.category];
      for (const std::string& op : ops) {
        OpRow& row = by_op[op];
        if (o.category == Category::Passed) ++row.passed;
        else if (is_unsupported(o.category)) ++row.unsupported;
        else ++row.failed;
      }
      auto k = known.find(id);
      const bool listed = k != known.end();
      if (o.category == Category::Passed) {
        if (listed) {
          ++stale;
          std::printf("PASS   %s (listed as a known %s failure: remove it from the list)\n", id.c_str(),
                      k->second.category.c_str());
        } else if (opt.verbose) {
          std::printf("PASS   %s\n", id.c_str());
        }
        continue;
      }
      const bool counts_against = is_failure(o.category) && !listed;
      if (counts_against) ++unlisted;
      if (counts_against || opt.verbose || (listed && k->second.category != category_name(o.category)))
        std::printf("%s %s [%s]%s: %s\n", counts_against ? "FAIL  " : "known ", id.c_str(), category_name(o.category),
                    listed ? fmt::format(" (listed: {}{})", k->second.category, k->second.reason).c_str() : "",
                    one_line(o.why).c_str());
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto pct = [&](int n) { return total ? 100.0 * n / total : 0.0; };
  const int failed = counts[Category::Numerical] + counts[Category::Bug];
  const int unsupported = counts[Category::UnsupportedOp] + counts[Category::UnsupportedDType];
  const std::string summary = fmt::format(
      "onnx conformance ({}): {} cases: {} passed ({:.1f}%), {} failed ({:.1f}%: {} numerical, {} bug), {} "
      "unsupported ({:.1f}%: {} operator, {} dtype); {} unlisted failure(s), {} listed case(s) now pass; {} outputs "
      "matched; {:.1f} s",
      opt.backend, total, counts[Category::Passed], pct(counts[Category::Passed]), failed, pct(failed),
      counts[Category::Numerical], counts[Category::Bug], unsupported, pct(unsupported),
      counts[Category::UnsupportedOp], counts[Category::UnsupportedDType], unlisted, stale, g_outputs_compared, secs);
  std::printf("%s\n", summary.c_str());
  if (!opt.table.empty()) {
    std::ofstream t(opt.table);
    t << "# ONNX conformance per operator (" << opt.backend << ")\n\n" << summary << "\n\n";
    t << "A case counts for every operator of its model (subgraphs included).\n\n";
    t << "| operator | cases | passed | failed | unsupported |\n|---|---:|---:|---:|---:|\n";
    for (const auto& [op, row] : by_op)
      t << fmt::format("| {} | {} | {} | {} | {} |\n", op, row.passed + row.failed + row.unsupported, row.passed,
                       row.failed, row.unsupported);
    if (!t) {
      std::fprintf(stderr, "cannot write %s\n", opt.table.string().c_str());
      return 1;
    }
  }
  // A listed case that passes fails the run too, so the known-failures list never hides a regression later.
  return (unlisted || stale) ? 1 : 0;
}
