"""ember.optim: SGD, Adam, AdamW over any tensors or param groups (torch.optim), and lr_scheduler."""
from . import lr_scheduler
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "lr_scheduler"]
