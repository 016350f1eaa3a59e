"""safetensors files, the format PyTorch and Hugging Face share weights in (issue 13).

ember.nn modules have PyTorch's names and layouts (Linear's weight [out_features, in_features], BatchNorm's
running statistics and num_batches_tracked), so a PyTorch state_dict saved as safetensors loads as it is:

    model.load_state_dict(ember.load_safetensors("model.safetensors"))     # strict=False for a partial load
    ember.save_safetensors(model.state_dict(), "model.safetensors")       # torch and safetensors.torch read it

The names follow safetensors.torch (save_file / load_file / save_model / load_model). libember parses and writes
the files (ember_record_read_safetensors / ember_record_write_safetensors): the whole header is checked before any
tensor is read, names must be UTF-8 without control characters, and errors (errors.RecordError) name the file and
the tensor with file content escaped.
"""
import os

from . import _record_bridge
from .serialization import Record


def load_safetensors(path):
    """The tensors of a safetensors file, as an ember.Record that Module.load_state_dict takes."""
    return Record.read_safetensors(os.fspath(path))


def save_safetensors(tensors, path):
    """Writes `tensors` (a dict of tensors by name, such as a state_dict) as a safetensors file, atomically."""
    _record_bridge.record_from_state_dict(tensors).write_safetensors(os.fspath(path))


def load_model(model, path, strict=True):
    """model.load_state_dict(load_safetensors(path), strict): torch's _IncompatibleKeys."""
    return model.load_state_dict(load_safetensors(path), strict=strict)


def save_model(model, path):
    """save_safetensors(model.state_dict(), path)."""
    save_safetensors(model.state_dict(), path)


load_file = load_safetensors  # safetensors.torch's names
save_file = save_safetensors
