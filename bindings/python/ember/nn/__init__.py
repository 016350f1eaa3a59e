"""ember.nn: layers, Sequential, Parameter; ember.nn.functional for the functional forms."""
from . import functional
from .container import Sequential
from .modules import (GELU, Conv2d, Dropout, Flatten, Layer, LeakyReLU, Linear, LogSoftmax, Module, PReLU, ReLU,
                      Sigmoid, SiLU, Softmax, Tanh, Threshold)
from .norm_pool import AdaptiveAvgPool2d, AvgPool2d, BatchNorm1d, BatchNorm2d, Embedding, LayerNorm, MaxPool2d
from .parameter import Parameter

__all__ = ["functional", "Sequential", "Module", "Layer", "Parameter", "Linear", "Conv2d", "ReLU", "GELU", "Sigmoid",
           "Tanh", "Threshold", "PReLU", "Dropout", "LayerNorm", "Embedding", "MaxPool2d", "AvgPool2d", "Flatten",
           "LeakyReLU", "SiLU", "Softmax", "LogSoftmax", "BatchNorm1d", "BatchNorm2d", "AdaptiveAvgPool2d"]
