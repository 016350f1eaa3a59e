"""torch.optim.SGD (1.13's single-tensor update)."""
from .._assign import assign_
from .optimizer import Optimizer, required


class SGD(Optimizer):
    """p -= lr * d, d = grad (+ weight_decay * p), through the momentum buffer (dampening, nesterov) if momentum."""

    def __init__(self, params, lr=required, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False):
        if lr is not required and lr < 0.0:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if momentum < 0.0:
            raise ValueError("Invalid momentum value: {}".format(momentum))
        if weight_decay < 0.0:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        if differentiable:
            raise NotImplementedError("ember.optim: differentiable=True is not supported")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def _validate_group(self, group):
        if group["lr"] is not required and group["lr"] < 0.0:
            raise ValueError("Invalid learning rate: {}".format(group["lr"]))

    def _update(self, param, grad, state, group):
        d_p = -grad if group["maximize"] else grad
        if group["weight_decay"] != 0:
            d_p = d_p + param * group["weight_decay"]
        momentum = group["momentum"]
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = d_p.detach().clone()
            else:
                buf = buf * momentum + d_p * (1 - group["dampening"])
            state["momentum_buffer"] = buf
            d_p = d_p + buf * momentum if group["nesterov"] else buf
        assign_(param, param + d_p * (-group["lr"]))
