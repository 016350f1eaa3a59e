"""Autodiff glue: no-grad scopes and where a backward pass's gradients go.

``backward()`` runs ember_tensor_backward_ex, which adds each reached leaf's gradient into libember's grad slot of
that leaf (what ``Tensor.grad`` reads, for every Python object of the leaf); optimizers read those slots.
"""
import functools
from ctypes import byref, c_int32, c_void_p, sizeof

from . import _lib

_BACKWARD_OPTIONS = {}


def _backward_options(retain_graph):
    """ember_backward_options with libember's defaults and retain_graph (made once per value; read-only after)."""
    key = bool(retain_graph)
    options = _BACKWARD_OPTIONS.get(key)
    if options is None:
        options = _lib.BackwardOptions()
        options.struct_size = sizeof(options)
        _lib.check(_lib.backward_options_init(byref(options)))
        options.retain_graph = 1 if key else 0
        _BACKWARD_OPTIONS[key] = options
    return options


def backward(tensor, gradient=None, retain_graph=False):
    """Runs the reverse pass from `tensor` (seeded with `gradient`; None only for one-element tensors): libember adds
    the gradients into its leaves' grad slots."""
    if gradient is None and tensor.numel() != 1:
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    if gradient is not None and not hasattr(gradient, "_h"):
        gradient = tensor._as_tensor_like(gradient)
    seed = None if gradient is None else gradient._h
    _lib.check(_lib.tensor_backward_ex(tensor._h, seed, byref(_backward_options(retain_graph)), None))


def _handles(tensors):
    return (c_void_p * len(tensors))(*[None if t is None else t._h for t in tensors])


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=False, is_grads_batched=False):
    """torch.autograd.grad: the gradients of `outputs` (a tensor or a sequence) w.r.t. `inputs` (any tensors in
    their graph, leaves or not), as a tuple; .grad is not touched. grad_outputs: one seed per output (None: ones,
    one-element outputs only). An input the outputs do not reach gives None with allow_unused, else RuntimeError."""
    if create_graph or is_grads_batched:
        raise NotImplementedError("ember: create_graph / is_grads_batched are not supported")
    single = hasattr(outputs, "_h")
    outputs = [outputs] if single else list(outputs)
    inputs = [inputs] if hasattr(inputs, "_h") else list(inputs)
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif hasattr(grad_outputs, "_h"):
        grad_outputs = [grad_outputs]
    grad_outputs = list(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError("grad requires one grad_output per output (got %d for %d outputs)"
                           % (len(grad_outputs), len(outputs)))
    for out, g in zip(outputs, grad_outputs):
        if g is None and out.numel() != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
    results = (c_void_p * len(inputs))()
    seeds = None if all(g is None for g in grad_outputs) else _handles(grad_outputs)
    _lib.check(_lib.autograd_grad(_handles(outputs), seeds, len(outputs), _handles(inputs), len(inputs),
                                  1 if retain_graph else 0, 1 if allow_unused else 0, results))
    return tuple(None if h is None else inputs[0]._wrap(c_void_p(h)) for h in results)


def is_grad_enabled():
    """False inside a no_grad scope on this thread."""
    on = c_int32()
    _lib.check(_lib.is_grad_enabled(byref(on)))
    return bool(on.value)


class no_grad:
    """Context manager (and decorator): nothing computed inside is recorded for backward, on this thread.

    Nestable; maps to ember_no_grad_enter / ember_no_grad_exit, so the scope is per thread as in PyTorch."""

    def __enter__(self):
        _lib.check(_lib.no_grad_enter())
        return self

    def __exit__(self, *exc):
        _lib.check(_lib.no_grad_exit())
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with no_grad():
                return fn(*args, **kwargs)
        return wrapper
