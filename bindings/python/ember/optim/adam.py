"""torch.optim.Adam and AdamW (1.13's single-tensor updates, the same order of operations)."""
import math

from .. import creation
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
        step = state["step"].item() + 1
        state["step"] = creation.tensor(float(step))
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
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = state["max_exp_avg_sq"].maximum(exp_avg_sq)
            denom = state["max_exp_avg_sq"].sqrt() / bias_correction2_sqrt + eps
        else:
            denom = exp_avg_sq.sqrt() / bias_correction2_sqrt + eps
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
