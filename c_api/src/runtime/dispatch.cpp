// The runtime-dispatch functions of tensor_ops.hpp: each op_list.hpp row runs on the runtime of its first handle,
// and the few functions that only build host data (arange, random) or compose other ops (transpose) are here once.
#include <cmath>

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
const BackendRuntime& runtime_of(const OptimizerState& o) {
  if (!o.module) throw ArgumentError("an optimizer over a param list has no module");
  return ready(o.module->runtime);
}
const BackendRuntime& runtime_of(const DynGroupOptimizer& g) { return ready(g.runtime); }
const BackendRuntime& runtime_of(const std::vector<const DynTensor*>& xs) {
  if (xs.empty()) throw ArgumentError("cat: empty list of tensors");
  return ready(xs[0]->runtime);
}

}  // namespace

#define EMBER_X(R, name, params, args, from) \
  R name params { return runtime_of(from).name args; }
EMBER_RUNTIME_OPS(EMBER_X)
#undef EMBER_X

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
  return from_data(dev, TensorData::from_vec<double>(values, shape));
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
