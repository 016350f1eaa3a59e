"""Loss modules (torch.nn.CrossEntropyLoss, NLLLoss, MSELoss, L1Loss, BCELoss, BCEWithLogitsLoss, SmoothL1Loss,
HuberLoss): each calls its ember.nn.functional form with its reduction ('mean' | 'sum' | 'none')."""
from . import functional as F
from .module import Module


class _Loss(Module):
    def __init__(self, reduction="mean"):
        super().__init__()
        if reduction not in ("mean", "sum", "none"):
            raise ValueError("{} is not a valid value for reduction".format(reduction))
        self.reduction = reduction


class CrossEntropyLoss(_Loss):
    def forward(self, input, target):  # noqa: A002
        return F.cross_entropy(input, target, reduction=self.reduction)


class NLLLoss(_Loss):
    def forward(self, input, target):  # noqa: A002
        return F.nll_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    def forward(self, input, target):  # noqa: A002
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    def forward(self, input, target):  # noqa: A002
        return F.l1_loss(input, target, reduction=self.reduction)


class BCELoss(_Loss):
    def forward(self, input, target):  # noqa: A002
        return F.binary_cross_entropy(input, target, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    def __init__(self, reduction="mean", pos_weight=None):
        super().__init__(reduction)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):  # noqa: A002
        return F.binary_cross_entropy_with_logits(input, target, reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class SmoothL1Loss(_Loss):
    def __init__(self, reduction="mean", beta=1.0):
        super().__init__(reduction)
        self.beta = beta

    def forward(self, input, target):  # noqa: A002
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input, target):  # noqa: A002
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)
