#pragma once
// The runtime's backend-specific functions, one row each: the single list that the BackendRuntime interface
// (backend_runtime.hpp), its implementation RuntimeImpl<B> (runtime_impl.hpp), the dispatch functions of
// tensor_ops.hpp / sequential.hpp / optimizer.hpp (dispatch.cpp) and the explicit instantiations at the end of each
// ops file derive from. Adding an op: a row in the group of the file that defines its template, nothing else.
//
// X(Result, name, (params), (args), from): `from` is the argument whose runtime runs the call (the first handle).
// Grouped by the file that defines the templates, so each file instantiates its own group.

// creation.cpp
#define EMBER_RUNTIME_CREATION_OPS(X)                                                                         \
  X(DynTensor, from_data, (const DynDevice& dev, const TensorData& data), (dev, data), dev)                    \
  X(DynTensor, full, (const DynDevice& dev, DType dtype, const Shape& shape, double value),                    \
    (dev, dtype, shape, value), dev)                                                                           \
  X(TensorData, to_data, (const DynTensor& t), (t), t)                                                         \
  X(DType, dtype, (const DynTensor& t), (t), t)                                                                \
  X(Shape, shape, (const DynTensor& t), (t), t)                                                                \
  X(DynDevice, device, (const DynTensor& t), (t), t)                                                           \
  X(DynTensor, cast, (const DynTensor& x, DType to), (x, to), x)                                               \
  X(const void*, data_ptr, (const DynTensor& t), (t), t) /* CPU storage, read-only; UnsupportedError elsewhere */

// ops_math.cpp
#define EMBER_RUNTIME_MATH_OPS(X)                                                                             \
  X(DynTensor, unary, (const DynTensor& x, UnaryOp op), (x, op), x)                                           \
  X(DynTensor, binary, (const DynTensor& a, const DynTensor& b, BinaryOp op), (a, b, op), a)                  \
  X(DynTensor, scalar, (const DynTensor& x, ScalarOp op, double s), (x, op, s), x)                            \
  X(DynTensor, compare, (const DynTensor& a, const DynTensor& b, CompareOp op), (a, b, op), a)                \
  X(DynTensor, compare_scalar, (const DynTensor& x, CompareOp op, double s), (x, op, s), x)                   \
  X(DynTensor, predicate, (const DynTensor& x, PredicateOp op), (x, op), x) /* Float -> Bool: isnan, isinf */  \
  X(DynTensor, logical, (const DynTensor& a, const DynTensor& b, LogicOp op), (a, b, op), a)                  \
  X(DynTensor, logical_not, (const DynTensor& x), (x), x)                                                     \
  X(DynTensor, where, (const DynTensor& cond, const DynTensor& a, const DynTensor& b), (cond, a, b), a)       \
  X(DynTensor, reduce, (const DynTensor& x, ReduceOp op, int64_t dim, bool keepdim), (x, op, dim, keepdim), x) \
  X(DynTensor, reduce_all, (const DynTensor& x, ReduceOp op), (x, op), x)                                     \
  X(DynTensor, arg_reduce, (const DynTensor& x, ArgReduceOp op, int64_t dim, bool keepdim),                   \
    (x, op, dim, keepdim), x)                                                                                  \
  X(DynTensor, matmul, (const DynTensor& a, const DynTensor& b), (a, b), a)                                   \
  X(DynTensor, softmax, (const DynTensor& x, int64_t dim, bool log), (x, dim, log), x)

// ops_nn.cpp
#define EMBER_RUNTIME_NN_OPS(X)                                                                               \
  X(DynTensor, conv2d, (const DynTensor& x, const DynTensor& w, const DynTensor* bias, const Conv2dOptions& o), \
    (x, w, bias, o), x)                                                                                        \
  X(DynTensor, max_pool2d, (const DynTensor& x, const Pool2dOptions& o), (x, o), x)                           \
  X(DynTensor, avg_pool2d, (const DynTensor& x, const Pool2dOptions& o), (x, o), x)                           \
  X(DynTensor, cross_entropy, (const DynTensor& logits, const DynTensor& targets, nn::Reduction r),           \
    (logits, targets, r), logits)                                                                              \
  X(DynTensor, mse_loss, (const DynTensor& input, const DynTensor& target, nn::Reduction r),                  \
    (input, target, r), input)                                                                                 \
  X(DynTensor, dropout, (const DynTensor& x, double p), (x, p), x) /* training mode; ember's global generator */

// ops_layout.cpp
#define EMBER_RUNTIME_LAYOUT_OPS(X)                                                                           \
  X(DynTensor, reshape, (const DynTensor& x, const std::vector<int64_t>& dims), (x, dims), x)                 \
  X(DynTensor, permute, (const DynTensor& x, const std::vector<int64_t>& axes), (x, axes), x)                 \
  X(DynTensor, slice, (const DynTensor& x, const std::vector<checks::SliceArg>& ranges), (x, ranges), x)      \
  X(DynTensor, select, (const DynTensor& x, int64_t dim, int64_t index), (x, dim, index), x)                  \
  X(DynTensor, cat, (const std::vector<const DynTensor*>& xs, int64_t dim), (xs, dim), xs)                    \
  X(DynTensor, index_select, (const DynTensor& x, int64_t dim, const DynTensor& indices), (x, dim, indices), x) \
  X(DynTensor, gather, (const DynTensor& x, int64_t dim, const DynTensor& indices), (x, dim, indices), x)

// ops_fft.cpp
#define EMBER_RUNTIME_FFT_OPS(X) \
  X(DynTensor, fft, (const DynTensor& x, FftOp op, int64_t n, int64_t dim, FftNorm norm), (x, op, n, dim, norm), x)

// autograd.cpp
#define EMBER_RUNTIME_AUTOGRAD_OPS(X)                                                                         \
  X(DynTensor, set_requires_grad, (const DynTensor& x, bool on), (x, on), x)                                  \
  X(bool, requires_grad, (const DynTensor& x), (x), x)                                                        \
  X(DynTensor, detach, (const DynTensor& x), (x), x)                                                          \
  X(DynGrads, backward, (const DynTensor& x, const DynTensor* grad, bool retain_graph, bool accumulate),        \
    (x, grad, retain_graph, accumulate), x)                                                                    \
  X(std::optional<DynTensor>, grad, (const DynGrads& grads, const DynTensor& x), (grads, x), grads)           \
  X(std::vector<std::optional<DynTensor>>, autograd_grad,                                                     \
    (const std::vector<const DynTensor*>& outputs, const std::vector<const DynTensor*>& grad_outputs,         \
     const std::vector<const DynTensor*>& inputs, bool retain_graph),                                         \
    (outputs, grad_outputs, inputs, retain_graph), outputs)                                                    \
  X(std::optional<DynTensor>, leaf_grad, (const DynTensor& x), (x), x)                                        \
  X(void, set_leaf_grad, (const DynTensor& x, const DynTensor* grad), (x, grad), x)                           \
  X(bool, is_leaf, (const DynTensor& x), (x), x)

// inplace.cpp
#define EMBER_RUNTIME_INPLACE_OPS(X)                                                                          \
  X(DynTensor, inplace, (const DynTensor& self, const DynTensor& other, InplaceOp op), (self, other, op), self) \
  X(DynTensor, inplace_scalar, (const DynTensor& self, InplaceOp op, double s), (self, op, s), self)

// sequential.cpp
#define EMBER_RUNTIME_SEQUENTIAL_OPS(X)                                                                       \
  X(std::shared_ptr<ModuleState>, make_sequential, (const DynDevice& dev, const std::vector<LayerSpec>& specs), \
    (dev, specs), dev)                                                                                         \
  X(DynTensor, forward, (ModuleState & m, const DynTensor& x, bool train), (m, x, train), m)                  \
  X(std::vector<ParamDesc>, parameters, (const ModuleState& m), (m), m)                                       \
  X(DynTensor, param_value, (const ModuleState& m, std::size_t index), (m, index), m)                         \
  X(Record, module_record, (const ModuleState& m), (m), m)                                                    \
  X(LoadReport, load_module_record, (ModuleState & m, const Record& r, LoadMode mode), (m, r, mode), m)         \
  X(void, set_param_values, (ModuleState & m, const std::vector<DynTensor>& values), (m, values), m)

// optimizer.cpp
#define EMBER_RUNTIME_OPTIMIZER_OPS(X)                                                                        \
  X(std::shared_ptr<OptimizerState>, make_optimizer, (std::shared_ptr<ModuleState> module, const OptimSpec& spec), \
    (std::move(module), spec), *module)                                                                        \
  X(void, accumulate, (OptimizerState & o, const DynGrads& grads), (o, grads), o)                             \
  X(void, step, (OptimizerState & o, const DynGrads* grads), (o, grads), o)                                   \
  X(void, zero_grad, (OptimizerState & o), (o), o)                                                            \
  X(void, reset, (OptimizerState & o), (o), o)                                                                \
  X(Record, optimizer_record, (OptimizerState & o), (o), o)                                                   \
  X(void, load_optimizer_record, (OptimizerState & o, const Record& r), (o, r), o)

// param_optimizer.cpp
#define EMBER_RUNTIME_PARAM_OPTIMIZER_OPS(X)                                                                  \
  X(DynGroupOptimizer, make_group_optimizer, (const DynTensor& like, const OptimSpec& spec), (like, spec), like) \
  X(void, group_step, (DynGroupOptimizer & g, std::vector<GroupParam>& params, double lr), (g, params, lr), g)  \
  X(Record, group_state, (DynGroupOptimizer & g), (g), g)                                                     \
  X(void, group_load_state, (DynGroupOptimizer & g, const Record& r, const std::vector<GroupParam>& params),  \
    (g, r, params), g)                                                                                         \
  X(void, group_reset, (DynGroupOptimizer & g), (g), g)

// ops_engine.cpp (issue 11: the typed engine's remaining ops)
#define EMBER_RUNTIME_ENGINE_OPS(X)                                                                           \
  X(DynTensor, expand, (const DynTensor& x, const std::vector<int64_t>& shape), (x, shape), x)                 \
  X(DynTensor, flip, (const DynTensor& x, const std::vector<int64_t>& dims), (x, dims), x)                    \
  X(DynTensor, repeat, (const DynTensor& x, const std::vector<int64_t>& times), (x, times), x)                \
  X(DynTensor, scatter_add, (const DynTensor& x, int64_t dim, const DynTensor& indices, const DynTensor& values), \
    (x, dim, indices, values), x)                                                                              \
  X(DynTensor, masked_fill, (const DynTensor& x, const DynTensor& mask, double value), (x, mask, value), x)    \
  X(DynTensor, var, (const DynTensor& x, int64_t dim, int64_t correction, bool keepdim),                      \
    (x, dim, correction, keepdim), x)                                                                          \
  X(DynTensor, adaptive_avg_pool2d, (const DynTensor& x, int64_t out_h, int64_t out_w), (x, out_h, out_w), x) \
  X(DynTensor, huber_loss, (const DynTensor& input, const DynTensor& target, nn::Reduction r, double delta),   \
    (input, target, r, delta), input)                                                                          \
  X(DynTensor, bce_with_logits, (const DynTensor& logits, const DynTensor& targets, nn::Reduction r),         \
    (logits, targets, r), logits)

// ops_norms.cpp (issue 13: ConvTranspose2d's functional form)
#define EMBER_RUNTIME_NORMS_OPS(X)                                                                            \
  X(DynTensor, conv_transpose2d,                                                                              \
    (const DynTensor& x, const DynTensor& w, const DynTensor* bias, const ConvTranspose2dOptions& o),          \
    (x, w, bias, o), x)
// rnn.cpp (issue 13, h-rnn): ember_module_forward_rnn -> {output, h_n[, c_n]}
#define EMBER_RUNTIME_RNN_OPS(X)                                                                              \
  X(std::vector<DynTensor>, forward_rnn,                                                                      \
    (ModuleState & m, const DynTensor& x, const DynTensor* h0, const DynTensor* c0,                          \
     const std::vector<int64_t>& lengths, bool train),                                                        \
    (m, x, h0, c0, lengths, train), m)
// ops_sort.cpp (issue 13: sort, scan and mask ops)
#define EMBER_RUNTIME_SORT_OPS(X)                                                                             \
  X(DynTensor, argsort, (const DynTensor& x, int64_t dim, bool descending), (x, dim, descending), x)          \
  X(DynTensor, topk_indices, (const DynTensor& x, int64_t k, int64_t dim, bool largest), (x, k, dim, largest), x) \
  X(DynTensor, cumsum, (const DynTensor& x, int64_t dim), (x, dim), x)                                        \
  X(DynTensor, triangle, (const DynTensor& x, int64_t diagonal, bool upper), (x, diagonal, upper), x)         \
  X(DynTensor, masked_select, (const DynTensor& x, const DynTensor& mask), (x, mask), x)                      \
  X(DynTensor, one_hot, (const DynTensor& x, int64_t num_classes), (x, num_classes), x)
// ops_shape.cpp (issue 13: the composed shape ops of engine/tensor/shape_ops.hpp and einsum.hpp)
#define EMBER_RUNTIME_SHAPE_OPS(X)                                                                            \
  X(DynTensor, pad, (const DynTensor& x, const std::vector<int64_t>& pads, PadMode mode, double value),        \
    (x, pads, mode, value), x)                                                                                 \
  X(DynTensor, slice_step, (const DynTensor& x, const std::vector<StepSlice>& slices), (x, slices), x)         \
  X(DynTensor, baddbmm, (const DynTensor& input, const DynTensor& b1, const DynTensor& b2, double beta,        \
    double alpha), (input, b1, b2, beta, alpha), input)                                                        \
  X(DynTensor, einsum, (const std::string& equation, const std::vector<const DynTensor*>& xs), (equation, xs), xs) \
  X(DynTensor, logsumexp, (const DynTensor& x, const std::vector<int64_t>& dims, bool keepdim),               \
    (x, dims, keepdim), x)                                                                                     \
  X(DynTensor, std_dev, (const DynTensor& x, const std::vector<int64_t>& dims, double correction, bool keepdim), \
    (x, dims, correction, keepdim), x)                                                                         \
  X(DynTensor, interpolate, (const DynTensor& x, const InterpolateOptions& options), (x, options), x)
// ops_sdpa.cpp (issue 13, h-flash): scale NaN takes the default 1/sqrt(E)
#define EMBER_RUNTIME_ATTENTION_OPS(X)                                                                        \
  X(DynTensor, scaled_dot_product_attention,                                                                 \
    (const DynTensor& q, const DynTensor& k, const DynTensor& v, const DynTensor* bias, bool is_causal,         \
     double scale),                                                                                            \
    (q, k, v, bias, is_causal, scale), q)
// attention.cpp (issue 13, h-mha): the multi-operand forwards of multihead attention and the transformer layers.
// Masks are NULL or bool / float tensors; forward_attention -> {output[, weights]}.
#define EMBER_RUNTIME_MHA_OPS(X)                                                                        \
  X(std::vector<DynTensor>, forward_attention,                                                                \
    (ModuleState & m, const DynTensor& q, const DynTensor& k, const DynTensor& v,                             \
     const DynTensor* key_padding_mask, const DynTensor* attn_mask, bool need_weights, bool average, bool train), \
    (m, q, k, v, key_padding_mask, attn_mask, need_weights, average, train), m)                               \
  X(DynTensor, forward_encoder,                                                                               \
    (ModuleState & m, const DynTensor& src, const DynTensor* mask, const DynTensor* key_padding_mask, bool train), \
    (m, src, mask, key_padding_mask, train), m)                                                               \
  X(DynTensor, forward_decoder,                                                                               \
    (ModuleState & m, const DynTensor& tgt, const DynTensor& memory, const DynTensor* tgt_mask,               \
     const DynTensor* memory_mask, const DynTensor* tgt_key_padding_mask,                                     \
     const DynTensor* memory_key_padding_mask, bool train),                                                   \
    (m, tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask, train), m)

// ops_linear.cpp (issues 15/19, h-ortmlp): act(x @ op(w) + bias), op(w) = w^T when trans_w; fused under no_grad
#define EMBER_RUNTIME_LINEAR_OPS(X)                                                                           \
  X(DynTensor, linear, (const DynTensor& x, const DynTensor& w, const DynTensor* bias, bool trans_w, bool relu), \
    (x, w, bias, trans_w, relu), x)

// ops_adam.cpp (issue 14): one Adam / AdamW update's new param and moments (the caller copies them in place)
#define EMBER_RUNTIME_ADAM_OPS(X)                                                                             \
  X(std::vector<DynTensor>, adam_step,                                                                        \
    (const DynTensor& param, const DynTensor& grad, const DynTensor& exp_avg, const DynTensor& exp_avg_sq,    \
     const AdamStepArgs& a),                                                                                  \
    (param, grad, exp_avg, exp_avg_sq, a), param)

// ops_conv_act.cpp (issue 19, h-ortconv): relu(conv2d(x, w, bias, o)) and its max_pool2d values; fused under no_grad
#define EMBER_RUNTIME_CONV_ACT_OPS(X)                                                                         \
  X(DynTensor, conv2d_relu, (const DynTensor& x, const DynTensor& w, const DynTensor* bias, const Conv2dOptions& o), \
    (x, w, bias, o), x)                                                                                        \
  X(DynTensor, conv2d_relu_max_pool,                                                                          \
    (const DynTensor& x, const DynTensor& w, const DynTensor* bias, const Conv2dOptions& o,                   \
     const Pool2dOptions& pool),                                                                              \
    (x, w, bias, o, pool), x)

#define EMBER_RUNTIME_OPS(X)        \
  EMBER_RUNTIME_ATTENTION_OPS(X)    \
  EMBER_RUNTIME_CREATION_OPS(X)     \
  EMBER_RUNTIME_MATH_OPS(X)         \
  EMBER_RUNTIME_NN_OPS(X)           \
  EMBER_RUNTIME_LAYOUT_OPS(X)       \
  EMBER_RUNTIME_FFT_OPS(X)          \
  EMBER_RUNTIME_AUTOGRAD_OPS(X)     \
  EMBER_RUNTIME_INPLACE_OPS(X)      \
  EMBER_RUNTIME_SEQUENTIAL_OPS(X)   \
  EMBER_RUNTIME_OPTIMIZER_OPS(X)    \
  EMBER_RUNTIME_PARAM_OPTIMIZER_OPS(X) \
  EMBER_RUNTIME_ENGINE_OPS(X)       \
  EMBER_RUNTIME_NORMS_OPS(X)        \
  EMBER_RUNTIME_RNN_OPS(X)          \
  EMBER_RUNTIME_SORT_OPS(X)         \
  EMBER_RUNTIME_SHAPE_OPS(X)         \
  EMBER_RUNTIME_MHA_OPS(X)          \
  EMBER_RUNTIME_LINEAR_OPS(X)          \
  EMBER_RUNTIME_CONV_ACT_OPS(X)        \
  EMBER_RUNTIME_ADAM_OPS(X)
