"""Loads libember.so and declares the C ABI (c_api/include/ember.h) for ctypes.

The library is looked up, in order, at
  1. ``$EMBER_LIBRARY`` (a path to the .so file),
  2. next to the package (``ember/libember.so``, then the folder holding ``ember/``),
  3. the build folders of a source checkout (``<repo>/build*/c_api/libember.so``, ``build`` first, then the newest),
  4. the system's search path (``libember.so.1`` as installed by ``meson install``).

Every declared function gets ``argtypes``/``restype``. Callers check statuses with :func:`check`, which raises the
:mod:`ember.errors` class of the status with the message of ``ember_last_error()``.
"""
import ctypes
import glob
import os
from ctypes import POINTER, Structure, byref, c_char_p, c_double, c_int32, c_int64, c_size_t, c_uint32, c_uint64
from ctypes import c_void_p

from . import errors

ABI_VERSION = 1
MAX_RANK = 8
SLICE_END = 2**63 - 1


def _candidates():
    env = os.environ.get("EMBER_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    for folder in (here, os.path.dirname(here)):
        for name in ("libember.so", "libember.so.1"):
            yield os.path.join(folder, name)
    repo = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    yield os.path.join(repo, "build", "c_api", "libember.so")
    found = glob.glob(os.path.join(repo, "build*", "c_api", "libember.so"))
    yield from sorted(found, key=os.path.getmtime, reverse=True)
    yield "libember.so.1"


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (absent)")
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("ember: cannot load libember.so; set EMBER_LIBRARY to its path. Tried:\n  " +
                      "\n  ".join(tried))


lib, path = _load()

# ---------------------------------------------------------------- structs (field order of ember.h)
I64x2 = c_int64 * 2


class BackendInfo(Structure):
    _fields_ = [("struct_size", c_uint32), ("backend", c_int32), ("compiled", c_int32), ("usable", c_int32),
                ("device_count", c_int32), ("float_dtype", c_int32), ("name", c_char_p)]


class Conv2dOptions(Structure):
    _fields_ = [("struct_size", c_uint32), ("reserved", c_int32), ("stride", I64x2), ("padding", I64x2),
                ("dilation", I64x2), ("groups", c_int64)]


class Pool2dOptions(Structure):
    _fields_ = [("struct_size", c_uint32), ("count_include_pad", c_int32), ("kernel_size", I64x2),
                ("stride", I64x2), ("padding", I64x2), ("dilation", I64x2)]


class LayerDesc(Structure):
    _fields_ = [("struct_size", c_uint32), ("kind", c_int32), ("in_features", c_int64), ("out_features", c_int64),
                ("kernel_size", I64x2), ("stride", I64x2), ("padding", I64x2), ("dilation", I64x2),
                ("groups", c_int64), ("dim", c_int64), ("end_dim", c_int64), ("p", c_double),
                ("threshold", c_double), ("value", c_double), ("init", c_double), ("eps", c_double),
                ("momentum", c_double), ("negative_slope", c_double), ("bias", c_int32), ("approximate", c_int32),
                ("count_include_pad", c_int32), ("reserved", c_int32)]


class ParamInfo(Structure):
    _fields_ = [("struct_size", c_uint32), ("dtype", c_int32), ("role", c_int32), ("requires_grad", c_int32),
                ("id", c_uint64), ("numel", c_int64), ("rank", c_uint32), ("reserved", c_uint32),
                ("shape", c_int64 * MAX_RANK)]


class RecordOptions(Structure):
    _fields_ = [("struct_size", c_uint32), ("recorder", c_int32), ("precision", c_int32), ("reserved", c_int32)]


class OptimizerOptions(Structure):
    _fields_ = [("struct_size", c_uint32), ("kind", c_int32), ("lr", c_double), ("momentum", c_double),
                ("dampening", c_double), ("weight_decay", c_double), ("beta1", c_double), ("beta2", c_double),
                ("eps", c_double), ("nesterov", c_int32), ("reserved", c_int32)]


# autograd core (issue 11)
class BackwardOptions(Structure):
    _fields_ = [("struct_size", c_uint32), ("retain_graph", c_int32), ("accumulate", c_int32), ("reserved", c_int32)]


# module trees, param-list optimizers and schedulers (issue 11)
class SchedulerOptions(Structure):
    _fields_ = [("struct_size", c_uint32), ("kind", c_int32), ("step_size", c_int64), ("gamma", c_double),
                ("t_max", c_int64), ("eta_min", c_double), ("start_factor", c_double), ("end_factor", c_double),
                ("total_iters", c_int64), ("milestones", POINTER(c_int64)), ("n_milestones", c_size_t)]


# ember_module_visitor: status (*)(void* user, ember_module* module, const char* path)
ModuleVisitor = ctypes.CFUNCTYPE(c_int32, c_void_p, c_void_p, c_char_p)


# ---------------------------------------------------------------- signatures
H = c_void_p            # any handle
OUT = POINTER(c_void_p)  # ember_x** out
I32, I64, SZ, F64, U64 = c_int32, c_int64, c_size_t, c_double, c_uint64
PI64, PSZ, PI32, PF64 = POINTER(c_int64), POINTER(c_size_t), POINTER(c_int32), POINTER(c_double)
STR = c_char_p

_SIGNATURES = {
    "ember_last_error": (c_char_p, []),
    "ember_clear_error": (None, []),
    "ember_status_name": (c_char_p, [I32]),
    "ember_version": (c_char_p, []),
    "ember_abi_version": (I32, []),
    "ember_seed": (I32, [U64]),
    "ember_set_num_threads": (I32, [I32]),
    "ember_backend_query": (I32, [I32, POINTER(BackendInfo)]),
    "ember_backend_list": (I32, [PI32, SZ, PSZ]),
    "ember_device_create": (I32, [I32, I32, OUT]),
    "ember_device_info": (I32, [H, PI32, PI32]),
    "ember_device_free": (I32, [H]),
    "ember_tensor_from_data": (I32, [H, I32, c_void_p, SZ, PI64, SZ, OUT]),
    "ember_tensor_full": (I32, [H, I32, PI64, SZ, F64, OUT]),
    "ember_tensor_zeros": (I32, [H, I32, PI64, SZ, OUT]),
    "ember_tensor_ones": (I32, [H, I32, PI64, SZ, OUT]),
    "ember_tensor_arange": (I32, [H, I32, I64, I64, I64, OUT]),
    "ember_tensor_random": (I32, [H, I32, F64, F64, U64, PI64, SZ, OUT]),
    "ember_tensor_clone": (I32, [H, OUT]),
    "ember_tensor_free": (I32, [H]),
    "ember_tensor_dtype": (I32, [H, PI32]),
    "ember_tensor_rank": (I32, [H, PSZ]),
    "ember_tensor_shape": (I32, [H, PI64, SZ, PSZ]),
    "ember_tensor_numel": (I32, [H, PI64]),
    "ember_tensor_device": (I32, [H, OUT]),
    "ember_tensor_copy_to": (I32, [H, I32, c_void_p, SZ, PSZ]),
    "ember_tensor_item": (I32, [H, PF64]),
    "ember_tensor_unary": (I32, [H, I32, OUT]),
    "ember_tensor_binary": (I32, [H, H, I32, OUT]),
    "ember_tensor_add": (I32, [H, H, OUT]),
    "ember_tensor_sub": (I32, [H, H, OUT]),
    "ember_tensor_mul": (I32, [H, H, OUT]),
    "ember_tensor_div": (I32, [H, H, OUT]),
    "ember_tensor_scalar": (I32, [H, I32, F64, OUT]),
    "ember_tensor_compare": (I32, [H, H, I32, OUT]),
    "ember_tensor_compare_scalar": (I32, [H, I32, F64, OUT]),
    "ember_tensor_predicate": (I32, [H, I32, OUT]),
    "ember_tensor_logical": (I32, [H, H, I32, OUT]),
    "ember_tensor_logical_not": (I32, [H, OUT]),
    "ember_tensor_where": (I32, [H, H, H, OUT]),
    "ember_tensor_reduce": (I32, [H, I32, I64, I32, OUT]),
    "ember_tensor_reduce_all": (I32, [H, I32, OUT]),
    "ember_tensor_argmax": (I32, [H, I64, I32, OUT]),
    "ember_tensor_argmin": (I32, [H, I64, I32, OUT]),
    "ember_tensor_matmul": (I32, [H, H, OUT]),
    "ember_tensor_reshape": (I32, [H, PI64, SZ, OUT]),
    "ember_tensor_permute": (I32, [H, PI64, SZ, OUT]),
    "ember_tensor_transpose": (I32, [H, I64, I64, OUT]),
    "ember_tensor_slice": (I32, [H, PI64, PI64, SZ, OUT]),
    "ember_tensor_cat": (I32, [POINTER(c_void_p), SZ, I64, OUT]),
    "ember_tensor_index_select": (I32, [H, I64, H, OUT]),
    "ember_tensor_gather": (I32, [H, I64, H, OUT]),
    "ember_tensor_softmax": (I32, [H, I64, OUT]),
    "ember_tensor_log_softmax": (I32, [H, I64, OUT]),
    "ember_tensor_cast": (I32, [H, I32, OUT]),
    "ember_conv2d_options_init": (I32, [POINTER(Conv2dOptions)]),
    "ember_pool2d_options_init": (I32, [POINTER(Pool2dOptions)]),
    "ember_tensor_conv2d": (I32, [H, H, H, POINTER(Conv2dOptions), OUT]),
    "ember_tensor_max_pool2d": (I32, [H, POINTER(Pool2dOptions), OUT]),
    "ember_tensor_avg_pool2d": (I32, [H, POINTER(Pool2dOptions), OUT]),
    "ember_loss_cross_entropy": (I32, [H, H, I32, OUT]),
    "ember_loss_mse": (I32, [H, H, I32, OUT]),
    "ember_tensor_set_requires_grad": (I32, [H, I32]),
    "ember_tensor_requires_grad": (I32, [H, PI32]),
    "ember_tensor_detach": (I32, [H, OUT]),
    "ember_tensor_backward": (I32, [H, H, OUT]),
    "ember_grads_get": (I32, [H, H, OUT]),
    "ember_grads_free": (I32, [H]),
    "ember_no_grad_enter": (I32, []),
    "ember_no_grad_exit": (I32, []),
    "ember_is_grad_enabled": (I32, [PI32]),
    "ember_layer_init": (I32, [POINTER(LayerDesc), I32]),
    "ember_module_sequential": (I32, [H, POINTER(LayerDesc), SZ, OUT]),
    "ember_module_forward": (I32, [H, H, I32, OUT]),
    "ember_module_free": (I32, [H]),
    "ember_module_param_count": (I32, [H, PSZ]),
    "ember_module_param_info": (I32, [H, SZ, POINTER(ParamInfo)]),
    "ember_module_param_name": (I32, [H, SZ, c_void_p, SZ, PSZ]),
    "ember_module_param_value": (I32, [H, SZ, OUT]),
    "ember_module_num_elements": (I32, [H, PI64]),
    "ember_record_options_init": (I32, [POINTER(RecordOptions)]),
    "ember_module_to_record": (I32, [H, OUT]),
    "ember_module_load_record": (I32, [H, H, I32, OUT]),
    "ember_module_save": (I32, [H, STR, POINTER(RecordOptions)]),
    "ember_module_load": (I32, [H, STR, I32, OUT]),
    "ember_record_write_file": (I32, [H, STR, POINTER(RecordOptions)]),
    "ember_record_read_file": (I32, [STR, OUT]),
    "ember_record_to_bytes": (I32, [H, POINTER(RecordOptions), c_void_p, SZ, PSZ]),
    "ember_record_from_bytes": (I32, [c_void_p, SZ, OUT]),
    "ember_record_entry_count": (I32, [H, PSZ]),
    "ember_record_free": (I32, [H]),
    "ember_load_report_counts": (I32, [H, PSZ, PSZ, PSZ]),
    "ember_load_report_text": (I32, [H, c_void_p, SZ, PSZ]),
    "ember_load_report_free": (I32, [H]),
    "ember_optimizer_options_init": (I32, [POINTER(OptimizerOptions), I32]),
    "ember_optimizer_create": (I32, [H, POINTER(OptimizerOptions), OUT]),
    "ember_optimizer_accumulate": (I32, [H, H]),
    "ember_optimizer_step": (I32, [H, H]),
    "ember_optimizer_zero_grad": (I32, [H]),
    "ember_optimizer_reset": (I32, [H]),
    "ember_optimizer_set_lr": (I32, [H, F64]),
    "ember_optimizer_get_lr": (I32, [H, PF64]),
    "ember_optimizer_to_record": (I32, [H, OUT]),
    "ember_optimizer_load_record": (I32, [H, H]),
    "ember_optimizer_save": (I32, [H, STR, POINTER(RecordOptions)]),
    "ember_optimizer_load": (I32, [H, STR]),
    "ember_optimizer_free": (I32, [H]),
    # Vulkan interop (ember.h): declared so the binding tracks the whole ABI; the structs pass as raw pointers
    # (a Python host application has no VkDevice of its own to share).
    "ember_vulkan_requirements_query": (I32, [c_void_p]),
    "ember_vulkan_device_adopt": (I32, [c_void_p, OUT]),
    "ember_vulkan_tensor_buffer": (I32, [H, POINTER(U64), POINTER(U64), POINTER(U64)]),
    "ember_vulkan_tensor_wrap_buffer": (I32, [H, U64, U64, I32, PI64, SZ, OUT]),
    "ember_vulkan_submit": (I32, [H, POINTER(U64)]),
    "ember_vulkan_timeline_semaphore": (I32, [H, POINTER(U64)]),
    "ember_vulkan_wait_semaphore": (I32, [H, U64, U64]),
    "ember_vulkan_host_wait": (I32, [H, U64]),
    "ember_vulkan_synchronize": (I32, [H]),
    "ember_vulkan_pipeline_cache_data": (I32, [H, c_void_p, SZ, PSZ]),
    # Vulkan adopt options (issue 17)
    "ember_vulkan_adopt_options_init": (I32, [c_void_p]),
    "ember_vulkan_device_adopt_ex": (I32, [c_void_p, c_void_p, OUT]),
    # Vulkan host-record mode, never blocking (issue 17 parts 1 and 3)
    "ember_vulkan_record_begin": (I32, [H, c_void_p, c_uint32, U64]),
    "ember_vulkan_record_end": (I32, [H]),
    "ember_vulkan_safe_frame": (I32, [H, U64]),
    "ember_vulkan_record_pending": (I32, [H, POINTER(U64), POINTER(U64)]),
    "ember_vulkan_poll_errors": (I32, [H]),
    # Vulkan: device lost, readback ring, queue choice (issue 17 part 8)
    "ember_vulkan_simulate_device_lost": (I32, [H, c_uint32]),
    "ember_vulkan_device_is_lost": (I32, [H, PI32]),
    "ember_vulkan_queue_info": (I32, [H, POINTER(c_uint32), POINTER(c_uint32)]),
    "ember_vulkan_readback_create": (I32, [H, U64, c_uint32, OUT]),
    "ember_vulkan_readback_enqueue": (I32, [H, H, POINTER(U64)]),
    "ember_vulkan_readback_poll": (I32, [H, U64, c_void_p, SZ, PSZ, PI32]),
    "ember_vulkan_readback_free": (I32, [H]),
    # Vulkan: memory the host controls, resource states for host buffers (issue 17 parts 4, 5; structs as raw pointers)
    "ember_vulkan_allocator_init": (I32, [c_void_p]),
    "ember_vulkan_memory_stats_query": (I32, [H, c_void_p]),
    "ember_vulkan_memory_trim": (I32, [H]),
    "ember_vulkan_memory_set_budget": (I32, [H, U64]),
    "ember_vulkan_tensor_wrap_buffer_ex": (I32, [H, U64, U64, I32, PI64, SZ, c_uint32, OUT]),
    "ember_vulkan_tensor_write_wrapped": (I32, [H, H]),
    "ember_vulkan_buffer_acquire": (I32, [H, c_uint32, c_uint32, c_uint32]),
    "ember_vulkan_buffer_release": (I32, [H, c_uint32, c_uint32, c_uint32]),
    "ember_vulkan_buffer_state_query": (I32, [H, c_void_p]),
    # autograd core (issue 11): .grad, backward_ex (retain_graph), autograd.grad, in-place updates
    "ember_backward_options_init": (I32, [POINTER(BackwardOptions)]),
    "ember_tensor_backward_ex": (I32, [H, H, POINTER(BackwardOptions), OUT]),
    "ember_autograd_grad": (I32, [POINTER(c_void_p), POINTER(c_void_p), SZ, POINTER(c_void_p), SZ, I32, I32,
                                  POINTER(c_void_p)]),
    "ember_tensor_grad": (I32, [H, OUT]),
    "ember_tensor_set_grad": (I32, [H, H]),
    "ember_tensor_is_leaf": (I32, [H, PI32]),
    "ember_tensor_inplace": (I32, [H, H, I32]),
    "ember_tensor_inplace_scalar": (I32, [H, I32, F64]),
    "ember_tensor_version": (I32, [H, PI64]),
    # tensor core (issue 11): FFT (complex = a trailing (re, im) dim), zero-copy read-only storage views
    "ember_tensor_fft": (I32, [H, I32, I64, I64, I32, OUT]),
    "ember_tensor_data_ptr": (I32, [H, POINTER(c_void_p)]),
    # module trees, param-list optimizers, clipping, schedulers (issue 11)
    "ember_module_create": (I32, [H, OUT]),
    "ember_module_layer": (I32, [H, POINTER(LayerDesc), OUT]),
    "ember_module_add_child": (I32, [H, STR, H]),
    "ember_module_child": (I32, [H, STR, OUT]),
    "ember_module_child_count": (I32, [H, PSZ]),
    "ember_module_child_name": (I32, [H, SZ, c_void_p, SZ, PSZ]),
    "ember_module_add_param": (I32, [H, STR, H, I32]),
    "ember_module_param": (I32, [H, SZ, OUT]),
    "ember_module_find_param": (I32, [H, STR, OUT]),
    "ember_module_set_training": (I32, [H, I32]),
    "ember_module_is_training": (I32, [H, PI32]),
    "ember_module_set_requires_grad": (I32, [H, I32]),
    "ember_module_apply": (I32, [H, ModuleVisitor, c_void_p]),
    "ember_module_state_set": (I32, [H, STR, H]),
    "ember_optimizer_create_params": (I32, [POINTER(c_void_p), SZ, POINTER(OptimizerOptions), OUT]),
    "ember_optimizer_add_param_group": (I32, [H, POINTER(c_void_p), SZ, POINTER(OptimizerOptions), PSZ]),
    "ember_optimizer_group_count": (I32, [H, PSZ]),
    "ember_optimizer_set_group_lr": (I32, [H, SZ, F64]),
    "ember_optimizer_get_group_lr": (I32, [H, SZ, PF64]),
    "ember_optimizer_set_param_options": (I32, [H, H, F64, F64, I32]),
    "ember_optimizer_clip_grad_norm": (I32, [H, F64, F64, PF64]),
    "ember_clip_grad_norm": (I32, [POINTER(c_void_p), SZ, F64, F64, PF64]),
    "ember_scheduler_options_init": (I32, [POINTER(SchedulerOptions), I32]),
    "ember_scheduler_create": (I32, [H, POINTER(SchedulerOptions), OUT]),
    "ember_scheduler_step": (I32, [H]),
    "ember_scheduler_get_lr": (I32, [H, SZ, PF64]),
    "ember_scheduler_epoch": (I32, [H, PI64]),
    "ember_scheduler_free": (I32, [H]),
    # small-op overhead (issue 11): x[i] in one call
    "ember_tensor_select": (I32, [H, I64, I64, OUT]),
    # the typed engine's remaining ops (issue 11)
    "ember_tensor_expand": (I32, [H, PI64, SZ, OUT]),
    "ember_tensor_flip": (I32, [H, PI64, SZ, OUT]),
    "ember_tensor_repeat": (I32, [H, PI64, SZ, OUT]),
    "ember_tensor_scatter_add": (I32, [H, I64, H, H, OUT]),
    "ember_tensor_masked_fill": (I32, [H, H, F64, OUT]),
    "ember_tensor_var": (I32, [H, I64, I64, I32, OUT]),
    "ember_tensor_adaptive_avg_pool2d": (I32, [H, I64, I64, OUT]),
    "ember_loss_huber": (I32, [H, H, I32, F64, OUT]),
    "ember_loss_bce_with_logits": (I32, [H, H, I32, OUT]),
    # Vulkan plans and warm-up (issue 17, parts 2 and 7); structs pass as raw pointers, as for the interop above
    "ember_vulkan_plan_create": (I32, [H, H, I32, PI64, SZ, OUT]),
    "ember_vulkan_plan_capture_begin": (I32, [H, OUT]),
    "ember_vulkan_plan_add_input": (I32, [H, I32, PI64, SZ, OUT]),
    "ember_vulkan_plan_capture_end": (I32, [H, POINTER(c_void_p), SZ]),
    "ember_vulkan_plan_counts": (I32, [H, PSZ, PSZ]),
    "ember_vulkan_plan_input_info": (I32, [H, SZ, c_void_p]),
    "ember_vulkan_plan_output_info": (I32, [H, SZ, c_void_p]),
    "ember_vulkan_plan_bind_input": (I32, [H, SZ, U64, U64]),
    "ember_vulkan_plan_bind_output": (I32, [H, SZ, U64, U64]),
    "ember_vulkan_plan_record": (I32, [H, c_void_p]),
    "ember_vulkan_plan_submit": (I32, [H, POINTER(U64)]),
    "ember_vulkan_plan_free": (I32, [H]),
    "ember_vulkan_warmup": (I32, [H, H, I32, PI64, SZ]),
    "ember_vulkan_plan_poll_errors": (I32, [H]),  # plans' device-side checks (issue 17 part 3)
    # Vulkan: lower feature floor (issue 17 part 6)
    "ember_vulkan_requirements_query2": (I32, [c_void_p]),
    "ember_vulkan_feature_describe": (I32, [c_uint32, POINTER(c_char_p), POINTER(c_char_p)]),
    # x[i] with the result returned (issue 11's overhead bar; the binding calls it through quick, below)
    "ember_tensor_select_or_null": (H, [H, I64, I64]),
}
INPLACE_COPY, INPLACE_ADD, INPLACE_SUB, INPLACE_MUL, INPLACE_DIV, INPLACE_FILL = range(6)  # enum ember_inplace_op

for _name, (_res, _args) in _SIGNATURES.items():
    _fn = getattr(lib, _name)  # AttributeError here: the library is older than this binding
    _fn.restype = _res
    _fn.argtypes = _args
    globals()[_name[len("ember_"):]] = _fn
del _name, _res, _args, _fn


# ---------------------------------------------------------------- the small-op hot path (issue 11's overhead bar)
# The per-op calls again, as function objects without argtypes: ctypes then hands ctypes objects (c_void_p handles,
# byref(out), ctypes arrays, c_int64 / c_size_t / c_double) to C as they are, instead of calling each declared
# type's from_param per argument (a fifth of a small op's time). Callers give them only ctypes objects, None
# (NULL) or Python ints for int32 parameters: an int for a 64-bit parameter would go as a C int, a float raises.
# `hot` functions release the GIL around the call, as every declared function does (an op's time grows with its
# tensors); `quick` ones keep it, for calls that do a fixed amount of work and take no lock that a thread holding
# it could wait on (frees, queries; releasing and retaking the GIL costs as much as they do).
class _Calls:
    """A namespace of function objects (`hot.tensor_add`, ...)."""


_HOT = ("tensor_add", "tensor_sub", "tensor_mul", "tensor_div", "tensor_scalar", "tensor_binary", "tensor_unary",
        "tensor_matmul", "tensor_transpose", "tensor_slice", "tensor_inplace", "tensor_inplace_scalar")
_QUICK = ("tensor_free", "tensor_dtype", "tensor_shape", "tensor_select")
hot, quick = _Calls(), _Calls()
for _dll, _ns, _names in ((lib, hot, _HOT), (ctypes.PyDLL(path), quick, _QUICK)):
    for _name in _names:
        _fn = _dll["ember_" + _name]  # a new function object (getattr would give the declared one)
        _fn.restype = c_int32  # the ember_status of every listed function; argtypes stay None
        setattr(_ns, _name, _fn)
del _dll, _ns, _names, _name, _fn


class Handle(c_void_p):
    """A handle returned by a call (ctypes returns an instance of a c_void_p subclass as it is, where a c_void_p
    restype gives an int): made in C, it saves the c_void_p() and byref(out) of an out parameter, a tenth of x[i]."""
    __slots__ = ()


quick.tensor_select_or_null = ctypes.PyDLL(path)["ember_tensor_select_or_null"]
quick.tensor_select_or_null.restype = Handle


if abi_version() != ABI_VERSION:
    raise ImportError("ember: %s has ABI version %d, this binding needs %d" % (path, abi_version(), ABI_VERSION))


def error(status):
    """The exception for a failed call's status, carrying this thread's ember_last_error()."""
    message = last_error().decode("utf-8", "replace")
    cls = errors.BY_STATUS.get(status, errors.EmberError)
    name = status_name(status).decode()
    return cls(message or name, status, name)


def check(status):
    """Raises the mapped exception unless status is EMBER_OK."""
    if status:
        raise error(status)


def read_text(fn, handle, *args):
    """Calls a Strings-rule function (buf, capacity, length) twice if needed and returns the text."""
    length = c_size_t()
    buf = ctypes.create_string_buffer(256)
    status = fn(handle, *args, buf, 256, byref(length))
    if status == errors.BufferTooSmallError.status:
        buf = ctypes.create_string_buffer(length.value + 1)
        status = fn(handle, *args, buf, length.value + 1, byref(length))
    check(status)
    return buf.value.decode("utf-8", "replace")


def shape_array(dims):
    """(int64 array, rank) for a shape given as a sequence of ints."""
    n = len(dims)
    return (c_int64 * n)(*dims), n
