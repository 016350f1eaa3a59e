// ember.h: the typed engine's remaining ops (issue 11), each a thin check of the caller's arrays and enums in front
// of its runtime op (src/runtime/ops_engine.cpp).
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

// The caller's array of n int64 values, refused when NULL with n > 0 or longer than any rank.
std::vector<int64_t> int_list(const int64_t* p, size_t n, const char* what) {
  if (n > kMaxRank) throw ShapeError(fmt::format("{}: {} values (at most {})", what, n, kMaxRank));
  if (!p && n) throw ArgumentError(fmt::format("{} is NULL", what));
  return std::vector<int64_t>(p, p + n);
}

nn::Reduction to_reduction(int32_t r) {
  if (r == EMBER_REDUCTION_MEAN) return nn::Reduction::Mean;
  if (r == EMBER_REDUCTION_SUM) return nn::Reduction::Sum;
  throw ArgumentError(fmt::format("unknown reduction {}", r));
}

}  // namespace

extern "C" {

ember_status ember_tensor_expand(const ember_tensor* x, const int64_t* shape, size_t rank, ember_tensor** out) {
  return produce(__func__, out, [&] { return expand(val(x, "x"), int_list(shape, rank, "shape")); });
}

ember_status ember_tensor_flip(const ember_tensor* x, const int64_t* dims, size_t n, ember_tensor** out) {
  return produce(__func__, out, [&] { return flip(val(x, "x"), int_list(dims, n, "dims")); });
}

ember_status ember_tensor_repeat(const ember_tensor* x, const int64_t* times, size_t n, ember_tensor** out) {
  return produce(__func__, out, [&] { return repeat(val(x, "x"), int_list(times, n, "times")); });
}

ember_status ember_tensor_scatter_add(const ember_tensor* x, int64_t dim, const ember_tensor* indices,
                                      const ember_tensor* values, ember_tensor** out) {
  return produce(__func__, out,
                 [&] { return scatter_add(val(x, "x"), dim, val(indices, "indices"), val(values, "values")); });
}

ember_status ember_tensor_masked_fill(const ember_tensor* x, const ember_tensor* mask, double value,
                                      ember_tensor** out) {
  return produce(__func__, out, [&] { return masked_fill(val(x, "x"), val(mask, "mask"), value); });
}

ember_status ember_tensor_var(const ember_tensor* x, int64_t dim, int64_t correction, int32_t keepdim,
                              ember_tensor** out) {
  return produce(__func__, out, [&] { return var(val(x, "x"), dim, correction, keepdim != 0); });
}

ember_status ember_tensor_adaptive_avg_pool2d(const ember_tensor* x, int64_t out_h, int64_t out_w,
                                              ember_tensor** out) {
  return produce(__func__, out, [&] { return adaptive_avg_pool2d(val(x, "x"), out_h, out_w); });
}

ember_status ember_loss_huber(const ember_tensor* input, const ember_tensor* target, int32_t reduction, double delta,
                              ember_tensor** out) {
  return produce(__func__, out, [&] {
    return huber_loss(val(input, "input"), val(target, "target"), to_reduction(reduction), delta);
  });
}

ember_status ember_loss_bce_with_logits(const ember_tensor* logits, const ember_tensor* targets, int32_t reduction,
                                        ember_tensor** out) {
  return produce(__func__, out, [&] {
    return bce_with_logits(val(logits, "logits"), val(targets, "targets"), to_reduction(reduction));
  });
}

}  // extern "C"
