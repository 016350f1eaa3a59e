#!/usr/bin/python3
"""Generates the PyTorch state_dict fixtures of tests/records_torch_test.cpp: small PyTorch 1.13 models saved as
safetensors, with inputs and the outputs PyTorch computes for them.

    /usr/bin/python3 tests/reference/gen_torch_safetensors.py     # rewrites torch_*.safetensors next to this file

  torch_mlp.safetensors   nn.Sequential(Linear(5, 8), ReLU(), Linear(8, 3)) state_dict ("0.weight", "2.bias", ...)
  torch_cnn.safetensors   TinyCnn: conv (Conv2d(2, 4, 3, padding=1)), bn (BatchNorm2d(4), running statistics from
                          three training batches, num_batches_tracked 3), fc (Linear(4*5*5, 3)); eval mode
  torch_emb.safetensors   TinyEmb: emb (Embedding(10, 6)), norm (LayerNorm(6)), head (Linear(6, 6), square, so only
                          the name map, not the shapes, can tell it needs transposing)
  torch_io.safetensors    "<model>.input" and "<model>.output" for each model (emb's input is I64 indices)

The safetensors bytes are written by the few lines below (the `safetensors` package is not a Debian package):
u64 little-endian header length, the JSON header (keys sorted, padded with spaces to a multiple of 8), the data.
CPU, one thread and fixed seeds keep the bytes reproducible (tests/reference_generators_test.py checks that).
"""
import json
import os
import struct

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
DTYPES = {torch.float32: "F32", torch.int64: "I64"}


def save_safetensors(tensors, path):
    header, data, at = {}, b"", 0
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous()
        raw = t.numpy().tobytes()
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [at, at + len(raw)]}
        data += raw
        at += len(raw)
    text = json.dumps(header, sort_keys=True, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


class TinyCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 5 * 5, 3)

    def forward(self, x):
        return self.fc(torch.relu(self.bn(self.conv(x))).flatten(1))


class TinyEmb(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 6)
        self.norm = nn.LayerNorm(6)
        self.head = nn.Linear(6, 6)

    def forward(self, idx):
        return self.head(self.norm(self.emb(idx)))


def main():
    torch.set_num_threads(1)
    torch.manual_seed(13)
    io = {}

    mlp = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
    x = torch.randn(4, 5)
    io["mlp.input"], io["mlp.output"] = x, mlp(x)
    save_safetensors(mlp.state_dict(), os.path.join(HERE, "torch_mlp.safetensors"))

    cnn = TinyCnn()
    with torch.no_grad():  # non-trivial affine parameters and running statistics
        cnn.bn.weight.uniform_(0.5, 1.5)
        cnn.bn.bias.uniform_(-0.5, 0.5)
    cnn.train()
    for _ in range(3):
        cnn(torch.randn(6, 2, 5, 5) * 2 + 0.5)
    cnn.eval()
    x = torch.randn(2, 2, 5, 5)
    io["cnn.input"], io["cnn.output"] = x, cnn(x)
    save_safetensors(cnn.state_dict(), os.path.join(HERE, "torch_cnn.safetensors"))

    emb = TinyEmb()
    with torch.no_grad():
        emb.norm.weight.uniform_(0.5, 1.5)
        emb.norm.bias.uniform_(-0.5, 0.5)
    idx = torch.tensor([[1, 4, 9], [0, 4, 7]])
    io["emb.input"], io["emb.output"] = idx, emb(idx)
    save_safetensors(emb.state_dict(), os.path.join(HERE, "torch_emb.safetensors"))

    save_safetensors(io, os.path.join(HERE, "torch_io.safetensors"))


if __name__ == "__main__":
    main()
