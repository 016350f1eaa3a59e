// ember.h: tensor ops. Each function checks its handles and enum values, then calls the runtime layer.
#include <fmt/format.h>

#include "c_api/src/boundary.hpp"

using namespace ember;
using namespace ember::capi;

namespace {

// ember.h's op enums have the op table's values (engine/backend/ops.def; the generated ember_h_op_checks.cpp
// static_asserts every one), so a valid value converts as is and op_count bounds the valid ones.
template <OpEnum E>
E to_enum(int32_t v, const char* what) {
  if (v < 0 || v >= op_count<E>())
    throw ArgumentError(fmt::format("unknown {} {} (valid: 0..{})", what, v, op_count<E>() - 1));
  return static_cast<E>(v);
}

nn::Reduction to_reduction(int32_t r) {
  if (r == EMBER_REDUCTION_MEAN) return nn::Reduction::Mean;
  if (r == EMBER_REDUCTION_SUM) return nn::Reduction::Sum;
  throw ArgumentError("unknown reduction " + std::to_string(r));
}

const DynTensor& val(const ember_tensor* t, const char* arg) { return use(t, arg); }

// Runs op and stores the new tensor in *out.
template <class F>
ember_status produce(const char* fn, ember_tensor** out, F&& op) {
  return guard(fn, [&] {
    auto& o = out_handle(out);
    o = make_handle<ember_tensor>(op());
  });
}

// ember.h's FFT values are the op table's and the runtime's (not generated: ember_h_op_checks covers op families
// with an ember.h prefix only, and EMBER_FFT_NORM_* would share this one).
static_assert(EMBER_FFT_FFT == static_cast<int32_t>(FftOp::Fft) &&
              EMBER_FFT_IFFT == static_cast<int32_t>(FftOp::Ifft) &&
              EMBER_FFT_RFFT == static_cast<int32_t>(FftOp::Rfft) &&
              EMBER_FFT_IRFFT == static_cast<int32_t>(FftOp::Irfft));
static_assert(EMBER_FFT_NORM_BACKWARD == static_cast<int32_t>(FftNorm::Backward) &&
              EMBER_FFT_NORM_FORWARD == static_cast<int32_t>(FftNorm::Forward) &&
              EMBER_FFT_NORM_ORTHO == static_cast<int32_t>(FftNorm::Ortho));

constexpr std::size_t kConvV1 = EMBER_STRUCT_END(ember_conv2d_options, groups);
constexpr std::size_t kPoolV1 = EMBER_STRUCT_END(ember_pool2d_options, dilation);

ember_conv2d_options conv_defaults() {
  ember_conv2d_options o{};
  o.struct_size = sizeof o;
  o.stride[0] = o.stride[1] = 1;
  o.dilation[0] = o.dilation[1] = 1;
  o.groups = 1;
  return o;
}
ember_pool2d_options pool_defaults() {
  ember_pool2d_options o{};
  o.struct_size = sizeof o;
  o.count_include_pad = 1;
  o.kernel_size[0] = o.kernel_size[1] = 2;
  o.stride[0] = o.stride[1] = 2;
  o.dilation[0] = o.dilation[1] = 1;
  return o;
}
Pool2dOptions to_pool(const ember_pool2d_options* p) {
  const auto o = p ? read_struct(p, pool_defaults(), kPoolV1, "options") : pool_defaults();
  Pool2dOptions r;
  r.kernel = {o.kernel_size[0], o.kernel_size[1]};
  r.stride = {o.stride[0], o.stride[1]};
  r.padding = {o.padding[0], o.padding[1]};
  r.dilation = {o.dilation[0], o.dilation[1]};
  r.count_include_pad = o.count_include_pad != 0;
  return r;
}

}  // namespace

extern "C" {

ember_status ember_tensor_unary(const ember_tensor* x, int32_t op, ember_tensor** out) {
  return produce(__func__, out, [&] { return unary(val(x, "x"), to_enum<UnaryOp>(op, "unary op")); });
}
ember_status ember_tensor_binary(const ember_tensor* a, const ember_tensor* b, int32_t op, ember_tensor** out) {
  return produce(__func__, out, [&] {
    return binary(val(a, "a"), val(b, "b"), to_enum<BinaryOp>(op, "binary op"));
  });
}
ember_status ember_tensor_add(const ember_tensor* a, const ember_tensor* b, ember_tensor** out) {
  return produce(__func__, out, [&] { return binary(val(a, "a"), val(b, "b"), BinaryOp::Add); });
}
ember_status ember_tensor_sub(const ember_tensor* a, const ember_tensor* b, ember_tensor** out) {
  return produce(__func__, out, [&] { return binary(val(a, "a"), val(b, "b"), BinaryOp::Sub); });
}
ember_status ember_tensor_mul(const ember_tensor* a, const ember_tensor* b, ember_tensor** out) {
  return produce(__func__, out, [&] { return binary(val(a, "a"), val(b, "b"), BinaryOp::Mul); });
}
ember_status ember_tensor_div(const ember_tensor* a, const ember_tensor* b, ember_tensor** out) {
  return produce(__func__, out, [&] { return binary(val(a, "a"), val(b, "b"), BinaryOp::Div); });
}
ember_status ember_tensor_scalar(const ember_tensor* x, int32_t op, double s, ember_tensor** out) {
  return produce(__func__, out, [&] { return scalar(val(x, "x"), to_enum<ScalarOp>(op, "scalar op"), s); });
}
ember_status ember_tensor_compare(const ember_tensor* a, const ember_tensor* b, int32_t op, ember_tensor** out) {
  return produce(__func__, out, [&] {
    return compare(val(a, "a"), val(b, "b"), to_enum<CompareOp>(op, "compare op"));
  });
}
ember_status ember_tensor_compare_scalar(const ember_tensor* x, int32_t op, double s, ember_tensor** out) {
  return produce(__func__, out, [&] { return compare_scalar(val(x, "x"), to_enum<CompareOp>(op, "compare op"), s); });
}
ember_status ember_tensor_predicate(const ember_tensor* x, int32_t op, ember_tensor** out) {
  return produce(__func__, out, [&] { return predicate(val(x, "x"), to_enum<PredicateOp>(op, "predicate op")); });
}
ember_status ember_tensor_logical(const ember_tensor* a, const ember_tensor* b, int32_t op, ember_tensor** out) {
  return produce(__func__, out, [&] {
    return logical(val(a, "a"), val(b, "b"), to_enum<LogicOp>(op, "logic op"));
  });
}
ember_status ember_tensor_logical_not(const ember_tensor* x, ember_tensor** out) {
  return produce(__func__, out, [&] { return logical_not(val(x, "x")); });
}
ember_status ember_tensor_where(const ember_tensor* cond, const ember_tensor* a, const ember_tensor* b,
                                ember_tensor** out) {
  return produce(__func__, out, [&] { return where(val(cond, "cond"), val(a, "a"), val(b, "b")); });
}
ember_status ember_tensor_reduce(const ember_tensor* x, int32_t op, int64_t dim, int32_t keepdim, ember_tensor** out) {
  return produce(__func__, out, [&] {
    return reduce(val(x, "x"), to_enum<ReduceOp>(op, "reduce op"), dim, keepdim != 0);
  });
}
ember_status ember_tensor_reduce_all(const ember_tensor* x, int32_t op, ember_tensor** out) {
  return produce(__func__, out, [&] { return reduce_all(val(x, "x"), to_enum<ReduceOp>(op, "reduce op")); });
}
ember_status ember_tensor_argmax(const ember_tensor* x, int64_t dim, int32_t keepdim, ember_tensor** out) {
  return produce(__func__, out, [&] { return arg_reduce(val(x, "x"), ArgReduceOp::ArgMax, dim, keepdim != 0); });
}
ember_status ember_tensor_argmin(const ember_tensor* x, int64_t dim, int32_t keepdim, ember_tensor** out) {
  return produce(__func__, out, [&] { return arg_reduce(val(x, "x"), ArgReduceOp::ArgMin, dim, keepdim != 0); });
}
ember_status ember_tensor_matmul(const ember_tensor* a, const ember_tensor* b, ember_tensor** out) {
  return produce(__func__, out, [&] { return matmul(val(a, "a"), val(b, "b")); });
}
ember_status ember_tensor_linear(const ember_tensor* x, const ember_tensor* w, const ember_tensor* bias,
                                 int32_t trans_w, int32_t relu, ember_tensor** out) {
  return produce(__func__, out, [&] {
    return linear(val(x, "x"), val(w, "w"), bias ? &val(bias, "bias") : nullptr, trans_w != 0, relu != 0);
  });
}

ember_status ember_tensor_dropout(const ember_tensor* x, double p, ember_tensor** out) {
  return produce(__func__, out, [&] { return dropout(val(x, "x"), p); });
}

ember_status ember_tensor_reshape(const ember_tensor* x, const int64_t* shape, size_t rank, ember_tensor** out) {
  return produce(__func__, out, [&] {
    const auto& t = val(x, "x");
    if (rank > kMaxRank)
      throw ShapeError("rank " + std::to_string(rank) + " is outside 0.." + std::to_string(kMaxRank));
    if (!shape && rank) throw ArgumentError("shape is NULL");
    return reshape(t, std::vector<int64_t>(shape, shape + rank));
  });
}
ember_status ember_tensor_permute(const ember_tensor* x, const int64_t* axes, size_t naxes, ember_tensor** out) {
  return produce(__func__, out, [&] {
    const auto& t = val(x, "x");
    if (naxes > kMaxRank) throw ShapeError(std::to_string(naxes) + " axes (at most " + std::to_string(kMaxRank) + ")");
    if (!axes && naxes) throw ArgumentError("axes is NULL");
    return permute(t, std::vector<int64_t>(axes, axes + naxes));
  });
}
ember_status ember_tensor_transpose(const ember_tensor* x, int64_t dim0, int64_t dim1, ember_tensor** out) {
  return produce(__func__, out, [&] { return transpose(val(x, "x"), dim0, dim1); });
}
ember_status ember_tensor_slice(const ember_tensor* x, const int64_t* starts, const int64_t* ends, size_t n,
                                ember_tensor** out) {
  return produce(__func__, out, [&] {
    const auto& t = val(x, "x");
    if (n > kMaxRank) throw IndexError(std::to_string(n) + " ranges (at most " + std::to_string(kMaxRank) + ")");
    if (n && (!starts || !ends)) throw ArgumentError("starts or ends is NULL");
    std::vector<checks::SliceArg> r(n);
    for (std::size_t i = 0; i < n; ++i) {
      r[i].start = starts[i];
      if (ends[i] != EMBER_SLICE_END) r[i].end = ends[i];
    }
    return slice(t, r);
  });
}
// One call for x[i] (PyTorch's select): the slice and the reshape dropping the dim run in one runtime op
// (ops_layout.cpp), so the caller makes and frees no intermediate handle. A CPU row shares x's storage.
ember_status ember_tensor_select(const ember_tensor* x, int64_t dim, int64_t index, ember_tensor** out) {
  return produce(__func__, out, [&] { return select(val(x, "x"), dim, index); });
}
// The same call with the result returned: ctypes makes the handle object from the return value, where an out
// parameter costs the binding a pointer object and a reference per call.
ember_tensor* ember_tensor_select_or_null(const ember_tensor* x, int64_t dim, int64_t index) {
  ember_tensor* out = nullptr;
  return ember_tensor_select(x, dim, index, &out) == EMBER_OK ? out : nullptr;
}
ember_status ember_tensor_cat(const ember_tensor* const* xs, size_t n, int64_t dim, ember_tensor** out) {
  return produce(__func__, out, [&] {
    if (!xs && n) throw ArgumentError("xs is NULL");
    std::vector<const DynTensor*> ts;
    for (std::size_t i = 0; i < n; ++i) ts.push_back(&val(xs[i], "xs[i]"));
    return cat(ts, dim);
  });
}
ember_status ember_tensor_index_select(const ember_tensor* x, int64_t dim, const ember_tensor* indices,
                                       ember_tensor** out) {
  return produce(__func__, out, [&] { return index_select(val(x, "x"), dim, val(indices, "indices")); });
}
ember_status ember_tensor_gather(const ember_tensor* x, int64_t dim, const ember_tensor* indices, ember_tensor** out) {
  return produce(__func__, out, [&] { return gather(val(x, "x"), dim, val(indices, "indices")); });
}
ember_status ember_tensor_softmax(const ember_tensor* x, int64_t dim, ember_tensor** out) {
  return produce(__func__, out, [&] { return softmax(val(x, "x"), dim, false); });
}
ember_status ember_tensor_log_softmax(const ember_tensor* x, int64_t dim, ember_tensor** out) {
  return produce(__func__, out, [&] { return softmax(val(x, "x"), dim, true); });
}
ember_status ember_tensor_cast(const ember_tensor* x, int32_t dtype, ember_tensor** out) {
  return produce(__func__, out, [&] { return cast(val(x, "x"), to_dtype(dtype)); });
}

ember_status ember_conv2d_options_init(ember_conv2d_options* options) {
  return guard(__func__, [&] {
    if (!options) throw ArgumentError("options is NULL");
    *options = conv_defaults();
  });
}
ember_status ember_pool2d_options_init(ember_pool2d_options* options) {
  return guard(__func__, [&] {
    if (!options) throw ArgumentError("options is NULL");
    *options = pool_defaults();
  });
}

ember_status ember_tensor_conv2d(const ember_tensor* x, const ember_tensor* weight, const ember_tensor* bias,
                                 const ember_conv2d_options* options, ember_tensor** out) {
  return produce(__func__, out, [&] {
    const auto o = options ? read_struct(options, conv_defaults(), kConvV1, "options") : conv_defaults();
    Conv2dOptions c;
    c.stride = {o.stride[0], o.stride[1]};
    c.padding = {o.padding[0], o.padding[1]};
    c.dilation = {o.dilation[0], o.dilation[1]};
    c.groups = o.groups;
    const DynTensor* b = bias ? &val(bias, "bias") : nullptr;
    return conv2d(val(x, "x"), val(weight, "weight"), b, c);
  });
}
ember_status ember_tensor_max_pool2d(const ember_tensor* x, const ember_pool2d_options* options, ember_tensor** out) {
  return produce(__func__, out, [&] { return max_pool2d(val(x, "x"), to_pool(options)); });
}
ember_status ember_tensor_avg_pool2d(const ember_tensor* x, const ember_pool2d_options* options, ember_tensor** out) {
  return produce(__func__, out, [&] { return avg_pool2d(val(x, "x"), to_pool(options)); });
}

ember_status ember_loss_cross_entropy(const ember_tensor* logits, const ember_tensor* targets, int32_t reduction,
                                      ember_tensor** out) {
  return produce(__func__, out, [&] {
    return cross_entropy(val(logits, "logits"), val(targets, "targets"), to_reduction(reduction));
  });
}
ember_status ember_loss_mse(const ember_tensor* input, const ember_tensor* target, int32_t reduction,
                            ember_tensor** out) {
  return produce(__func__, out, [&] { return mse_loss(val(input, "input"), val(target, "target"), to_reduction(reduction)); });
}

ember_status ember_tensor_fft(const ember_tensor* x, int32_t op, int64_t n, int64_t dim, int32_t norm,
                              ember_tensor** out) {
  return produce(__func__, out, [&] {
    if (op < EMBER_FFT_FFT || op > EMBER_FFT_IRFFT)
      throw ArgumentError(fmt::format("unknown fft op {} (valid: 0..3)", op));
    if (norm < EMBER_FFT_NORM_BACKWARD || norm > EMBER_FFT_NORM_ORTHO)
      throw ArgumentError(fmt::format("unknown fft norm {} (valid: 0..2)", norm));
    return fft(val(x, "x"), static_cast<FftOp>(op), n, dim, static_cast<FftNorm>(norm));
  });
}

}  // extern "C"
