#include "tools/ember/run_onnx.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string_view>

#include "ember.h"
#include "engine/tensor/error.hpp"
#include "tools/ember/npy.hpp"

#ifndef EMBER_INSTALL_LIBDIR
#error "EMBER_INSTALL_LIBDIR must be defined by the build (tools/meson.build)"
#endif

namespace ember::tools {
namespace {

namespace fs = std::filesystem;

// The ember.h functions this command calls, resolved from libember with their declared types.
#define EMBER_RUN_FUNCTIONS(X)                                                                                      \
  X(ember_last_error) X(ember_device_create) X(ember_device_free) X(ember_onnx_load) X(ember_onnx_forward)           \
  X(ember_onnx_input_count) X(ember_onnx_output_count) X(ember_onnx_input_name) X(ember_onnx_output_name)            \
  X(ember_onnx_operator_count) X(ember_onnx_operator_name) X(ember_module_free) X(ember_tensor_from_data)           \
  X(ember_tensor_free) X(ember_tensor_dtype) X(ember_tensor_shape) X(ember_tensor_copy_to) X(ember_no_grad_enter)  \
  X(ember_no_grad_exit)

struct Api {
#define EMBER_RUN_FIELD(name) decltype(&::name) name = nullptr;
  EMBER_RUN_FUNCTIONS(EMBER_RUN_FIELD)
#undef EMBER_RUN_FIELD
};

// libember: $EMBER_LIBRARY, else beside the executable (a relocated install), the build tree's c_api/, the install
// libdir. It stays loaded for the life of the process (GPU plugins keep threads inside it).
const Api& api() {
  static const Api loaded = [] {
    const std::string soname = fmt::format("libember.so.{}", EMBER_ABI_VERSION);
    std::vector<fs::path> candidates;
    if (const char* env = std::getenv("EMBER_LIBRARY"); env && *env) {
      candidates.emplace_back(env);
    } else {
      std::error_code ec;
      const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
      if (!ec) {
        candidates.push_back(exe.parent_path() / soname);
        candidates.push_back(exe.parent_path().parent_path() / "c_api" / "libember.so");
      }
      candidates.push_back(fs::path(EMBER_INSTALL_LIBDIR) / soname);
    }
    std::vector<std::string> looked;
    for (const auto& path : candidates) {
      std::error_code ec;
      if (!fs::exists(path, ec)) {
        looked.push_back(path.string());
        continue;
      }
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle) {
        const char* why = dlerror();
        throw Error(fmt::format("cannot load {}: {}", path.string(), why ? why : "dlopen failed"));
      }
      Api a;
#define EMBER_RUN_RESOLVE(name)                                                                                    \
  a.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));                                              \
  if (!a.name) throw Error(fmt::format("{} has no {} (an older libember?)", path.string(), #name));
      EMBER_RUN_FUNCTIONS(EMBER_RUN_RESOLVE)
#undef EMBER_RUN_RESOLVE
      return a;
    }
    throw Error(fmt::format("libember is not installed (looked for {}; set EMBER_LIBRARY to its path)",
                            fmt::join(looked, ", ")));
  }();
  return loaded;
}

void check(ember_status s) {
  if (s != EMBER_OK) throw Error(api().ember_last_error());
}

// Owners of C handles.
struct TensorFree {
  void operator()(ember_tensor* t) const { api().ember_tensor_free(t); }
};
struct ModuleFree {
  void operator()(ember_module* m) const { api().ember_module_free(m); }
};
struct DeviceFree {
  void operator()(ember_device* d) const { api().ember_device_free(d); }
};
using Tensor = std::unique_ptr<ember_tensor, TensorFree>;

using Getter = ember_status (*)(const ember_module*, size_t, char*, size_t, size_t*);
std::string text_of(Getter get, const ember_module* m, size_t i) {
  size_t n = 0;
  check(get(m, i, nullptr, 0, &n));
  std::string s(n + 1, '\0');
  check(get(m, i, s.data(), s.size(), &n));
  s.resize(n);
  return s;
}

ember_backend_t backend_of(std::string_view name) {
  if (name == "cpu") return EMBER_BACKEND_CPU;
  if (name == "vulkan") return EMBER_BACKEND_VULKAN;
  if (name == "cuda") return EMBER_BACKEND_CUDA;
  throw Error(fmt::format("unknown backend '{}' (cpu, vulkan, cuda)", name));
}

std::string_view dtype_name(int32_t d) {
  switch (d) {
    case EMBER_DTYPE_F32: return "float32";
    case EMBER_DTYPE_F64: return "float64";
    case EMBER_DTYPE_F16: return "float16";
    case EMBER_DTYPE_I32: return "int32";
    case EMBER_DTYPE_I64: return "int64";
    case EMBER_DTYPE_U8: return "uint8";
    case EMBER_DTYPE_BOOL: return "bool";
    case EMBER_DTYPE_I16: return "int16";
    default: return "?";
  }
}

int list_ops(std::ostream& out) {
  size_t n = 0;
  check(api().ember_onnx_operator_count(&n));
  for (size_t i = 0; i < n; ++i) {
    size_t len = 0;
    check(api().ember_onnx_operator_name(i, nullptr, 0, &len));
    std::string name(len + 1, '\0');
    check(api().ember_onnx_operator_name(i, name.data(), name.size(), &len));
    name.resize(len);
    fmt::print(out, "{}\n", name);
  }
  fmt::print(out, "{} ONNX operators\n", n);
  return 0;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int run_onnx(const RunOnnxOptions& o, std::ostream& out) {
  const Api& a = api();
  if (o.list_ops) return list_ops(out);
  if (o.model.empty()) throw Error("no model given (ember run MODEL.onnx --input x.npy ...)");

  ember_device* dev_raw = nullptr;
  check(a.ember_device_create(backend_of(o.backend), 0, &dev_raw));
  const std::unique_ptr<ember_device, DeviceFree> dev(dev_raw);

  auto t0 = std::chrono::steady_clock::now();
  ember_module* m_raw = nullptr;
  check(a.ember_onnx_load(o.model.c_str(), dev.get(), &m_raw));
  const std::unique_ptr<ember_module, ModuleFree> model(m_raw);
  const double load_ms = ms_since(t0);

  size_t n_in = 0, n_out = 0;
  check(a.ember_onnx_input_count(model.get(), &n_in));
  check(a.ember_onnx_output_count(model.get(), &n_out));
  if (o.inputs.size() != n_in) {
    std::vector<std::string> names;
    for (size_t i = 0; i < n_in; ++i) names.push_back(text_of(a.ember_onnx_input_name, model.get(), i));
    throw Error(fmt::format("{} has {} input(s) ({}); {} --input given", o.model, n_in, fmt::join(names, ", "),
                            o.inputs.size()));
  }
  if (o.outputs.size() > n_out)
    throw Error(fmt::format("{} has {} output(s); {} --output given", o.model, n_out, o.outputs.size()));

  std::vector<Tensor> inputs;
  std::vector<const ember_tensor*> input_ptrs;
  for (const auto& path : o.inputs) {
    const NpyArray x = read_npy(path);
    ember_tensor* t = nullptr;
    check(a.ember_tensor_from_data(dev.get(), x.dtype, x.data.data(), x.data.size(), x.shape.data(), x.shape.size(),
                                   &t));
    inputs.emplace_back(t);
    input_ptrs.push_back(t);
  }

  // One run: the forward, then every output read back (so a GPU backend has finished the work when it returns).
  std::vector<Tensor> outputs;
  std::vector<NpyArray> values;
  const auto run_once = [&] {
    std::vector<ember_tensor*> out_raw(n_out, nullptr);
    const ember_status s = a.ember_onnx_forward(model.get(), input_ptrs.data(), input_ptrs.size(), out_raw.data(),
                                                out_raw.size(), EMBER_MODE_EVAL);
    outputs.clear();
    for (ember_tensor* t : out_raw) outputs.emplace_back(t);
    check(s);
    values.assign(n_out, NpyArray{});
    for (size_t i = 0; i < n_out; ++i) {
      NpyArray& v = values[i];
      check(a.ember_tensor_dtype(outputs[i].get(), &v.dtype));
      size_t rank = 0;
      v.shape.resize(EMBER_MAX_RANK);
      check(a.ember_tensor_shape(outputs[i].get(), v.shape.data(), v.shape.size(), &rank));
      v.shape.resize(rank);
      size_t bytes = 0;
      check(a.ember_tensor_copy_to(outputs[i].get(), v.dtype, nullptr, 0, &bytes));
      v.data.resize(bytes);
      check(a.ember_tensor_copy_to(outputs[i].get(), v.dtype, v.data.data(), v.data.size(), &bytes));
    }
  };
  struct NoGrad {  // inference: no autodiff graph is kept
    const Api& a;
    explicit NoGrad(const Api& api) : a(api) { check(a.ember_no_grad_enter()); }
    ~NoGrad() { a.ember_no_grad_exit(); }
  };
  double forward_ms = 0, later_ms = 0;
  {
    NoGrad no_grad(a);
    t0 = std::chrono::steady_clock::now();
    run_once();
    forward_ms = ms_since(t0);  // the first run also prepares kernels (GPU pipelines, caches)
    t0 = std::chrono::steady_clock::now();
    for (int r = 1; r < o.repeat; ++r) run_once();
    if (o.repeat > 1) later_ms = ms_since(t0) / (o.repeat - 1);
  }

  fmt::print(out, "model: {} ({} input(s), {} output(s))\nbackend: {}\n", o.model, n_in, n_out, o.backend);
  for (size_t i = 0; i < n_out; ++i) {
    const NpyArray& v = values[i];
    const int64_t numel = static_cast<int64_t>(v.data.size() / std::max<std::size_t>(npy_item_size(v.dtype), 1));
    std::vector<double> shown(static_cast<std::size_t>(std::min<int64_t>(numel, o.shown)));
    if (!shown.empty()) {
      // Leading values as doubles, read again from the output (any dtype converts).
      std::vector<double> all(static_cast<std::size_t>(numel));
      size_t bytes = 0;
      check(a.ember_tensor_copy_to(outputs[i].get(), EMBER_DTYPE_F64, all.data(), all.size() * sizeof(double), &bytes));
      std::copy_n(all.begin(), shown.size(), shown.begin());
    }
    fmt::print(out, "output {} '{}': {} [{}] {}{}\n", i, text_of(a.ember_onnx_output_name, model.get(), i),
               dtype_name(v.dtype), fmt::join(v.shape, ", "), fmt::format("{:.6g}", fmt::join(shown, " ")),
               numel > static_cast<int64_t>(shown.size()) ? " ..." : "");
  }
  fmt::print(out, "load: {:.2f} ms, forward: {:.2f} ms\n", load_ms, forward_ms);
  if (o.repeat > 1) fmt::print(out, "forward, mean of {} more runs: {:.3f} ms\n", o.repeat - 1, later_ms);
  for (size_t i = 0; i < o.outputs.size(); ++i) {
    write_npy(o.outputs[i], values[i]);
    fmt::print(out, "wrote output {} to {}\n", i, o.outputs[i]);
  }
  return 0;
}

}  // namespace ember::tools
