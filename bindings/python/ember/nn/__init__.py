"""ember.nn: Module, Parameter, containers, layers, losses, init and utils (torch.nn's names);
ember.nn.functional for the functional forms."""
from . import functional, init, utils
from .container import ModuleDict, ModuleList, ParameterList, Sequential
from .lazy import LazyConv2d, LazyLinear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, L1Loss, MSELoss, NLLLoss, SmoothL1Loss
from .module import Module
from .modules import (GELU, Conv2d, Dropout, Flatten, Identity, LeakyReLU, Linear, LogSoftmax, PReLU, ReLU, Sigmoid,
                      SiLU, Softmax, Tanh, Threshold)
from .norm_pool import AdaptiveAvgPool2d, AvgPool2d, BatchNorm1d, BatchNorm2d, Embedding, LayerNorm, MaxPool2d
from .parameter import Parameter, UninitializedParameter
from .rnn import GRU, LSTM  # issue 13 (h-rnn); also makes ember.nn.utils.rnn importable
from .upsample import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d  # issue 13
from .transformer import (MultiheadAttention, RotaryEmbedding, TransformerDecoder, TransformerDecoderLayer,
                          TransformerEncoder, TransformerEncoderLayer)

__all__ = ["functional", "init", "utils", "Module", "Parameter", "UninitializedParameter", "Sequential",
           "ModuleList", "ModuleDict", "ParameterList", "Identity", "Linear", "Conv2d", "LazyLinear", "LazyConv2d",
           "ReLU", "GELU", "Sigmoid", "Tanh", "Threshold", "PReLU", "Dropout", "LayerNorm", "Embedding",
           "MaxPool2d", "AvgPool2d", "Flatten", "LeakyReLU", "SiLU", "Softmax", "LogSoftmax", "BatchNorm1d",
           "BatchNorm2d", "AdaptiveAvgPool2d", "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "BCELoss",
           "BCEWithLogitsLoss", "SmoothL1Loss", "HuberLoss"]

# issue 13 (h-norms)
from .norms import ConvTranspose2d, GroupNorm, RMSNorm  # noqa: E402

__all__ += ["GroupNorm", "RMSNorm", "ConvTranspose2d"]
__all__ += ["LSTM", "GRU"]
__all__ += ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]  # issue 13
__all__ += ["MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder",
            "TransformerDecoder", "RotaryEmbedding"]

# issue 13 (h-rope)
from .positional import LearnedPositionalEmbedding  # noqa: E402

__all__ += ["LearnedPositionalEmbedding"]
