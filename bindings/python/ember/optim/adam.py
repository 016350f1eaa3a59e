"""torch.optim.Adam and AdamW.

Without amsgrad each param's update is one ember_tensor_adam_step call: the engine's fused kernel (one pass over the
param, its gradient and both moments, written back in place) in PyTorch 1.13's order of operations
(exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1), not torch 2's lerp_, whose different rounding moves a loss curve
by 1e-4 within a few epochs). amsgrad composes ember ops in the same order.
"""
import math
from ctypes import c_double

from .. import _lib, creation
from .._assign import assign_
from .optimizer import Optimizer


def _check_adam_options(lr, betas, eps, weight_decay):
    if not 0.0 <= lr:
        raise ValueError("Invalid learning rate: {}".format(lr))
    if not 0.0 <= eps:
        raise ValueError("Invalid epsilon value: {}".format(eps))
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError("Invalid beta parameter at index 0: {}".format(betas[0]))
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError("Invalid beta parameter at index 1: {}".format(betas[1]))
    if not 0.0 <= weight_decay:
        raise ValueError("Invalid weight_decay value: {}".format(weight_decay))


class Adam(Optimizer):
    """Adam with L2 weight decay added to the gradient; amsgrad keeps the max of the second moments."""

    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=False):
        _check_adam_options(lr, betas, eps, weight_decay)
        if capturable or differentiable:
            raise NotImplementedError("ember.optim: capturable / differentiable are not supported")
        if fused:
            raise RuntimeError("FusedAdam requires all the params to be CUDA, floating point")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                        fused=fused)
        super().__init__(params, defaults)

    def _validate_group(self, group):
        _check_adam_options(group["lr"], group["betas"], group["eps"], group["weight_decay"])

    def _next_step(self, param, state):
        """This update's count, written into state["step"] in place (a tensor, as torch 1.13's `step_t += 1`).
        The count this optimizer last wrote is remembered with that tensor, so it is read back (a host read) only
        when the tensor is another one (a load_state_dict, or a caller replaced it)."""
        steps = self.__dict__.setdefault("_steps", {})
        last = steps.get(id(param))
        t = state["step"]
        step = (last[1] if last is not None and last[0] is t else int(t.item())) + 1
        _lib.check(_lib.hot.tensor_inplace_scalar(t._h, _lib.INPLACE_FILL, c_double(step)))
        steps[id(param)] = (t, step)
        return step

    def _update(self, param, grad, state, group):
        if not state:
            state["step"] = creation.tensor(0.0)
            state["exp_avg"] = creation.zeros_like(param)
            state["exp_avg_sq"] = creation.zeros_like(param)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = creation.zeros_like(param)
        beta1, beta2 = group["betas"]
        lr, weight_decay, eps = group["lr"], group["weight_decay"], group["eps"]
        if group["maximize"]:
            grad = -grad
        step = self._next_step(param, state)
        if not group["amsgrad"]:
            _lib.check(_lib.tensor_adam_step(param._h, grad._h, state["exp_avg"]._h, state["exp_avg_sq"]._h, lr,
                                             beta1, beta2, eps, weight_decay, 1 if self.decoupled else 0, step))
            return
        # amsgrad: composed, 1.13's order.
        if self.decoupled:
            param_value = param * (1 - lr * weight_decay)
        else:
            param_value = param
            if weight_decay != 0:
                grad = grad + param * weight_decay
        exp_avg = state["exp_avg"] * beta1 + grad * (1 - beta1)
        exp_avg_sq = state["exp_avg_sq"] * beta2 + grad * grad * (1 - beta2)
        state["exp_avg"], state["exp_avg_sq"] = exp_avg, exp_avg_sq
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = math.sqrt(bias_correction2)
        state["max_exp_avg_sq"] = state["max_exp_avg_sq"].maximum(exp_avg_sq)
        denom = state["max_exp_avg_sq"].sqrt() / bias_correction2_sqrt + eps
        assign_(param, param_value + exp_avg / denom * (-step_size))


class AdamW(Adam):
    """Adam with decoupled weight decay (p *= 1 - lr * weight_decay before the update), default 0.01."""

    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False):
        _check_adam_options(lr, betas, eps, weight_decay)
        if capturable:
            raise NotImplementedError("ember.optim: capturable is not supported")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        foreach=foreach, maximize=maximize, capturable=capturable)
        Optimizer.__init__(self, params, defaults)
