"""ember.utils: data loading (ember.utils.data, torch.utils.data's names)."""
from . import data

__all__ = ["data"]
