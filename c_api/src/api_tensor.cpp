// ember.h: tensor creation, queries, host copies, autodiff and in-place updates.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "c_api/src/boundary.hpp"
#include "engine/autodiff/graph.hpp"

using namespace ember;
using namespace ember::capi;

namespace {

ember_tensor* new_tensor(DynTensor t) { return make_handle<ember_tensor>(std::move(t)); }

static_assert(static_cast<int32_t>(InplaceOp::Copy) == EMBER_INPLACE_COPY &&
              static_cast<int32_t>(InplaceOp::Add) == EMBER_INPLACE_ADD &&
              static_cast<int32_t>(InplaceOp::Sub) == EMBER_INPLACE_SUB &&
              static_cast<int32_t>(InplaceOp::Mul) == EMBER_INPLACE_MUL &&
              static_cast<int32_t>(InplaceOp::Div) == EMBER_INPLACE_DIV &&
              static_cast<int32_t>(InplaceOp::Fill) == EMBER_INPLACE_FILL,
              "inplace_op.hpp mirrors ember.h's ember_inplace_op");

constexpr std::size_t kBackwardOptionsV1 = EMBER_STRUCT_END(ember_backward_options, reserved);

}  // namespace

extern "C" {

ember_status ember_tensor_from_data(const ember_device* device, int32_t dtype, const void* data, size_t data_bytes,
                                    const int64_t* shape, size_t rank, ember_tensor** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const DType d = to_dtype(dtype);
    const Shape s = to_shape(shape, rank);
    check_shape("shape", s);
    const auto need = static_cast<std::size_t>(s.num_elements()) * dtype_size(d);
    if (data_bytes != need)
      throw ShapeError(std::to_string(data_bytes) + " bytes of data for shape " + s.to_string() + " of " +
                       std::string(dtype_name(d)) + " (" + std::to_string(need) + " bytes)");
    if (!data && need > 0) throw ArgumentError("data is NULL");
    std::vector<std::byte> bytes(need);
    if (need) std::memcpy(bytes.data(), data, need);
    o = new_tensor(from_data(device_or_default(device), TensorData(std::move(bytes), s, d)));
  });
}

ember_status ember_tensor_full(const ember_device* device, int32_t dtype, const int64_t* shape, size_t rank,
                               double value, ember_tensor** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    o = new_tensor(full(device_or_default(device), to_dtype(dtype), to_shape(shape, rank), value));
  });
}
ember_status ember_tensor_zeros(const ember_device* device, int32_t dtype, const int64_t* shape, size_t rank,
                                ember_tensor** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    o = new_tensor(full(device_or_default(device), to_dtype(dtype), to_shape(shape, rank), 0.0));
  });
}
ember_status ember_tensor_ones(const ember_device* device, int32_t dtype, const int64_t* shape, size_t rank,
                               ember_tensor** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    o = new_tensor(full(device_or_default(device), to_dtype(dtype), to_shape(shape, rank), 1.0));
  });
}

ember_status ember_tensor_arange(const ember_device* device, int32_t dtype, int64_t start, int64_t end, int64_t step,
                                 ember_tensor** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    o = new_tensor(arange(device_or_default(device), to_dtype(dtype), start, end, step));
  });
}

ember_status ember_tensor_random(const ember_device* device, int32_t distribution, double a, double b, uint64_t seed,
                                 const int64_t* shape, size_t rank, ember_tensor** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    Distribution dist;
    switch (distribution) {
      case EMBER_DIST_UNIFORM: dist = Uniform{a, b}; break;
      case EMBER_DIST_NORMAL: dist = Normal{a, b}; break;
      case EMBER_DIST_BERNOULLI: dist = Bernoulli{a}; break;
      default: throw ArgumentError("unknown distribution " + std::to_string(distribution));
    }
    o = new_tensor(random(device_or_default(device), dist, seed, to_shape(shape, rank)));
  });
}

ember_status ember_tensor_clone(const ember_tensor* tensor, ember_tensor** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const DynTensor& t = use(tensor, "tensor");
    o = make_handle<ember_tensor>(t);
  });
}

ember_status ember_tensor_free(ember_tensor* tensor) { return free_handle(tensor, __func__); }

ember_status ember_tensor_dtype(const ember_tensor* tensor, int32_t* out) {
  return guard(__func__, [&] {
    const auto& t = use(tensor, "tensor");
    out_value(out, "dtype") = static_cast<int32_t>(dtype(t));
  });
}

ember_status ember_tensor_rank(const ember_tensor* tensor, size_t* out) {
  return guard(__func__, [&] {
    const auto& t = use(tensor, "tensor");
    out_value(out, "rank") = shape(t).rank();
  });
}

ember_status ember_tensor_shape(const ember_tensor* tensor, int64_t* dims, size_t capacity, size_t* rank) {
  return guard(__func__, [&] {
    const Shape s = shape(use(tensor, "tensor"));
    auto& r = out_value(rank, "rank");
    if (!dims && capacity > 0) throw ArgumentError("dims is NULL with capacity " + std::to_string(capacity));
    r = s.rank();
    if (capacity == 0) return;  // a length query (ember.h's Strings rule): EMBER_OK with the rank
    if (capacity < s.rank())
      throw StatusError(EMBER_ERR_BUFFER_TOO_SMALL,
                        "rank " + std::to_string(s.rank()) + " does not fit capacity " + std::to_string(capacity));
    for (std::size_t i = 0; i < s.rank(); ++i) dims[i] = s[i];
  });
}

ember_status ember_tensor_numel(const ember_tensor* tensor, int64_t* numel) {
  return guard(__func__, [&] { out_value(numel, "numel") = shape(use(tensor, "tensor")).num_elements(); });
}

ember_status ember_tensor_device(const ember_tensor* tensor, ember_device** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    o = make_handle<ember_device>(device(use(tensor, "tensor")));
  });
}

ember_status ember_tensor_copy_to(const ember_tensor* tensor, int32_t dtype, void* buffer, size_t capacity,
                                  size_t* written) {
  return guard(__func__, [&] {
    if (written) *written = 0;
    const auto& t = use(tensor, "tensor");
    const DType d = to_dtype(dtype);
    const std::size_t need = static_cast<std::size_t>(shape(t).num_elements()) * dtype_size(d);
    if (written) *written = need;
    if (capacity == 0 && written) return;  // a size query (ember.h's Strings rule): EMBER_OK with the size
    if (capacity < need)
      throw StatusError(EMBER_ERR_BUFFER_TOO_SMALL, "buffer of " + std::to_string(capacity) + " bytes for " +
                                                        std::to_string(need) + " bytes of " + std::string(dtype_name(d)));
    if (!buffer && need > 0) throw ArgumentError("buffer is NULL");
    TensorData data = to_data(t);
    if (data.dtype != d) data = data.convert(d);
    if (need) std::memcpy(buffer, data.bytes.data(), need);
  });
}

ember_status ember_tensor_data_ptr(const ember_tensor* tensor, const void** data) {
  return guard(__func__, [&] {
    auto& d = out_value(data, "data");
    d = nullptr;
    d = data_ptr(use(tensor, "tensor"));
  });
}

ember_status ember_tensor_item(const ember_tensor* tensor, double* value) {
  return guard(__func__, [&] {
    auto& v = out_value(value, "value");
    const TensorData data = to_data(use(tensor, "tensor"));
    if (data.num_elements() != 1)
      throw ShapeError("item: tensor of shape " + data.shape.to_string() + " is not one element");
    v = data.get<double>(0);
  });
}

// ---------------------------------------------------------------- autodiff
ember_status ember_tensor_set_requires_grad(ember_tensor* tensor, int32_t on) {
  return guard(__func__, [&] {
    auto& t = use_mut(tensor, "tensor");
    t = set_requires_grad(t, on != 0);
  });
}

ember_status ember_tensor_requires_grad(const ember_tensor* tensor, int32_t* on) {
  return guard(__func__, [&] { out_value(on, "on") = requires_grad(use(tensor, "tensor")) ? 1 : 0; });
}

ember_status ember_tensor_detach(const ember_tensor* tensor, ember_tensor** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    o = new_tensor(detach(use(tensor, "tensor")));
  });
}

ember_status ember_tensor_backward(const ember_tensor* tensor, const ember_tensor* grad, ember_grads** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const auto& t = use(tensor, "tensor");
    const DynTensor* g = grad ? &use(grad, "grad") : nullptr;
    o = make_handle<ember_grads>(backward(t, g, /*retain_graph=*/false, /*accumulate=*/false));
  });
}

ember_status ember_grads_get(const ember_grads* grads, const ember_tensor* tensor, ember_tensor** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    const auto& g = use(grads, "grads");
    const auto& t = use(tensor, "tensor");
    if (auto r = grad(g, t)) o = new_tensor(std::move(*r));
  });
}

ember_status ember_grads_free(ember_grads* grads) { return free_handle(grads, __func__); }

// ---------------------------------------------------------------- autograd core (issue 11): .grad, retain_graph,
// autograd.grad, in-place updates
ember_status ember_backward_options_init(ember_backward_options* options) {
  return guard(__func__, [&] {
    if (!options) throw ArgumentError("options is NULL");
    ember_backward_options v{};  // the whole struct: the caller's struct_size is not set yet
    v.struct_size = sizeof v;
    v.accumulate = 1;
    *options = v;
  });
}

ember_status ember_tensor_backward_ex(const ember_tensor* tensor, const ember_tensor* grad,
                                      const ember_backward_options* options, ember_grads** out) {
  return guard(__func__, [&] {
    if (out) *out = nullptr;
    ember_backward_options defaults{};
    defaults.struct_size = sizeof defaults;
    defaults.accumulate = 1;  // Tensor.backward: into the leaves' .grad
    const ember_backward_options o = options ? read_struct(options, defaults, kBackwardOptionsV1, "options") : defaults;
    const auto& t = use(tensor, "tensor");
    const DynTensor* g = grad ? &use(grad, "grad") : nullptr;
    DynGrads r = backward(t, g, o.retain_graph != 0, o.accumulate != 0);
    if (out) *out = make_handle<ember_grads>(std::move(r));
  });
}

ember_status ember_autograd_grad(const ember_tensor* const* outputs, const ember_tensor* const* grad_outputs,
                                 size_t n_outputs, const ember_tensor* const* inputs, size_t n_inputs,
                                 int32_t retain_graph, int32_t allow_unused, ember_tensor** results) {
  return guard(__func__, [&] {
    if (!results && n_inputs > 0) throw ArgumentError("results is NULL");
    for (std::size_t i = 0; i < n_inputs; ++i) results[i] = nullptr;
    if (n_outputs == 0) throw ArgumentError("no outputs (n_outputs is 0)");
    if (!outputs) throw ArgumentError("outputs is NULL");
    if (!inputs && n_inputs > 0) throw ArgumentError("inputs is NULL");
    std::vector<const DynTensor*> outs, seeds, ins;
    for (std::size_t i = 0; i < n_outputs; ++i) {
      outs.push_back(&use(outputs[i], "outputs[i]"));
      if (grad_outputs) seeds.push_back(grad_outputs[i] ? &use(grad_outputs[i], "grad_outputs[i]") : nullptr);
    }
    for (std::size_t i = 0; i < n_inputs; ++i) ins.push_back(&use(inputs[i], "inputs[i]"));
    auto grads = autograd_grad(outs, seeds, ins, retain_graph != 0);
    if (!allow_unused)
      for (std::size_t i = 0; i < grads.size(); ++i)
        if (!grads[i])
          throw ArgumentError(fmt::format("input {}: One of the differentiated Tensors appears to not have been used in "
                                          "the graph. Set allow_unused=True if this is the desired behavior.", i));
    // Handles only once everything succeeded: a failure leaves results all NULL, nothing to free.
    for (std::size_t i = 0; i < grads.size(); ++i)
      if (grads[i]) results[i] = new_tensor(std::move(*grads[i]));
  });
}

ember_status ember_tensor_grad(const ember_tensor* tensor, ember_tensor** out) {
  return guard(__func__, [&] {
    auto& o = out_handle(out);
    if (auto g = leaf_grad(use(tensor, "tensor"))) o = new_tensor(std::move(*g));
  });
}

ember_status ember_tensor_set_grad(ember_tensor* tensor, const ember_tensor* grad) {
  return guard(__func__, [&] {
    const auto& t = use(tensor, "tensor");
    set_leaf_grad(t, grad ? &use(grad, "grad") : nullptr);
  });
}

ember_status ember_tensor_is_leaf(const ember_tensor* tensor, int32_t* leaf) {
  return guard(__func__, [&] { out_value(leaf, "leaf") = is_leaf(use(tensor, "tensor")) ? 1 : 0; });
}

ember_status ember_tensor_inplace(ember_tensor* self, const ember_tensor* other, int32_t op) {
  return guard(__func__, [&] {
    auto& h = use_handle(self, "self");
    const DynTensor& o = use(other, "other");
    // copy_ converts like PyTorch's (a float source into an int tensor, ...); the arithmetic ops need one kind.
    const DType want = dtype(h.value);
    DynTensor value = op == EMBER_INPLACE_COPY && dtype(o) != want ? inplace(h.value, cast(o, want), InplaceOp::Copy)
                                                                    : inplace(h.value, o, static_cast<InplaceOp>(op));
    h.value = std::move(value);
    ++h.version;
  });
}

ember_status ember_tensor_inplace_scalar(ember_tensor* self, int32_t op, double s) {
  return guard(__func__, [&] {
    auto& h = use_handle(self, "self");
    h.value = inplace_scalar(h.value, static_cast<InplaceOp>(op), s);
    ++h.version;
  });
}

ember_status ember_tensor_adam_step(ember_tensor* param, const ember_tensor* grad, ember_tensor* exp_avg,
                                    ember_tensor* exp_avg_sq, double lr, double beta1, double beta2, double eps,
                                    double weight_decay, int32_t decoupled, int64_t step) {
  return guard(__func__, [&] {
    auto& p = use_handle(param, "param");
    auto& m = use_handle(exp_avg, "exp_avg");
    auto& v = use_handle(exp_avg_sq, "exp_avg_sq");
    const DynTensor& g = use(grad, "grad");
    if (&p == &m || &p == &v || &m == &v)
      throw ArgumentError("adam_step: param, exp_avg and exp_avg_sq must be three tensors");
    auto finite_nonneg = [](double x) { return std::isfinite(x) && x >= 0; };
    if (!finite_nonneg(lr) || !finite_nonneg(eps) || !finite_nonneg(weight_decay))
      throw ArgumentError(fmt::format("adam_step: lr, eps and weight_decay must be finite and >= 0, got {}, {}, {}", lr,
                                      eps, weight_decay));
    if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1))
      throw ArgumentError(fmt::format("adam_step: betas must be in [0, 1), got {}, {}", beta1, beta2));
    if (step < 1) throw ArgumentError(fmt::format("adam_step: step must be >= 1 (this update's count), got {}", step));
    const double t = static_cast<double>(step);
    const AdamStepArgs a{lr, beta1, beta2, eps, weight_decay, decoupled != 0, 1 - std::pow(beta1, t),
                         1 - std::pow(beta2, t)};
    std::vector<DynTensor> r = adam_step(p.value, g, m.value, v.value, a);
    // Stored as in-place copies under no_grad (a leaf keeps its identity); each value is checked before any is stored.
    const autodiff::NoGrad no_grad;
    DynTensor np = inplace(p.value, r[0], InplaceOp::Copy), nm = inplace(m.value, r[1], InplaceOp::Copy),
              nv = inplace(v.value, r[2], InplaceOp::Copy);
    p.value = std::move(np);
    m.value = std::move(nm);
    v.value = std::move(nv);
    ++p.version;
    ++m.version;
    ++v.version;
  });
}

ember_status ember_tensor_version(const ember_tensor* tensor, int64_t* version) {
  return guard(__func__, [&] {
    auto& v = out_value(version, "version");
    v = static_cast<int64_t>(use_handle(tensor, "tensor").version);
  });
}

}  // extern "C"
