// The fuzzer's action table: one row per C ABI call (or small group of calls) with arguments drawn from the input.
// Adding an ABI function is one row: MAKE(fn, args...) when its last parameter is an H** out handle, CALL(fn, args...)
// otherwise; c.tensor() / c.module() / ... pick handles (live, NULL, freed or of the wrong type), c.choice(n) enum
// values, c.dim() / c.size() / c.real() numbers (sometimes hostile). fuzz_context.hpp enforces ember.h's rules.
// The Vulkan rows live in fuzz_actions_vulkan.cpp.
#include "tests/fuzz/fuzz_actions.hpp"

#include <algorithm>
#include <cstring>

namespace ember_fuzz {
namespace {

// Enum counts (valid values are 0..n-1).
constexpr int32_t kBackends = 3, kUnary = 27, kBinary = 9, kScalarOps = 10, kCompare = 6,
                  kPredicates = 2, kLogic = 3, kReduce = 5, kDists = 3, kReductions = 2, kLayerKinds = 30,
                  kModes = 2, kLoadModes = 2, kOptimKinds = 3, kRecorders = 3, kPrecisions = 4, kInplaceOps = 6,
                  kFftOps = 4, kFftNorms = 3, kSchedulerKinds = 5;

// A tensor from caller bytes: a buffer of exactly data_bytes (any overread is an ASan report), sized right for the
// shape most of the time.
void from_data(Ctx& c) {
  ember_device* device = c.device();
  const int32_t dtype = c.choice(kDtypes);
  std::vector<int64_t> shape = c.shape();
  int64_t numel = 1;
  for (int64_t d : shape) numel = d >= 0 && d <= 64 ? numel * d : 65;
  static constexpr std::size_t kElemBytes[kDtypes] = {4, 8, 2, 4, 8, 1, 1, 2};
  std::size_t bytes = dtype >= 0 && dtype < kDtypes && numel <= 64 ? std::size_t(numel) * kElemBytes[dtype] : 8;
  if (c.in.ConsumeIntegralInRange<int>(0, 7) == 0) bytes = c.in.ConsumeIntegralInRange<std::size_t>(0, 64);
  std::vector<uint8_t> data = c.in.ConsumeBytes<uint8_t>(bytes);
  data.resize(bytes);
  const bool null_data = c.in.ConsumeIntegralInRange<int>(0, 15) == 0;
  MAKE(ember_tensor_from_data, device, dtype, null_data ? nullptr : data.data(), bytes,
       shape.empty() ? nullptr : shape.data(), shape.size());
}

// Full / zeros / ones / random over a fuzzed shape (NULL shape pointer when the rank is 0).
void creation(Ctx& c) {
  ember_device* device = c.device();
  const int32_t dtype = c.choice(kDtypes);
  std::vector<int64_t> s = c.shape();
  const int64_t* dims = s.empty() ? nullptr : s.data();
  switch (c.in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: MAKE(ember_tensor_full, device, dtype, dims, s.size(), c.real()); break;
    case 1: MAKE(ember_tensor_zeros, device, dtype, dims, s.size()); break;
    case 2: MAKE(ember_tensor_ones, device, dtype, dims, s.size()); break;
    default:
      MAKE(ember_tensor_random, device, c.choice(kDists), c.real(), c.real(), c.in.ConsumeIntegral<uint64_t>(), dims,
           s.size());
  }
}

void arange(Ctx& c) {
  ember_device* device = c.device();
  const int32_t dtype = c.choice(kDtypes);
  const int64_t start = c.dim(), end = c.size(), step = c.in.ConsumeIntegralInRange<int64_t>(-2, 2);
  MAKE(ember_tensor_arange, device, dtype, start, end, step);
}

void queries(Ctx& c) {
  ember_tensor* t = c.tensor();
  switch (c.in.ConsumeIntegralInRange<int>(0, 6)) {
    case 0: {
      int32_t dtype = 0;
      CALL(ember_tensor_dtype, t, c.flag() ? &dtype : nullptr);
      break;
    }
    case 1: {
      size_t rank = 0;
      CALL(ember_tensor_rank, t, c.flag() ? &rank : nullptr);
      break;
    }
    case 2: {
      std::vector<int64_t> dims(c.in.ConsumeIntegralInRange<std::size_t>(0, 9));
      size_t rank = 0;
      CALL(ember_tensor_shape, t, dims.empty() ? nullptr : dims.data(), dims.size(), c.flag() ? &rank : nullptr);
      break;
    }
    case 3: {
      int64_t numel = 0;
      CALL(ember_tensor_numel, t, c.flag() ? &numel : nullptr);
      break;
    }
    case 4: {
      double v = 0;
      CALL(ember_tensor_item, t, c.flag() ? &v : nullptr);
      break;
    }
    case 5: MAKE(ember_tensor_device, t); break;
    default: {
      int32_t requires_grad = 0;
      CALL(ember_tensor_requires_grad, t, c.flag() ? &requires_grad : nullptr);
    }
  }
}

void copy_to(Ctx& c) {
  ember_tensor* t = c.tensor();
  const int32_t dtype = c.choice(kDtypes);
  std::vector<uint8_t> buffer(c.capacity());
  size_t written = 0;
  // A NULL buffer with a nonzero capacity is a detectable caller error too.
  void* data = buffer.empty() || c.in.ConsumeIntegralInRange<int>(0, 15) == 0 ? nullptr : buffer.data();
  CALL(ember_tensor_copy_to, t, dtype, data, buffer.size(), c.flag() ? &written : nullptr);
}

void reshape(Ctx& c) {
  ember_tensor* t = c.tensor();
  std::vector<int64_t> s = c.shape();
  if (!s.empty() && c.flag()) s[c.in.ConsumeIntegralInRange<std::size_t>(0, s.size() - 1)] = -1;
  MAKE(ember_tensor_reshape, t, s.empty() ? nullptr : s.data(), s.size());
}

void permute(Ctx& c) {
  ember_tensor* t = c.tensor();
  std::vector<int64_t> axes(c.in.ConsumeIntegralInRange<std::size_t>(0, 5));
  for (auto& a : axes) a = c.dim();
  MAKE(ember_tensor_permute, t, axes.empty() ? nullptr : axes.data(), axes.size());
}

void slice(Ctx& c) {
  ember_tensor* t = c.tensor();
  const std::size_t n = c.in.ConsumeIntegralInRange<std::size_t>(0, 5);
  std::vector<int64_t> starts(n), ends(n);
  for (std::size_t i = 0; i < n; ++i) {
    starts[i] = c.dim();
    ends[i] = c.flag() ? EMBER_SLICE_END : c.dim();
  }
  MAKE(ember_tensor_slice, t, n ? starts.data() : nullptr, n ? ends.data() : nullptr, n);
}

void cat(Ctx& c) {
  std::vector<ember_tensor*> xs = c.tensors();
  MAKE(ember_tensor_cat, xs.empty() ? nullptr : xs.data(), xs.size(), c.dim());
}

// conv2d / max_pool2d / avg_pool2d with options that are NULL, defaults or fuzzed.
void conv_pool(Ctx& c) {
  ember_tensor* x = c.tensor();
  const int which = c.in.ConsumeIntegralInRange<int>(0, 2);
  if (which == 0) {
    Padded<ember_conv2d_options> o;
    Ctx::check("ember_conv2d_options_init", ember_conv2d_options_init(&o.value));
    if (c.flag()) {
      for (int i = 0; i < 2; ++i) {
        o.value.stride[i] = c.size();
        o.value.padding[i] = c.size();
        o.value.dilation[i] = c.size();
      }
      o.value.groups = c.size();
    }
    o.value.struct_size = c.struct_size(sizeof o.value);
    ember_tensor* w = c.tensor();
    ember_tensor* b = c.tensor();
    MAKE(ember_tensor_conv2d, x, w, b, c.flag() ? &o.value : nullptr);
    return;
  }
  Padded<ember_pool2d_options> o;
  Ctx::check("ember_pool2d_options_init", ember_pool2d_options_init(&o.value));
  if (c.flag()) {
    for (int i = 0; i < 2; ++i) {
      o.value.kernel_size[i] = c.size();
      o.value.stride[i] = c.size();
      o.value.padding[i] = c.size();
      o.value.dilation[i] = c.size();
    }
    o.value.count_include_pad = c.choice(2);
  }
  o.value.struct_size = c.struct_size(sizeof o.value);
  const ember_pool2d_options* opts = c.flag() ? &o.value : nullptr;
  if (which == 1)
    MAKE(ember_tensor_max_pool2d, x, opts);
  else
    MAKE(ember_tensor_avg_pool2d, x, opts);
}

// ---------------------------------------------------------------- autodiff
void backward(Ctx& c) {
  ember_tensor* t = c.tensor();
  MAKE(ember_tensor_backward, t, c.flag() ? nullptr : c.tensor());
}

void grads_get(Ctx& c) {
  // *out may be NULL with EMBER_OK here (a leaf the backward did not reach), so not through make().
  ember_grads* g = c.grads();
  ember_tensor* t = c.tensor();
  ember_tensor* out = reinterpret_cast<ember_tensor*>(uintptr_t{1});
  const ember_status s = CALL(ember_grads_get, g, t, &out);
  if (s != EMBER_OK && out) violation("ember_grads_get", "failed without setting *out to NULL");
  if (s == EMBER_OK && out) c.keep(out, "ember_grads_get");
}

void no_grad(Ctx& c) {
  if (c.flag()) {
    if (CALL(ember_no_grad_enter) == EMBER_OK) ++c.no_grad_depth;
  } else {
    // Exits beyond the entered scopes must be refused, not underflow the per-thread depth.
    if (CALL(ember_no_grad_exit) == EMBER_OK) --c.no_grad_depth;
    if (c.no_grad_depth < 0) violation("ember_no_grad_exit", "accepted an exit without a matching enter");
  }
  int32_t enabled = -1;
  CALL(ember_is_grad_enabled, c.flag() ? &enabled : nullptr);
}

// ---------------------------------------------------------------- issue 11: .grad, backward_ex, autograd.grad, in-place
void backward_ex(Ctx& c) {
  ember_tensor* t = c.tensor();
  ember_tensor* seed = c.flag() ? nullptr : c.tensor();
  Padded<ember_backward_options> o;
  Ctx::check("ember_backward_options_init", ember_backward_options_init(&o.value));
  o.value.retain_graph = c.choice(2);
  o.value.accumulate = c.choice(2);
  o.value.struct_size = c.struct_size(sizeof o.value);
  const ember_backward_options* opts = c.flag() ? &o.value : nullptr;
  if (c.flag())
    CALL(ember_tensor_backward_ex, t, seed, opts, nullptr);  // out may be NULL: accumulate into .grad only
  else
    MAKE(ember_tensor_backward_ex, t, seed, opts);
}

void autograd_grad(Ctx& c) {
  std::vector<ember_tensor*> outputs = c.tensors();
  std::vector<ember_tensor*> seeds(outputs.size());
  const bool with_seeds = c.flag();
  for (auto& s : seeds) s = c.flag() ? nullptr : c.tensor();
  std::vector<ember_tensor*> inputs = c.tensors();
  // Sentinels: every results[i] must be written (NULL on failure, a handle or NULL for an unused input on success).
  std::vector<ember_tensor*> results(inputs.size(), reinterpret_cast<ember_tensor*>(uintptr_t{1}));
  const int32_t retain = c.choice(2), allow_unused = c.choice(2);
  const ember_status s =
      CALL(ember_autograd_grad, outputs.empty() ? nullptr : outputs.data(),
           with_seeds && !seeds.empty() ? seeds.data() : nullptr, outputs.size(),
           inputs.empty() ? nullptr : inputs.data(), inputs.size(), retain, allow_unused,
           results.empty() ? nullptr : results.data());
  for (ember_tensor* r : results) {
    if (s != EMBER_OK && r) violation("ember_autograd_grad", "failed without setting every results[i] to NULL");
    if (s == EMBER_OK && r == reinterpret_cast<ember_tensor*>(uintptr_t{1}))
      violation("ember_autograd_grad", "succeeded without writing every results[i]");
    if (s == EMBER_OK && r) c.keep(r, "ember_autograd_grad");
  }
}

void tensor_grad(Ctx& c) {
  // *out is NULL with EMBER_OK for a leaf without .grad, so not through make().
  ember_tensor* t = c.tensor();
  ember_tensor* out = reinterpret_cast<ember_tensor*>(uintptr_t{1});
  const ember_status s = CALL(ember_tensor_grad, t, &out);
  if (s != EMBER_OK && out) violation("ember_tensor_grad", "failed without setting *out to NULL");
  if (s == EMBER_OK && out) c.keep(out, "ember_tensor_grad");
}

void autograd_queries(Ctx& c) {
  ember_tensor* t = c.tensor();
  if (c.flag()) {
    int32_t leaf = 0;
    CALL(ember_tensor_is_leaf, t, c.flag() ? &leaf : nullptr);
  } else {
    int64_t version = 0;
    CALL(ember_tensor_version, t, c.flag() ? &version : nullptr);
  }
}

// ---------------------------------------------------------------- issue 11: tensor core
void fft(Ctx& c) {
  ember_tensor* x = c.tensor();
  const int32_t op = c.choice(kFftOps);
  const int64_t n = c.flag() ? c.size() : c.dim();  // <= 0: the input's length
  MAKE(ember_tensor_fft, x, op, n, c.dim(), c.choice(kFftNorms));
}

// The view must cover numel elements of the storage dtype: read them all (ASan reports a short or dangling view).
void data_ptr(Ctx& c) {
  ember_tensor* t = c.tensor();
  const void* data = reinterpret_cast<const void*>(uintptr_t{1});
  const bool null_out = c.flag();
  if (CALL(ember_tensor_data_ptr, t, null_out ? nullptr : &data) != EMBER_OK || null_out) return;
  int64_t numel = 0;
  int32_t dtype = 0;
  if (ember_tensor_numel(t, &numel) != EMBER_OK || ember_tensor_dtype(t, &dtype) != EMBER_OK)
    violation("ember_tensor_data_ptr", "gave a view of a tensor that does not answer numel / dtype");
  if (numel > 0 && !data) violation("ember_tensor_data_ptr", "gave NULL for a tensor with elements");
  const std::size_t elem = dtype == EMBER_DTYPE_F32 ? 4 : dtype == EMBER_DTYPE_BOOL ? 1 : 8;
  const auto* bytes = static_cast<const volatile unsigned char*>(data);
  unsigned sum = 0;
  for (std::size_t i = 0; i < std::size_t(numel) * elem; ++i) sum += bytes[i];
  (void)sum;
}

// ---------------------------------------------------------------- modules
// One layer: ember_layer_init's defaults for a kind, then small in / out features, and sometimes hostile fields.
ember_layer_desc layer_desc(Ctx& c) {
  ember_layer_desc d;
  Ctx::check("ember_layer_init", ember_layer_init(&d, c.in.ConsumeIntegralInRange<int32_t>(0, kLayerKinds - 1)));
  if (c.flag()) {
    d.in_features = c.size();
    d.out_features = c.size();
  }
  if (c.in.ConsumeIntegralInRange<int>(0, 3) == 0) {
    d.kind = c.choice(kLayerKinds);
    d.kernel_size[0] = c.size();
    d.kernel_size[1] = c.size();
    d.stride[0] = c.size();
    d.padding[1] = c.size();
    d.dilation[0] = c.size();
    d.groups = c.size();
    d.dim = c.dim();
    d.end_dim = c.dim();
    d.p = c.real();
    d.eps = c.real();
    d.momentum = c.real();
    d.bias = c.choice(2);
    d.approximate = c.choice(2);
  }
  return d;
}

// A Sequential of up to 4 layers, packed with the stride of the struct_size they claim, as ember.h says (a newer
// caller's larger structs included).
void sequential(Ctx& c) {
  const std::size_t n = c.in.ConsumeIntegralInRange<std::size_t>(0, 4);
  const uint32_t struct_size = c.struct_size(sizeof(ember_layer_desc));
  // Sizes below the struct must be refused before any stride is used; the buffer holds whole structs anyway.
  const std::size_t stride = std::max<std::size_t>(struct_size, sizeof(ember_layer_desc));
  std::vector<unsigned char> packed(stride * n + sizeof(ember_layer_desc));
  for (std::size_t i = 0; i < n; ++i) {
    ember_layer_desc d = layer_desc(c);
    d.struct_size = struct_size;
    std::memcpy(packed.data() + i * stride, &d, sizeof d);
  }
  ember_device* device = c.device();
  MAKE(ember_module_sequential, device, n ? reinterpret_cast<const ember_layer_desc*>(packed.data()) : nullptr, n);
}

void module_queries(Ctx& c) {
  ember_module* m = c.module();
  const size_t index = static_cast<size_t>(c.size());
  switch (c.in.ConsumeIntegralInRange<int>(0, 4)) {
    case 0: {
      size_t count = 0;
      CALL(ember_module_param_count, m, c.flag() ? &count : nullptr);
      break;
    }
    case 1: {
      Padded<ember_param_info> info;
      info.value.struct_size = c.struct_size(sizeof info.value);
      CALL(ember_module_param_info, m, index, c.flag() ? &info.value : nullptr);
      break;
    }
    case 2: {
      std::vector<char> buf(c.capacity());
      size_t length = 0;
      CALL(ember_module_param_name, m, index, buf.empty() ? nullptr : buf.data(), buf.size(),
           c.flag() ? &length : nullptr);
      break;
    }
    case 3: MAKE(ember_module_param_value, m, index); break;
    default: {
      int64_t numel = 0;
      CALL(ember_module_num_elements, m, c.flag() ? &numel : nullptr);
    }
  }
}

// ---------------------------------------------------------------- records
Padded<ember_record_options> record_options(Ctx& c) {
  Padded<ember_record_options> o;
  Ctx::check("ember_record_options_init", ember_record_options_init(&o.value));
  if (c.flag()) {
    o.value.recorder = c.choice(kRecorders);
    o.value.precision = c.choice(kPrecisions);
  }
  o.value.struct_size = c.struct_size(sizeof o.value);
  return o;
}

void load_record(Ctx& c) {
  ember_module* m = c.module();
  ember_record* r = c.record();
  const int32_t mode = c.choice(kLoadModes);
  ember_load_report* report = nullptr;
  const bool want_report = c.flag();
  CALL(ember_module_load_record, m, r, mode, want_report ? &report : nullptr);
  if (report) c.keep(report, "ember_module_load_record");
}

void file_io(Ctx& c) {
  Padded<ember_record_options> o = record_options(c);
  const ember_record_options* opts = c.flag() ? &o.value : nullptr;
  switch (c.in.ConsumeIntegralInRange<int>(0, 5)) {
    case 0: CALL(ember_module_save, c.module(), c.path(), opts); break;
    case 1: {
      ember_module* m = c.module();
      const char* p = c.path();
      ember_load_report* report = nullptr;
      CALL(ember_module_load, m, p, c.choice(kLoadModes), c.flag() ? &report : nullptr);
      if (report) c.keep(report, "ember_module_load");
      break;
    }
    case 2: CALL(ember_record_write_file, c.record(), c.path(), opts); break;
    case 3: MAKE(ember_record_read_file, c.path()); break;
    case 4: CALL(ember_optimizer_save, c.optimizer(), c.path(), opts); break;
    default: CALL(ember_optimizer_load, c.optimizer(), c.path());
  }
}

// safetensors files and PyTorch state_dicts (issue 13): a record written as safetensors and read back, a module
// loaded from any record through the PyTorch name map, and a module's state_dict.
void safetensors_io(Ctx& c) {
  switch (c.in.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: CALL(ember_record_write_safetensors, c.record(), c.path()); break;
    case 1: MAKE(ember_record_read_safetensors, c.path()); break;
    case 2: {
      ember_module* m = c.module();
      ember_record* r = c.record();
      ember_load_report* report = nullptr;
      CALL(ember_module_load_torch_state_dict, m, r, c.choice(kLoadModes), c.flag() ? &report : nullptr);
      if (report) c.keep(report, "ember_module_load_torch_state_dict");
      break;
    }
    default: MAKE(ember_module_to_torch_state_dict, c.module());
  }
}

// Record bytes: written by the library (then maybe corrupted), or straight from the input, read back.
void record_bytes(Ctx& c) {
  ember_record* r = c.record();
  Padded<ember_record_options> o = record_options(c);
  std::vector<uint8_t> bytes(c.flag() ? c.capacity() : 0);
  size_t size = 0;
  const ember_status s = CALL(ember_record_to_bytes, r, c.flag() ? &o.value : nullptr,
                              bytes.empty() ? nullptr : bytes.data(), bytes.size(), c.flag() ? &size : nullptr);
  if (s == EMBER_ERR_BUFFER_TOO_SMALL && size > 0 && size < (1u << 20)) {
    bytes.resize(size);
    CALL(ember_record_to_bytes, r, &o.value, bytes.data(), bytes.size(), &size);
  }
  if (!bytes.empty() && c.flag()) {  // flip some bytes of a genuine record
    for (int i = c.in.ConsumeIntegralInRange<int>(0, 4); i > 0; --i)
      bytes[c.in.ConsumeIntegralInRange<std::size_t>(0, bytes.size() - 1)] ^= c.in.ConsumeIntegral<uint8_t>();
    bytes.resize(c.in.ConsumeIntegralInRange<std::size_t>(0, bytes.size()));
  } else if (c.flag()) {
    bytes = c.in.ConsumeBytes<uint8_t>(c.in.ConsumeIntegralInRange<std::size_t>(0, 256));
  }
  MAKE(ember_record_from_bytes, bytes.empty() ? nullptr : bytes.data(), bytes.size());
}

void report_queries(Ctx& c) {
  ember_load_report* r = c.report();
  if (c.flag()) {
    size_t missing = 0, unexpected = 0, mismatched = 0;
    CALL(ember_load_report_counts, r, c.flag() ? &missing : nullptr, c.flag() ? &unexpected : nullptr,
         c.flag() ? &mismatched : nullptr);
  } else {
    std::vector<char> buf(c.capacity());
    size_t length = 0;
    CALL(ember_load_report_text, r, buf.empty() ? nullptr : buf.data(), buf.size(), c.flag() ? &length : nullptr);
  }
}

// ---------------------------------------------------------------- module trees (issue 11)
// A child or param name: mostly a short valid one, sometimes empty, dotted, NULL or a repeat.
const char* name(Ctx& c) {
  static const char* const kNames[] = {"a", "b", "conv1", "fc", "", "a.b", "weight"};
  const int i = c.in.ConsumeIntegralInRange<int>(0, 7);
  return i == 7 ? nullptr : kNames[i];
}

// A visitor that sometimes fails (apply must stop and report it) and sometimes edits the tree it walks.
ember_status visitor(void* user, ember_module* m, const char* path) {
  Ctx& c = *static_cast<Ctx*>(user);
  if (!path) violation("ember_module_apply", "visited a module with a NULL path");
  switch (c.in.ConsumeIntegralInRange<int>(0, 5)) {
    case 0: return EMBER_ERR_INVALID_ARGUMENT;
    case 1: CALL(ember_module_add_child, m, name(c), c.module()); break;  // may close a cycle mid-walk
    default: break;
  }
  return EMBER_OK;
}

void module_layer(Ctx& c) {
  Padded<ember_layer_desc> d;
  d.value = layer_desc(c);
  d.value.struct_size = c.struct_size(sizeof d.value);
  ember_device* device = c.device();
  MAKE(ember_module_layer, device, c.flag() ? &d.value : nullptr);
}

void module_tree(Ctx& c) {
  ember_module* m = c.module();
  switch (c.in.ConsumeIntegralInRange<int>(0, 12)) {
    case 0: CALL(ember_module_add_child, m, name(c), c.module()); break;
    case 1: MAKE(ember_module_child, m, name(c)); break;
    case 2: {
      size_t n = 0;
      CALL(ember_module_child_count, m, c.flag() ? &n : nullptr);
      break;
    }
    case 3: {
      std::vector<char> buf(c.capacity());
      size_t length = 0;
      CALL(ember_module_child_name, m, static_cast<size_t>(c.size()), buf.empty() ? nullptr : buf.data(), buf.size(),
           c.flag() ? &length : nullptr);
      break;
    }
    case 4: CALL(ember_module_add_param, m, name(c), c.tensor(), c.choice(3)); break;
    case 5: MAKE(ember_module_param, m, static_cast<size_t>(c.size())); break;
    case 6: MAKE(ember_module_find_param, m, name(c)); break;
    case 7: CALL(ember_module_set_training, m, c.choice(2)); break;
    case 8: {
      int32_t on = 0;
      CALL(ember_module_is_training, m, c.flag() ? &on : nullptr);
      break;
    }
    case 9: CALL(ember_module_set_requires_grad, m, c.choice(2)); break;
    case 10: CALL(ember_module_apply, m, c.flag() ? visitor : nullptr, static_cast<void*>(&c)); break;
    default: CALL(ember_module_state_set, m, name(c), c.tensor());
  }
}

// ---------------------------------------------------------------- optimizers
// Options of a kind's defaults, sometimes with every field fuzzed.
Padded<ember_optimizer_options> optimizer_options(Ctx& c) {
  Padded<ember_optimizer_options> o;
  Ctx::check("ember_optimizer_options_init",
             ember_optimizer_options_init(&o.value, c.in.ConsumeIntegralInRange<int32_t>(0, kOptimKinds - 1)));
  if (c.flag()) {
    o.value.kind = c.choice(kOptimKinds);
    o.value.lr = c.real();
    o.value.momentum = c.real();
    o.value.dampening = c.real();
    o.value.weight_decay = c.real();
    o.value.beta1 = c.real();
    o.value.beta2 = c.real();
    o.value.eps = c.real();
    o.value.nesterov = c.choice(2);
  }
  o.value.struct_size = c.struct_size(sizeof o.value);
  return o;
}

void optimizer_create(Ctx& c) {
  ember_module* m = c.module();
  Padded<ember_optimizer_options> o = optimizer_options(c);
  MAKE(ember_optimizer_create, m, c.flag() ? &o.value : nullptr);
}

// Optimizers over parameter lists (issue 11): groups, per-param options, clipping.
void optimizer_params(Ctx& c) {
  std::vector<ember_tensor*> params = c.tensors();
  Padded<ember_optimizer_options> o = optimizer_options(c);
  ember_tensor* const* list = params.empty() ? nullptr : params.data();
  switch (c.in.ConsumeIntegralInRange<int>(0, 7)) {
    case 0: MAKE(ember_optimizer_create_params, list, params.size(), c.flag() ? &o.value : nullptr); break;
    case 1: {
      size_t group = 0;
      CALL(ember_optimizer_add_param_group, c.optimizer(), list, params.size(), c.flag() ? &o.value : nullptr,
           c.flag() ? &group : nullptr);
      break;
    }
    case 2: {
      size_t n = 0;
      CALL(ember_optimizer_group_count, c.optimizer(), c.flag() ? &n : nullptr);
      break;
    }
    case 3: CALL(ember_optimizer_set_group_lr, c.optimizer(), static_cast<size_t>(c.size()), c.real()); break;
    case 4: {
      double lr = 0;
      CALL(ember_optimizer_get_group_lr, c.optimizer(), static_cast<size_t>(c.size()), c.flag() ? &lr : nullptr);
      break;
    }
    case 5:
      CALL(ember_optimizer_set_param_options, c.optimizer(), c.tensor(), c.real(), c.real(), c.choice(3));
      break;
    case 6: {
      double norm = 0;
      CALL(ember_optimizer_clip_grad_norm, c.optimizer(), c.real(), c.real(), c.flag() ? &norm : nullptr);
      break;
    }
    default: {
      double norm = 0;
      CALL(ember_clip_grad_norm, list, params.size(), c.real(), c.real(), c.flag() ? &norm : nullptr);
    }
  }
}

void optimizer_use(Ctx& c) {
  ember_optimizer* opt = c.optimizer();
  switch (c.in.ConsumeIntegralInRange<int>(0, 6)) {
    case 0: CALL(ember_optimizer_accumulate, opt, c.grads()); break;
    case 1: CALL(ember_optimizer_step, opt, c.flag() ? nullptr : c.grads()); break;
    case 2: CALL(ember_optimizer_zero_grad, opt); break;
    case 3: CALL(ember_optimizer_reset, opt); break;
    case 4: CALL(ember_optimizer_set_lr, opt, c.real()); break;
    case 5: {
      double lr = 0;
      CALL(ember_optimizer_get_lr, opt, c.flag() ? &lr : nullptr);
      break;
    }
    default: CALL(ember_optimizer_load_record, opt, c.record());
  }
}

// ---------------------------------------------------------------- process-wide
void process(Ctx& c) {
  switch (c.in.ConsumeIntegralInRange<int>(0, 5)) {
    case 0: CALL(ember_seed, c.in.ConsumeIntegral<uint64_t>()); break;
    case 1: CALL(ember_set_num_threads, c.in.PickValueInArray<int32_t>({-1, 0, 1, 2, 4097})); break;
    case 2: {
      Padded<ember_backend_info> info;
      info.value.struct_size = c.struct_size(sizeof info.value);
      CALL(ember_backend_query, c.choice(kBackends), c.flag() ? &info.value : nullptr);
      break;
    }
    case 3: {
      std::vector<int32_t> backends(c.in.ConsumeIntegralInRange<std::size_t>(0, 4));
      size_t count = 0;
      CALL(ember_backend_list, backends.empty() ? nullptr : backends.data(), backends.size(),
           c.flag() ? &count : nullptr);
      break;
    }
    case 4: {
      int32_t backend = 0, index = 0;
      CALL(ember_device_info, c.device(), c.flag() ? &backend : nullptr, c.flag() ? &index : nullptr);
      break;
    }
    default:
      // Never fails, never NULL, for any value.
      if (!ember_status_name(c.in.ConsumeIntegral<int32_t>()) || !ember_version() || ember_abi_version() < 1 ||
          ember_version_number() != EMBER_VERSION_NUMBER)
        violation("ember_status_name", "NULL name or bad version");
  }
}

// ---------------------------------------------------------------- schedulers (issue 11)
// A scheduler of any kind over a picked optimizer: ember_scheduler_options_init's defaults (an invalid kind must be
// refused there), then sometimes every field fuzzed, milestones included (a NULL array with a count, hostile epochs).
void scheduler_create(Ctx& c) {
  Padded<ember_scheduler_options> o;
  const int32_t kind = c.choice(kSchedulerKinds);
  if (CALL(ember_scheduler_options_init, c.flag() ? &o.value : nullptr, kind) != EMBER_OK)
    Ctx::check("ember_scheduler_options_init",
               ember_scheduler_options_init(&o.value, c.in.ConsumeIntegralInRange<int32_t>(0, kSchedulerKinds - 1)));
  std::vector<int64_t> milestones(c.in.ConsumeIntegralInRange<std::size_t>(0, 4));
  for (auto& m : milestones) m = c.flag() ? c.size() : c.dim();
  if (c.flag()) {
    o.value.kind = c.choice(kSchedulerKinds);
    o.value.step_size = c.size();
    o.value.gamma = c.real();
    o.value.t_max = c.size();
    o.value.eta_min = c.real();
    o.value.start_factor = c.real();
    o.value.end_factor = c.real();
    o.value.total_iters = c.size();
  }
  // The array is read at creation only; a NULL array with a nonzero count must be refused.
  o.value.milestones = milestones.empty() || c.in.ConsumeIntegralInRange<int>(0, 7) == 0 ? nullptr : milestones.data();
  o.value.n_milestones = milestones.size();
  o.value.struct_size = c.struct_size(sizeof o.value);
  ember_optimizer* opt = c.optimizer();
  MAKE(ember_scheduler_create, opt, c.flag() ? &o.value : nullptr);
}

void scheduler_use(Ctx& c) {
  ember_scheduler* s = c.scheduler();
  switch (c.in.ConsumeIntegralInRange<int>(0, 2)) {
    case 0: {  // a few epochs at once: the formulas' later branches (past t_max, milestones, total_iters)
      for (int i = c.in.ConsumeIntegralInRange<int>(1, 8); i > 0; --i)
        if (CALL(ember_scheduler_step, s) != EMBER_OK) break;
      break;
    }
    case 1: {
      double lr = 0;
      CALL(ember_scheduler_get_lr, s, static_cast<size_t>(c.size()), c.flag() ? &lr : nullptr);
      break;
    }
    default: {
      int64_t epoch = 0;
      CALL(ember_scheduler_epoch, s, c.flag() ? &epoch : nullptr);
    }
  }
}

// ---------------------------------------------------------------- the typed engine's remaining ops (issue 11)
// expand / flip / repeat take an int64 array: a fuzzed shape (hostile sizes, -1), dims or counts.
void int_list_op(Ctx& c) {
  ember_tensor* x = c.tensor();
  std::vector<int64_t> v = c.shape();
  if (!v.empty() && c.flag()) v[c.in.ConsumeIntegralInRange<std::size_t>(0, v.size() - 1)] = c.dim();
  const int64_t* p = v.empty() || c.in.ConsumeIntegralInRange<int>(0, 15) == 0 ? nullptr : v.data();
  switch (c.in.ConsumeIntegralInRange<int>(0, 2)) {
    case 0: MAKE(ember_tensor_expand, x, p, v.size()); break;
    case 1: MAKE(ember_tensor_flip, x, p, v.size()); break;
    default: MAKE(ember_tensor_repeat, x, p, v.size());
  }
}

void engine_ops(Ctx& c) {
  switch (c.in.ConsumeIntegralInRange<int>(0, 5)) {
    case 0: MAKE(ember_tensor_scatter_add, c.tensor(), c.dim(), c.tensor(), c.tensor()); break;
    case 1: MAKE(ember_tensor_masked_fill, c.tensor(), c.tensor(), c.real()); break;
    case 2: {
      ember_tensor* x = c.tensor();
      const int64_t dim = c.dim();
      const int64_t correction = c.flag() ? c.dim() : c.size();
      MAKE(ember_tensor_var, x, dim, correction, c.choice(2));
      break;
    }
    case 3: MAKE(ember_tensor_adaptive_avg_pool2d, c.tensor(), c.size(), c.size()); break;
    case 4: MAKE(ember_loss_huber, c.tensor(), c.tensor(), c.choice(kReductions), c.real()); break;
    default: MAKE(ember_loss_bce_with_logits, c.tensor(), c.tensor(), c.choice(kReductions));
  }
}

// ember_tensor_select's return-value form: a handle, or NULL with a message (what the status form would say).
void select_or_null(Ctx& c) {
  ember_tensor* x = c.tensor();
  const int64_t dim = c.dim(), index = c.flag() ? c.size() : c.dim();
  ember_clear_error();
  ember_tensor* out = ember_tensor_select_or_null(x, dim, index);
  if (out)
    c.keep(out, "ember_tensor_select_or_null");
  else if (!*ember_last_error())
    violation("ember_tensor_select_or_null", "returned NULL without a message");
}

// ---------------------------------------------------------------- issue 12: an _init for every struct
// Each init sets struct_size and zeroes every other byte of a garbage-filled struct (writing nothing past it), and
// refuses NULL.
template <class S>
void zero_init(Ctx& c, const char* fn, ember_status (*init)(S*)) {
  Padded<S> p;
  std::memset(static_cast<void*>(&p), 0xA5, sizeof p);
  const bool null_arg = c.flag();
  if (c.call(fn, init, std::tuple{null_arg ? nullptr : &p.value}) != EMBER_OK) return;
  if (null_arg) violation(fn, "accepted NULL");
  S expected;
  std::memset(static_cast<void*>(&expected), 0, sizeof expected);
  expected.struct_size = sizeof expected;
  if (std::memcmp(&p.value, &expected, sizeof expected) != 0) violation(fn, "left a field other than struct_size set");
  for (unsigned char b : p.newer_fields)
    if (b != 0xA5) violation(fn, "wrote past the struct");
}

void struct_inits(Ctx& c) {
  switch (c.in.ConsumeIntegralInRange<int>(0, 9)) {
    case 0: zero_init(c, "ember_backend_info_init", ember_backend_info_init); break;
    case 1: zero_init(c, "ember_param_info_init", ember_param_info_init); break;
    case 2: zero_init(c, "ember_vulkan_requirements_init", ember_vulkan_requirements_init); break;
    case 3: zero_init(c, "ember_vulkan_device_desc_init", ember_vulkan_device_desc_init); break;
    case 4: zero_init(c, "ember_vulkan_plan_tensor_info_init", ember_vulkan_plan_tensor_info_init); break;
    case 5: zero_init(c, "ember_vulkan_memory_request_init", ember_vulkan_memory_request_init); break;
    case 6: zero_init(c, "ember_vulkan_memory_block_init", ember_vulkan_memory_block_init); break;
    case 7: zero_init(c, "ember_vulkan_memory_stats_init", ember_vulkan_memory_stats_init); break;
    case 8: zero_init(c, "ember_vulkan_buffer_state_init", ember_vulkan_buffer_state_init); break;
    default: zero_init(c, "ember_vulkan_requirements2_init", ember_vulkan_requirements2_init);
  }
}

template <Kind K>
void free_slot(Ctx& c) {
  c.free_one(K);
}

}  // namespace

// clang-format off
const Action kActions[] = {
  // creation
  {"tensor_from_data", from_data},
  {"tensor_create", creation},
  {"tensor_arange", arange},
  {"tensor_clone", [](Ctx& c) { MAKE(ember_tensor_clone, c.tensor()); }},
  {"device_create", [](Ctx& c) { MAKE(ember_device_create, c.choice(kBackends), c.in.ConsumeIntegralInRange<int32_t>(-1, 2)); }},
  // queries
  {"tensor_queries", queries},
  {"tensor_copy_to", copy_to},
  // elementwise ops
  {"tensor_unary", [](Ctx& c) { MAKE(ember_tensor_unary, c.tensor(), c.choice(kUnary)); }},
  {"tensor_binary", [](Ctx& c) { MAKE(ember_tensor_binary, c.tensor(), c.tensor(), c.choice(kBinary)); }},
  {"tensor_add", [](Ctx& c) { MAKE(ember_tensor_add, c.tensor(), c.tensor()); }},
  {"tensor_sub", [](Ctx& c) { MAKE(ember_tensor_sub, c.tensor(), c.tensor()); }},
  {"tensor_mul", [](Ctx& c) { MAKE(ember_tensor_mul, c.tensor(), c.tensor()); }},
  {"tensor_div", [](Ctx& c) { MAKE(ember_tensor_div, c.tensor(), c.tensor()); }},
  {"tensor_scalar", [](Ctx& c) { MAKE(ember_tensor_scalar, c.tensor(), c.choice(kScalarOps), c.real()); }},
  {"tensor_compare", [](Ctx& c) { MAKE(ember_tensor_compare, c.tensor(), c.tensor(), c.choice(kCompare)); }},
  {"tensor_compare_scalar", [](Ctx& c) { MAKE(ember_tensor_compare_scalar, c.tensor(), c.choice(kCompare), c.real()); }},
  {"tensor_predicate", [](Ctx& c) { MAKE(ember_tensor_predicate, c.tensor(), c.choice(kPredicates)); }},
  {"tensor_logical", [](Ctx& c) { MAKE(ember_tensor_logical, c.tensor(), c.tensor(), c.choice(kLogic)); }},
  {"tensor_logical_not", [](Ctx& c) { MAKE(ember_tensor_logical_not, c.tensor()); }},
  {"tensor_where", [](Ctx& c) { MAKE(ember_tensor_where, c.tensor(), c.tensor(), c.tensor()); }},
  {"tensor_cast", [](Ctx& c) { MAKE(ember_tensor_cast, c.tensor(), c.choice(kDtypes)); }},
  // reductions
  {"tensor_reduce", [](Ctx& c) { MAKE(ember_tensor_reduce, c.tensor(), c.choice(kReduce), c.dim(), c.choice(2)); }},
  {"tensor_reduce_all", [](Ctx& c) { MAKE(ember_tensor_reduce_all, c.tensor(), c.choice(kReduce)); }},
  {"tensor_argmax", [](Ctx& c) { MAKE(ember_tensor_argmax, c.tensor(), c.dim(), c.choice(2)); }},
  {"tensor_argmin", [](Ctx& c) { MAKE(ember_tensor_argmin, c.tensor(), c.dim(), c.choice(2)); }},
  {"tensor_softmax", [](Ctx& c) { MAKE(ember_tensor_softmax, c.tensor(), c.dim()); }},
  {"tensor_log_softmax", [](Ctx& c) { MAKE(ember_tensor_log_softmax, c.tensor(), c.dim()); }},
  // layout and indexing
  {"tensor_matmul", [](Ctx& c) { MAKE(ember_tensor_matmul, c.tensor(), c.tensor()); }},
  {"tensor_dropout", [](Ctx& c) { MAKE(ember_tensor_dropout, c.tensor(), c.real()); }},
  {"tensor_linear", [](Ctx& c) {
     MAKE(ember_tensor_linear, c.tensor(), c.tensor(), c.flag() ? c.tensor() : nullptr, c.choice(2), c.choice(2));
   }},
  {"tensor_reshape", reshape},
  {"tensor_permute", permute},
  {"tensor_transpose", [](Ctx& c) { MAKE(ember_tensor_transpose, c.tensor(), c.dim(), c.dim()); }},
  {"tensor_slice", slice},
  {"tensor_cat", cat},
  {"tensor_index_select", [](Ctx& c) { MAKE(ember_tensor_index_select, c.tensor(), c.dim(), c.tensor()); }},
  {"tensor_gather", [](Ctx& c) { MAKE(ember_tensor_gather, c.tensor(), c.dim(), c.tensor()); }},
  // nn ops and losses
  {"conv_pool", conv_pool},
  {"loss_cross_entropy", [](Ctx& c) { MAKE(ember_loss_cross_entropy, c.tensor(), c.tensor(), c.choice(kReductions)); }},
  {"loss_mse", [](Ctx& c) { MAKE(ember_loss_mse, c.tensor(), c.tensor(), c.choice(kReductions)); }},
  // autodiff
  {"set_requires_grad", [](Ctx& c) { CALL(ember_tensor_set_requires_grad, c.tensor(), c.choice(2)); }},
  {"tensor_detach", [](Ctx& c) { MAKE(ember_tensor_detach, c.tensor()); }},
  {"tensor_backward", backward},
  {"grads_get", grads_get},
  {"no_grad", no_grad},
  // issue 11: .grad, backward_ex, autograd.grad, in-place updates
  {"tensor_backward_ex", backward_ex},
  {"autograd_grad", autograd_grad},
  {"tensor_grad", tensor_grad},
  {"tensor_set_grad", [](Ctx& c) { CALL(ember_tensor_set_grad, c.tensor(), c.flag() ? nullptr : c.tensor()); }},
  {"autograd_queries", autograd_queries},
  {"tensor_inplace", [](Ctx& c) { CALL(ember_tensor_inplace, c.tensor(), c.tensor(), c.choice(kInplaceOps)); }},
  {"tensor_inplace_scalar", [](Ctx& c) { CALL(ember_tensor_inplace_scalar, c.tensor(), c.choice(kInplaceOps), c.real()); }},
  {"tensor_adam_step", [](Ctx& c) {
     CALL(ember_tensor_adam_step, c.tensor(), c.tensor(), c.tensor(), c.tensor(), c.real(), c.real(), c.real(), c.real(),
          c.real(), c.choice(2), c.in.ConsumeIntegral<int64_t>());
   }},
  // issue 11: tensor core
  {"tensor_fft", fft},
  {"tensor_data_ptr", data_ptr},
  // modules and records
  {"module_sequential", sequential},
  {"module_forward", [](Ctx& c) { MAKE(ember_module_forward, c.module(), c.tensor(), c.choice(kModes)); }},
  {"module_queries", module_queries},
  {"module_to_record", [](Ctx& c) { MAKE(ember_module_to_record, c.module()); }},
  {"module_load_record", load_record},
  {"record_file_io", file_io},
  {"record_bytes", record_bytes},
  {"record_entry_count", [](Ctx& c) { size_t n = 0; CALL(ember_record_entry_count, c.record(), c.flag() ? &n : nullptr); }},
  {"load_report_queries", report_queries},
  // optimizers
  {"optimizer_create", optimizer_create},
  {"optimizer_use", optimizer_use},
  {"optimizer_to_record", [](Ctx& c) { MAKE(ember_optimizer_to_record, c.optimizer()); }},
  // process-wide, Vulkan interop
  {"process", process},
  {"vulkan", vulkan},
  // frees (the pool also frees a slot's handle when a new one replaces it, and everything at the end)
  {"device_free", free_slot<kDevice>},
  {"tensor_free", free_slot<kTensor>},
  {"grads_free", free_slot<kGrads>},
  {"module_free", free_slot<kModule>},
  {"optimizer_free", free_slot<kOptimizer>},
  {"record_free", free_slot<kRecord>},
  {"load_report_free", free_slot<kLoadReport>},
  // issue 11: module trees and optimizers over param lists (appended: the corpus's inputs keep their meaning)
  {"module_create", [](Ctx& c) { MAKE(ember_module_create, c.device()); }},
  {"module_layer", module_layer},
  {"module_tree", module_tree},
  {"optimizer_params", optimizer_params},
  // issue 11: schedulers; select; the Vulkan timeline functions (appended, as above)
  {"scheduler_create", scheduler_create},
  {"scheduler_use", scheduler_use},
  {"scheduler_free", free_slot<kScheduler>},
  {"tensor_select", [](Ctx& c) { MAKE(ember_tensor_select, c.tensor(), c.dim(), c.flag() ? c.size() : c.dim()); }},
  {"tensor_select_or_null", select_or_null},
  {"vulkan_timeline", vulkan_timeline},
  {"tensor_int_list_op", int_list_op},
  {"engine_ops", engine_ops},
  {"vulkan_embedding", vulkan_embedding},
  // issue 17: host memory, resource states, device loss, plans, readback rings, feature floor (fuzz_actions_vulkan.cpp)
  {"vulkan_memory", vulkan_memory},
  {"vulkan_resource_states", vulkan_resource_states},
  {"vulkan_device_lost", vulkan_device_lost},
  {"vulkan_plan_build", vulkan_plan_build},
  {"vulkan_plan_use", vulkan_plan_use},
  {"vulkan_plan_free", vulkan_plan_free},
  {"vulkan_readback", vulkan_readback},
  {"vulkan_readback_free", vulkan_readback_free},
  {"vulkan_floor", vulkan_floor},
  // issue 12: an _init for every struct (appended, as above)
  {"struct_inits", struct_inits},
  // issue 13: safetensors and PyTorch state_dicts (appended, as above)
  {"safetensors_io", safetensors_io},
  // issue 13: conv_transpose2d, GroupNorm, RMSNorm, ConvTranspose2d (fuzz_actions_norms.cpp; appended, as above)
  {"norms", norms},
  // issue 13 (h-rnn): LSTM / GRU, ember_module_forward_rnn (fuzz_actions_rnn.cpp; appended, as above)
  {"rnn", rnn},
  // issue 13: sort, scan and mask ops (fuzz_actions_sort.cpp; appended, as above)
  {"sort_scan", sort_scan},
  // issue 13: pad, step slices, baddbmm, einsum, logsumexp, std, interpolate (fuzz_actions_shape.cpp; appended)
  {"shape_ops", shape_ops},
  // issue 13 (h-flash): scaled-dot-product attention (fuzz_actions_sdpa.cpp)
  {"sdpa", sdpa},
  // issue 13 (h-mha): attention and transformer layers (fuzz_actions_attention.cpp; appended, as above)
  {"attention", attention},
  // issue 13 (h-rope): rotary position embedding (fuzz_actions_positional.cpp; appended, as above)
  {"rotary_embedding", rotary_embedding},
  // issue 19 (h-onnx-surface): ONNX import and forward (fuzz_actions_onnx.cpp; appended, as above)
  {"onnx", onnx},
  // issue 14: compiled forwards (fuzz_actions_compile.cpp; appended, as above)
  {"compiled", compiled},
};
// clang-format on
const std::size_t kActionCount = sizeof kActions / sizeof kActions[0];

}  // namespace ember_fuzz
