#pragma once
// Vulkan ops, one .cpp per op family (each dispatches the shaders of its family in shaders/). Vulkan (the
// backend, vulkan_backend.hpp) maps the Backend interface onto these. T is float (Float), int64_t (Int) or
// uint32_t (Bool).
#include <array>
#include <optional>
#include <vector>

#include "backends/vulkan/vulkan_tensor.hpp"
#include "engine/backend/ops.hpp"
#include "engine/tensor/tensor_data.hpp"

namespace ember::vk {

using FloatT = VulkanTensor<float>;
using Index = VulkanTensor<int64_t>;
using Mask = VulkanTensor<uint32_t>;

// tensor_io.cpp: creation and transfer
template <class T> VulkanTensor<T> empty(const std::shared_ptr<Context>& ctx, const Shape& shape);
template <class T> VulkanTensor<T> from_data(const TensorData& data, const std::shared_ptr<Context>& ctx);
template <class T> TensorData into_data(const VulkanTensor<T>& x, DType own);
template <class T> VulkanTensor<T> full(const std::shared_ptr<Context>& ctx, const Shape& shape, double value);
// A float Bernoulli tensor from its counter-based words (random.hpp's fill_bernoulli: the host's values): element i
// is `hit` where philox_word(key, i) < threshold (<= 2^32), else 0.
VulkanTensor<float> bernoulli(const std::shared_ptr<Context>& ctx, const Shape& shape, uint64_t key, uint64_t threshold,
                              float hit);
template <class T> VulkanTensor<T> to_context(const VulkanTensor<T>& x, const std::shared_ptr<Context>& ctx);
Index arange(const std::shared_ptr<Context>& ctx, int64_t start, int64_t end);

// optim.cpp: Adam / AdamW in one pass (shaders/adam_step.comp), the composed default's bits (optional_ops.hpp).
// m and v null: the first step. Inside a plan the per-step scalars live in a buffer of the plan's, rewritten per
// replay (adam_words; backends/vulkan/compiled_step_plan.cpp).
AdamStepResult<FloatT> adam_step(const FloatT& w, const FloatT& g, const FloatT* m, const FloatT* v,
                                 const AdamStepArgs& a);
// The update's nine scalars as the kernel reads them: decay, wd, beta1, 1 - beta1, beta2, 1 - beta2,
// sqrt(bias_correction2), eps, lr / bias_correction1 (each rounded to float as the composed ops round it).
std::array<float, 9> adam_words(const AdamStepArgs& a);

// layout.cpp: every layout op is one strided copy (copy_strided.comp)
template <class T> VulkanTensor<T> reshape(const VulkanTensor<T>& x, const Shape& shape);
template <class T> VulkanTensor<T> permute(const VulkanTensor<T>& x, const std::vector<std::size_t>& axes);
template <class T> VulkanTensor<T> expand(const VulkanTensor<T>& x, const Shape& shape);
template <class T> VulkanTensor<T> slice(const VulkanTensor<T>& x, const std::vector<Range>& ranges);
template <class T>
VulkanTensor<T> slice_assign(const VulkanTensor<T>& x, const std::vector<Range>& ranges, const VulkanTensor<T>& v);
template <class T> VulkanTensor<T> cat(const std::vector<VulkanTensor<T>>& xs, std::size_t dim);
template <class T> VulkanTensor<T> flip(const VulkanTensor<T>& x, const std::vector<std::size_t>& dims);

// indexing.cpp
template <class T> VulkanTensor<T> gather(std::size_t dim, const VulkanTensor<T>& x, const Index& indices);
template <class T>
VulkanTensor<T> scatter_add(std::size_t dim, const VulkanTensor<T>& x, const Index& indices,
                            const VulkanTensor<T>& values);
template <class T> VulkanTensor<T> index_select(const VulkanTensor<T>& x, std::size_t dim, const Index& indices);
template <class T>
VulkanTensor<T> index_select_add(const VulkanTensor<T>& x, std::size_t dim, const Index& indices,
                                 const VulkanTensor<T>& values);

// select.cpp: where / mask_fill / cast
template <class T> VulkanTensor<T> where(const Mask& cond, const VulkanTensor<T>& a, const VulkanTensor<T>& b);
template <class T> VulkanTensor<T> mask_fill(const VulkanTensor<T>& x, const Mask& mask, double value);
template <class From, class To> VulkanTensor<To> cast(const VulkanTensor<From>& x);

// elementwise.cpp (T = float or int64_t)
template <class T> VulkanTensor<T> unary(const VulkanTensor<T>& x, UnaryOp op);
template <class T> VulkanTensor<T> scalar(const VulkanTensor<T>& x, ScalarOp op, double s);
template <class T> VulkanTensor<T> binary(const VulkanTensor<T>& a, const VulkanTensor<T>& b, BinaryOp op);

// compare.cpp
template <class T> Mask compare(const VulkanTensor<T>& a, const VulkanTensor<T>& b, CompareOp op);
template <class T> Mask compare_scalar(const VulkanTensor<T>& a, CompareOp op, double s);
Mask predicate(const VulkanTensor<float>& x, PredicateOp op);
Mask logic(const Mask& a, const Mask& b, LogicOp op);
Mask logical_not(const Mask& a);

// reduce.cpp (T = float or int64_t)
template <class T> VulkanTensor<T> reduce(const VulkanTensor<T>& x, ReduceOp op, std::size_t dim);
template <class T> VulkanTensor<T> reduce_all(const VulkanTensor<T>& x, ReduceOp op);
template <class T> Index arg_reduce(const VulkanTensor<T>& x, ArgReduceOp op, std::size_t dim);

// sort_scan.cpp: the stable order along dim (NaN largest, as the CPU) and the running sum.
Index argsort(const FloatT& x, std::size_t dim, bool descending);
FloatT cumsum(const FloatT& x, std::size_t dim);

// matmul.cpp: tiled GEMM (matmul.comp), batched with broadcasting over leading dims.
FloatT matmul(const FloatT& a, const FloatT& b, bool trans_a = false, bool trans_b = false);

// conv.cpp: im2col + GEMM; pool.cpp
FloatT conv2d(const FloatT& x, const FloatT& w, const FloatT* bias, const Conv2dOptions& o);
Conv2dGrads<FloatT> conv2d_backward(const FloatT& x, const FloatT& w, const FloatT& grad, bool has_bias,
                                    const Conv2dOptions& o);
MaxPoolResult<FloatT, Index> max_pool2d(const FloatT& x, const Pool2dOptions& o);
FloatT max_pool2d_backward(const FloatT& x, const FloatT& grad, const Index& indices);
FloatT avg_pool2d(const FloatT& x, const Pool2dOptions& o);
FloatT avg_pool2d_backward(const FloatT& x, const FloatT& grad, const Pool2dOptions& o);
FloatT adaptive_avg_pool2d(const FloatT& x, std::array<int64_t, 2> out_hw);
FloatT adaptive_avg_pool2d_backward(const FloatT& x, const FloatT& grad);

// fft.cpp: VkFFT (see FftOp for layouts and scaling)
FloatT fft(const FloatT& x, FftOp op, int64_t n);

}  // namespace ember::vk
