/* ember.h: the stable C ABI of the Ember deep-learning engine.
 *
 * Rules that hold for every function below (each function's comment only adds to them):
 *
 *  Errors.    Every fallible function returns an ember_status; EMBER_OK (0) is success. On failure a message naming
 *             the function and the problem is stored per thread and read with ember_last_error(). No input makes
 *             Ember abort or exit the process: C++ exceptions are caught at this boundary.
 *  Handles.   Opaque pointer-sized values, never addresses: Ember does not dereference them and neither may the
 *             caller (they encode a slot and a generation). A function that returns a handle through `out` gives
 *             the caller ownership: release it with the matching ember_<object>_free. Every ember_*_free(NULL) is a
 *             no-op. Passing NULL where a handle is required gives EMBER_ERR_NULL_HANDLE; passing a handle that was
 *             already freed, a handle of another type, or a value that is not a handle gives
 *             EMBER_ERR_INVALID_HANDLE, with a message saying which. A freed handle stays recognizable as freed
 *             for the life of the process, however many handles are created after it: using or freeing it again
 *             never reaches the object of any other handle. Looking a handle up takes no lock.
 *             On failure, `*out` is set to NULL, so freeing it unconditionally is safe.
 *  Inputs.    Handles passed as inputs are borrowed: the callee never frees or keeps them beyond the call, unless
 *             said otherwise (an optimizer keeps its module alive).
 *  Structs.   Passed by pointer; the first field is `uint32_t struct_size`, set by the caller to
 *             sizeof(the struct it was compiled with) (ember_*_init functions do it). Fields are only ever appended,
 *             so an older caller's smaller struct keeps working (missing fields take their defaults). A newer
 *             caller's larger input struct is accepted when every byte past this Ember's struct is zero (the newer
 *             fields left at their defaults); otherwise it gives EMBER_ERR_INVALID_ARGUMENT naming the struct and
 *             the offset of the first non-zero byte, instead of ignoring a field this version cannot honour.
 *  Enums.     Stored as int32_t; values are explicit and append-only. Unknown values give
 *             EMBER_ERR_INVALID_ARGUMENT. Functions are only ever appended.
 *  Strings.   Output text goes to a caller buffer (buf, capacity) with the full length (without the terminating
 *             NUL) in *length; if capacity is too small the text is truncated, still NUL-terminated when
 *             capacity > 0, and EMBER_ERR_BUFFER_TOO_SMALL is returned (call again with *length + 1).
 *             Capacity 0 (buf may be NULL) is a length query: EMBER_OK with *length set, nothing written, and
 *             ember_last_error() left as it was (so the message of a failed call can be measured, then read). The
 *             same holds for every (buffer, capacity, size/count/rank) output: capacity 0 with a non-NULL size
 *             pointer returns EMBER_OK and the size needed.
 *  Threads.   Tensors are immutable values: any number of threads may use the same tensor as an op input at once.
 *             A handle must not be freed (or mutated: ember_tensor_set_requires_grad, ember_tensor_inplace*) while
 *             another thread uses it.
 *             Modules and optimizers are internally synchronized: forward may run on one module from many threads
 *             at once (eval mode always; train mode too unless the module has batch_norm layers, whose train-mode
 *             forward is serialized), and an optimizer step or a load waits for running forwards to finish.
 *             The error message and the no-grad scope are per thread.
 *  Autodiff.  Float tensors live on an autodiff backend: ops on tensors that require grad are recorded, and
 *             ember_tensor_backward turns the graph into gradients (ember_grads), consuming it;
 *             ember_tensor_backward_ex also adds them into the leaves' .grad and can keep the graph (retain_graph).
 */
#ifndef EMBER_H
#define EMBER_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#if defined(EMBER_BUILDING)
#define EMBER_API __declspec(dllexport)
#else
#define EMBER_API __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define EMBER_API __attribute__((visibility("default")))
#else
#define EMBER_API
#endif
/* The calling convention of every function and callback below, spelled out for FFI callers (C#'s
 * CallingConvention.Cdecl, LuaJIT, Rust's extern "C"): __cdecl on 32-bit Windows, where compilers may default to
 * another one (/Gz, /Gr); elsewhere there is only one C convention. */
#if defined(_WIN32) && !defined(_WIN64)
#define EMBER_CALL __cdecl
#else
#define EMBER_CALL
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define EMBER_VERSION_MAJOR 0
#define EMBER_VERSION_MINOR 1
#define EMBER_VERSION_PATCH 0
/* One number to compare (SQLite style): MAJOR * 1000000 + MINOR * 1000 + PATCH; ember_version_number() gives the
 * loaded library's. */
#define EMBER_VERSION_NUMBER 1000
/* Bumped only on an incompatible ABI change (never so far); compare with ember_abi_version() at run time. */
#define EMBER_ABI_VERSION 1
/* Largest tensor rank (number of dims) accepted anywhere in this API. Rank 0 is a scalar (shape [], one element):
 * since issue 11, full reductions and reduced losses return rank 0, as PyTorch does (they returned shape [1]). */
enum { EMBER_MAX_RANK = 8 };
/* An enum value rather than a macro so that the struct arrays it sizes stay declarable without a preprocessor
 * (LuaJIT's ffi.cdef); the self-referring macro keeps `#ifdef EMBER_MAX_RANK` true. */
#define EMBER_MAX_RANK EMBER_MAX_RANK
/* ember_tensor_slice: an end that means "to the end of the dim": INT64_MAX, spelled as a literal that FFI tools
 * (bindgen, LuaJIT) read. An unsuffixed decimal literal has the first of int, long, long long that holds it: the
 * type int64_t is on LP64 and on LLP64 / ILP32 alike. */
#define EMBER_SLICE_END 9223372036854775807

/* ================================================================ status and errors */
typedef int32_t ember_status;
enum ember_status_code {
  EMBER_OK = 0,
  EMBER_ERR_INVALID_ARGUMENT = 1, /* a bad value: negative size, unknown enum, NULL out pointer, ... */
  EMBER_ERR_NULL_HANDLE = 2,      /* a required handle was NULL */
  EMBER_ERR_SHAPE = 3,            /* incompatible or invalid shapes */
  EMBER_ERR_DTYPE = 4,            /* a tensor of the wrong dtype or kind for the op */
  EMBER_ERR_INDEX = 5,            /* a dim or an index out of range */
  EMBER_ERR_OUT_OF_MEMORY = 6,
  EMBER_ERR_IO = 7,               /* the operating system refused to read or write a file */
  EMBER_ERR_RECORD = 8,           /* a corrupt, foreign or mismatching record */
  EMBER_ERR_UNSUPPORTED = 9,      /* valid, but not available here (backend not compiled, rank too large, ...) */
  EMBER_ERR_INTERNAL = 10,        /* a bug in Ember: please report the message */
  EMBER_ERR_INVALID_HANDLE = 11,  /* a handle that was freed, or is not a handle of the expected type */
  EMBER_ERR_BUFFER_TOO_SMALL = 12, /* a caller buffer smaller than the result (the needed size is reported) */
  EMBER_ERR_DEVICE_LOST = 13       /* the GPU device was lost (VK_ERROR_DEVICE_LOST): every later call on it fails
                                      with this at once; free its handles and create or adopt the device again */
};

/* The message of the last failed call on this thread ("" if none). Valid until the next failing call on this
 * thread; successful calls leave it unchanged. Never NULL. Thread-safe. */
EMBER_API const char* EMBER_CALL ember_last_error(void);
/* Forgets this thread's last error message. */
EMBER_API void EMBER_CALL ember_clear_error(void);
/* "EMBER_OK", "EMBER_ERR_SHAPE", ...; "EMBER_ERR_UNKNOWN" for other values. Static storage; thread-safe. */
EMBER_API const char* EMBER_CALL ember_status_name(ember_status status);
/* "0.1.0" (static storage). */
EMBER_API const char* EMBER_CALL ember_version(void);
/* EMBER_ABI_VERSION of the library actually loaded. */
EMBER_API int32_t EMBER_CALL ember_abi_version(void);
/* Seeds the process-wide generator used for parameter initialization and dropout masks. Thread-safe. */
EMBER_API ember_status EMBER_CALL ember_seed(uint64_t seed);
/* Threads used by CPU kernels (and OpenBLAS); n >= 1. Call it before running work, not concurrently with it. */
EMBER_API ember_status EMBER_CALL ember_set_num_threads(int32_t n);

/* ================================================================ enums (all stored as int32_t)
 * Each enum has an int32_t typedef, <enum>_t, that the signatures and struct fields taking it use: it names the
 * enum for readers and tools (bindgen, ember_api.json) while the type stays int32_t, so C and C++ callers passing
 * an int keep compiling and the ABI is unchanged. The typedef cannot share the enum's name: in C++ (and in
 * bindgen's output) an enum tag and a typedef of another type under one name clash. */
enum ember_dtype { /* element types at the host boundary; the values match Ember's record files */
  EMBER_DTYPE_F32 = 0, EMBER_DTYPE_F64 = 1, EMBER_DTYPE_F16 = 2, EMBER_DTYPE_I32 = 3,
  EMBER_DTYPE_I64 = 4, EMBER_DTYPE_U8 = 5, EMBER_DTYPE_BOOL = 6, EMBER_DTYPE_I16 = 7
};
typedef int32_t ember_dtype_t;
enum ember_backend { EMBER_BACKEND_CPU = 0, EMBER_BACKEND_VULKAN = 1, EMBER_BACKEND_CUDA = 2 };
typedef int32_t ember_backend_t;
enum ember_unary_op { /* float tensors: all; int tensors: NEG, ABS, SIGN */
  EMBER_UNARY_NEG = 0, EMBER_UNARY_ABS = 1, EMBER_UNARY_EXP = 2, EMBER_UNARY_LOG = 3, EMBER_UNARY_LOG1P = 4,
  EMBER_UNARY_SQRT = 5, EMBER_UNARY_SIN = 6, EMBER_UNARY_COS = 7, EMBER_UNARY_TANH = 8, EMBER_UNARY_SIGMOID = 9,
  EMBER_UNARY_ERF = 10, EMBER_UNARY_RECIP = 11, EMBER_UNARY_SIGN = 12, EMBER_UNARY_FLOOR = 13,
  EMBER_UNARY_CEIL = 14, EMBER_UNARY_ROUND = 15, EMBER_UNARY_RELU = 16, EMBER_UNARY_GELU = 17,
  EMBER_UNARY_GELU_TANH = 18, EMBER_UNARY_ASIN = 19, EMBER_UNARY_ACOS = 20, EMBER_UNARY_ATAN = 21,
  EMBER_UNARY_SINH = 22, EMBER_UNARY_COSH = 23, EMBER_UNARY_ASINH = 24, EMBER_UNARY_ACOSH = 25,
  EMBER_UNARY_ATANH = 26
};
typedef int32_t ember_unary_op_t;
enum ember_binary_op { /* NumPy broadcasting; both operands of the same kind (float or int) */
  EMBER_BINARY_ADD = 0, EMBER_BINARY_SUB = 1, EMBER_BINARY_MUL = 2, EMBER_BINARY_DIV = 3, EMBER_BINARY_POW = 4,
  EMBER_BINARY_MAXIMUM = 5, EMBER_BINARY_MINIMUM = 6,
  EMBER_BINARY_ATAN2 = 7,    /* float only */
  EMBER_BINARY_REMAINDER = 8 /* a - floor(a / b) * b: the sign of b, like torch.remainder; int: b == 0 is an error */
};
typedef int32_t ember_binary_op_t;
enum ember_scalar_op { /* x (op) s; RSUB is s - x, RDIV is s / x */
  EMBER_SCALAR_ADD = 0, EMBER_SCALAR_SUB = 1, EMBER_SCALAR_MUL = 2, EMBER_SCALAR_DIV = 3, EMBER_SCALAR_POW = 4,
  EMBER_SCALAR_CLAMP_MIN = 5, EMBER_SCALAR_CLAMP_MAX = 6, EMBER_SCALAR_RSUB = 7, EMBER_SCALAR_RDIV = 8,
  EMBER_SCALAR_REMAINDER = 9 /* x - floor(x / s) * s, like torch.remainder */
};
typedef int32_t ember_scalar_op_t;
enum ember_compare_op { EMBER_CMP_EQ = 0, EMBER_CMP_NE = 1, EMBER_CMP_LT = 2, EMBER_CMP_LE = 3, EMBER_CMP_GT = 4,
                        EMBER_CMP_GE = 5 };
typedef int32_t ember_compare_op_t;
enum ember_predicate_op { /* float tensor -> bool tensor (ember_tensor_predicate) */
  EMBER_PREDICATE_ISNAN = 0, EMBER_PREDICATE_ISINF = 1
};
typedef int32_t ember_predicate_op_t;
enum ember_logic_op { EMBER_LOGIC_AND = 0, EMBER_LOGIC_OR = 1, EMBER_LOGIC_XOR = 2 };
typedef int32_t ember_logic_op_t;
enum ember_reduce_op { EMBER_REDUCE_SUM = 0, EMBER_REDUCE_MEAN = 1, EMBER_REDUCE_PROD = 2, EMBER_REDUCE_MAX = 3,
                       EMBER_REDUCE_MIN = 4 };
typedef int32_t ember_reduce_op_t;
enum ember_distribution { /* ember_tensor_random(a, b): UNIFORM [a, b); NORMAL mean a, std b; BERNOULLI p = a */
  EMBER_DIST_UNIFORM = 0, EMBER_DIST_NORMAL = 1, EMBER_DIST_BERNOULLI = 2
};
typedef int32_t ember_distribution_t;
enum ember_reduction { EMBER_REDUCTION_MEAN = 0, EMBER_REDUCTION_SUM = 1 };
typedef int32_t ember_reduction_t;

/* ================================================================ devices */
typedef struct ember_device ember_device;

typedef struct ember_backend_info {
  uint32_t struct_size;
  ember_backend_t backend; /* ember_backend */
  int32_t compiled;     /* 1 when this library was built with it */
  int32_t usable;       /* 1 when it can run here (a device is present) */
  int32_t device_count; /* devices usable here */
  ember_dtype_t float_dtype; /* dtype float tensors are stored in on this backend (CPU: F32) */
  const char* name;     /* "cpu", "vulkan", "cuda" (static storage) */
} ember_backend_info;

/* Fills *info for `backend` (any ember_backend value, compiled or not). Thread-safe. */
EMBER_API ember_status EMBER_CALL ember_backend_query(ember_backend_t backend, ember_backend_info* info);
/* The backends compiled in, into backends[0..capacity); *count = how many there are (BUFFER_TOO_SMALL when more
 * than capacity). backends may be NULL when capacity is 0. Thread-safe. */
EMBER_API ember_status EMBER_CALL ember_backend_list(ember_backend_t* backends, size_t capacity, size_t* count);
/* A device of `backend` (index < device_count). Functions taking a `const ember_device*` accept NULL for the
 * default device (CPU 0). Devices are small values: free them any time; tensors do not reference them.
 * Vulkan: index is the physical device in vkEnumeratePhysicalDevices order; the first create of an index opens it
 * (EMBER_ERR_UNSUPPORTED, with the reason, when it cannot run Ember) and later creates share it. Ops need all their
 * tensors on one device. A device adopted from the host (ember_vulkan_device_adopt) reports index -1. */
EMBER_API ember_status EMBER_CALL ember_device_create(ember_backend_t backend, int32_t index, ember_device** out);
EMBER_API ember_status EMBER_CALL ember_device_info(const ember_device* device, ember_backend_t* backend,
                                                    int32_t* index);
EMBER_API ember_status EMBER_CALL ember_device_free(ember_device* device);

/* ================================================================ tensors */
typedef struct ember_tensor ember_tensor;

/* A tensor holding a copy of `data`: row-major elements of `dtype`, data_bytes == numel * size of dtype, shape
 * [rank] with 0 <= rank <= EMBER_MAX_RANK and dims >= 0 (rank 0: a scalar, shape may be NULL). Float dtypes give a
 * float tensor: EMBER_DTYPE_F64 computes in float64 on the CPU (EMBER_ERR_UNSUPPORTED on GPU backends), the other
 * float dtypes in the backend's float dtype (F32); integer dtypes an int tensor (I64 on CPU), BOOL a bool tensor (any
 * nonzero byte is true). Ops mixing F32 and F64 float tensors compute in F64 (PyTorch's type promotion). */
EMBER_API ember_status EMBER_CALL ember_tensor_from_data(const ember_device* device, ember_dtype_t dtype,
                                                         const void* data, size_t data_bytes, const int64_t* shape,
                                                         size_t rank, ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_tensor_full(const ember_device* device, ember_dtype_t dtype,
                                                    const int64_t* shape, size_t rank, double value,
                                                    ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_tensor_zeros(const ember_device* device, ember_dtype_t dtype,
                                                     const int64_t* shape, size_t rank, ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_tensor_ones(const ember_device* device, ember_dtype_t dtype,
                                                    const int64_t* shape, size_t rank, ember_tensor** out);
/* [start, end) by step (step != 0), rank 1, of `dtype`. */
EMBER_API ember_status EMBER_CALL ember_tensor_arange(const ember_device* device, ember_dtype_t dtype, int64_t start,
                                                      int64_t end, int64_t step, ember_tensor** out);
/* A float tensor sampled from `distribution` (ember_distribution) with its own generator seeded by `seed`: the
 * same seed gives the same values on every platform. Independent of ember_seed. */
EMBER_API ember_status EMBER_CALL ember_tensor_random(const ember_device* device, ember_distribution_t distribution,
                                                      double a, double b, uint64_t seed, const int64_t* shape,
                                                      size_t rank, ember_tensor** out);
/* A new handle to the same (immutable) tensor; cheap. It shares the value's leaf identity (.grad) but not the
 * handle: an in-place update of one handle (ember_tensor_inplace) is not seen through the other. */
EMBER_API ember_status EMBER_CALL ember_tensor_clone(const ember_tensor* tensor, ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_tensor_free(ember_tensor* tensor);

/* The dtype the tensor is stored in (F32, F64, I64 or BOOL on CPU). */
EMBER_API ember_status EMBER_CALL ember_tensor_dtype(const ember_tensor* tensor, ember_dtype_t* dtype);
EMBER_API ember_status EMBER_CALL ember_tensor_rank(const ember_tensor* tensor, size_t* rank);
/* dims[0..rank) (BUFFER_TOO_SMALL when capacity < rank; dims may be NULL with capacity 0); *rank always set. */
EMBER_API ember_status EMBER_CALL ember_tensor_shape(const ember_tensor* tensor, int64_t* dims, size_t capacity,
                                                     size_t* rank);
EMBER_API ember_status EMBER_CALL ember_tensor_numel(const ember_tensor* tensor, int64_t* numel);
EMBER_API ember_status EMBER_CALL ember_tensor_device(const ember_tensor* tensor, ember_device** out);
/* Copies the elements, converted to `dtype`, row-major into buffer (capacity bytes). *written (may be NULL) is the
 * byte count needed; BUFFER_TOO_SMALL (nothing written) when capacity is less. Float to int truncates toward 0. */
EMBER_API ember_status EMBER_CALL ember_tensor_copy_to(const ember_tensor* tensor, ember_dtype_t dtype, void* buffer,
                                                       size_t capacity, size_t* written);
/* The value of a one-element tensor as a double. */
EMBER_API ember_status EMBER_CALL ember_tensor_item(const ember_tensor* tensor, double* value);

/* ================================================================ ops: every result is a new tensor */
EMBER_API ember_status EMBER_CALL ember_tensor_unary(const ember_tensor* x, ember_unary_op_t op, ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_tensor_binary(const ember_tensor* a, const ember_tensor* b,
                                                      ember_binary_op_t op, ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_tensor_add(const ember_tensor* a, const ember_tensor* b, ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_tensor_sub(const ember_tensor* a, const ember_tensor* b, ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_tensor_mul(const ember_tensor* a, const ember_tensor* b, ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_tensor_div(const ember_tensor* a, const ember_tensor* b, ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_tensor_scalar(const ember_tensor* x, ember_scalar_op_t op, double s,
                                                      ember_tensor** out);
/* Comparisons give bool tensors; operands float or int (same kind), or both bool for EQ / NE. */
EMBER_API ember_status EMBER_CALL ember_tensor_compare(const ember_tensor* a, const ember_tensor* b,
                                                       ember_compare_op_t op, ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_tensor_compare_scalar(const ember_tensor* x, ember_compare_op_t op, double s,
                                                              ember_tensor** out);
/* A bool tensor of x's shape testing each element of the float tensor x (ember_predicate_op: ISNAN, ISINF). */
EMBER_API ember_status EMBER_CALL ember_tensor_predicate(const ember_tensor* x, ember_predicate_op_t op,
                                                         ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_tensor_logical(const ember_tensor* a, const ember_tensor* b,
                                                       ember_logic_op_t op, ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_tensor_logical_not(const ember_tensor* x, ember_tensor** out);
/* cond ? a : b elementwise, broadcasting all three; cond bool, a and b of the same kind. */
EMBER_API ember_status EMBER_CALL ember_tensor_where(const ember_tensor* cond, const ember_tensor* a,
                                                     const ember_tensor* b, ember_tensor** out);
/* Along dim (negative counts from the end); keepdim 0 drops the dim (a rank-1 input gives rank 0, as PyTorch; it gave
 * shape [1] before issue 11). A rank-0 input takes dim 0 or -1 and gives rank 0. */
EMBER_API ember_status EMBER_CALL ember_tensor_reduce(const ember_tensor* x, ember_reduce_op_t op, int64_t dim,
                                                      int32_t keepdim, ember_tensor** out);
/* Over all elements: rank 0 (a scalar, as PyTorch; shape [1] before issue 11). */
EMBER_API ember_status EMBER_CALL ember_tensor_reduce_all(const ember_tensor* x, ember_reduce_op_t op,
                                                          ember_tensor** out);
/* Int (I64) indices of the max / min along dim. */
EMBER_API ember_status EMBER_CALL ember_tensor_argmax(const ember_tensor* x, int64_t dim, int32_t keepdim,
                                                      ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_tensor_argmin(const ember_tensor* x, int64_t dim, int32_t keepdim,
                                                      ember_tensor** out);
/* Float, rank >= 2 both; batch dims broadcast (the lower rank gets leading 1s). */
EMBER_API ember_status EMBER_CALL ember_tensor_matmul(const ember_tensor* a, const ember_tensor* b, ember_tensor** out);
/* shape may hold one -1 (inferred); rank 0 (shape NULL) makes a one-element tensor a scalar. */
EMBER_API ember_status EMBER_CALL ember_tensor_reshape(const ember_tensor* x, const int64_t* shape, size_t rank,
                                                       ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_tensor_permute(const ember_tensor* x, const int64_t* axes, size_t naxes,
                                                       ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_tensor_transpose(const ember_tensor* x, int64_t dim0, int64_t dim1,
                                                         ember_tensor** out);
/* Python-style ranges for the leading n dims: starts[i]..ends[i] (negatives count from the end, bounds clamp,
 * EMBER_SLICE_END = to the end); n <= rank, later dims are kept whole. */
EMBER_API ember_status EMBER_CALL ember_tensor_slice(const ember_tensor* x, const int64_t* starts, const int64_t* ends,
                                                     size_t n, ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_tensor_cat(const ember_tensor* const* xs, size_t n, int64_t dim,
                                                   ember_tensor** out);
/* Rows of x along dim picked by the rank-1 int tensor `indices`. */
EMBER_API ember_status EMBER_CALL ember_tensor_index_select(const ember_tensor* x, int64_t dim,
                                                            const ember_tensor* indices, ember_tensor** out);
/* torch.gather: indices (int) of the same rank as x. */
EMBER_API ember_status EMBER_CALL ember_tensor_gather(const ember_tensor* x, int64_t dim, const ember_tensor* indices,
                                                      ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_tensor_softmax(const ember_tensor* x, int64_t dim, ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_tensor_log_softmax(const ember_tensor* x, int64_t dim, ember_tensor** out);
/* To the kind of `dtype` (float dtypes: float, integer dtypes: int, BOOL: bool; != 0 is true). */
EMBER_API ember_status EMBER_CALL ember_tensor_cast(const ember_tensor* x, ember_dtype_t dtype, ember_tensor** out);

typedef struct ember_conv2d_options {
  uint32_t struct_size;
  int32_t reserved; /* 0 */
  int64_t stride[2], padding[2], dilation[2];
  int64_t groups;
} ember_conv2d_options;
typedef struct ember_pool2d_options {
  uint32_t struct_size;
  int32_t count_include_pad; /* avg pooling only (default 1) */
  int64_t kernel_size[2], stride[2], padding[2], dilation[2]; /* dilation: max pooling only */
} ember_pool2d_options;
/* PyTorch's defaults: conv stride 1, padding 0, dilation 1, groups 1; pool kernel 2x2, stride 2, padding 0. */
EMBER_API ember_status EMBER_CALL ember_conv2d_options_init(ember_conv2d_options* options);
EMBER_API ember_status EMBER_CALL ember_pool2d_options_init(ember_pool2d_options* options);
/* x [N, C_in, H, W], weight [C_out, C_in / groups, kH, kW], bias [C_out] or NULL; options NULL for defaults. */
EMBER_API ember_status EMBER_CALL ember_tensor_conv2d(const ember_tensor* x, const ember_tensor* weight,
                                                      const ember_tensor* bias, const ember_conv2d_options* options,
                                                      ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_tensor_max_pool2d(const ember_tensor* x, const ember_pool2d_options* options,
                                                          ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_tensor_avg_pool2d(const ember_tensor* x, const ember_pool2d_options* options,
                                                          ember_tensor** out);

/* Losses (PyTorch semantics), rank 0 (shape [1] before issue 11). cross_entropy: logits [N, C] float, targets [N] int class indices. */
EMBER_API ember_status EMBER_CALL ember_loss_cross_entropy(const ember_tensor* logits, const ember_tensor* targets,
                                                           ember_reduction_t reduction, ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_loss_mse(const ember_tensor* input, const ember_tensor* target,
                                                 ember_reduction_t reduction, ember_tensor** out);

/* ================================================================ autodiff */
typedef struct ember_grads ember_grads;

/* Marks a float tensor as a graph leaf whose gradient backward keeps (on != 0), or detaches it (on == 0). Changes
 * the handle in place: not concurrently with other uses of this handle. As PyTorch's requires_grad_: the result of
 * a recorded op (a non-leaf, see ember_tensor_is_leaf) already requires grad, so on != 0 leaves it as it is (still
 * a non-leaf; detach it first to make a new leaf), and on == 0 fails with EMBER_ERR_INVALID_ARGUMENT ("you can only
 * change requires_grad flags of leaf variables"; ember_tensor_detach is the way). */
EMBER_API ember_status EMBER_CALL ember_tensor_set_requires_grad(ember_tensor* tensor, int32_t on);
EMBER_API ember_status EMBER_CALL ember_tensor_requires_grad(const ember_tensor* tensor, int32_t* on);
/* The same values, cut from the graph. */
EMBER_API ember_status EMBER_CALL ember_tensor_detach(const ember_tensor* tensor, ember_tensor** out);
/* Reverse pass from `tensor`, seeded with `grad` (same shape). grad NULL is only for a one-element tensor (seeded
 * with 1); otherwise EMBER_ERR_INVALID_ARGUMENT ("grad can be implicitly created only for scalar outputs"), as
 * PyTorch. Frees the graph it runs through: a second backward through the same graph fails. Leaves' .grad are not
 * touched (ember_tensor_backward_ex does that). The caller owns *out. */
EMBER_API ember_status EMBER_CALL ember_tensor_backward(const ember_tensor* tensor, const ember_tensor* grad,
                                                        ember_grads** out);
/* The gradient of leaf `tensor` (one that required grad) in `grads`, as a new tensor that does not require grad;
 * *out is NULL (and EMBER_OK returned) when the backward pass did not reach it. */
EMBER_API ember_status EMBER_CALL ember_grads_get(const ember_grads* grads, const ember_tensor* tensor,
                                                  ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_grads_free(ember_grads* grads);
/* No-grad scopes, per thread, nestable: between enter and the matching exit nothing is recorded on this thread. */
EMBER_API ember_status EMBER_CALL ember_no_grad_enter(void);
EMBER_API ember_status EMBER_CALL ember_no_grad_exit(void);
EMBER_API ember_status EMBER_CALL ember_is_grad_enabled(int32_t* enabled);

/* ================================================================ modules */
typedef struct ember_module ember_module;
typedef struct ember_load_report ember_load_report;

enum ember_layer_kind {
  EMBER_LAYER_LINEAR = 0,       /* in_features, out_features, bias; weight stored [in, out] */
  EMBER_LAYER_CONV2D = 1,       /* in_features = in channels, out_features = out channels, kernel_size, stride,
                                   padding, dilation, groups, bias */
  EMBER_LAYER_RELU = 2,
  EMBER_LAYER_GELU = 3,         /* approximate */
  EMBER_LAYER_SIGMOID = 4,
  EMBER_LAYER_TANH = 5,
  EMBER_LAYER_THRESHOLD = 6,    /* threshold, value: y = x > threshold ? x : value */
  EMBER_LAYER_PRELU = 7,        /* in_features = num_parameters (1 or channels), init */
  EMBER_LAYER_DROPOUT = 8,      /* p; identity in eval mode */
  EMBER_LAYER_LAYER_NORM = 9,   /* in_features = normalized size (last dim), eps */
  EMBER_LAYER_EMBEDDING = 10,   /* in_features = num_embeddings, out_features = embedding_dim; int input */
  EMBER_LAYER_MAX_POOL2D = 11,  /* kernel_size, stride (0 = kernel_size), padding, dilation */
  EMBER_LAYER_AVG_POOL2D = 12,  /* kernel_size, stride (0 = kernel_size), padding, count_include_pad */
  EMBER_LAYER_FLATTEN = 13,     /* dim = start dim (1), end_dim (-1) */
  EMBER_LAYER_LEAKY_RELU = 14,  /* negative_slope */
  EMBER_LAYER_SILU = 15,
  EMBER_LAYER_SOFTMAX = 16,     /* dim (-1) */
  EMBER_LAYER_LOG_SOFTMAX = 17, /* dim (-1) */
  EMBER_LAYER_BATCH_NORM1D = 18, /* in_features = channels, eps, momentum; input [N, C] or [N, C, L] */
  EMBER_LAYER_BATCH_NORM2D = 19, /* in_features = channels, eps, momentum; input [N, C, H, W] */
  EMBER_LAYER_ADAPTIVE_AVG_POOL2D = 20, /* kernel_size = output size */
  EMBER_LAYER_GROUP_NORM = 21,  /* num_groups, in_features = num_channels, eps (1e-5), affine; input [N, C, *] */
  EMBER_LAYER_RMS_NORM = 22,    /* in_features = normalized size (last dim), eps (< 0, the default: the input dtype's
                                   machine epsilon, PyTorch's eps=None), affine = elementwise_affine */
  EMBER_LAYER_CONV_TRANSPOSE2D = 23 /* in_features = in channels, out_features = out channels, kernel_size, stride
                                       (0 = 1), padding, output_padding, dilation, groups, bias; weight
                                       [in, out / groups, kH, kW] as PyTorch's */,
  EMBER_LAYER_UPSAMPLE = 24,    /* size or scale_factor (the other 0), interpolation, align_corners (bilinear) */
  /* issue 13 (h-rnn): PyTorch 1.13's nn.LSTM / nn.GRU. in_features = input_size, out_features = hidden_size,
   * num_layers, bias, batch_first, p = dropout between layers (0 by ember_layer_init), bidirectional. Params
   * "layers.<k>.forward_dir.weight_ih" [in, gates * hidden] ... (PyTorch's weight_ih_l<k> transposed; gates in
   * PyTorch's order: LSTM i f g o, GRU r z n), "layers.<k>.reverse_dir.*" for the reverse direction.
   * ember_module_forward gives the output; ember_module_forward_rnn the final states and lengths too. */
  EMBER_LAYER_LSTM = 26,
  EMBER_LAYER_GRU = 27,
  /* issue 13 (h-mha): PyTorch 1.13's nn.MultiheadAttention: in_features = embed_dim, num_heads, p = dropout (0 by
   * ember_layer_init), bias, kdim / vdim (0 = embed_dim), batch_first. Params in PyTorch's names and layouts:
   * "in_proj_weight" [3E, E] (or "q_proj_weight" [E, E], "k_proj_weight" [E, kdim], "v_proj_weight" [E, vdim]),
   * "in_proj_bias" [3E], "out_proj.weight" [E, E] (a Linear's: stored [in, out]), "out_proj.bias". In a Sequential
   * (ember_module_forward) it is self-attention without masks; ember_module_forward_attention takes key, value,
   * masks and gives the weights. */
  EMBER_LAYER_MULTIHEAD_ATTENTION = 25,
  /* issue 13 (h-mha): nn.TransformerEncoderLayer / nn.TransformerDecoderLayer: in_features = d_model, num_heads =
   * nhead, dim_feedforward, p = dropout (0.1), activation, eps = layer_norm_eps, batch_first, norm_first. Params
   * "self_attn.*" (and "multihead_attn.*"), "linear1.*", "linear2.*", "norm1..3.gamma/beta". The encoder layer runs
   * in a Sequential without masks, ember_module_forward_encoder takes them; the decoder layer needs
   * ember_module_forward_decoder. For these three kinds ember_module_load_torch_state_dict / _to_torch_state_dict
   * use PyTorch's keys: Linear sublayers (out_proj, linear1, linear2) transposed, norms' weight/bias as gamma/beta. */
  EMBER_LAYER_TRANSFORMER_ENCODER_LAYER = 28,
  EMBER_LAYER_TRANSFORMER_DECODER_LAYER = 29
};
typedef int32_t ember_layer_kind_t;
enum ember_gelu_approximate { EMBER_GELU_NONE = 0, EMBER_GELU_TANH = 1 };
typedef int32_t ember_gelu_approximate_t;
enum ember_interpolate_mode { EMBER_INTERPOLATE_NEAREST = 0, EMBER_INTERPOLATE_BILINEAR = 1 };
typedef int32_t ember_interpolate_mode_t;
enum ember_transformer_activation { EMBER_TRANSFORMER_RELU = 0, EMBER_TRANSFORMER_GELU = 1 };
typedef int32_t ember_transformer_activation_t;
enum ember_mode { EMBER_MODE_EVAL = 0, EMBER_MODE_TRAIN = 1 };
typedef int32_t ember_mode_t;
enum ember_param_role { EMBER_PARAM_TRAINABLE = 0, EMBER_PARAM_BUFFER = 1, EMBER_PARAM_CONSTANT = 2 };
typedef int32_t ember_param_role_t;
enum ember_load_mode { EMBER_LOAD_STRICT = 0, EMBER_LOAD_PARTIAL = 1 };
typedef int32_t ember_load_mode_t;

/* One layer of a Sequential. ember_layer_init(&d, kind) sets struct_size and PyTorch's defaults; then set the
 * fields the layer kind uses (see ember_layer_kind). */
typedef struct ember_layer_desc {
  uint32_t struct_size;
  ember_layer_kind_t kind;  /* ember_layer_kind */
  int64_t in_features;
  int64_t out_features;
  int64_t kernel_size[2];   /* conv2d (1x1), max / avg pool (2x2), adaptive pool: output size (1x1) */
  int64_t stride[2];        /* 0 = default (conv: 1, pools: kernel_size) */
  int64_t padding[2];
  int64_t dilation[2];
  int64_t groups;
  int64_t dim;              /* softmax / log_softmax dim; flatten start dim */
  int64_t end_dim;          /* flatten end dim */
  double p;                 /* dropout probability (0.5) */
  double threshold;         /* threshold (0) */
  double value;             /* threshold replacement value (0) */
  double init;              /* prelu initial weight (0.25) */
  double eps;               /* layer_norm, batch_norm (1e-5) */
  double momentum;          /* batch_norm (0.1) */
  double negative_slope;    /* leaky_relu (0.01) */
  int32_t bias;             /* linear, conv2d (1) */
  ember_gelu_approximate_t approximate; /* gelu: ember_gelu_approximate (NONE) */
  int32_t count_include_pad; /* avg_pool2d (1) */
  int32_t reserved;         /* 0 */
  /* Fields of the sequence, attention and upsampling layers (appended: a caller's struct_size that ends at
   * `reserved` reads them as their defaults). */
  int64_t num_heads;         /* multihead_attention, transformer layers (1) */
  int64_t num_layers;        /* lstm, gru (1) */
  int64_t num_groups;        /* group_norm (1) */
  int64_t dim_feedforward;   /* transformer layers (2048) */
  int64_t kdim;              /* multihead_attention: key features, 0 = in_features (embed_dim) */
  int64_t vdim;              /* multihead_attention: value features, 0 = in_features */
  int64_t output_padding[2]; /* conv_transpose2d (0) */
  int64_t size[2];           /* upsample: output size (0 = use scale_factor) */
  double scale_factor[2];    /* upsample (0 = use size) */
  int32_t batch_first;       /* multihead_attention, lstm, gru, transformer layers (0) */
  int32_t bidirectional;     /* lstm, gru (0) */
  int32_t affine;            /* group_norm affine, rms_norm elementwise_affine (1) */
  int32_t norm_first;        /* transformer layers: pre-norm when 1 (0) */
  ember_interpolate_mode_t interpolation; /* upsample: ember_interpolate_mode (NEAREST) */
  int32_t align_corners;     /* upsample bilinear (0) */
  ember_transformer_activation_t activation; /* transformer layers: ember_transformer_activation (RELU) */
  int32_t reserved2;         /* 0 */
} ember_layer_desc;

typedef struct ember_param_info {
  uint32_t struct_size;
  ember_dtype_t dtype;      /* storage dtype of the param */
  ember_param_role_t role;  /* ember_param_role */
  int32_t requires_grad;
  uint64_t id;              /* stable across save/load; keys optimizer state */
  int64_t numel;
  uint32_t rank;
  uint32_t reserved;
  int64_t shape[EMBER_MAX_RANK];
} ember_param_info;

EMBER_API ember_status EMBER_CALL ember_layer_init(ember_layer_desc* desc, ember_layer_kind_t kind);
/* A Sequential of `n` layers (layers[i] read with a stride of layers[0].struct_size), parameter paths
 * "layers.<i>.<name>" like the typed nn::Sequential. Params are initialized now, in order, from the generator
 * seeded by ember_seed. Thread-safe. */
EMBER_API ember_status EMBER_CALL ember_module_sequential(const ember_device* device, const ember_layer_desc* layers,
                                                          size_t n, ember_module** out);
/* Runs the layers on x. mode: ember_mode (dropout and batch_norm differ; train-mode batch_norm updates its running
 * statistics). Safe to call from many threads at once (see Threads above). */
EMBER_API ember_status EMBER_CALL ember_module_forward(ember_module* module, const ember_tensor* x, ember_mode_t mode,
                                                       ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_module_free(ember_module* module);
/* Named parameters, in a stable order (layer order, then each layer's fields). */
EMBER_API ember_status EMBER_CALL ember_module_param_count(const ember_module* module, size_t* count);
EMBER_API ember_status EMBER_CALL ember_module_param_info(const ember_module* module, size_t index,
                                                          ember_param_info* info);
/* "layers.0.weight"; see Strings above. */
EMBER_API ember_status EMBER_CALL ember_module_param_name(const ember_module* module, size_t index, char* buf,
                                                          size_t capacity, size_t* length);
/* The current value (a leaf that requires grad when the param does: usable in a loss). It does not follow later
 * optimizer steps or loads: ask again. */
EMBER_API ember_status EMBER_CALL ember_module_param_value(const ember_module* module, size_t index,
                                                           ember_tensor** out);
/* Total elements over all params. */
EMBER_API ember_status EMBER_CALL ember_module_num_elements(const ember_module* module, int64_t* numel);

/* ================================================================ records */
typedef struct ember_record ember_record;

enum ember_recorder { EMBER_RECORDER_BINARY = 0, EMBER_RECORDER_JSON = 1, EMBER_RECORDER_COMPACT = 2 };
typedef int32_t ember_recorder_t;
enum ember_precision { /* DEFAULT: the recorder's own (COMPACT: HALF, others: FULL) */
  EMBER_PRECISION_DEFAULT = 0, EMBER_PRECISION_FULL = 1, EMBER_PRECISION_HALF = 2, EMBER_PRECISION_DOUBLE = 3
};
typedef int32_t ember_precision_t;
typedef struct ember_record_options {
  uint32_t struct_size;
  ember_recorder_t recorder; /* ember_recorder (BINARY) */
  ember_precision_t precision; /* ember_precision (DEFAULT) */
  int32_t reserved;  /* 0 */
} ember_record_options;

EMBER_API ember_status EMBER_CALL ember_record_options_init(ember_record_options* options);
/* Snapshot of a module's params (or an optimizer's state) as a record. */
EMBER_API ember_status EMBER_CALL ember_module_to_record(const ember_module* module, ember_record** out);
/* Loads `record` into the module. STRICT: any missing, unexpected or mismatching entry fails with
 * EMBER_ERR_RECORD and changes nothing; PARTIAL: loads what matches. *report (report may be NULL) receives the
 * mismatch report in both modes, also when a strict load fails. */
EMBER_API ember_status EMBER_CALL ember_module_load_record(ember_module* module, const ember_record* record,
                                                           ember_load_mode_t mode, ember_load_report** report);
/* Shorthands: to_record + record_write_file, record_read_file + load_record. options may be NULL (binary, full). */
EMBER_API ember_status EMBER_CALL ember_module_save(const ember_module* module, const char* path,
                                                    const ember_record_options* options);
EMBER_API ember_status EMBER_CALL ember_module_load(ember_module* module, const char* path, ember_load_mode_t mode,
                                                    ember_load_report** report);
/* Written atomically (temporary file + rename). */
EMBER_API ember_status EMBER_CALL ember_record_write_file(const ember_record* record, const char* path,
                                                          const ember_record_options* options);
EMBER_API ember_status EMBER_CALL ember_record_read_file(const char* path, ember_record** out);
/* The file bytes in memory: *size = bytes needed (BUFFER_TOO_SMALL, nothing written, when capacity is less). */
EMBER_API ember_status EMBER_CALL ember_record_to_bytes(const ember_record* record, const ember_record_options* options,
                                                        void* buffer, size_t capacity, size_t* size);
EMBER_API ember_status EMBER_CALL ember_record_from_bytes(const void* data, size_t size, ember_record** out);
/* Number of tensor entries. */
EMBER_API ember_status EMBER_CALL ember_record_entry_count(const ember_record* record, size_t* count);
EMBER_API ember_status EMBER_CALL ember_record_free(ember_record* record);

EMBER_API ember_status EMBER_CALL ember_load_report_counts(const ember_load_report* report, size_t* missing,
                                                           size_t* unexpected, size_t* mismatched);
/* Human-readable, one entry per line ("" when everything matched); see Strings above. */
EMBER_API ember_status EMBER_CALL ember_load_report_text(const ember_load_report* report, char* buf, size_t capacity,
                                                         size_t* length);
EMBER_API ember_status EMBER_CALL ember_load_report_free(ember_load_report* report);

/* ================================================================ optimizers */
typedef struct ember_optimizer ember_optimizer;

enum ember_optimizer_kind { EMBER_OPTIM_SGD = 0, EMBER_OPTIM_ADAM = 1, EMBER_OPTIM_ADAMW = 2 };
typedef int32_t ember_optimizer_kind_t;
typedef struct ember_optimizer_options {
  uint32_t struct_size;
  ember_optimizer_kind_t kind; /* ember_optimizer_kind */
  double lr;            /* SGD 0.01, Adam / AdamW 0.001 */
  double momentum;      /* SGD (0) */
  double dampening;     /* SGD (0) */
  double weight_decay;  /* SGD, Adam: L2 (0); AdamW: decoupled (0.01) */
  double beta1, beta2;  /* Adam, AdamW (0.9, 0.999) */
  double eps;           /* Adam, AdamW (1e-8) */
  int32_t nesterov;     /* SGD (0) */
  int32_t reserved;     /* 0 */
} ember_optimizer_options;

/* Sets struct_size and PyTorch's defaults for `kind`. */
EMBER_API ember_status EMBER_CALL ember_optimizer_options_init(ember_optimizer_options* options,
                                                               ember_optimizer_kind_t kind);
/* An optimizer over `module`'s trainable params; it keeps the module alive (freeing the module handle first is
 * fine). Steps update the module in place. */
EMBER_API ember_status EMBER_CALL ember_optimizer_create(ember_module* module, const ember_optimizer_options* options,
                                                         ember_optimizer** out);
/* Adds a backward pass's gradients (of a loss computed from this module's forward) to the pending ones. */
EMBER_API ember_status EMBER_CALL ember_optimizer_accumulate(ember_optimizer* optimizer, const ember_grads* grads);
/* One update with the pending gradients plus `grads` (may be NULL); the pending gradients are then cleared.
 * Params without a gradient are left as they are. */
EMBER_API ember_status EMBER_CALL ember_optimizer_step(ember_optimizer* optimizer, const ember_grads* grads);
/* Drops the pending gradients (PyTorch's zero_grad). */
EMBER_API ember_status EMBER_CALL ember_optimizer_zero_grad(ember_optimizer* optimizer);
/* Drops the optimizer state (moments, step counts). */
EMBER_API ember_status EMBER_CALL ember_optimizer_reset(ember_optimizer* optimizer);
EMBER_API ember_status EMBER_CALL ember_optimizer_set_lr(ember_optimizer* optimizer, double lr);
EMBER_API ember_status EMBER_CALL ember_optimizer_get_lr(const ember_optimizer* optimizer, double* lr);
/* State keyed by param id: load it after loading the module record it belongs to. A failed load changes nothing. */
EMBER_API ember_status EMBER_CALL ember_optimizer_to_record(const ember_optimizer* optimizer, ember_record** out);
EMBER_API ember_status EMBER_CALL ember_optimizer_load_record(ember_optimizer* optimizer, const ember_record* record);
EMBER_API ember_status EMBER_CALL ember_optimizer_save(const ember_optimizer* optimizer, const char* path,
                                                       const ember_record_options* options);
EMBER_API ember_status EMBER_CALL ember_optimizer_load(ember_optimizer* optimizer, const char* path);
EMBER_API ember_status EMBER_CALL ember_optimizer_free(ember_optimizer* optimizer);

/* ================================================================ Vulkan interop
 * Sharing a Vulkan device with a host application (a game engine that owns its VkInstance / VkDevice / queue).
 * No <vulkan/vulkan.h> here: dispatchable handles (VkInstance, VkPhysicalDevice, VkDevice) are passed as void*,
 * non-dispatchable ones (VkBuffer, VkSemaphore) as uint64_t, PFN_vkGetInstanceProcAddr as void*.
 * These functions exist in every build; without the Vulkan backend they return EMBER_ERR_UNSUPPORTED. A
 * `const ember_device*` here must be a Vulkan device (NULL or another backend: EMBER_ERR_INVALID_ARGUMENT).
 *
 * Synchronization uses two timeline semaphores. Ember's own (ember_vulkan_timeline_semaphore) is signalled by every
 * ember_vulkan_submit with the value it returns: the host's GPU work waits for it before reading Ember's outputs.
 * The host's (ember_vulkan_wait_semaphore): Ember's next submit waits for it on the GPU before reading the host's
 * buffers. Ember records work lazily; its outputs are complete only once a submitted value is reached. */

/* What Ember needs from a device it is handed: create the host's VkDevice with these. */
typedef struct ember_vulkan_requirements {
  uint32_t struct_size;
  uint32_t api_version;                   /* minimum VkApplicationInfo / device API version (VK_API_VERSION_1_2) */
  uint32_t queue_flags;                   /* VkQueueFlags the shared queue needs (VK_QUEUE_COMPUTE_BIT) */
  int32_t shader_int64;                   /* 1: enable VkPhysicalDeviceFeatures.shaderInt64 (int tensors) */
  int32_t timeline_semaphore;             /* 1: enable VkPhysicalDeviceVulkan12Features.timelineSemaphore */
  uint32_t device_extension_count;        /* device extensions to enable (none today) */
  const char* const* device_extensions;   /* [device_extension_count] names, static storage; NULL when none */
} ember_vulkan_requirements;

/* The host's device, for ember_vulkan_device_adopt. Ember never destroys these objects. */
/* ember_vulkan_device_desc.lock_queue / unlock_queue (named for bindings; the fields' type is unchanged). */
typedef void(EMBER_CALL* ember_vulkan_queue_lock_fn)(void* user);
typedef struct ember_vulkan_device_desc {
  uint32_t struct_size;
  void* instance;               /* VkInstance */
  void* physical_device;        /* VkPhysicalDevice */
  void* device;                 /* VkDevice, created with ember_vulkan_requirements' features */
  uint32_t queue_family;        /* a family with VK_QUEUE_COMPUTE_BIT */
  uint32_t queue_index;         /* the queue Ember submits to (shared with the host when the host uses it too) */
  void* get_instance_proc_addr; /* PFN_vkGetInstanceProcAddr the host's instance works with; NULL: the loader's */
  ember_vulkan_queue_lock_fn lock_queue;   /* called around every use of the queue by Ember (both or neither; may be NULL) */
  ember_vulkan_queue_lock_fn unlock_queue;
  void* user;                       /* passed to lock_queue / unlock_queue */
  const void* pipeline_cache_data;  /* a previous ember_vulkan_pipeline_cache_data, or NULL (mismatch: ignored) */
  size_t pipeline_cache_size;
} ember_vulkan_device_desc;

/* Fills *out (struct_size set by the caller). Needs no device. */
EMBER_API ember_status EMBER_CALL ember_vulkan_requirements_query(ember_vulkan_requirements* out);
/* A device handle running Ember on the host's VkDevice and queue. The host keeps its instance, device and queue
 * alive until every Ember handle made on this device (devices, tensors, modules, grads, optimizers) is freed; the
 * last one releases Ember's own objects on it (memory, pipelines, its semaphore), after waiting for Ember's work. */
EMBER_API ember_status EMBER_CALL ember_vulkan_device_adopt(const ember_vulkan_device_desc* desc, ember_device** out);
/* The storage of a Vulkan tensor (an autodiff tensor: its value): a VkBuffer range holding the elements row-major,
 * f32 / int64 / bool as 32-bit words (0 or 1). Valid while the tensor handle (or a handle sharing its storage)
 * lives; its contents are final once the value of the next ember_vulkan_submit is reached on Ember's timeline.
 * vk_buffer is required; offset and size may be NULL. */
EMBER_API ember_status EMBER_CALL ember_vulkan_tensor_buffer(const ember_tensor* tensor, uint64_t* vk_buffer,
                                                             uint64_t* offset, uint64_t* size);
/* A tensor over the host's VkBuffer (VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, on `device`), without a copy: numel
 * elements row-major from `offset` (a multiple of minStorageBufferOffsetAlignment). dtype: EMBER_DTYPE_F32 (float
 * tensor), EMBER_DTYPE_I64 (int), EMBER_DTYPE_BOOL (bool: 32-bit words holding 0 or 1, not bytes); others give
 * EMBER_ERR_DTYPE. Ember only reads the buffer; the host keeps it alive while the tensor and work reading it live,
 * and must not write it before that work is done (wait on Ember's timeline). */
EMBER_API ember_status EMBER_CALL ember_vulkan_tensor_wrap_buffer(const ember_device* device, uint64_t vk_buffer,
                                                                  uint64_t offset, ember_dtype_t dtype,
                                                                  const int64_t* shape, size_t rank,
                                                                  ember_tensor** out);
/* Submits everything recorded on `device`; *timeline_value is reached on Ember's timeline semaphore when it has
 * executed (the last submitted value when nothing was pending). */
EMBER_API ember_status EMBER_CALL ember_vulkan_submit(const ember_device* device, uint64_t* timeline_value);
/* Ember's timeline semaphore (VkSemaphore) on `device`: the host waits on it, never signals or destroys it. */
EMBER_API ember_status EMBER_CALL ember_vulkan_timeline_semaphore(const ember_device* device, uint64_t* semaphore);
/* Ember's next submit on `device` waits (on the GPU) until the host's timeline semaphore reaches value. */
EMBER_API ember_status EMBER_CALL ember_vulkan_wait_semaphore(const ember_device* device,
                                                              uint64_t host_timeline_semaphore, uint64_t value);
/* Blocks the calling thread until Ember's timeline reaches value (a value ember_vulkan_submit returned). */
EMBER_API ember_status EMBER_CALL ember_vulkan_host_wait(const ember_device* device, uint64_t value);
/* Submits and waits for all of Ember's work on `device`. */
EMBER_API ember_status EMBER_CALL ember_vulkan_synchronize(const ember_device* device);
/* The device's VkPipelineCache contents, to pass as pipeline_cache_data when adopting a device in a later run
 * (saves shader compilation); *size = bytes needed (BUFFER_TOO_SMALL, nothing written, when capacity is less). */
EMBER_API ember_status EMBER_CALL ember_vulkan_pipeline_cache_data(const ember_device* device, void* buffer,
                                                                   size_t capacity, size_t* size);

/* ================================================================ autograd: .grad, retain_graph, autograd.grad,
 * in-place updates (PyTorch's semantics unless said otherwise) */
typedef struct ember_backward_options {
  uint32_t struct_size;
  int32_t retain_graph; /* 0 (default): free the graph the pass runs through; != 0: keep it for another pass */
  int32_t accumulate;   /* 1 (default): add each reached leaf's gradient into that leaf's .grad (Tensor.backward) */
  int32_t reserved;     /* 0 */
} ember_backward_options;
/* Sets struct_size and the defaults (retain_graph 0, accumulate 1). */
EMBER_API ember_status EMBER_CALL ember_backward_options_init(ember_backward_options* options);
/* Tensor.backward(gradient, retain_graph): reverse pass from `tensor` seeded with `grad` (same shape; NULL only for
 * a one-element tensor, else EMBER_ERR_INVALID_ARGUMENT "grad can be implicitly created only for scalar outputs").
 * options NULL: the defaults. With accumulate, the .grad of every leaf reached becomes .grad + gradient (set when it
 * had none); nothing changes when the pass fails. *out (may be NULL) receives this pass's gradients alone, as
 * ember_tensor_backward's. Without retain_graph a second pass through the same graph fails ("already freed"); with
 * it, it gives the same gradients again. A pass through an op one of whose inputs (a leaf or a recorded result) was
 * updated in place after the op recorded it fails with EMBER_ERR_INVALID_ARGUMENT ("one of the variables needed for
 * gradient computation has been modified by an inplace operation"). Ember checks every tracked input of the op,
 * also one the op's gradient does not read (PyTorch checks only the saved ones), and does not check tensors that
 * require no grad: their values are immutable, so the gradient never reads a changed value. */
EMBER_API ember_status EMBER_CALL ember_tensor_backward_ex(const ember_tensor* tensor, const ember_tensor* grad,
                                                           const ember_backward_options* options, ember_grads** out);
/* torch.autograd.grad: results[i] = d(sum_j <outputs[j], grad_outputs[j]>) / d inputs[i], for inputs that are
 * leaves or results of recorded ops (an input that requires no grad is EMBER_ERR_INVALID_ARGUMENT).
 * grad_outputs may be NULL, and so may each of its entries, for one-element outputs (seeded with 1). An input the
 * outputs do not reach gets results[i] = NULL when allow_unused, else the call fails. No .grad is touched. On
 * failure every results[i] is NULL; the caller owns (frees) the non-NULL results. retain_graph as above. */
EMBER_API ember_status EMBER_CALL ember_autograd_grad(const ember_tensor* const* outputs,
                                                      const ember_tensor* const* grad_outputs, size_t n_outputs,
                                                      const ember_tensor* const* inputs, size_t n_inputs,
                                                      int32_t retain_graph, int32_t allow_unused,
                                                      ember_tensor** results);
/* A leaf's accumulated gradient (.grad) as a new handle that requires no grad; *out = NULL when it has none, or
 * when the tensor is not a leaf that requires grad. The slot belongs to the leaf, not to a handle: every handle of
 * that leaf (clones, the handle after in-place updates under no-grad) sees it. The returned handle is a copy of the
 * slot's current value: to change the slot (zero_grad, clipping), write it back with ember_tensor_set_grad. */
EMBER_API ember_status EMBER_CALL ember_tensor_grad(const ember_tensor* tensor, ember_tensor** out);
/* Sets a leaf's .grad to grad's values (same shape: "assigned grad has data of a different size"); grad NULL clears
 * it. Only for leaves that require grad (EMBER_ERR_INVALID_ARGUMENT otherwise). */
EMBER_API ember_status EMBER_CALL ember_tensor_set_grad(ember_tensor* tensor, const ember_tensor* grad);
/* *leaf = 1 for a tensor that requires no grad or was made a leaf by ember_tensor_set_requires_grad, 0 for the
 * result of a recorded op (PyTorch's is_leaf). */
EMBER_API ember_status EMBER_CALL ember_tensor_is_leaf(const ember_tensor* tensor, int32_t* leaf);

/* In-place updates: self's handle takes the new value and keeps its identity; its version (ember_tensor_version)
 * increases by one. With grad mode off (ember_no_grad_enter) a leaf stays the same leaf: same .grad, same optimizer
 * slot. With grad mode on, a leaf that requires grad is refused (EMBER_ERR_INVALID_ARGUMENT, "a leaf Variable that
 * requires grad is being used in an in-place operation."), and the update of a tensor that requires grad is recorded
 * (self then is a non-leaf whose history continues through the op). `other` is broadcast to self's shape ("output
 * with shape [3] doesn't match the broadcast shape [2, 3]" otherwise) and must be of self's kind, except for COPY,
 * which converts other to self's dtype. DIV is refused for int tensors (the quotient is a float) and int tensors
 * take integral scalars only; bool tensors take COPY and FILL only. On failure self is unchanged. */
enum ember_inplace_op {
  EMBER_INPLACE_COPY = 0, /* self = other (tensor form only) */
  EMBER_INPLACE_ADD = 1,
  EMBER_INPLACE_SUB = 2,
  EMBER_INPLACE_MUL = 3,
  EMBER_INPLACE_DIV = 4,
  EMBER_INPLACE_FILL = 5 /* self = s (scalar form only) */
};
typedef int32_t ember_inplace_op_t;
EMBER_API ember_status EMBER_CALL ember_tensor_inplace(ember_tensor* self, const ember_tensor* other,
                                                       ember_inplace_op_t op);
EMBER_API ember_status EMBER_CALL ember_tensor_inplace_scalar(ember_tensor* self, ember_inplace_op_t op, double s);
/* How many in-place updates this handle has had (0 for a new handle, clones included). */
EMBER_API ember_status EMBER_CALL ember_tensor_version(const ember_tensor* tensor, int64_t* version);

/* ================================================================ issue 11: tensor core (FFT, storage views) */
/* Discrete Fourier transforms, NumPy / torch.fft semantics. Complex tensors are float tensors with a trailing dim of
 * 2 (re, im); `dim` counts the other dims (negative from the end). fft / ifft: complex [..., L, 2] -> [..., n, 2];
 * rfft: real [..., L] -> complex [..., n/2+1, 2]; irfft: complex [..., m, 2] -> real [..., n] (imaginary parts of bin 0
 * and, for even n, bin n/2 are ignored). n <= 0: L (irfft: 2 * (m - 1)); otherwise the input is cropped or
 * zero-padded to n along dim (irfft: to n/2+1 bins). norm: BACKWARD scales the inverse transforms by 1/n, FORWARD
 * the forward ones by 1/n, ORTHO both by 1/sqrt(n). Differentiable; F32 or F64 like x. */
enum ember_fft_op { EMBER_FFT_FFT = 0, EMBER_FFT_IFFT = 1, EMBER_FFT_RFFT = 2, EMBER_FFT_IRFFT = 3 };
typedef int32_t ember_fft_op_t;
enum ember_fft_norm { EMBER_FFT_NORM_BACKWARD = 0, EMBER_FFT_NORM_FORWARD = 1, EMBER_FFT_NORM_ORTHO = 2 };
typedef int32_t ember_fft_norm_t;
EMBER_API ember_status EMBER_CALL ember_tensor_fft(const ember_tensor* x, ember_fft_op_t op, int64_t n, int64_t dim,
                                                   ember_fft_norm_t norm, ember_tensor** out);
/* A zero-copy, read-only view of a CPU tensor's elements: contiguous, row-major, in the tensor's storage dtype
 * (ember_tensor_dtype: F32 / F64 floats, I64 ints, BOOL as one byte 0 / 1). Valid while the handle lives and the
 * tensor is not modified in place; NULL for a tensor of no elements. EMBER_ERR_UNSUPPORTED on GPU backends (copy with
 * ember_tensor_copy_to). */
EMBER_API ember_status EMBER_CALL ember_tensor_data_ptr(const ember_tensor* tensor, const void** data);
/* ================================================================ module trees, params, param-list optimizers
 * (issue 11). A module tree is built by the caller, as a torch.nn.Module: containers (ember_module_create) with
 * named children and the caller's own params, and one module per nn layer (ember_module_layer). Params are tensor
 * handles shared with the caller: ember_module_add_param keeps the caller's handle itself (not a copy), and
 * optimizers, loads and in-place updates replace the value behind that one handle, so every holder sees them.
 *
 * Ownership of a held tensor handle: a module or optimizer holding it keeps it alive; ember_tensor_free by the
 * caller then drops only the caller's reference. Each time ember.h hands the pointer out (its creation,
 * ember_module_param, ember_module_find_param) the caller owns one reference and frees it once; freeing more
 * often is EMBER_ERR_INVALID_HANDLE. Using a handle after freeing all of one's references is not detected while a
 * holder keeps it alive (the handle is still live then). A module's or optimizer's
 * functions must not run concurrently with calls that change the same tree or params (forward of a layer module,
 * step, load): lock around them. */

/* A container: no params of its own until ember_module_add_param; its forward is the caller's (ember_module_forward
 * on it is EMBER_ERR_INVALID_ARGUMENT "this module's forward is written by the caller"). Starts in training mode. */
EMBER_API ember_status EMBER_CALL ember_module_create(const ember_device* device, ember_module** out);
/* One nn layer as its own module (any ember_layer_kind; `desc` from ember_layer_init), params named as the typed
 * layer's ("weight", "bias"; layer_norm and batch_norm: "gamma", "beta", and buffers "running_mean",
 * "running_var"). ember_module_forward runs it with the current values of its param handles. Lazy layers:
 * in_features 0 for LINEAR, CONV2D, LAYER_NORM, BATCH_NORM1D/2D creates placeholder params (float, shape [0]) that
 * the first forward materializes in place from the input's shape (linear, layer_norm: its last dim; conv2d,
 * batch_norm: dim 1), drawing initial values as an eager layer would; a load before that gives them the
 * record's values and shapes (torch's LazyLinear / UninitializedParameter.materialize). */
EMBER_API ember_status EMBER_CALL ember_module_layer(const ember_device* device, const ember_layer_desc* desc,
                                                     ember_module** out);
/* Adds `child` under `name` (unique among the parent's params and children, non-empty, no '.'). The parent keeps
 * the child alive (the caller still frees its own handle). A child may be shared by several parents (its params
 * are then listed once, under the first path); a cycle, a Sequential of ember_module_sequential and a layer module
 * as the parent are errors. */
EMBER_API ember_status EMBER_CALL ember_module_add_child(ember_module* parent, const char* name, ember_module* child);
/* The child named `name` (a new handle to the same module: free it). EMBER_ERR_INDEX when there is none. */
EMBER_API ember_status EMBER_CALL ember_module_child(const ember_module* parent, const char* name, ember_module** out);
/* Children in the order they were added. */
EMBER_API ember_status EMBER_CALL ember_module_child_count(const ember_module* module, size_t* count);
EMBER_API ember_status EMBER_CALL ember_module_child_name(const ember_module* module, size_t index, char* buf,
                                                          size_t capacity, size_t* length);
/* Makes the caller's tensor a param of the container (torch's register_parameter / register_buffer): the same
 * handle, held by the module. role: ember_param_role. TRAINABLE params must be float leaves (not results of an
 * op); their requires_grad stays as the caller set it (set it before, or freeze later). The tensor must live on
 * the module's device. */
EMBER_API ember_status EMBER_CALL ember_module_add_param(ember_module* module, const char* name, ember_tensor* tensor,
                                                         ember_param_role_t role);
/* The live param handle (not a copy: the handle the module holds and optimizers update; use it in the caller's
 * forward). index and paths as ember_module_param_count / _param_name, which list a tree's params recursively with
 * dotted paths ("conv1.weight"), own params first, then each child's. The caller owns one reference (free it). */
EMBER_API ember_status EMBER_CALL ember_module_param(const ember_module* module, size_t index, ember_tensor** out);
/* The live param handle at a dotted path; EMBER_ERR_INDEX naming the path when there is none. */
EMBER_API ember_status EMBER_CALL ember_module_find_param(const ember_module* module, const char* path,
                                                          ember_tensor** out);
/* nn.Module.train(mode) / eval(): sets the flag of the module and every module under it. The flag is what the
 * caller's forward reads (ember_module_is_training) to pick the ember_mode it passes to its layers' forwards. */
EMBER_API ember_status EMBER_CALL ember_module_set_training(ember_module* module, int32_t train);
EMBER_API ember_status EMBER_CALL ember_module_is_training(const ember_module* module, int32_t* train);
/* Freezes (on = 0) or unfreezes every TRAINABLE param of the tree: requires_grad of each param handle (a frozen
 * param gets no gradient, so optimizers leave it as it is). Buffers and constants never require grad. */
EMBER_API ember_status EMBER_CALL ember_module_set_requires_grad(ember_module* module, int32_t on);
/* nn.Module.apply: calls visit(user, module, path) for every module of the tree, children before their parent,
 * the root last with path "". `module` is valid during the call only. A status other than EMBER_OK from visit
 * stops the walk and is returned, with a message naming the module's path (and the visitor's own last error, if it
 * left one); a value outside ember_status_code is returned as EMBER_ERR_INVALID_ARGUMENT. */
typedef ember_status(EMBER_CALL* ember_module_visitor)(void* user, ember_module* module, const char* path);
EMBER_API ember_status EMBER_CALL ember_module_apply(ember_module* module, ember_module_visitor visit, void* user);
/* Sets the param (or buffer) at `path` to a copy of value's data (torch's state_dict()[path].copy_(value)): same
 * dtype and shape (a lazy placeholder takes any shape); the handle stays the same leaf with its requires_grad. */
EMBER_API ember_status EMBER_CALL ember_module_state_set(ember_module* module, const char* path,
                                                         const ember_tensor* value);
/* For trees, ember_module_to_record / _load_record / _save / _load use the records of typed C++ modules: one entry
 * per param path, with its id, kind, role and data; loads replace the values behind the same handles.
 * ember_optimizer_create on a tree makes an optimizer over its TRAINABLE params in path order (as
 * ember_optimizer_create_params below, whose record keys it uses). */

/* An optimizer over any list of params (torch.optim.SGD / Adam / AdamW(params, ...)): float leaf tensors, each at
 * most once, all of one backend; they form group 0 with `options`. The optimizer holds the handles and steps
 * update them in place. Gradients: ember_optimizer_accumulate / ember_optimizer_step with ember_grads from a
 * backward (gathered per param by its grad_req). State records are keyed by the param's position over all groups
 * in the order given ("<index>.exp_avg", "<index>.step"), plus "groups.<g>.lr"; load them into an optimizer built
 * over the same params in the same order. ember_optimizer_set_lr sets every group's lr, _get_lr reads group 0's.
 * ember_optimizer_step(optimizer, NULL) steps with each param's .grad (what ember_tensor_backward_ex accumulated:
 * torch's optimizer.step()) plus anything accumulated; ember_optimizer_zero_grad also clears each param's .grad.
 * A step updates each param as `with no_grad: p.copy_(new)`: the same leaf (its .grad kept), version + 1. */
EMBER_API ember_status EMBER_CALL ember_optimizer_create_params(ember_tensor* const* params, size_t n,
                                                                const ember_optimizer_options* options,
                                                                ember_optimizer** out);
/* A param group with its own options (lr, weight decay, momentum, betas...) of the optimizer's kind; *group (may
 * be NULL) receives its index. Same validation as creation, and a param already in the optimizer is an error. */
EMBER_API ember_status EMBER_CALL ember_optimizer_add_param_group(ember_optimizer* optimizer,
                                                                  ember_tensor* const* params, size_t n,
                                                                  const ember_optimizer_options* options,
                                                                  size_t* group);
/* Groups and their learning rates; a module optimizer (ember_optimizer_create) has one group. */
EMBER_API ember_status EMBER_CALL ember_optimizer_group_count(const ember_optimizer* optimizer, size_t* count);
EMBER_API ember_status EMBER_CALL ember_optimizer_set_group_lr(ember_optimizer* optimizer, size_t group, double lr);
EMBER_API ember_status EMBER_CALL ember_optimizer_get_group_lr(const ember_optimizer* optimizer, size_t group,
                                                               double* lr);
/* Gluon's grad_req: WRITE (default) steps with the latest backward's gradient, ADD with the sum of the gradients
 * accumulated since the last step, NULL never updates the param. */
enum ember_grad_req { EMBER_GRAD_REQ_WRITE = 0, EMBER_GRAD_REQ_ADD = 1, EMBER_GRAD_REQ_NULL = 2 };
typedef int32_t ember_grad_req_t;
/* Per-param options of a param-list optimizer: effective lr = group lr * lr_mult, weight decay = group weight decay
 * * wd_mult (both finite, >= 0; defaults 1), grad_req: ember_grad_req. */
EMBER_API ember_status EMBER_CALL ember_optimizer_set_param_options(ember_optimizer* optimizer,
                                                                    const ember_tensor* param, double lr_mult,
                                                                    double wd_mult, ember_grad_req_t grad_req);
/* torch.nn.utils.clip_grad_norm_ over the gradients a param-list optimizer has accumulated (ember_optimizer_accumulate)
 * and not yet stepped with: scales them by max_norm / (total + 1e-6) when that is below 1. norm_type > 0 (INFINITY:
 * the max norm); *total_norm (may be NULL) receives the norm before clipping. */
EMBER_API ember_status EMBER_CALL ember_optimizer_clip_grad_norm(ember_optimizer* optimizer, double max_norm,
                                                                 double norm_type, double* total_norm);

/* torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type) over the params' .grad (ember_tensor_grad; params
 * without one are skipped): each .grad is scaled in place by max_norm / (total + 1e-6) when that is below 1.
 * *total_norm (may be NULL) receives the norm before clipping. */
EMBER_API ember_status EMBER_CALL ember_clip_grad_norm(ember_tensor* const* params, size_t n, double max_norm,
                                                       double norm_type, double* total_norm);

/* Learning-rate schedulers over an optimizer's groups, with torch.optim.lr_scheduler's (1.13) chainable formulas:
 * each step reads each group's current lr and writes the next. Creating one applies epoch 0 (LINEAR multiplies
 * by start_factor), as torch's constructor does. The scheduler keeps the optimizer alive. */
typedef struct ember_scheduler ember_scheduler;
enum ember_scheduler_kind {
  EMBER_SCHED_STEP = 0,        /* StepLR: step_size (> 0), gamma (0.1) */
  EMBER_SCHED_MULTI_STEP = 1,  /* MultiStepLR: milestones[n_milestones], gamma (0.1) */
  EMBER_SCHED_EXPONENTIAL = 2, /* ExponentialLR: gamma (torch has no default; 0.1 here) */
  EMBER_SCHED_COSINE = 3,      /* CosineAnnealingLR: t_max (> 0), eta_min (0) */
  EMBER_SCHED_LINEAR = 4       /* LinearLR: start_factor (1/3) in (0, 1], end_factor (1) in [0, 1], total_iters (5) */
};
typedef int32_t ember_scheduler_kind_t;
typedef struct ember_scheduler_options {
  uint32_t struct_size;
  ember_scheduler_kind_t kind; /* ember_scheduler_kind */
  int64_t step_size;
  double gamma;
  int64_t t_max;
  double eta_min;
  double start_factor;
  double end_factor;
  int64_t total_iters;
  const int64_t* milestones; /* read at creation (copied) */
  size_t n_milestones;
} ember_scheduler_options;
EMBER_API ember_status EMBER_CALL ember_scheduler_options_init(ember_scheduler_options* options,
                                                               ember_scheduler_kind_t kind);
EMBER_API ember_status EMBER_CALL ember_scheduler_create(ember_optimizer* optimizer,
                                                         const ember_scheduler_options* options, ember_scheduler** out);
/* scheduler.step(): the next epoch's lr into every group. */
EMBER_API ember_status EMBER_CALL ember_scheduler_step(ember_scheduler* scheduler);
/* get_last_lr()[group]: the group's lr now. */
EMBER_API ember_status EMBER_CALL ember_scheduler_get_lr(const ember_scheduler* scheduler, size_t group, double* lr);
/* last_epoch: 0 after creation, +1 per step. */
EMBER_API ember_status EMBER_CALL ember_scheduler_epoch(const ember_scheduler* scheduler, int64_t* epoch);
EMBER_API ember_status EMBER_CALL ember_scheduler_free(ember_scheduler* scheduler);

/* ================================================================ issue 11: small-op overhead (indexing) */
/* torch.select / x[index] along `dim`: the slice at `index` with that dim dropped (rank - 1; a rank-1 x gives rank
 * 0). dim and index count from the end when negative; an index outside [-size, size) is EMBER_ERR_INDEX, a rank-0
 * x too. One call for what took ember_tensor_slice plus ember_tensor_reshape; differentiable. */
EMBER_API ember_status EMBER_CALL ember_tensor_select(const ember_tensor* x, int64_t dim, int64_t index,
                                                      ember_tensor** out);

/* ================================================================ Vulkan: adopting a device with options (issue 17)
 * ember_vulkan_device_adopt with the settings a game engine needs: its allocator and budget, its pipeline cache,
 * the features it enabled, Ember's flush policy. Each part of the Vulkan embedding API documents its fields. */
typedef struct ember_vulkan_allocator ember_vulkan_allocator; /* host allocator callbacks (see its definition) */
typedef struct ember_vulkan_adopt_options {
  uint32_t struct_size;
  uint32_t max_dispatches_per_submit; /* 64 (default): Ember submits on its own after this many dispatches;
                                         0: never (the caller's flush policy; batches grow without bound) */
  const ember_vulkan_allocator* allocator; /* NULL (default): Ember allocates VkDeviceMemory itself */
  uint64_t memory_budget;       /* bytes of device memory Ember may hold; 0 (default): no limit */
  uint32_t tensor_buffer_usage; /* extra VkBufferUsageFlags for tensor memory (e.g. vertex, indirect); 0 default */
  int32_t shader_int64;         /* 1 (default): the host enabled shaderInt64; 0: Int tensors use 32-bit words */
  int32_t timeline_semaphore;   /* 1 (default): the host enabled timelineSemaphore; 0: only host-record mode */
  int32_t shader_float16;       /* 0 (default); EMBER_VULKAN_FLOAT16_*: the f16 features the host enabled */
  uint64_t pipeline_cache;      /* the host's VkPipelineCache Ember compiles into; 0 (default): Ember's own */
} ember_vulkan_adopt_options;
/* Sets struct_size and the defaults above. */
EMBER_API ember_status EMBER_CALL ember_vulkan_adopt_options_init(ember_vulkan_adopt_options* options);
/* ember_vulkan_device_adopt with options (NULL: the defaults, the same as ember_vulkan_device_adopt). */
EMBER_API ember_status EMBER_CALL ember_vulkan_device_adopt_ex(const ember_vulkan_device_desc* desc,
                                                               const ember_vulkan_adopt_options* options,
                                                               ember_device** out);

/* ================================================================ Vulkan: record into the host's command buffer;
 * never block (issue 17 parts 1 and 3)
 * Host-record mode, for engines that hand a plugin the frame's command buffer and allow no submit of its own (Unity's
 * native plugin API): between ember_vulkan_record_begin and ember_vulkan_record_end every op on `device` (forward
 * passes, uploads through ember_tensor_from_data) appends its barriers, dispatches and copies to the host's
 * VkCommandBuffer and returns; the host submits that command buffer. Ember never touches the queue then (the
 * queue-lock callbacks are not called); whatever would need a submit or a CPU wait -- reading a tensor to the CPU,
 * ember_vulkan_submit / host_wait / synchronize / wait_semaphore -- fails with EMBER_ERR_UNSUPPORTED ("... in
 * host-record mode"), nothing is submitted silently. Work Ember recorded before record_begin must have been
 * submitted (ember_vulkan_submit), else record_begin fails; an FFT whose plan is not cached yet fails too (plan
 * creation submits). One thread records at a time; the host records nothing into the command buffer between begin
 * and end, and rebinds its own compute pipeline, descriptor sets and push constants after record_end.
 *  - record_begin records a global barrier: the host's writes before it (any stage, any access) are visible to
 *    Ember's compute shaders and copies, and the host's earlier reads are ordered before Ember's writes. The host
 *    needs no barrier of its own for Ember's inputs.
 *  - record_end records a global barrier from Ember's writes (compute shader and transfer stages) to every later
 *    command of the host (dst stages ALL_COMMANDS | HOST, dst access MEMORY_READ | MEMORY_WRITE | HOST_READ): the
 *    host's later passes (vertex, index, indirect, shaders, transfers) read Ember's outputs with no barrier.
 *  - Transient resources of a frame (its allocations, output storage freed meanwhile, staging, descriptor pools)
 *    are kept until the host reports the frame complete through ember_vulkan_safe_frame (Unity's safeFrameNumber).
 * Never block: in host-record mode, and on devices adopted with max_dispatches_per_submit = 0 (Ember never submits
 * by itself; the caller's ember_vulkan_submit does, batches grow without bound, no op waits on a fence), the
 * device-side checks of index ops (embedding, gather, index_select, scatter_add, select_assign: "index out of
 * range") and of integer division ("integer division by zero") write an error word on the device instead of
 * reading it back; the op goes on (indices clamped into range, so no shader reads outside its buffer; the result
 * of a failing op is unspecified) and ember_vulkan_poll_errors reports the error once the work has completed. In
 * Ember's own eager mode (max_dispatches_per_submit > 0, outside record mode) these checks stay synchronous: the op
 * itself fails with EMBER_ERR_INDEX / EMBER_ERR_INVALID_ARGUMENT, as on the CPU. */
/* Starts recording into vk_command_buffer (a VkCommandBuffer in the recording state, outside a render pass, of
 * queue_family: the family of the adopted queue) for frame_index, which never decreases between calls and is above
 * the last safe frame. EMBER_ERR_INVALID_ARGUMENT when already recording or for a bad argument. */
EMBER_API ember_status EMBER_CALL ember_vulkan_record_begin(const ember_device* device, void* vk_command_buffer,
                                                            uint32_t queue_family, uint64_t frame_index);
/* Records the final barrier and leaves host-record mode; the command buffer is the host's again. Ember's outputs
 * are complete when the host's submission of it has executed. */
EMBER_API ember_status EMBER_CALL ember_vulkan_record_end(const ember_device* device);
/* All GPU work of frames <= safe_frame_index has completed: Ember releases what those frames held (memory returns
 * to Ember's pools) and their device-side checks become readable by ember_vulkan_poll_errors. Never waits. */
EMBER_API ember_status EMBER_CALL ember_vulkan_safe_frame(const ember_device* device, uint64_t safe_frame_index);
/* *frames: recorded frames not yet reported safe; *resources (may be NULL): the allocations and descriptor pools
 * Ember keeps for them. */
EMBER_API ember_status EMBER_CALL ember_vulkan_record_pending(const ember_device* device, uint64_t* frames,
                                                              uint64_t* resources);
/* EMBER_OK, or the first failed device-side check of completed work -- recorded frames <= the last safe frame and
 * Ember's submits whose value its timeline semaphore has reached -- as EMBER_ERR_INDEX ("index_select: index 7 out
 * of range for dim 0 of size 5 (device-side check, recorded in frame 3)") or EMBER_ERR_INVALID_ARGUMENT ("div:
 * integer division by zero (...)"). Each error is reported once; checks of work not yet complete wait for a later
 * poll. Never waits. */
EMBER_API ember_status EMBER_CALL ember_vulkan_poll_errors(const ember_device* device);
/* ================================================================ issue 11: the typed engine's remaining ops
 * (c_api/README.md's table maps every typed engine feature to its C function). Each is differentiable for float
 * tensors, as the typed op is, and validates its arguments as the typed op does. */
/* torch.Tensor.expand(*sizes): x broadcast to `shape` (rank >= x's rank; new dims lead; -1 keeps x's size, not
 * allowed for a new dim; a dim of size 1 repeats, any other must stay as it is). Any dtype. The gradient sums over
 * the repeats. */
EMBER_API ember_status EMBER_CALL ember_tensor_expand(const ember_tensor* x, const int64_t* shape, size_t rank,
                                                      ember_tensor** out);
/* torch.flip(x, dims): the order along each listed dim reversed (negative from the end; each dim at most once).
 * Any dtype. */
EMBER_API ember_status EMBER_CALL ember_tensor_flip(const ember_tensor* x, const int64_t* dims, size_t n,
                                                    ember_tensor** out);
/* torch.Tensor.repeat(*times): x tiled times[i] times along dim i (times >= 0). n >= x's rank; when n is larger, x
 * first gets leading dims of size 1, as in torch. Any dtype. */
EMBER_API ember_status EMBER_CALL ember_tensor_repeat(const ember_tensor* x, const int64_t* times, size_t n,
                                                      ember_tensor** out);
/* torch.scatter_add(x, dim, index, src): a copy of x with each values[i] added at its index along dim (repeated
 * indices accumulate). indices: an int tensor of x's rank, no larger than x in the other dims, every value in
 * [0, x.shape[dim]); values: x's dtype and exactly indices' shape (torch also takes a larger src). Float or int x. */
EMBER_API ember_status EMBER_CALL ember_tensor_scatter_add(const ember_tensor* x, int64_t dim,
                                                           const ember_tensor* indices, const ember_tensor* values,
                                                           ember_tensor** out);
/* torch.masked_fill(x, mask, value): x with `value` where the bool `mask` (broadcast to x's shape) is true. Int x
 * takes a value representable as int64 (truncated toward 0); bool x takes value != 0. Any dtype. */
EMBER_API ember_status EMBER_CALL ember_tensor_masked_fill(const ember_tensor* x, const ember_tensor* mask,
                                                           double value, ember_tensor** out);
/* torch.var(x, dim, correction=, keepdim=): sum((x - mean)^2) / max(N - correction, 0) along dim (correction 1 is
 * the unbiased estimate, torch's default; a rank-0 x takes dim 0 or -1). Float x. */
EMBER_API ember_status EMBER_CALL ember_tensor_var(const ember_tensor* x, int64_t dim, int64_t correction,
                                                   int32_t keepdim, ember_tensor** out);
/* F.adaptive_avg_pool2d(x, (out_h, out_w)): float x [N, C, H, W] with H, W > 0; out_h, out_w > 0. */
EMBER_API ember_status EMBER_CALL ember_tensor_adaptive_avg_pool2d(const ember_tensor* x, int64_t out_h, int64_t out_w,
                                                                   ember_tensor** out);
/* F.huber_loss(input, target, reduction, delta): 0.5 d^2 where |d| <= delta, else delta (|d| - 0.5 delta), with
 * d = input - target (same shape, float); delta > 0. A scalar (rank 0), as ember_loss_mse. */
EMBER_API ember_status EMBER_CALL ember_loss_huber(const ember_tensor* input, const ember_tensor* target,
                                                   ember_reduction_t reduction, double delta, ember_tensor** out);
/* F.binary_cross_entropy_with_logits(logits, targets, reduction) in the stable form max(x, 0) - x t +
 * log(1 + exp(-|x|)); logits and targets float, same shape. A scalar (rank 0). */
EMBER_API ember_status EMBER_CALL ember_loss_bce_with_logits(const ember_tensor* logits, const ember_tensor* targets,
                                                             ember_reduction_t reduction, ember_tensor** out);
/* ==== Vulkan: plans and warm-up (issue 17, parts 2 and 7)
 * A plan is a forward pass captured once and replayed every frame into a command buffer the host records (a game
 * engine's frame, Unity's native-plugin command buffer), with no allocation, descriptor update, pipeline creation
 * or submit of Ember's: recording the digits MLP's plan takes a few microseconds.
 *  - Build one from a module (ember_vulkan_plan_create: its eval forward over an input of a fixed dtype and shape)
 *    or from any ops (ember_vulkan_plan_capture_begin, ember_vulkan_plan_add_input, the ops on those inputs,
 *    ember_vulkan_plan_capture_end with the outputs). While capturing, the device's ops are recorded into the plan
 *    instead of executing: their results hold no values, and no other thread may use the device. An op that
 *    needs a CPU round trip (reading a tensor back, a check that reads a flag back, VkFFT's transforms) fails with
 *    EMBER_ERR_UNSUPPORTED naming it, and the capture cannot be built.
 *  - Building a module's plan warms up first (ember_vulkan_warmup), so every pipeline the plan needs exists (with
 *    adopt option pipeline_cache, in the host's VkPipelineCache, which the host must not create
 *    EXTERNALLY_SYNCHRONIZED): build plans during a loading screen and frame 0 costs what any frame costs.
 *  - Memory is the plan's: inputs, intermediates and outputs have fixed storage (intermediates whose lifetimes do
 *    not overlap share it), descriptor sets are written once. Build plans outside host-record mode.
 *    Parameters are those of the module when the plan was built (rebuild it after training steps or a load).
 *  - Per frame, the host binds its buffers (ember_vulkan_plan_bind_input / _output: VkBuffer + offset, created
 *    with VK_BUFFER_USAGE_TRANSFER_SRC_BIT for inputs, TRANSFER_DST_BIT for outputs, of the sizes
 *    ember_vulkan_plan_input_info / _output_info give) and records the plan (ember_vulkan_plan_record). The plan
 *    copies the inputs in and the outputs out: its descriptor sets never change while earlier frames execute. Its
 *    leading barrier orders it after everything recorded before it on the queue, its trailing barrier makes the
 *    outputs visible to any later command (ALL_COMMANDS, MEMORY_READ).
 *  - The host keeps a plan alive until every command buffer it was recorded into has executed. A plan keeps its
 *    device (and the module's parameters) alive: free plan, module and device in any order. */
typedef struct ember_vulkan_plan ember_vulkan_plan;
typedef struct ember_vulkan_plan_tensor_info {
  uint32_t struct_size;
  ember_dtype_t dtype;            /* ember_dtype */
  uint32_t rank;
  int64_t shape[EMBER_MAX_RANK];
  uint64_t bytes;                 /* the size the host's buffer needs from its offset */
} ember_vulkan_plan_tensor_info;
/* The plan of module's eval forward over one input (dtype, shape[rank]) on a Vulkan device (the module's). */
EMBER_API ember_status EMBER_CALL ember_vulkan_plan_create(ember_module* module, const ember_device* device,
                                                           ember_dtype_t dtype, const int64_t* shape, size_t rank,
                                                           ember_vulkan_plan** out);
/* Starts capturing the ops run on device (a Vulkan device). End with ember_vulkan_plan_capture_end, or free the
 * plan to abandon the capture. */
EMBER_API ember_status EMBER_CALL ember_vulkan_plan_capture_begin(const ember_device* device, ember_vulkan_plan** out);
/* While capturing: the plan's next input, a tensor of (dtype, shape) to run the captured ops on (the caller frees
 * it; the plan keeps its storage). */
EMBER_API ember_status EMBER_CALL ember_vulkan_plan_add_input(ember_vulkan_plan* plan, ember_dtype_t dtype,
                                                              const int64_t* shape, size_t rank, ember_tensor** input);
/* Ends the capture and builds the plan with these outputs (tensors computed by the captured ops). */
EMBER_API ember_status EMBER_CALL ember_vulkan_plan_capture_end(ember_vulkan_plan* plan,
                                                                const ember_tensor* const* outputs, size_t count);
EMBER_API ember_status EMBER_CALL ember_vulkan_plan_counts(const ember_vulkan_plan* plan, size_t* inputs,
                                                           size_t* outputs);
EMBER_API ember_status EMBER_CALL ember_vulkan_plan_input_info(const ember_vulkan_plan* plan, size_t index,
                                                               ember_vulkan_plan_tensor_info* info);
EMBER_API ember_status EMBER_CALL ember_vulkan_plan_output_info(const ember_vulkan_plan* plan, size_t index,
                                                                ember_vulkan_plan_tensor_info* info);
/* This frame's buffers (VkBuffer handles of the plan's device). A binding stays until rebound. */
EMBER_API ember_status EMBER_CALL ember_vulkan_plan_bind_input(ember_vulkan_plan* plan, size_t index,
                                                               uint64_t vk_buffer, uint64_t offset);
EMBER_API ember_status EMBER_CALL ember_vulkan_plan_bind_output(ember_vulkan_plan* plan, size_t index,
                                                                uint64_t vk_buffer, uint64_t offset);
/* Appends the plan to vk_command_buffer (a VkCommandBuffer in the recording state, outside a render pass, of a
 * queue family with compute). Every input and output must be bound. */
EMBER_API ember_status EMBER_CALL ember_vulkan_plan_record(const ember_vulkan_plan* plan, void* vk_command_buffer);
/* Records the plan on Ember's own stream and submits it; *timeline_value signals on Ember's timeline semaphore
 * when it has executed (ember_vulkan_host_wait). */
EMBER_API ember_status EMBER_CALL ember_vulkan_plan_submit(ember_vulkan_plan* plan, uint64_t* timeline_value);
EMBER_API ember_status EMBER_CALL ember_vulkan_plan_free(ember_vulkan_plan* plan);
/* Warm-up for eager use (during a loading screen): runs module's eval forward once over zeros of (dtype, shape) and
 * waits for it, so every pipeline and VkFFT plan it needs exists, its memory is allocated and the driver's
 * first-execution work is done: the first real forward costs what any forward costs. ember_vulkan_plan_create
 * does the same before it captures. */
EMBER_API ember_status EMBER_CALL ember_vulkan_warmup(ember_module* module, const ember_device* device,
                                                      ember_dtype_t dtype, const int64_t* shape, size_t rank);
/* Device-side checks in plans. Index-range checks (Embedding, gather, index_select, ...) and integer-division
 * checks are captured into the plan: each replay clears the plan's own error words (a vkCmdFillBuffer it records
 * first), the checks write them, and the ops run on indices clamped into range, so a bad index never reads outside
 * a buffer (that replay's outputs are unspecified). ember_vulkan_plan_poll_errors reads the words of the plan's
 * last replay, never waiting: it fails with the op's status and message (EMBER_ERR_INDEX "... index 12 out of
 * range for dim 0 of size 10 ...", EMBER_ERR_INVALID_ARGUMENT "... integer division by zero ...") once that replay
 * has completed, and returns EMBER_OK when it passed, before the first replay, or while Ember knows it may still
 * run: a plan_submit until Ember's timeline reaches its value; a plan_record between ember_vulkan_record_begin and
 * _end until ember_vulkan_safe_frame reported its frame. A plan_record outside record mode is taken as completed:
 * poll after the host's fence of that command buffer. The words hold one replay's verdict (the next replay clears
 * them): to check every frame with frames in flight, poll between a frame's completion and the plan's next record.
 * ember_vulkan_poll_errors (the device's) does not report plans' checks.
 * Building in host-record mode: ember_vulkan_plan_create, _capture_begin and ember_vulkan_warmup fail with
 * EMBER_ERR_UNSUPPORTED between ember_vulkan_record_begin and _end, recording nothing into the host's frame (a
 * build waits for the GPU); build plans during loading and record them into any frame. */
EMBER_API ember_status EMBER_CALL ember_vulkan_plan_poll_errors(const ember_vulkan_plan* plan);

/* ==== Vulkan: failure, readback and queue choice (issue 17 part 8)
 * Device lost. When the GPU is lost (a driver reset, a GPU hang, a removed GPU: VK_ERROR_DEVICE_LOST from a submit or
 * a wait), the call that saw it fails with EMBER_ERR_DEVICE_LOST, and from then on so does every call that would use
 * that device (ops, new tensors, reads, submits, waits, readback enqueues and polls), at once: Ember never touches
 * the queue or waits on a fence of a lost device again. Freeing handles still works and never waits.
 * Recovery: free every handle made on the device (tensors, modules, optimizers, grads, readback rings, the device
 * handles); then create the device again (ember_device_create gives a new device of that index once the lost one
 * was seen) or, for an adopted device, recreate the VkDevice the way the host does after a loss and adopt the new
 * one; finally rebuild modules and load the records saved before (ember_module_load_record): training resumes from
 * the last save. */
/* Simulates a loss, to test a host's recovery path (what ID3D12Device5::RemoveDevice is to Direct3D 12): Ember's
 * vkQueueSubmit or blocking fence wait after `after` more of them (0: the next one) reports VK_ERROR_DEVICE_LOST, as
 * do all its submits and waits after that. Work submitted before still runs on the GPU (a real loss drops it); the
 * last handle's release waits for it. Setting EMBER_VULKAN_INJECT_DEVICE_LOST=n arms every Vulkan device created or
 * adopted afterwards the same way. Calling it again before the loss happened re-arms the count. */
EMBER_API ember_status EMBER_CALL ember_vulkan_simulate_device_lost(const ember_device* device, uint32_t after);
/* *lost = 1 once Ember saw VK_ERROR_DEVICE_LOST on `device` (every later use fails with EMBER_ERR_DEVICE_LOST), else 0.
 * Never touches the device. */
EMBER_API ember_status EMBER_CALL ember_vulkan_device_is_lost(const ember_device* device, int32_t* lost);
/* The queue family and queue index Ember submits to on `device` (either may be NULL). For an adopted device, the
 * desc's; for Ember's own, its choice: by default a compute-only ("async compute") family when the device has one,
 * else a universal one; EMBER_VULKAN_QUEUE=async | universal | async-only | <family>[:<index>] overrides it for devices
 * created afterwards (async-only fails on a device without a compute-only family). */
EMBER_API ember_status EMBER_CALL ember_vulkan_queue_info(const ember_device* device, uint32_t* queue_family,
                                                          uint32_t* queue_index);

/* An asynchronous readback ring for gameplay code: results in persistently mapped host-visible memory a frame or two
 * after they were asked for, with no call that waits. `slots` slots of `slot_bytes` bytes each (slot_bytes >= 1,
 * slots in 1..4096, slot_bytes * slots <= 4 GiB). The ring keeps its device alive. */
typedef struct ember_vulkan_readback ember_vulkan_readback;
EMBER_API ember_status EMBER_CALL ember_vulkan_readback_create(const ember_device* device, uint64_t slot_bytes,
                                                               uint32_t slots, ember_vulkan_readback** out);
/* Records a copy of the tensor's storage (as ember_vulkan_tensor_buffer describes it: f32 / int64 / bool as 32-bit
 * words, row-major) into the next slot; it does not submit (the flush policy stays the caller's): the copy runs
 * with Ember's next submit (ember_vulkan_submit, as a host calls each frame, or a flush of Ember's own) or, between
 * ember_vulkan_record_begin and _end, inside the host's command buffer. *ticket (1, 2, ...) names the copy; ticket
 * t stays readable until ticket t + slots is enqueued. The tensor must be on the ring's device and fit a slot
 * (EMBER_ERR_INVALID_ARGUMENT otherwise). */
EMBER_API ember_status EMBER_CALL ember_vulkan_readback_enqueue(ember_vulkan_readback* ring, const ember_tensor* tensor,
                                                                uint64_t* ticket);
/* Never blocks: *ready = 1 and the ticket's bytes copied into dst once the GPU has executed its copy (Ember's
 * timeline semaphore reached the copy's submit; in host-record mode: the host reported the copy's frame safe with
 * ember_vulkan_safe_frame); *ready = 0 and nothing written before that. *size (may be NULL)
 * = the ticket's byte count; capacity below it is EMBER_ERR_BUFFER_TOO_SMALL (nothing written). A ticket never
 * enqueued or already overwritten is EMBER_ERR_INVALID_ARGUMENT. */
EMBER_API ember_status EMBER_CALL ember_vulkan_readback_poll(ember_vulkan_readback* ring, uint64_t ticket, void* dst,
                                                             size_t capacity, size_t* size, int32_t* ready);
/* Frees the ring without waiting: copies still in flight keep its memory until they have executed. NULL: no-op. */
EMBER_API ember_status EMBER_CALL ember_vulkan_readback_free(ember_vulkan_readback* ring);

/* ================================================================ Vulkan: memory the host controls, resource
 * states for host buffers (issue 17 parts 4 and 5)
 *
 * Memory. Ember sub-allocates its tensors from VkDeviceMemory blocks (64 MiB by default, fewer bytes under a small
 * budget; one block per tensor larger than half a block). With ember_vulkan_adopt_options.allocator set, every block
 * comes from the host's allocator (its VMA, its heaps) instead of vkAllocateMemory: Ember creates one VkBuffer per
 * block, asks the host for memory fitting vkGetBufferMemoryRequirements, binds it at the returned offset and hands
 * it back through free_memory when the block is released (trim, budget pressure, the device's last handle). */
typedef struct ember_vulkan_memory_request {
  uint32_t struct_size;
  uint64_t size;              /* bytes (VkMemoryRequirements.size) */
  uint64_t alignment;         /* the offset returned must be a multiple of this */
  uint32_t memory_type_bits;  /* the memory types Ember can use: the buffer's memoryTypeBits & Ember's choice */
  uint32_t required_flags;    /* VkMemoryPropertyFlags the memory type must have (HOST_VISIBLE for staging) */
  uint32_t preferred_flags;   /* VkMemoryPropertyFlags Ember would like (DEVICE_LOCAL for tensors) */
  int32_t mapped;             /* 1: map a HOST_VISIBLE type and return its pointer (VMA MAPPED_BIT); used if coherent */
  int32_t staging;            /* 1: a staging block (uploads / reads), 0: tensor memory */
} ember_vulkan_memory_request;
/* What the host's allocator returns for one request. */
typedef struct ember_vulkan_memory_block {
  uint32_t struct_size;
  uint64_t memory;      /* VkDeviceMemory the block is bound to (the host may share one among many blocks) */
  uint64_t offset;      /* where the block starts in `memory` (a multiple of the request's alignment) */
  void* mapped;         /* host pointer to memory + offset (required when the request asked for it), else NULL */
  uint32_t memory_type; /* the memory type index of `memory` (one of the request's memory_type_bits) */
  uint64_t allocation;  /* the host's handle of this allocation (e.g. a VmaAllocation), passed back to free */
} ember_vulkan_memory_block;
/* ember_vulkan_allocator.allocate_memory (named for bindings; the field's type is unchanged). */
typedef int32_t(EMBER_CALL* ember_vulkan_allocate_memory_fn)(void* user, const ember_vulkan_memory_request* request,
                                                             ember_vulkan_memory_block* out);
/* ember_vulkan_allocator.free_memory (named for bindings; the field's type is unchanged). */
typedef void(EMBER_CALL* ember_vulkan_free_memory_fn)(void* user, const ember_vulkan_memory_block* block);
/* Host allocator callbacks (ember_vulkan_adopt_options.allocator). Called with Ember's device lock held, from
 * whichever thread runs the op; the host's allocator must be thread-safe against its own other users. */
struct ember_vulkan_allocator {
  uint32_t struct_size;
  void* user;  /* passed to both callbacks */
  /* Fills *out (struct_size set by Ember) and returns 0 (VK_SUCCESS), or a negative VkResult
   * (VK_ERROR_OUT_OF_DEVICE_MEMORY = -2: Ember releases its unused blocks, retries once, then reports
   * EMBER_ERR_OUT_OF_MEMORY). */
  ember_vulkan_allocate_memory_fn allocate_memory;
  /* Frees what allocate_memory returned (after the GPU finished with it). */
  ember_vulkan_free_memory_fn free_memory;
};
/* Sets struct_size; the rest zero (both callbacks are required when the struct is passed). */
EMBER_API ember_status EMBER_CALL ember_vulkan_allocator_init(ember_vulkan_allocator* allocator);

/* Memory statistics of a Vulkan device (all of Ember's blocks, tensor and staging). */
typedef struct ember_vulkan_memory_stats {
  uint32_t struct_size;
  uint64_t reserved;      /* bytes in Ember's blocks (what counts against the budget) */
  uint64_t in_use;        /* bytes of those handed to live tensors and in-flight work */
  uint64_t peak_reserved; /* the most `reserved` has been since the device was made */
  uint64_t budget;        /* the budget (0: none) */
  uint32_t blocks;        /* blocks held */
  uint32_t host_blocks;   /* of which from the host's allocator */
} ember_vulkan_memory_stats;
EMBER_API ember_status EMBER_CALL ember_vulkan_memory_stats_query(const ember_device* device,
                                                                  ember_vulkan_memory_stats* out);
/* Releases every block with nothing allocated in it (to the host's allocator, or vkFreeMemory). Memory still used
 * by submitted work is kept until that work has executed. */
EMBER_API ember_status EMBER_CALL ember_vulkan_memory_trim(const ember_device* device);
/* Changes the budget (bytes; 0: none) of any Vulkan device, Ember's own included. A budget is a hard limit on
 * `reserved`: an allocation that would exceed it first releases unused blocks, then waits for Ember's recorded work
 * (whose staging and temporaries it holds) and releases again, then fails with
 * EMBER_ERR_OUT_OF_MEMORY and a message giving the budget, the bytes held and the request; nothing is leaked and
 * the device stays usable. A budget below what is held now only stops growth. */
EMBER_API ember_status EMBER_CALL ember_vulkan_memory_set_budget(const ember_device* device, uint64_t budget);

/* Resource states. A wrapped buffer is read-only unless wrapped with EMBER_VULKAN_WRAP_WRITABLE; Ember then writes
 * into it only through ember_vulkan_tensor_write_wrapped (ops never write their inputs).
 * Barriers: Ember orders its own commands. When the host's work on a buffer and Ember's are ordered by a semaphore
 * (ember_vulkan_wait_semaphore / Ember's timeline) nothing more is needed. Otherwise, or to move an
 * EXCLUSIVE-sharing buffer between the host's queue family and Ember's, the host declares the state a buffer is in
 * before Ember uses it (acquire) and the state it wants afterwards (release); each records one
 * VkBufferMemoryBarrier over the tensor's range into Ember's command stream, in order with Ember's work. A queue
 * family ownership transfer needs the matching half on the host's queue (a release before Ember's acquire, an
 * acquire after Ember's release), ordered by the semaphores; pass VK_QUEUE_FAMILY_IGNORED (~0u) or Ember's own
 * family for no transfer. Stages and accesses are VkPipelineStageFlags / VkAccessFlags. */
enum ember_vulkan_wrap_flags {
  EMBER_VULKAN_WRAP_WRITABLE = 1 /* Ember may write the buffer (ember_vulkan_tensor_write_wrapped) */
};
typedef int32_t ember_vulkan_wrap_flags_t;
/* ember_vulkan_tensor_wrap_buffer with flags (ember_vulkan_wrap_flags; 0: the same as ember_vulkan_tensor_wrap_buffer).
 * A writable buffer also needs VK_BUFFER_USAGE_TRANSFER_DST_BIT. */
EMBER_API ember_status EMBER_CALL ember_vulkan_tensor_wrap_buffer_ex(const ember_device* device, uint64_t vk_buffer,
                                                                     uint64_t offset, ember_dtype_t dtype,
                                                                     const int64_t* shape, size_t rank, uint32_t flags,
                                                                     ember_tensor** out);
/* Records a copy of src's elements into the host buffer that `wrapped` wraps (writable, same device, same dtype and
 * element count): how an op's output lands in the host's buffer. Every tensor over that range sees the new values
 * in later work. Complete once the next ember_vulkan_submit value is reached (or in the host's command buffer). */
EMBER_API ember_status EMBER_CALL ember_vulkan_tensor_write_wrapped(const ember_tensor* wrapped,
                                                                    const ember_tensor* src);
/* The host's last use of tensor's buffer range was at src_stage / src_access (on src_queue_family): Ember's later
 * commands wait for it. With another family than Ember's, this is the acquire half of an ownership transfer. */
EMBER_API ember_status EMBER_CALL ember_vulkan_buffer_acquire(const ember_tensor* tensor, uint32_t src_stage,
                                                              uint32_t src_access, uint32_t src_queue_family);
/* The host will next use tensor's buffer range at dst_stage / dst_access (on dst_queue_family): Ember's earlier
 * commands on it are made available and visible to that use. With another family than Ember's, this is the
 * release half of an ownership transfer (the host then records the acquire on its queue). */
EMBER_API ember_status EMBER_CALL ember_vulkan_buffer_release(const ember_tensor* tensor, uint32_t dst_stage,
                                                              uint32_t dst_access, uint32_t dst_queue_family);
/* What a host needs to consume a tensor's buffer. */
typedef struct ember_vulkan_buffer_state {
  uint32_t struct_size;
  uint32_t write_stage;  /* the VkPipelineStageFlags of Ember's last write of the range (0: never written by Ember,
                            e.g. a read-only wrapped buffer) — the srcStageMask for the host's barrier */
  uint32_t write_access; /* the VkAccessFlags of that write (SHADER_WRITE or TRANSFER_WRITE), the srcAccessMask */
  uint32_t usage;        /* VkBufferUsageFlags of the VkBuffer (Ember's memory: storage | transfer | the adopt
                            option tensor_buffer_usage; a wrapped buffer: 0, the host knows its own) */
  uint32_t queue_family; /* the family that owns the range now (after a release to another family: that family) */
  int32_t wrapped;       /* 1: a host buffer */
  int32_t writable;      /* 1: Ember may write it (its own memory, or wrapped with EMBER_VULKAN_WRAP_WRITABLE) */
} ember_vulkan_buffer_state;
EMBER_API ember_status EMBER_CALL ember_vulkan_buffer_state_query(const ember_tensor* tensor,
                                                                  ember_vulkan_buffer_state* out);

/* ==== Vulkan: lower feature floor (issue 17 part 6)
 * Ember runs on Vulkan 1.1 devices (its shaders are SPIR-V 1.3) with no feature beyond a compute queue. Optional
 * features widen what it does; the host tells Ember which ones it enabled with ember_vulkan_adopt_options:
 *  - shaderInt64 (adopt option shader_int64): Int tensors are int64 on the device. Without it they are stored and
 *    computed as int32: uploads (ember_tensor_from_data, fills, scalar operands) refuse values outside
 *    [-2^31, 2^31) with EMBER_ERR_INVALID_ARGUMENT, reads widen to int64, and arithmetic wraps around at 32 bits
 *    (a sum or product beyond int32 wraps like a 32-bit device int; the CPU backend would wrap at 64 bits).
 *    Wrapped Int buffers (ember_vulkan_tensor_wrap_buffer, EMBER_DTYPE_I64) then hold int32 elements, and
 *    ember_vulkan_tensor_buffer's Int ranges and ember_vulkan_readback copies of Int tensors are 4 bytes per
 *    element. Float-to-Int casts of values outside int32 give unspecified results there.
 *  - timelineSemaphore (adopt option timeline_semaphore; core in 1.2, VK_KHR_timeline_semaphore in 1.1): Ember
 *    submits on its own and signals its timeline. Without it Ember never submits: every path that would
 *    (ember_vulkan_submit, reading a tensor back, a full batch) fails with EMBER_ERR_UNSUPPORTED and the message
 *    "this device was adopted without timeline semaphores: use host-record mode".
 *  - shaderFloat16 (adopt option shader_float16 = 1, which also says the host accepts f16 precision there): the
 *    f16 variant of Ember's GEMM, behind matmul, linear layers and conv2d, holds its operands as f16 and multiplies
 *    in f16, summing in f32: inputs rounded to f16 (range +-65504) and about three significant digits in the
 *    results (normalized error within 8 * 2^-11 in Ember's op suite, op_suite_vulkan_f16; inputs exact in f16,
 *    such as small multiples of 1/16, give the f32 results). Every other op computes in f32. Off by default;
 *    without the feature, everything is f32. */
#define EMBER_VULKAN_FEATURE_SHADER_INT64 0x1u      /* VkPhysicalDeviceFeatures.shaderInt64 */
#define EMBER_VULKAN_FEATURE_TIMELINE_SEMAPHORE 0x2u /* VkPhysicalDeviceTimelineSemaphoreFeatures.timelineSemaphore */
#define EMBER_VULKAN_FEATURE_FLOAT16 0x4u /* VkPhysicalDeviceShaderFloat16Int8Features.shaderFloat16 */
typedef struct ember_vulkan_requirements2 {
  uint32_t struct_size;
  uint32_t api_version;       /* minimum device API version: VK_API_VERSION_1_1 */
  uint32_t spirv_version;     /* SPIR-V version of Ember's shaders: 0x00010300 (1.3) */
  uint32_t queue_flags;       /* VkQueueFlags the queue needs: VK_QUEUE_COMPUTE_BIT */
  uint32_t required_features; /* EMBER_VULKAN_FEATURE_* bits that must be enabled: 0 (none) */
  uint32_t optional_features; /* EMBER_VULKAN_FEATURE_* bits Ember uses when the host enabled them */
  uint32_t device_extension_count;      /* device extensions that must be enabled (none today) */
  const char* const* device_extensions; /* [device_extension_count] names, static storage; NULL when none */
} ember_vulkan_requirements2;
/* Fills *out (struct_size set by the caller). Needs no device. ember_vulkan_requirements_query still describes
 * the full-featured setup (Vulkan 1.2, shaderInt64, timelineSemaphore). */
EMBER_API ember_status EMBER_CALL ember_vulkan_requirements_query2(ember_vulkan_requirements2* out);
/* What one EMBER_VULKAN_FEATURE_* bit is and what Ember does with it: *name is the Vulkan feature name(s), *gives
 * one sentence (both static storage; either pointer may be NULL). An unknown or multi-bit value is
 * EMBER_ERR_INVALID_ARGUMENT. */
EMBER_API ember_status EMBER_CALL ember_vulkan_feature_describe(uint32_t feature, const char** name,
                                                                const char** gives);

/* ---- Issue 11: x[i] for bindings that pay for out parameters ----
 * ember_tensor_select with the new tensor as the return value: NULL when ember_tensor_select would fail, its
 * message then in ember_last_error() (for the status, call ember_tensor_select). For bindings in which an out
 * parameter is a per-call cost (Python's ctypes: a pointer object and a reference to it per call, a tenth of x[i]);
 * the result is freed with ember_tensor_free as any other. */
EMBER_API ember_tensor* EMBER_CALL ember_tensor_select_or_null(const ember_tensor* x, int64_t dim, int64_t index);

/* ---- Issue 12: FFI-clean additions ----
 * EMBER_VERSION_NUMBER of the library actually loaded (MAJOR * 1000000 + MINOR * 1000 + PATCH). */
EMBER_API int32_t EMBER_CALL ember_version_number(void);
/* An _init for every struct, so that no caller computes struct_size itself: each sets struct_size to the size of
 * the struct this library was built with and every other field to zero (NULL: EMBER_ERR_INVALID_ARGUMENT). The
 * structs filled by a query only need struct_size; the others then take the host's values. */
EMBER_API ember_status EMBER_CALL ember_backend_info_init(ember_backend_info* info);
EMBER_API ember_status EMBER_CALL ember_param_info_init(ember_param_info* info);
EMBER_API ember_status EMBER_CALL ember_vulkan_requirements_init(ember_vulkan_requirements* out);
EMBER_API ember_status EMBER_CALL ember_vulkan_device_desc_init(ember_vulkan_device_desc* desc);
EMBER_API ember_status EMBER_CALL ember_vulkan_plan_tensor_info_init(ember_vulkan_plan_tensor_info* info);
EMBER_API ember_status EMBER_CALL ember_vulkan_memory_request_init(ember_vulkan_memory_request* request);
EMBER_API ember_status EMBER_CALL ember_vulkan_memory_block_init(ember_vulkan_memory_block* block);
EMBER_API ember_status EMBER_CALL ember_vulkan_memory_stats_init(ember_vulkan_memory_stats* stats);
EMBER_API ember_status EMBER_CALL ember_vulkan_buffer_state_init(ember_vulkan_buffer_state* state);
EMBER_API ember_status EMBER_CALL ember_vulkan_requirements2_init(ember_vulkan_requirements2* out);

/* ==== Vulkan: f16 storage and automatic f16 variants (issue 17 part 6)
 * Ember has two kinds of f16 variants, each on its own device feature (as ncnn's use_fp16_arithmetic and
 * use_fp16_storage):
 *  - arithmetic (shaderFloat16, EMBER_VULKAN_FEATURE_FLOAT16): the GEMM behind matmul, linear and conv2d holds its
 *    operands as f16 and multiplies in f16, summing in f32 (described above, with the lower feature floor).
 *  - storage (storageBuffer16BitAccess, core in Vulkan 1.1, EMBER_VULKAN_FEATURE_STORAGE_16BIT): a plan
 *    (ember_vulkan_plan_create, ember_vulkan_plan_capture_end) keeps an f16 copy of each weight its GEMMs read
 *    (linear layers' right-hand operand, conv2d's left-hand one), made once when the plan is built, and every
 *    replay reads that copy: half the weight bytes per frame. Weights are rounded to f16 (relative error 2^-11 each, range
 *    +-65504); inputs, products and sums stay f32 (unless arithmetic is on too). Eager ops are unchanged. The copies
 *    hold the weights of when the plan was built (rebuild it after training steps or a load, as any plan) and add
 *    half the weights' bytes: the module keeps its f32 weights.
 * Both are off by default, so Ember computes in f32 as PyTorch does unless the host asks. The adopt option
 * shader_float16 takes these values (0: neither; 1 keeps its meaning: arithmetic only). For Ember's own device
 * (ember_device_create) the environment variable EMBER_VULKAN_FLOAT16 = 1 (arithmetic), storage, or auto chooses,
 * each variant only where the device has its feature, which Ember then enables. */
#define EMBER_VULKAN_FLOAT16_ARITHMETIC 1 /* the host enabled shaderFloat16: f16 arithmetic */
#define EMBER_VULKAN_FLOAT16_STORAGE 2    /* the host enabled storageBuffer16BitAccess: f16 storage (| 1: both) */
/* The host enabled each of the two features its physical device has (ncnn's default): Ember uses each variant
 * exactly where the physical device reports its feature (shaderFloat16 is read on Vulkan 1.2 devices; a 1.1 device
 * with VK_KHR_shader_float16_int8 names ARITHMETIC explicitly). */
#define EMBER_VULKAN_FLOAT16_AUTO -1
#define EMBER_VULKAN_FEATURE_STORAGE_16BIT 0x8u /* VkPhysicalDevice16BitStorageFeatures.storageBuffer16BitAccess */
/* The f16 variants device uses: EMBER_VULKAN_FEATURE_FLOAT16 and EMBER_VULKAN_FEATURE_STORAGE_16BIT bits (0: every
 * Float op in f32). */
EMBER_API ember_status EMBER_CALL ember_vulkan_float16_query(const ember_device* device, uint32_t* features);
/* How many weights a built plan holds as f16 copies (f16 storage) and the bytes of those copies (0 and 0 without
 * f16 storage). Either pointer may be NULL. */
EMBER_API ember_status EMBER_CALL ember_vulkan_plan_f16_weights(const ember_vulkan_plan* plan, size_t* count,
                                                                uint64_t* bytes);
/* Plans on a device adopted without timeline semaphores (adopt option timeline_semaphore = 0): build them between
 * frames (outside ember_vulkan_record_begin / _end, like every plan), after the module's parameters reached the GPU
 * in a frame of the host's. ember_vulkan_plan_create and ember_vulkan_warmup then neither submit nor wait (the
 * warm-up is a capture that is dropped); the plan reads f32 weights whatever shader_float16 says; and
 * ember_vulkan_plan_submit fails with EMBER_ERR_UNSUPPORTED. */

/* ---- Issue 13: safetensors and PyTorch state_dicts ----
 * safetensors files (Hugging Face's format, PyTorch's usual weight exchange) as records. Reading checks the whole
 * header before any tensor is read: header length (at most 100 MiB and within the file), JSON, every dtype (F32 F64
 * F16 BF16 I64 I32 I16 U8 BOOL; BF16 becomes f32), shape against byte length, offsets inside the buffer without
 * overlap or gap, tensor names valid UTF-8 without control characters; a failure is EMBER_ERR_RECORD with a
 * message naming the file and the tensor (file content escaped), EMBER_ERR_IO when the file cannot be read. The
 * tensors keep their names and layouts (a PyTorch state_dict: "fc.weight" [out, in]). */
EMBER_API ember_status EMBER_CALL ember_record_read_safetensors(const char* path, ember_record** out);
/* Writes the record's tensors under their names (atomically: a temporary file renamed into place), with metadata
 * {"format": "pt"}; its scalars go into the metadata as "scalar.<name>". */
EMBER_API ember_status EMBER_CALL ember_record_write_safetensors(const ember_record* record, const char* path);
/* Loads a PyTorch state_dict (a record of PyTorch's keys and layouts, e.g. from ember_record_read_safetensors)
 * into the module through the PyTorch name map: Linear weights transposed ([out, in] -> [in, out]), LayerNorm and
 * BatchNorm weight/bias -> gamma/beta, BatchNorm's num_batches_tracked ignored, a Sequential's "<i>." for
 * "layers.<i>.", other names as they are. mode and *report as ember_module_load_record (report may be NULL); the
 * report names Ember's paths, and keys the map does not know are unexpected. */
EMBER_API ember_status EMBER_CALL ember_module_load_torch_state_dict(ember_module* module,
                                                                     const ember_record* state_dict,
                                                                     ember_load_mode_t mode,
                                                                     ember_load_report** report);
/* The module's params as a PyTorch state_dict (the inverse map; num_batches_tracked as an i64 0), ready for
 * ember_record_write_safetensors and PyTorch's load_state_dict. */
EMBER_API ember_status EMBER_CALL ember_module_to_torch_state_dict(const ember_module* module, ember_record** out);

/* ==== norms: ConvTranspose2d's functional form (issue 13; the layers are EMBER_LAYER_GROUP_NORM, _RMS_NORM,
 * _CONV_TRANSPOSE2D) */
typedef struct ember_conv_transpose2d_options {
  uint32_t struct_size;
  int32_t reserved; /* 0 */
  int64_t stride[2], padding[2], output_padding[2], dilation[2];
  int64_t groups;
} ember_conv_transpose2d_options;
/* PyTorch's defaults: stride 1, padding 0, output_padding 0, dilation 1, groups 1. */
EMBER_API ember_status EMBER_CALL ember_conv_transpose2d_options_init(ember_conv_transpose2d_options* options);
/* PyTorch's F.conv_transpose2d (the adjoint of conv2d): x [N, C_in, H, W], weight [C_in, C_out / groups, kH, kW],
 * bias [C_out] or NULL; options NULL for defaults. Output [N, C_out, H_out, W_out] with H_out = (H - 1) * stride -
 * 2 * padding + dilation * (kH - 1) + output_padding + 1; output_padding must be smaller than stride or dilation.
 * Differentiable in x, weight and bias. */
EMBER_API ember_status EMBER_CALL ember_tensor_conv_transpose2d(const ember_tensor* x, const ember_tensor* weight,
                                                                const ember_tensor* bias,
                                                                const ember_conv_transpose2d_options* options,
                                                                ember_tensor** out);
/* ==== rnn (issue 13, h-rnn) ====
 * An LSTM or GRU module (ember_module_sequential of one EMBER_LAYER_LSTM / _GRU layer, or ember_module_layer of
 * one) over x [T, N, input_size] ([N, T, input_size] with batch_first), as PyTorch 1.13's
 * rnn(x, (h0, c0)) -> (output, (h_n, c_n)). h0, c0: [num_layers * D, N, hidden_size] (D = 2 if bidirectional), NULL
 * for zeros; c0 must be NULL for a GRU. lengths: NULL (num_lengths 0), or num_lengths = N per-sequence lengths in
 * [1, T] (any order): the result is PyTorch's pack_padded_sequence(x, lengths, enforce_sorted=False) -> rnn ->
 * pad_packed_sequence: output has max(lengths) steps and is zero past each sequence's length, h_n / c_n hold each
 * sequence's state at its last valid step, the reverse direction starts at each sequence's end. mode: ember_mode (dropout between layers in
 * TRAIN). Writes *output, *h_n and, for an LSTM, *c_n (c_n may be NULL for a GRU, and is then left alone; for an
 * LSTM it must not be NULL). Differentiable w.r.t. x, h0, c0 and the params. */
EMBER_API ember_status EMBER_CALL ember_module_forward_rnn(ember_module* module, const ember_tensor* x,
                                                           const ember_tensor* h0, const ember_tensor* c0,
                                                           const int64_t* lengths, size_t num_lengths,
                                                           ember_mode_t mode,
                                                           ember_tensor** output, ember_tensor** h_n,
                                                           ember_tensor** c_n);
/* ==== sort, scan and masks (issue 13) ====
 * Float x for sort / argsort / topk / cumsum; dim negative counts from the end. Every sort is stable (ties keep
 * their order) and counts NaN as the largest value, as torch.sort; `stable` (0 or 1) is accepted for torch's
 * signature. Indices are Int (I64). sort / topk make both *values and *indices or neither; the values are a gather
 * of x at the indices, so gradients flow back through them. A rank-0 x sorts to itself with index 0. */
EMBER_API ember_status EMBER_CALL ember_tensor_sort(const ember_tensor* x, int64_t dim, int32_t descending,
                                                    int32_t stable, ember_tensor** values, ember_tensor** indices);
EMBER_API ember_status EMBER_CALL ember_tensor_argsort(const ember_tensor* x, int64_t dim, int32_t descending,
                                                       int32_t stable, ember_tensor** out);
/* The k largest (largest = 1) or smallest values along dim, always in sorted order (one of the orders sorted = 0
 * allows); 0 <= k <= size of dim. */
EMBER_API ember_status EMBER_CALL ember_tensor_topk(const ember_tensor* x, int64_t k, int64_t dim, int32_t largest,
                                                    int32_t sorted, ember_tensor** values, ember_tensor** indices);
/* Running sum along dim (torch.cumsum); its gradient is the reversed running sum. */
EMBER_API ember_status EMBER_CALL ember_tensor_cumsum(const ember_tensor* x, int64_t dim, ember_tensor** out);
/* Any kind, rank >= 2: the lower (tril: j - i <= diagonal) or upper (triu: j - i >= diagonal) triangle of the last
 * two dims, the rest zero. */
EMBER_API ember_status EMBER_CALL ember_tensor_tril(const ember_tensor* x, int64_t diagonal, ember_tensor** out);
EMBER_API ember_status EMBER_CALL ember_tensor_triu(const ember_tensor* x, int64_t diagonal, ember_tensor** out);
/* The elements of x where the bool mask (broadcast with x) is true, as a rank-1 tensor in row-major order; its
 * length depends on the mask's values (they are read back once). */
EMBER_API ember_status EMBER_CALL ember_tensor_masked_select(const ember_tensor* x, const ember_tensor* mask,
                                                             ember_tensor** out);
/* Int x of class values: Int [..., num_classes] with 1 at each value's class (torch.nn.functional.one_hot);
 * num_classes -1 takes max + 1. A negative value or one >= num_classes is EMBER_ERR_INVALID_ARGUMENT. */
EMBER_API ember_status EMBER_CALL ember_tensor_one_hot(const ember_tensor* x, int64_t num_classes, ember_tensor** out);
/* ==== shape ops (issue 13): pad, step slices, baddbmm, einsum, logsumexp, std, interpolate ----
 * Composed from the backend's primitives (reshape, permute, index_select, matmul, reductions), so they run on every
 * backend and are differentiable. Semantics and argument order are PyTorch 1.13's. */
enum ember_pad_mode { EMBER_PAD_CONSTANT = 0, EMBER_PAD_REFLECT = 1, EMBER_PAD_REPLICATE = 2 };
typedef int32_t ember_pad_mode_t;
/* F.pad(x, pads, mode, value): pads holds n values, (left, right) pairs starting from the last dim. CONSTANT: any
 * rank, negative pads crop, value converted to x's dtype (any dtype). REFLECT / REPLICATE: 1 to 3 pairs on a tensor
 * of rank >= pairs + 1, pads >= 0, reflect pads smaller than the dim. */
EMBER_API ember_status EMBER_CALL ember_tensor_pad(const ember_tensor* x, const int64_t* pads, size_t n,
                                                   ember_pad_mode_t mode, double value, ember_tensor** out);
/* x[starts[i]:ends[i]:steps[i], ...] over the first n dims (Python's clamping; ends[i] = EMBER_SLICE_END for "to
 * the end"; steps > 0 as torch). Any dtype. */
EMBER_API ember_status EMBER_CALL ember_tensor_slice_step(const ember_tensor* x, const int64_t* starts,
                                                          const int64_t* ends, const int64_t* steps, size_t n,
                                                          ember_tensor** out);
/* torch.baddbmm: beta * input + alpha * (batch1 @ batch2); float batch1 [b, n, m], batch2 [b, m, p]; input
 * broadcasts to [b, n, p] and is ignored when beta == 0. */
EMBER_API ember_status EMBER_CALL ember_tensor_baddbmm(const ember_tensor* input, const ember_tensor* batch1,
                                                       const ember_tensor* batch2, double beta, double alpha,
                                                       ember_tensor** out);
/* torch.einsum(equation, operands...) on n float tensors: letters a-z A-Z, one "..." per operand, "->" optional
 * (implicit output: the ellipsis, then the letters used once, alphabetically), repeated letters in one operand take
 * diagonals. Malformed equations are EMBER_ERR_ARGUMENT, mismatched sizes EMBER_ERR_SHAPE. */
EMBER_API ember_status EMBER_CALL ember_einsum(const char* equation, const ember_tensor* const* operands, size_t n,
                                               ember_tensor** out);
/* torch.logsumexp(x, dims, keepdim) over n distinct dims (n = 0: all), numerically stable; float x. */
EMBER_API ember_status EMBER_CALL ember_tensor_logsumexp(const ember_tensor* x, const int64_t* dims, size_t n,
                                                         int32_t keepdim, ember_tensor** out);
/* torch.std(x, dims, correction=, keepdim=) over n distinct dims (n = 0: all): sqrt(sum((x - mean)^2) /
 * max(N - correction, 0)); correction 1 is torch's unbiased=True, 0 unbiased=False. Float x. */
EMBER_API ember_status EMBER_CALL ember_tensor_std(const ember_tensor* x, const int64_t* dims, size_t n,
                                                   double correction, int32_t keepdim, ember_tensor** out);
/* F.interpolate(x, size=, scale_factor=, mode=, align_corners=) on float x [N, C, H, W]: exactly one of size
 * (n_size values > 0, at most 2^24) and scale_factor (n_scale values > 0; output floor(in * scale)) is given, the
 * other has count 0; a count of 1 applies the value to H and W, 2 gives (H, W). NEAREST picks torch 1.13's source
 * index (floor(dst * scale), the scale in float); BILINEAR interpolates separably; align_corners (bilinear only). */
EMBER_API ember_status EMBER_CALL ember_interpolate(const ember_tensor* x, const int64_t* size, size_t n_size,
                                                    const double* scale_factor, size_t n_scale,
                                                    ember_interpolate_mode_t mode, int32_t align_corners,
                                                    ember_tensor** out);
/* ==== attention (issue 13, h-flash) ====
 * torch.nn.functional.scaled_dot_product_attention without dropout: softmax(query @ key^T * scale + attn_bias
 * [+ causal mask]) @ value, query [B, H, L, E], key [B, H, S, E], value [B, H, S, Ev] float -> *out [B, H, L, Ev].
 * attn_bias: NULL or a float tensor of rank 4 broadcastable to [B, H, L, S], added to the scores (a boolean mask is
 * the caller's to convert: -inf where masked). is_causal: query i attends to keys j <= i (top-left aligned). scale:
 * NaN for the default 1 / sqrt(E). Rows whose every score is -inf give 0 (torch gives NaN). Backends with a fused
 * kernel (CPU, Vulkan, CUDA) never materialize the [L, S] scores; gradients flow to query, key, value and attn_bias. */
EMBER_API ember_status EMBER_CALL ember_scaled_dot_product_attention(const ember_tensor* query,
                                                                     const ember_tensor* key,
                                                                     const ember_tensor* value,
                                                                     const ember_tensor* attn_bias,
                                                                     int32_t is_causal, double scale,
                                                                     ember_tensor** out);
/* ==== attention (issue 13, h-mha) ====
 * Masks, as PyTorch's: NULL, or a bool tensor (true = may not be attended) or a float tensor (added to the scores);
 * both masks are merged into one additive bias. attn_mask [L, S] or [N * num_heads, L, S]; key_padding_mask [N, S].
 * mode: ember_mode (dropout in TRAIN). Every result is differentiable w.r.t. the float operands and the params. */
/* A MULTIHEAD_ATTENTION module (ember_module_sequential of that one layer, or ember_module_layer): query [L, N, E],
 * key [S, N, kdim], value [S, N, vdim] ([N, L, E] ... with batch_first) -> *out like query. With need_weights,
 * *weights gets the attention weights, averaged over heads [N, L, S] when average_attn_weights, else per head
 * [N, num_heads, L, S]. weights may be NULL when need_weights is 0; otherwise *weights is set (NULL without
 * need_weights). */
EMBER_API ember_status EMBER_CALL ember_module_forward_attention(ember_module* module, const ember_tensor* query,
                                                                 const ember_tensor* key, const ember_tensor* value,
                                                                 const ember_tensor* key_padding_mask,
                                                                 const ember_tensor* attn_mask, int32_t need_weights,
                                                                 int32_t average_attn_weights, ember_mode_t mode,
                                                                 ember_tensor** out, ember_tensor** weights);
/* A TRANSFORMER_ENCODER_LAYER module: src [S, N, E] ([N, S, E] with batch_first), mask [S, S] or [N * nhead, S, S],
 * src_key_padding_mask [N, S] -> *out like src. */
EMBER_API ember_status EMBER_CALL ember_module_forward_encoder(ember_module* module, const ember_tensor* src,
                                                               const ember_tensor* mask,
                                                               const ember_tensor* src_key_padding_mask,
                                                               ember_mode_t mode, ember_tensor** out);
/* A TRANSFORMER_DECODER_LAYER module: tgt [T, N, E], memory [S, N, E] (batch leading with batch_first), tgt_mask
 * [T, T], memory_mask [T, S] (or their 3-D forms), tgt_key_padding_mask [N, T], memory_key_padding_mask [N, S]
 * -> *out like tgt. */
EMBER_API ember_status EMBER_CALL ember_module_forward_decoder(ember_module* module, const ember_tensor* tgt,
                                                               const ember_tensor* memory,
                                                               const ember_tensor* tgt_mask,
                                                               const ember_tensor* memory_mask,
                                                               const ember_tensor* tgt_key_padding_mask,
                                                               const ember_tensor* memory_key_padding_mask,
                                                               ember_mode_t mode, ember_tensor** out);

/* ==== positional embeddings (issue 13, h-rope) ====
 * Rotary position embedding (RoPE), GPT-NeoX / Hugging Face LLaMA's half-rotation ("rotate_half") convention, not
 * the interleaved pairs of RoFormer: on float x [..., L, D] (any leading dims: e.g. [N, H, L, head_dim]), position
 * p = offset + l rotates the pair (x1[i], x2[i]) of the first rotary_dim features, x1 = x[..., :rotary_dim/2],
 * x2 = x[..., rotary_dim/2:rotary_dim], by angle p * base^(-2i / rotary_dim):
 *     out[..., :rotary_dim] = x * cos(cat(f, f)) + cat(-x2, x1) * sin(cat(f, f))
 * and features past rotary_dim pass through (partial rotary). rotary_dim even, 0 < rotary_dim <= D; base > 0
 * (10000 usual); offset >= 0 (the position of the first row, e.g. the cache length when decoding). No params;
 * differentiable w.r.t. x. The same as ember::nn::RotaryEmbedding and Python's ember.nn.RotaryEmbedding.
 * A learned absolute positional embedding (ember::nn::LearnedPositionalEmbedding, Python's
 * ember.nn.LearnedPositionalEmbedding) needs no function of its own: it is an EMBER_LAYER_EMBEDDING module with
 * in_features = max_len, out_features = d_model applied to ember_tensor_arange(offset, offset + L) and added to x
 * (ember_tensor_add broadcasts the [L, d_model] rows over the batch). */
EMBER_API ember_status EMBER_CALL ember_tensor_rotary_embedding(const ember_tensor* x, int64_t rotary_dim,
                                                                double base, int64_t offset, ember_tensor** out);

/* ==== ONNX import (issue 19, h-onnx-surface) ====
 * An ONNX model (opsets 7-17) as a module of ember_module_create's kind: its params are the graph's initializers,
 * named as in the file ("fc1.weight", "onnx::MatMul_7"), float ones trainable (they require grad) and the others
 * EMBER_PARAM_CONSTANT; so ember_module_param* / find_param, records (ember_module_to_record / load_record), the
 * optimizers and ember_module_set_requires_grad work on it unchanged, and gradients of a loss on its outputs reach
 * them. The graph runs with Ember's ops on the module's device (cpu, vulkan, cuda); ember_module_forward runs a
 * model of one input (its first output). It starts in eval mode (an exported graph is an inference graph).
 * ember_onnx_load / _load_memory return EMBER_ERR_UNSUPPORTED, saying so, in a libember built without the ONNX
 * library (meson -Donnx=disabled); the operator list is there in every build. Operators or dtypes Ember lacks are
 * EMBER_ERR_UNSUPPORTED (every operator named, with its node and opset); a malformed or hostile model (sizes past
 * its bytes, a cycle, an external data file outside the model's folder) is an error with the reason. */
/* Loads the model at path (external data files are looked up beside it) onto device (NULL: the default). */
EMBER_API ember_status EMBER_CALL ember_onnx_load(const char* path, const ember_device* device, ember_module** out);
/* The same from size bytes of a serialized ModelProto in memory (a model with external data is refused). */
EMBER_API ember_status EMBER_CALL ember_onnx_load_memory(const void* data, size_t size, const ember_device* device,
                                                         ember_module** out);
/* Runs the graph: inputs[i] is the graph's input i (in the order of ember_onnx_input_name), n_inputs the input
 * count exactly; each input must live on the module's device and match its declared dtype and static dims (dynamic
 * dims are taken from the tensor). outputs[0 .. n_outputs) receive new tensor handles of the first n_outputs graph
 * outputs (n_outputs <= the output count; on failure every one is NULL). The params' current values are used (an
 * optimizer step or a load is seen by the next call). mode EMBER_MODE_TRAIN runs Dropout and BatchNormalization as
 * in training. Outputs are differentiable w.r.t. the float inputs and params. Calls on one module are serialized. */
EMBER_API ember_status EMBER_CALL ember_onnx_forward(ember_module* module, const ember_tensor* const* inputs,
                                                     size_t n_inputs, ember_tensor** outputs, size_t n_outputs,
                                                     ember_mode_t mode);
/* The graph's inputs (without its initializers) and outputs: counts, and names per Strings above. A module that
 * ember_onnx_load did not make is EMBER_ERR_INVALID_ARGUMENT. */
EMBER_API ember_status EMBER_CALL ember_onnx_input_count(const ember_module* module, size_t* count);
EMBER_API ember_status EMBER_CALL ember_onnx_output_count(const ember_module* module, size_t* count);
EMBER_API ember_status EMBER_CALL ember_onnx_input_name(const ember_module* module, size_t index, char* buf,
                                                        size_t capacity, size_t* length);
EMBER_API ember_status EMBER_CALL ember_onnx_output_name(const ember_module* module, size_t index, char* buf,
                                                         size_t capacity, size_t* length);
/* The declared element type (ember_dtype; -1 where the file gives none Ember has) and dims of input `index`:
 * *rank gets the rank (-1 when the file leaves it unknown, then nothing is written), dims[0 .. min(rank, capacity))
 * the dims, -1 for a dynamic one. capacity below the rank is EMBER_ERR_BUFFER_TOO_SMALL (capacity 0: a query). */
EMBER_API ember_status EMBER_CALL ember_onnx_input_info(const ember_module* module, size_t index, int32_t* dtype,
                                                        int64_t* dims, size_t capacity, int64_t* rank);
/* The ONNX operators (default domain) the importer converts, sorted by name: count, then name by index. */
EMBER_API ember_status EMBER_CALL ember_onnx_operator_count(size_t* count);
EMBER_API ember_status EMBER_CALL ember_onnx_operator_name(size_t index, char* buf, size_t capacity,
                                                           size_t* length);

/* ==== Compiled forwards (issue 14): ember_compile, ember_module_compile ====
 * A forward captured once per input signature and replayed afterwards, with its backward (torch.compile /
 * ORTModule semantics: the forward AND its backward are compiled; the loss and the optimizer stay eager). The first
 * call of a signature runs the forward on tensors of a capture runtime while it records every op (it is an eager
 * run, same bits); if grad mode is on and the one output requires grad, the backward from that output is recorded
 * too. Later calls with that signature run the recorded forward on the current values of the state handles (an
 * optimizer step replaced them since) and of the inputs, without the callback; the result's backward runs the
 * recorded backward and adds the gradients into the state's .grad, as the eager backward would. Two forwards before
 * one backward (gradient accumulation) each keep their own activations.
 * Signature: each input's dtype, device and shape; each state tensor's shape and requires_grad; grad mode; `mode`
 * (the caller's train / eval flag: ember_mode); the output count. A new signature captures again.
 * Only CPU float32 tensors are captured. Anything else runs the callback eagerly on the caller's tensors, and
 * ember_compiled_fallback_reason says why in one line: an input or state tensor of another device or dtype; a value
 * read to the host during the forward (data-dependent: that signature stays eager); an op the capture runtime does
 * not have (in-place ops, RNNs, attention, sequential / module-tree layers, ...); a tensor of the builtin runtime
 * met in an op (a constant made inside the forward; dropout through ember_tensor_dropout is captured, its draws made
 * again on each replay); more than one output requiring grad; a forward that replaces a state tensor (batch norm's
 * running statistics). A capture that fails runs the callback once more, eagerly, from the generator state it started
 * with: when that fails too its status is returned. During a capture the state handles hold capture tensors
 * (restored on every path, failures included). Not thread-safe: one call at a time per compiled object. */
typedef struct ember_compiled ember_compiled;
enum ember_compiled_call_kind { EMBER_COMPILED_EAGER = 0, EMBER_COMPILED_CAPTURED = 1, EMBER_COMPILED_REPLAYED = 2 };
typedef int32_t ember_compiled_call_kind_t;
/* The caller's forward: reads inputs[0 .. n_inputs) (valid during the call only) and the state handles, and stores
 * n_outputs new tensor handles in outputs (Ember takes them over and frees them). mode is ember_compiled_call's.
 * A status other than EMBER_OK fails the call with that status. */
typedef ember_status(EMBER_CALL* ember_compiled_forward_fn)(void* user, ember_mode_t mode,
                                                            const ember_tensor* const* inputs, size_t n_inputs,
                                                            ember_tensor** outputs, size_t n_outputs);
/* A compiled forward over `state` (the params and buffers the forward reads, kept alive by the compiled object
 * until ember_compiled_free) calling forward(user, ...). */
EMBER_API ember_status EMBER_CALL ember_compile(ember_tensor* const* state, size_t n_state,
                                                ember_compiled_forward_fn forward, void* user, ember_compiled** out);
/* ember_compile over the module's params and buffers with ember_module_forward (one input, one output) as the
 * forward. Layers of a Sequential or a module tree run on the module's own runtime, not the capture one: such a
 * forward falls back to eager with its reason (a forward made of ember_tensor_* ops through ember_compile captures). */
EMBER_API ember_status EMBER_CALL ember_module_compile(ember_module* module, ember_compiled** out);
/* Runs the compiled forward on inputs; outputs[0 .. n_outputs) receive new handles (all NULL on failure). */
EMBER_API ember_status EMBER_CALL ember_compiled_call(ember_compiled* compiled, ember_mode_t mode,
                                                      const ember_tensor* const* inputs, size_t n_inputs,
                                                      ember_tensor** outputs, size_t n_outputs);
/* How the last call ran: ember_compiled_call_kind (EAGER before any call). */
EMBER_API ember_status EMBER_CALL ember_compiled_last_call(const ember_compiled* compiled,
                                                           ember_compiled_call_kind_t* kind);
/* Why the last call ran eagerly, one line ("" unless it did); see Strings above. */
EMBER_API ember_status EMBER_CALL ember_compiled_fallback_reason(const ember_compiled* compiled, char* buf,
                                                                 size_t capacity, size_t* length);
EMBER_API ember_status EMBER_CALL ember_compiled_free(ember_compiled* compiled);

/* ==== A linear layer's op in one call (issue 14) ====
 * out = act(x @ op(w) + bias): x [M, K] float; op(w) = w^T for a [N, K] w when trans_w is nonzero (PyTorch's Linear
 * weight, read transposed in place: no copy), else w [K, N]; bias [N] or NULL; relu nonzero applies ReLU in the
 * GEMM's output pass. x, w and bias share one device and dtype. Under autograd it is one recorded op whose backward
 * reads the transposes in place too (gradients for x, w and bias). Python's F.linear and nn.Linear call it. */
EMBER_API ember_status EMBER_CALL ember_tensor_linear(const ember_tensor* x, const ember_tensor* w,
                                                      const ember_tensor* bias, int32_t trans_w, int32_t relu,
                                                      ember_tensor** out);

/* ==== One Adam / AdamW update of a tensor, in place (issue 14) ====
 * The engine's fused update (one pass where the backend has a kernel; the CPU's does), the optimizer half of a
 * compiled training step as ORTModule pairs with FusedAdam. With t = step (this update's count, >= 1),
 * torch.optim.Adam / AdamW's single-tensor formulas in PyTorch 1.13's order of operations:
 *   decoupled (AdamW): param = param * (1 - lr * weight_decay);  else (Adam): grad = grad + weight_decay * param
 *   exp_avg = beta1 * exp_avg + (1 - beta1) * grad
 *   exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * grad * grad
 *   param = param - lr / (1 - beta1^t) * exp_avg / (sqrt(exp_avg_sq) / sqrt(1 - beta2^t) + eps)
 * The first step starts from zero moments (zeros_like(param)). param, exp_avg and exp_avg_sq take their new values
 * as with p.copy_(new) under no_grad (the same handles, version + 1; a leaf keeps its .grad); nothing is recorded.
 * All four are float tensors of one shape, dtype and device. lr, eps, weight_decay: finite, >= 0; betas in [0, 1). */
EMBER_API ember_status EMBER_CALL ember_tensor_adam_step(ember_tensor* param, const ember_tensor* grad,
                                                         ember_tensor* exp_avg, ember_tensor* exp_avg_sq, double lr,
                                                         double beta1, double beta2, double eps,
                                                         double weight_decay, int32_t decoupled, int64_t step);

/* ==== Dropout as one op (issue 14) ====
 * torch.nn.functional.dropout in training mode: each element of the float tensor x is zeroed with probability p and
 * the others are scaled by 1 / (1 - p) (p == 0: a new handle on x itself; p == 1: zeros, with a zero gradient). The
 * mask is drawn from Ember's global generator (ember_seed), so a seed reproduces it on every backend; under autograd
 * the backward multiplies by the same mask. Inside ember_compile's forward the draw is recorded, and every replay
 * draws a new mask from the same generator, in the order an eager call would (a forward with dropout is captured,
 * not run eagerly). Eval mode is the caller's: do not call it. p in [0, 1]. */
EMBER_API ember_status EMBER_CALL ember_tensor_dropout(const ember_tensor* x, double p, ember_tensor** out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* EMBER_H */
