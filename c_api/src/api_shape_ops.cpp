// ember.h: the composed shape ops of issue 13 (pad, step slices, baddbmm, einsum, logsumexp, std, interpolate),
// each a thin check of the caller's arrays and enums in front of its runtime op (src/runtime/ops_shape.cpp).
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

// The caller's array of n int64 values, refused when NULL with n > 0 or longer than `limit`.
std::vector<int64_t> int_list(const int64_t* p, size_t n, size_t limit, const char* what) {
  if (n > limit) throw ShapeError(fmt::format("{}: {} values (at most {})", what, n, limit));
  if (!p && n) throw ArgumentError(fmt::format("{} is NULL", what));
  return std::vector<int64_t>(p, p + n);
}

PadMode to_pad_mode(int32_t m) {
  switch (m) {
    case EMBER_PAD_CONSTANT: return PadMode::Constant;
    case EMBER_PAD_REFLECT: return PadMode::Reflect;
    case EMBER_PAD_REPLICATE: return PadMode::Replicate;
    default: throw ArgumentError(fmt::format("unknown pad mode {}", m));
  }
}

}  // namespace

extern "C" {

ember_status ember_tensor_pad(const ember_tensor* x, const int64_t* pads, size_t n, ember_pad_mode_t mode,
                              double value, ember_tensor** out) {
  return produce(__func__, out, [&] {
    return pad(val(x, "x"), int_list(pads, n, 2 * kMaxRank, "pads"), to_pad_mode(mode), value);
  });
}

ember_status ember_tensor_slice_step(const ember_tensor* x, const int64_t* starts, const int64_t* ends,
                                     const int64_t* steps, size_t n, ember_tensor** out) {
  return produce(__func__, out, [&] {
    const auto& t = val(x, "x");
    const auto b = int_list(starts, n, kMaxRank, "starts"), e = int_list(ends, n, kMaxRank, "ends"),
               s = int_list(steps, n, kMaxRank, "steps");
    std::vector<StepSlice> r(n);
    for (std::size_t i = 0; i < n; ++i) {
      r[i].start = b[i];
      if (e[i] != EMBER_SLICE_END) r[i].end = e[i];
      r[i].step = s[i];
    }
    return slice_step(t, r);
  });
}

ember_status ember_tensor_baddbmm(const ember_tensor* input, const ember_tensor* batch1, const ember_tensor* batch2,
                                  double beta, double alpha, ember_tensor** out) {
  return produce(__func__, out, [&] {
    return baddbmm(val(input, "input"), val(batch1, "batch1"), val(batch2, "batch2"), beta, alpha);
  });
}

ember_status ember_einsum(const char* equation, const ember_tensor* const* operands, size_t n, ember_tensor** out) {
  return produce(__func__, out, [&] {
    if (!equation) throw ArgumentError("equation is NULL");
    if (!operands && n) throw ArgumentError("operands is NULL");
    if (n == 0) throw ArgumentError("einsum: no operands");
    if (n > 64) throw ArgumentError(fmt::format("einsum: {} operands (at most 64)", n));
    std::string eq(equation);
    if (eq.size() > 4096) throw ArgumentError("einsum: equation longer than 4096 characters");
    std::vector<const DynTensor*> ts;
    for (std::size_t i = 0; i < n; ++i) ts.push_back(&val(operands[i], "operands[i]"));
    return einsum(eq, ts);
  });
}

ember_status ember_tensor_logsumexp(const ember_tensor* x, const int64_t* dims, size_t n, int32_t keepdim,
                                    ember_tensor** out) {
  return produce(__func__, out,
                 [&] { return logsumexp(val(x, "x"), int_list(dims, n, kMaxRank, "dims"), keepdim != 0); });
}

ember_status ember_tensor_std(const ember_tensor* x, const int64_t* dims, size_t n, double correction,
                              int32_t keepdim, ember_tensor** out) {
  return produce(__func__, out, [&] {
    return std_dev(val(x, "x"), int_list(dims, n, kMaxRank, "dims"), correction, keepdim != 0);
  });
}

ember_status ember_interpolate(const ember_tensor* x, const int64_t* size, size_t n_size, const double* scale_factor,
                               size_t n_scale, ember_interpolate_mode_t mode, int32_t align_corners,
                               ember_tensor** out) {
  return produce(__func__, out, [&] {
    InterpolateOptions o;
    if (n_size > 2 || n_scale > 2)
      throw ArgumentError(fmt::format("interpolate: {} sizes and {} scale factors (0, 1 or 2 each)", n_size, n_scale));
    if ((n_size && !size) || (n_scale && !scale_factor)) throw ArgumentError("size or scale_factor is NULL");
    if (n_size) o.size = std::array<int64_t, 2>{size[0], size[n_size - 1]};
    if (n_scale) o.scale_factor = std::array<double, 2>{scale_factor[0], scale_factor[n_scale - 1]};
    if (mode == EMBER_INTERPOLATE_NEAREST) o.mode = InterpolateMode::Nearest;
    else if (mode == EMBER_INTERPOLATE_BILINEAR) o.mode = InterpolateMode::Bilinear;
    else throw ArgumentError(fmt::format("unknown interpolate mode {}", mode));
    o.align_corners = align_corners != 0;
    return interpolate(val(x, "x"), o);
  });
}

}  // extern "C"
