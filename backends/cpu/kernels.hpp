#pragma once
// CPU kernels, templated on the element type and instantiated in the .cpp files for float, double, int64_t (Int)
// and uint8_t (Bool). Cpu<E> (cpu_backend.hpp) maps the Backend interface onto these.
#include <array>
#include <optional>
#include <utility>
#include <vector>

#include "backends/cpu/cpu_tensor.hpp"
#include "engine/backend/ops.hpp"
#include "engine/fusion/program.hpp"
#include "engine/tensor/tensor_data.hpp"

namespace ember::cpu {

using Mask = CpuTensor<uint8_t>;
using Index = CpuTensor<int64_t>;

// layout.cpp
template <class T> CpuTensor<T> from_data(const TensorData& data, DType own);
template <class T> TensorData into_data(const CpuTensor<T>& x, DType own);
template <class T> CpuTensor<T> full(const Shape& shape, T value);
// random.cpp: element i is `hit` where philox_word(key, i) < threshold, else 0 (engine/tensor/random.hpp's Bernoulli
// draw, computed in place).
template <class T> CpuTensor<T> bernoulli(const Shape& shape, uint64_t key, uint64_t threshold, T hit);
template <class T> CpuTensor<T> reshape(const CpuTensor<T>& x, const Shape& shape);
template <class T> CpuTensor<T> permute(const CpuTensor<T>& x, const std::vector<std::size_t>& axes);
template <class T> CpuTensor<T> expand(const CpuTensor<T>& x, const Shape& shape);
template <class T> CpuTensor<T> slice(const CpuTensor<T>& x, const std::vector<Range>& ranges);
// x[index] along dim with the dim dropped (`to`: that shape), index in range: a view of x's storage.
template <class T> CpuTensor<T> select(const CpuTensor<T>& x, std::size_t dim, int64_t index, Shape to);
template <class T>
CpuTensor<T> slice_assign(const CpuTensor<T>& x, const std::vector<Range>& ranges, const CpuTensor<T>& values);
template <class T> CpuTensor<T> cat(const std::vector<CpuTensor<T>>& xs, std::size_t dim);
template <class T> CpuTensor<T> flip(const CpuTensor<T>& x, const std::vector<std::size_t>& dims);
template <class T> CpuTensor<T> gather(std::size_t dim, const CpuTensor<T>& x, const Index& indices);
template <class T>
CpuTensor<T> scatter_add(std::size_t dim, const CpuTensor<T>& x, const Index& indices, const CpuTensor<T>& values);
template <class T> CpuTensor<T> index_select(const CpuTensor<T>& x, std::size_t dim, const Index& indices);
template <class T>
CpuTensor<T> index_select_add(const CpuTensor<T>& x, std::size_t dim, const Index& indices,
                              const CpuTensor<T>& values);
template <class T> CpuTensor<T> where(const Mask& cond, const CpuTensor<T>& a, const CpuTensor<T>& b);
template <class T> CpuTensor<T> mask_fill(const CpuTensor<T>& x, const Mask& mask, T value);
template <class From, class To> CpuTensor<To> cast(const CpuTensor<From>& x);
Index arange(int64_t start, int64_t end);

// elementwise.cpp
template <class T> CpuTensor<T> unary(const CpuTensor<T>& x, UnaryOp op);
template <class T> CpuTensor<T> scalar(const CpuTensor<T>& x, ScalarOp op, double s);
template <class T> CpuTensor<T> binary(const CpuTensor<T>& a, const CpuTensor<T>& b, BinaryOp op);
template <class T> Mask compare(const CpuTensor<T>& a, const CpuTensor<T>& b, CompareOp op);
template <class T> Mask compare_scalar(const CpuTensor<T>& a, CompareOp op, double s);
template <class T> Mask predicate(const CpuTensor<T>& x, PredicateOp op);
Mask logic(const Mask& a, const Mask& b, LogicOp op);
Mask logical_not(const Mask& a);
// The float arithmetic of unary / scalar / binary over flat arrays of n elements (float, double): the fused chains
// run their tiles through these, so a chain computes exactly what its ops one by one compute.
template <class T> void unary_span(UnaryOp op, const T* x, T* y, int64_t n);
template <class T> void scalar_span(ScalarOp op, double s, const T* x, T* y, int64_t n);
template <class T> void binary_span(BinaryOp op, const T* a, const T* b, T* y, int64_t n);

// fused_chain.cpp (float, double): a chain of elementwise ops (Fusion<Cpu>, engine/fusion/program.hpp) in one pass
// over cache-sized tiles; inputs[k] is the data of the program's input k (T, int64_t or uint8_t by its kind).
template <class T> CpuTensor<T> fused_chain(const fusion::Program& p, const std::vector<const void*>& inputs);

// unary_backward.cpp (float, double): g * f'(x) in one pass for common activations; nullopt for other ops.
template <class T>
std::optional<CpuTensor<T>> unary_backward(UnaryOp op, const CpuTensor<T>& x, const CpuTensor<T>& y,
                                           const CpuTensor<T>& g);
// GELU's step g * GELU'(x) over flat arrays (the eager op and the fused chains run it).
template <class T> void gelu_backward_span(const T* x, const T* g, T* out, int64_t n);
// ReLU's step g * (x > 0) as x > 0 ? g : +0, branch-free (the eager op and Fusion's ReluBackward share it).
template <class T> void relu_backward_span(const T* x, const T* g, T* out, int64_t n);

// optim_kernels.cpp (float, double): one fused Adam/AdamW update; m and v null on the first step.
template <class T>
AdamStepResult<CpuTensor<T>> adam_step(const CpuTensor<T>& w, const CpuTensor<T>& g, const CpuTensor<T>* m,
                                       const CpuTensor<T>* v, const AdamStepArgs& a);

// reduce.cpp
template <class T> CpuTensor<T> reduce(const CpuTensor<T>& x, ReduceOp op, std::size_t dim);
template <class T> CpuTensor<T> reduce_all(const CpuTensor<T>& x, ReduceOp op);
template <class T> Index arg_reduce(const CpuTensor<T>& x, ArgReduceOp op, std::size_t dim);

// sort_scan.cpp (float, double): the stable order of x along dim (NaN as the largest value) and the running sum.
template <class T> Index argsort(const CpuTensor<T>& x, std::size_t dim, bool descending);
template <class T> CpuTensor<T> cumsum(const CpuTensor<T>& x, std::size_t dim);

// matmul.cpp (float, double)
// op(a) @ op(b); op transposes the last two dims of a stored operand when its flag is set.
template <class T>
CpuTensor<T> matmul(const CpuTensor<T>& a, const CpuTensor<T>& b, bool trans_a = false, bool trans_b = false);
// C[m, n] (+)= op(A) * op(B) on raw row-major buffers; the GEMM inside convolutions.
template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc);

// fft.cpp (float, double): a discrete Fourier transform over the signal dim (see FftOp for layouts and scaling);
// n is the signal length (the input's for Fft / Ifft / Rfft, the output's for Irfft).
template <class T> CpuTensor<T> fft(const CpuTensor<T>& x, FftOp op, int64_t n);

// conv.cpp (float, double)
template <class T>
CpuTensor<T> conv2d(const CpuTensor<T>& x, const CpuTensor<T>& w, const CpuTensor<T>* bias,
                    const Conv2dOptions& o);
template <class T>
Conv2dGrads<CpuTensor<T>> conv2d_backward(const CpuTensor<T>& x, const CpuTensor<T>& w, const CpuTensor<T>& grad,
                                          bool has_bias, const Conv2dOptions& o);
// relu(conv2d(x, w, bias, o)): oneDNN applies the ReLU in the convolution's output pass (f32); else a ReLU pass.
template <class T>
CpuTensor<T> conv2d_relu(const CpuTensor<T>& x, const CpuTensor<T>& w, const CpuTensor<T>* bias,
                         const Conv2dOptions& o);
// max_pool2d(conv2d_relu(x, w, bias, o), pool)'s values: oneDNN pools the convolution's blocked output (f32);
// else the two kernels.
template <class T>
CpuTensor<T> conv2d_relu_max_pool(const CpuTensor<T>& x, const CpuTensor<T>& w, const CpuTensor<T>* bias,
                                  const Conv2dOptions& o, const Pool2dOptions& pool);

// pool.cpp (float, double)
template <class T> MaxPoolResult<CpuTensor<T>, Index> max_pool2d(const CpuTensor<T>& x, const Pool2dOptions& o);
template <class T>
CpuTensor<T> max_pool2d_backward(const CpuTensor<T>& x, const CpuTensor<T>& grad, const Index& indices);
template <class T> CpuTensor<T> avg_pool2d(const CpuTensor<T>& x, const Pool2dOptions& o);
template <class T>
CpuTensor<T> avg_pool2d_backward(const CpuTensor<T>& x, const CpuTensor<T>& grad, const Pool2dOptions& o);
template <class T> CpuTensor<T> adaptive_avg_pool2d(const CpuTensor<T>& x, std::array<int64_t, 2> out_hw);
template <class T> CpuTensor<T> adaptive_avg_pool2d_backward(const CpuTensor<T>& x, const CpuTensor<T>& grad);

}  // namespace ember::cpu
