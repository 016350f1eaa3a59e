// ember.h: tensor creation, queries, host copies and autodiff.
#include <cstring>

#include "c_api/src/boundary.hpp"

using namespace ember;
using namespace ember::capi;

namespace {

ember_tensor* new_tensor(DynTensor t) { return make_handle<ember_tensor>(std::move(t)); }

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
    o = make_handle<ember_grads>(backward(t, g));
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

}  // extern "C"
