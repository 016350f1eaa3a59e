// The runtime-dispatch functions of tensor_ops.hpp: each op_list.hpp row runs on the runtime of its first handle,
// and the few functions that only build host data (arange, random) or compose other ops (transpose) are here once.
//
// libember has two CPU runtimes, float32 (the builtin one) and float64 (plugin_loader.hpp). A row whose handles all
// belong to one runtime goes straight there. Otherwise (routed below) the CPU rows are routed as PyTorch's type
// promotion would: creation by dtype (EMBER_DTYPE_F64 on the float64 runtime, every other dtype on the float32
// one; modules are float32), cast to the runtime of its target dtype, an op of several operands (kPromoting) with a
// float64 float operand on the float64 runtime, its other operands copied over (float32 floats widen exactly; int
// and bool tensors are the same values in both), and an in-place update on self's runtime (other converted to
// self's dtype, as PyTorch's x.add_(y)). Such a copy is not differentiable across the two graphs, so a float operand
// that requires grad is refused while grad mode is on. The other rows (autograd, modules) take int and bool tensors
// of either runtime but refuse floats of the other precision. GPU backends compute in float32 only: float64 there
// is UnsupportedError.
#include <fmt/format.h>

#include <cmath>
#include <deque>
#include <string_view>

#include "c_api/src/runtime/plugin_loader.hpp"
#include "c_api/src/runtime/tensor_ops.hpp"

namespace ember::capi {
namespace {

// A plugin keeps its own copy of the engine's per-thread no-grad flag: it is brought up to date with libember's
// (the one ember_no_grad_enter / _exit set) before each call, which is one write for the builtin runtime.
const BackendRuntime& ready(const BackendRuntime* runtime) {
  if (!runtime) throw ArgumentError("a handle without a runtime");
  runtime->no_grad_flag() = autodiff::no_grad_flag();
  return *runtime;
}

const BackendRuntime& runtime_of(const DynDevice& d) { return ready(d.runtime ? d.runtime : &builtin_runtime()); }
const BackendRuntime& runtime_of(const DynTensor& t) { return ready(t.runtime); }
const BackendRuntime& runtime_of(const DynGrads& g) { return ready(g.runtime); }
const BackendRuntime& runtime_of(const ModuleState& m) { return ready(m.runtime); }
const BackendRuntime& runtime_of(const OptimizerState& o) { return ready(o.module->runtime); }
const BackendRuntime& runtime_of(const std::vector<const DynTensor*>& xs) {
  if (xs.empty()) throw ArgumentError("cat: empty list of tensors");
  return ready(xs[0]->runtime);
}

// ---------------------------------------------------------------- the float32 / float64 CPU runtimes
bool is_cpu_pair(const BackendRuntime* r) { return r == &builtin_runtime() || r == &cpu_f64_runtime(); }
const BackendRuntime& cpu_runtime_for(DType d) { return d == DType::F64 ? cpu_f64_runtime() : builtin_runtime(); }
const DynDevice& cpu_device_of(const BackendRuntime& r) {
  static const DynDevice* f32 = new DynDevice(builtin_runtime().make_device(0));
  static const DynDevice* f64 = new DynDevice(cpu_f64_runtime().make_device(0));
  return &r == &cpu_f64_runtime() ? *f64 : *f32;
}

void refuse_f64_on_gpu(const BackendRuntime& r, DType d, const char* op) {
  if (d != DType::F64) return;
  const auto info = backend_info(r.id());
  throw UnsupportedError(fmt::format("{}: float64 tensors are CPU only; the {} backend computes in float32 (use "
                                     "EMBER_DTYPE_F32 there)",
                                     op, info ? info->name : "GPU"));
}

// What a row's arguments say about the runtime it needs: a requested dtype (creation, cast), a float64 float operand,
// and whether any handle belongs to the other CPU runtime than `home` (else nothing is rerouted).
struct Needs {
  std::optional<DType> dtype;
  bool mixed = false;
};

// The rows that promote mixed float32 / float64 operands (PyTorch's type promotion), and the one that converts
// them to its first operand's runtime.
bool promotes(std::string_view op) {
  static constexpr std::string_view kPromoting[] = {"binary", "compare", "logical", "where", "matmul", "cat",
                                                    "index_select", "gather", "conv2d", "cross_entropy", "mse_loss"};
  for (auto p : kPromoting)
    if (p == op) return true;
  return false;
}
bool converts_to_self(std::string_view op) { return op == "inplace"; }
void scan(Needs& n, const BackendRuntime& home, const DynTensor& t) {
  if (t.runtime == &home || !is_cpu_pair(t.runtime)) return;
  n.mixed = true;
}
void scan(Needs& n, const BackendRuntime& home, const DynTensor* t) {
  if (t) scan(n, home, *t);
}
void scan(Needs& n, const BackendRuntime& home, const std::vector<const DynTensor*>& xs) {
  for (const DynTensor* t : xs) scan(n, home, t);
}
void scan(Needs& n, const BackendRuntime&, DType d) { n.dtype = d; }
void scan(Needs& n, const BackendRuntime&, const TensorData& d) { n.dtype = d.dtype; }
template <class T>
void scan(Needs&, const BackendRuntime&, const T&) {}

bool is_f64_float(const DynTensor* t) {
  return t && t->runtime == &cpu_f64_runtime() && dtype_is_float(t->runtime->dtype(*t));
}

// The row's arguments as `target` takes them: tensors of the other CPU runtime copied into it, CPU devices as its
// device. Copies live as long as the Promotion (the whole call).
class Promotion {
 public:
  // floats: whether float tensors of the other runtime may be converted (else ArgumentError, naming `op`).
  Promotion(const BackendRuntime& target, const char* op, bool floats) : target_(target), op_(op), floats_(floats) {}

  const DynTensor& operator()(const DynTensor& t) { return *move(&t); }
  const DynTensor* operator()(const DynTensor* t) { return move(t); }
  const std::vector<const DynTensor*>& operator()(const std::vector<const DynTensor*>& xs) {
    auto& out = lists_.emplace_back();
    for (const DynTensor* t : xs) out.push_back(move(t));
    return out;
  }
  const DynDevice& operator()(const DynDevice& d) { return is_cpu_pair(d.runtime) ? cpu_device_of(target_) : d; }
  template <class T>
  T&& operator()(T&& x) {
    return std::forward<T>(x);
  }

 private:
  const DynTensor* move(const DynTensor* t) {
    if (!t || t->runtime == &target_ || !is_cpu_pair(t->runtime)) return t;  // another backend: the op says so
    const bool to_f64 = &target_ == &cpu_f64_runtime();
    if (!floats_ && dtype_is_float(t->runtime->dtype(*t)))
      throw ArgumentError(fmt::format("{}: a float{} tensor meets float{} ones; cast them to one dtype first", op_,
                                      to_f64 ? 32 : 64, to_f64 ? 64 : 32));
    if (autodiff::no_grad_flag() == false && t->runtime->requires_grad(*t))
      throw ArgumentError(fmt::format(
          "a float{} tensor that requires grad meets float{} tensors: the conversion between float32 and float64 "
          "is not differentiable in Ember (create the leaf with the dtype it is used in, or detach it first)",
          to_f64 ? 32 : 64, to_f64 ? 64 : 32));
    TensorData d = t->runtime->to_data(*t);
    if (dtype_is_float(d.dtype)) d = d.convert(to_f64 ? DType::F64 : DType::F32);
    return &moved_.emplace_back(target_.from_data(cpu_device_of(target_), d));
  }

  const BackendRuntime& target_;
  const char* op_;
  bool floats_;
  std::deque<DynTensor> moved_;
  std::deque<std::vector<const DynTensor*>> lists_;
};

// Runs f(runtime, args...) on the runtime the row needs (see the top of this file).
template <class From, class F, class... A>
decltype(auto) routed(const char* op, const From& from, F&& f, A&&... a) {
  const BackendRuntime& home = runtime_of(from);
  Needs n;
  (scan(n, home, a), ...);
  constexpr bool by_device = std::is_same_v<From, DynDevice>;
  constexpr bool by_tensor = std::is_same_v<From, DynTensor> || std::is_same_v<From, std::vector<const DynTensor*>>;
  if (!is_cpu_pair(&home)) {
    if (n.dtype) refuse_f64_on_gpu(home, *n.dtype, op);
    return f(home, std::forward<A>(a)...);
  }
  const BackendRuntime* target = &home;
  bool floats = true;  // may float tensors be converted to the target
  if (by_device) {
    target = &cpu_runtime_for(n.dtype.value_or(DType::F32));  // creation by dtype; modules are float32
  } else if (by_tensor && n.dtype && dtype_is_float(*n.dtype)) {
    target = &cpu_runtime_for(*n.dtype);  // cast
    if (target == &home) return f(home, std::forward<A>(a)...);
  } else if (!n.mixed) {
    return f(home, std::forward<A>(a)...);
  } else if (by_tensor && promotes(op)) {
    bool f64 = false;
    const auto note = [&](const auto& x) {
      using T = std::decay_t<decltype(x)>;
      if constexpr (std::is_same_v<T, DynTensor>) f64 = f64 || is_f64_float(&x);
      else if constexpr (std::is_same_v<T, const DynTensor*>) f64 = f64 || is_f64_float(x);
      else if constexpr (std::is_same_v<T, std::vector<const DynTensor*>>)
        for (const DynTensor* t : x) f64 = f64 || is_f64_float(t);
    };
    (note(a), ...);
    if (f64) target = &cpu_f64_runtime();
  } else {
    floats = by_tensor && converts_to_self(op);  // in-place keeps self's dtype; others refuse a mix of floats
  }
  Promotion p(*target, op, floats);
  return f(ready(target), p(std::forward<A>(a))...);
}

}  // namespace

#define EMBER_UNPAREN(...) __VA_ARGS__
#define EMBER_X(R, name, params, args, from)                                                                     \
  R name params {                                                                                                \
    return routed(                                                                                               \
        #name, from, [&](const BackendRuntime& r, auto&&... xs) -> R { return r.name(std::forward<decltype(xs)>(xs)...); }, \
        EMBER_UNPAREN args);                                                                                     \
  }
EMBER_RUNTIME_OPS(EMBER_X)
#undef EMBER_X
#undef EMBER_UNPAREN

DynTensor arange(const DynDevice& dev, DType dtype, int64_t start, int64_t end, int64_t step) {
  check_dtype("arange", dtype);
  if (step == 0) throw ArgumentError("arange: step must not be 0");
  // 128-bit so that extreme bounds cannot overflow the count.
  const __int128 span = static_cast<__int128>(end) - start;
  __int128 n = 0;
  if ((step > 0 && span > 0) || (step < 0 && span < 0)) n = (span - (step > 0 ? 1 : -1)) / step + 1;
  if (n > (__int128(1) << 40))
    throw ShapeError("arange: [" + std::to_string(start) + ", " + std::to_string(end) + ") by " +
                     std::to_string(step) + " has too many elements");
  std::vector<int64_t> values(static_cast<std::size_t>(n));
  // In unsigned arithmetic: start + i * step is in range for every i < n, but i * step alone may not be.
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<int64_t>(static_cast<uint64_t>(start) + static_cast<uint64_t>(i) * static_cast<uint64_t>(step));
  TensorData d = TensorData::from_vec<int64_t>(values, Shape{static_cast<int64_t>(n)});
  if (dtype != DType::I64) d = d.convert(dtype);
  return from_data(dev, d);
}

DynTensor random(const DynDevice& dev, const Distribution& dist, uint64_t seed, const Shape& shape) {
  check_shape("random", shape);
  if (auto* u = std::get_if<Uniform>(&dist); u && !(u->low <= u->high && std::isfinite(u->high - u->low)))
    throw ArgumentError("random: uniform needs finite low <= high");
  if (auto* g = std::get_if<Normal>(&dist); g && !(g->std >= 0 && std::isfinite(g->std) && std::isfinite(g->mean)))
    throw ArgumentError("random: normal needs a finite mean and std >= 0");
  if (auto* b = std::get_if<Bernoulli>(&dist); b && !(b->p >= 0 && b->p <= 1))
    throw ArgumentError("random: bernoulli needs 0 <= p <= 1");
  Rng rng(seed);
  const auto values = sample(rng, dist, static_cast<std::size_t>(shape.num_elements()));
  // Sampled in double for every platform's sake; random tensors are float32 (the data's F64 would route them).
  return from_data(dev, TensorData::from_vec<double>(values, shape).convert(DType::F32));
}

DynTensor transpose(const DynTensor& x, int64_t d0, int64_t d1) {
  const std::size_t r = shape(x).rank();
  std::vector<int64_t> axes(r);
  for (std::size_t i = 0; i < r; ++i) axes[i] = static_cast<int64_t>(i);
  std::swap(axes[wrap_dim("transpose", d0, r)], axes[wrap_dim("transpose", d1, r)]);
  return permute(x, axes);
}

void set_lr(OptimizerState& o, double lr) {
  check_lr(lr);
  std::lock_guard lock(o.mu);
  o.lr = lr;
}

double get_lr(OptimizerState& o) {
  std::lock_guard lock(o.mu);
  return o.lr;
}

}  // namespace ember::capi
