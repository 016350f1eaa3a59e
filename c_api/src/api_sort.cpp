// ember.h: issue 13's sort, scan and mask ops, each a thin check of the caller's flags in front of its runtime op
// (src/runtime/ops_sort.cpp). sort and topk give values and indices: the values are a gather of x at the indices
// (so gradients are scattered back through them), and both handles are made or neither.
#include <functional>
#include <utility>

#include <fmt/format.h>

#include "c_api/src/boundary.hpp"

using namespace ember;
using namespace ember::capi;

namespace {

const DynTensor& val(const ember_tensor* t, const char* arg) { return use(t, arg); }

template <class F>
ember_status produce(const char* fn, ember_tensor** out, F&& op) {
  return guard(fn, [&] {
    auto& o = out_handle(out);
    o = make_handle<ember_tensor>(op());
  });
}

// Two results as two new handles, or an error and neither.
ember_status produce_pair(const char* fn, ember_tensor** values, ember_tensor** indices,
                          const std::function<std::pair<DynTensor, DynTensor>()>& op) {
  return guard(fn, [&] {
    auto& v = out_handle(values);
    auto& i = out_handle(indices);
    if (values == indices) throw ArgumentError("values and indices point to the same handle slot");
    auto [vt, it] = op();
    ember_tensor* vh = make_handle<ember_tensor>(std::move(vt));
    try {
      i = make_handle<ember_tensor>(std::move(it));
    } catch (...) {
      destroy_handle(vh);
      throw;
    }
    v = vh;
  });
}

bool flag(int32_t v, const char* name) {
  if (v != 0 && v != 1) throw ArgumentError(fmt::format("{} must be 0 or 1, got {}", name, v));
  return v != 0;
}

// x at the indices along dim; a scalar's sort is the scalar itself.
DynTensor gathered(const DynTensor& x, int64_t dim, const DynTensor& idx) {
  if (shape(x).rank() == 0) return x;
  return gather(x, dim, idx);
}

}  // namespace

extern "C" {

ember_status ember_tensor_sort(const ember_tensor* x, int64_t dim, int32_t descending, int32_t stable,
                               ember_tensor** values, ember_tensor** indices) {
  return produce_pair(__func__, values, indices, [&] {
    const DynTensor& t = val(x, "x");
    flag(stable, "stable");  // every sort is stable; the flag is checked for torch's signature only
    DynTensor idx = argsort(t, dim, flag(descending, "descending"));
    return std::pair{gathered(t, dim, idx), idx};
  });
}

ember_status ember_tensor_argsort(const ember_tensor* x, int64_t dim, int32_t descending, int32_t stable,
                                  ember_tensor** out) {
  return produce(__func__, out, [&] {
    flag(stable, "stable");
    return argsort(val(x, "x"), dim, flag(descending, "descending"));
  });
}

ember_status ember_tensor_topk(const ember_tensor* x, int64_t k, int64_t dim, int32_t largest, int32_t sorted,
                               ember_tensor** values, ember_tensor** indices) {
  return produce_pair(__func__, values, indices, [&] {
    const DynTensor& t = val(x, "x");
    flag(sorted, "sorted");  // the results are always sorted, one of the orders sorted = 0 allows
    DynTensor idx = topk_indices(t, k, dim, flag(largest, "largest"));
    return std::pair{gather(t, dim, idx), idx};
  });
}

ember_status ember_tensor_cumsum(const ember_tensor* x, int64_t dim, ember_tensor** out) {
  return produce(__func__, out, [&] { return cumsum(val(x, "x"), dim); });
}

ember_status ember_tensor_tril(const ember_tensor* x, int64_t diagonal, ember_tensor** out) {
  return produce(__func__, out, [&] { return triangle(val(x, "x"), diagonal, false); });
}

ember_status ember_tensor_triu(const ember_tensor* x, int64_t diagonal, ember_tensor** out) {
  return produce(__func__, out, [&] { return triangle(val(x, "x"), diagonal, true); });
}

ember_status ember_tensor_masked_select(const ember_tensor* x, const ember_tensor* mask, ember_tensor** out) {
  return produce(__func__, out, [&] { return masked_select(val(x, "x"), val(mask, "mask")); });
}

ember_status ember_tensor_one_hot(const ember_tensor* x, int64_t num_classes, ember_tensor** out) {
  return produce(__func__, out, [&] { return one_hot(val(x, "x"), num_classes); });
}

}  // extern "C"
