#pragma once
// Host entry points of the CUDA kernels (plain C++: the .cu files define them). Templated on the element type and
// instantiated for float (Float), int64_t (Int) and uint8_t (Bool) only where a kind needs them. Every function
// queues work on the device's stream and returns without waiting, except into_data (it reads the result) and the
// ops that must validate index values or integer divisors first (they read back one flag).
#include <array>
#include <optional>
#include <vector>

#include "backends/cuda/cuda_tensor.hpp"
#include "engine/backend/ops.hpp"
#include "engine/tensor/tensor_data.hpp"

namespace ember::cuda {

using Mask = CudaTensor<uint8_t>;
using Index = CudaTensor<int64_t>;

// layout.cu
template <class T> CudaTensor<T> from_data(const TensorData& data, DType own, int device);
template <class T> TensorData into_data(const CudaTensor<T>& x, DType own);
template <class T> CudaTensor<T> to_device(const CudaTensor<T>& x, int device);
template <class T> CudaTensor<T> full(const Shape& shape, T value, int device);
// A float Bernoulli tensor from its counter-based words (random.hpp's fill_bernoulli: the host's values): element i
// is `hit` where philox_word(key, i) < threshold (<= 2^32), else 0.
CudaTensor<float> bernoulli(const Shape& shape, uint64_t key, uint64_t threshold, float hit, int device);
template <class T> CudaTensor<T> reshape(const CudaTensor<T>& x, const Shape& shape);
template <class T> CudaTensor<T> permute(const CudaTensor<T>& x, const std::vector<std::size_t>& axes);
template <class T> CudaTensor<T> expand(const CudaTensor<T>& x, const Shape& shape);
template <class T> CudaTensor<T> slice(const CudaTensor<T>& x, const std::vector<Range>& ranges);
template <class T>
CudaTensor<T> slice_assign(const CudaTensor<T>& x, const std::vector<Range>& ranges, const CudaTensor<T>& values);
template <class T> CudaTensor<T> cat(const std::vector<CudaTensor<T>>& xs, std::size_t dim);
template <class T> CudaTensor<T> flip(const CudaTensor<T>& x, const std::vector<std::size_t>& dims);
template <class T> CudaTensor<T> where(const Mask& cond, const CudaTensor<T>& a, const CudaTensor<T>& b);
template <class T> CudaTensor<T> mask_fill(const CudaTensor<T>& x, const Mask& mask, T value);
template <class From, class To> CudaTensor<To> cast(const CudaTensor<From>& x);
Index arange(int64_t start, int64_t end, int device);

// indexing.cu
template <class T> CudaTensor<T> gather(std::size_t dim, const CudaTensor<T>& x, const Index& indices);
template <class T>
CudaTensor<T> scatter_add(std::size_t dim, const CudaTensor<T>& x, const Index& indices, const CudaTensor<T>& values);
template <class T> CudaTensor<T> index_select(const CudaTensor<T>& x, std::size_t dim, const Index& indices);
template <class T>
CudaTensor<T> index_select_add(const CudaTensor<T>& x, std::size_t dim, const Index& indices,
                               const CudaTensor<T>& values);

// elementwise.cu (unary, scalar, binary: float and int64_t; compare: float, int64_t, uint8_t)
template <class T> CudaTensor<T> unary(const CudaTensor<T>& x, UnaryOp op);
template <class T> CudaTensor<T> scalar(const CudaTensor<T>& x, ScalarOp op, double s);
template <class T> CudaTensor<T> binary(const CudaTensor<T>& a, const CudaTensor<T>& b, BinaryOp op);
// compare.cu
template <class T> Mask compare(const CudaTensor<T>& a, const CudaTensor<T>& b, CompareOp op);
template <class T> Mask compare_scalar(const CudaTensor<T>& a, CompareOp op, double s);
Mask predicate(const CudaTensor<float>& x, PredicateOp op);
Mask logic(const Mask& a, const Mask& b, LogicOp op);
Mask logical_not(const Mask& a);

// fused.cu (float): g * f'(x) in one pass for common activations (nullopt for the others); one Adam/AdamW update.
std::optional<CudaTensor<float>> unary_backward(UnaryOp op, const CudaTensor<float>& x, const CudaTensor<float>& y,
                                                const CudaTensor<float>& g);
// The update's f32 scalars, as adam_step passes them to its kernel (and a CUDA graph's replay writes them).
struct AdamConsts {
  float decay, wd, b1, one_b1, b2, one_b2, sqrt_bc2, eps, step;
};
AdamConsts adam_consts(const AdamStepArgs& a);
AdamStepResult<CudaTensor<float>> adam_step(const CudaTensor<float>& w, const CudaTensor<float>& g,
                                            const CudaTensor<float>* m, const CudaTensor<float>* v,
                                            const AdamStepArgs& a);

// sort_scan.cu: the stable order along dim (NaN largest, as the CPU) and the running sum.
Index argsort(const CudaTensor<float>& x, std::size_t dim, bool descending);
CudaTensor<float> cumsum(const CudaTensor<float>& x, std::size_t dim);

// reduce.cu (float, int64_t)
template <class T> CudaTensor<T> reduce(const CudaTensor<T>& x, ReduceOp op, std::size_t dim);
template <class T> CudaTensor<T> reduce_all(const CudaTensor<T>& x, ReduceOp op);
template <class T> Index arg_reduce(const CudaTensor<T>& x, ArgReduceOp op, std::size_t dim);

// matmul.cu (float): op(a) @ op(b), op transposing the last two dims of a stored operand when its flag is set.
CudaTensor<float> matmul(const CudaTensor<float>& a, const CudaTensor<float>& b, bool trans_a = false,
                         bool trans_b = false);

// conv.cu (float)
CudaTensor<float> conv2d(const CudaTensor<float>& x, const CudaTensor<float>& w, const CudaTensor<float>* bias,
                         const Conv2dOptions& o);
Conv2dGrads<CudaTensor<float>> conv2d_backward(const CudaTensor<float>& x, const CudaTensor<float>& w,
                                               const CudaTensor<float>& grad, bool has_bias, const Conv2dOptions& o);

// pool.cu (float)
MaxPoolResult<CudaTensor<float>, Index> max_pool2d(const CudaTensor<float>& x, const Pool2dOptions& o);
CudaTensor<float> max_pool2d_backward(const CudaTensor<float>& x, const CudaTensor<float>& grad, const Index& indices);
CudaTensor<float> avg_pool2d(const CudaTensor<float>& x, const Pool2dOptions& o);
CudaTensor<float> avg_pool2d_backward(const CudaTensor<float>& x, const CudaTensor<float>& grad,
                                      const Pool2dOptions& o);
CudaTensor<float> adaptive_avg_pool2d(const CudaTensor<float>& x, std::array<int64_t, 2> out_hw);
CudaTensor<float> adaptive_avg_pool2d_backward(const CudaTensor<float>& x, const CudaTensor<float>& grad);

// fft.cu (float, cuFFT): see FftOp in engine/backend/ops.hpp for shapes and scaling.
CudaTensor<float> fft(const CudaTensor<float>& x, FftOp op, int64_t n);

}  // namespace ember::cuda
