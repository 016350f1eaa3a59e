#!/usr/bin/python3
"""Generates the PyTorch-exported ONNX fixtures of tests/onnx/models_test.cpp, the fine-tune test and the ONNX
Runtime peer benchmark (bench/onnx): PyTorch 1.13 models exported with torch.onnx.export, with inputs and the
outputs PyTorch computes for them.

    /usr/bin/python3 tests/onnx/models/gen_torch_models.py     # rewrites the files next to this script

  digits_mlp.onnx        `ember train --model mlp` (tools/ember/models.hpp): Linear 64-256-256-10 with ReLUs
  digits_cnn.onnx        `ember train --model cnn`: [N, 64] -> [N, 1, 8, 8], conv 3x3 16 and 32 (padding 1, ReLU),
                         2x2 max pool, flatten, Linear 512-64, ReLU, Linear 64-10
  resnet18_narrow.onnx   ResNet-18's topology (7x7/2 stem, 3x3/2 max pool, four stages of two basic blocks with
                         1x1/2 downsample shortcuts, global average pool, fc 1000) at 1/8 of its widths (8, 16, 32,
                         64 channels) so the file stays < 1 MB; BatchNorm with trained-looking running statistics
                         (exported in eval mode, where PyTorch folds it into the convolutions)
  lm_transformer.onnx    the character transformer of `ember train --model transformer` (tools/ember/lm_model.hpp,
                         its PyTorch twin is tests/reference/gen_lm_fixture.py) at d_model 64, 4 heads, 2 layers,
                         context 32, vocabulary 88 (the size of the default corpus's)
  <model>_io.safetensors "input" and "output": a batch and PyTorch's outputs for it (the LM's input is I64 ids)
  digits_mlp_finetune.safetensors
                         "x" [32, 64], "y" (I64 [32]) digits rows, "lr" and PyTorch's cross-entropy "losses" over
                         5 plain SGD steps of digits_mlp on that batch (the fine-tune test's reference)

Every model is exported at opset 13 (the LM at 14, for Trilu) with a dynamic batch axis (and dynamic height / width
for the ResNet, dynamic sequence length for the LM), so one file serves batch 1 and 64 in the benchmark.
CPU, one thread and fixed seeds keep the bytes reproducible.
"""
import gzip
import io
import os
import sys

sys.dont_write_bytecode = True  # the twin modules imported from tests/reference leave no __pycache__ there

import torch
from torch import nn
from torch.nn import functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "reference"))
from gen_lm_fixture import CharTransformer  # noqa: E402  (the LM's PyTorch twin, shared with lm_torch_test)
from gen_torch_safetensors import save_safetensors  # noqa: E402


class DigitsMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(64, 256), nn.Linear(256, 256), nn.Linear(256, 10)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


class DigitsCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc1, self.fc2 = nn.Linear(32 * 4 * 4, 64), nn.Linear(64, 10)

    def forward(self, x):
        h = F.relu(self.conv1(x.reshape(-1, 1, 8, 8)))
        h = F.max_pool2d(F.relu(self.conv2(h)), 2)
        return self.fc2(F.relu(self.fc1(h.flatten(1))))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + (x if self.downsample is None else self.downsample(x)))


class NarrowResNet18(nn.Module):
    """torchvision's resnet18 layout (layers [2, 2, 2, 2] of BasicBlock) with every width divided by 8."""

    def __init__(self, widths=(8, 16, 32, 64), num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, widths[0], 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        stages, cin = [], widths[0]
        for i, w in enumerate(widths):
            stride = 1 if i == 0 else 2
            stages.append(nn.Sequential(BasicBlock(cin, w, stride), BasicBlock(w, w, 1)))
            cin = w
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.fc = nn.Linear(widths[-1], num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, 2, 1)
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def digits():
    """The 1797 digits rows as ([n, 64] floats in [0, 1], [n] labels), like tools/data/digits.cpp reads them."""
    with gzip.open(os.path.join(ROOT, "data", "digits.csv.gz"), "rt") as f:
        rows = [[int(v) for v in line.split(",")] for line in f if line.strip()]
    t = torch.tensor(rows)
    return t[:, :64].float() / 16.0, t[:, 64]


def export(model, example, name, opset, dynamic_axes, input_name="input"):
    """model.onnx bytes as torch.onnx.export writes them (eval mode, constants folded), saved as <name>.onnx."""
    buf = io.BytesIO()
    torch.onnx.export(model, (example,), buf, opset_version=opset, input_names=[input_name], output_names=["output"],
                      dynamic_axes=dynamic_axes, do_constant_folding=True)
    with open(os.path.join(HERE, name + ".onnx"), "wb") as f:
        f.write(buf.getvalue())


def save_io(name, x, model):
    with torch.no_grad():
        y = model(x)
    save_safetensors({"input": x, "output": y}, os.path.join(HERE, name + "_io.safetensors"))


def main():
    torch.set_num_threads(1)
    torch.manual_seed(19)
    images, labels = digits()
    batch = {"input": {0: "batch"}, "output": {0: "batch"}}

    mlp = DigitsMlp().eval()
    export(mlp, images[:4], "digits_mlp", 13, batch)
    save_io("digits_mlp", images[:8], mlp)

    cnn = DigitsCnn().eval()
    export(cnn, images[:4], "digits_cnn", 13, batch)
    save_io("digits_cnn", images[8:16], cnn)

    resnet = NarrowResNet18()
    with torch.no_grad():  # BatchNorm as a trained network has it: affine parameters and running statistics away
        for m in resnet.modules():  # from 1 / 0, so folding them into the convolutions is visible in the outputs
            if isinstance(m, nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 2.0)
    resnet.eval()
    export(resnet, torch.randn(1, 3, 64, 64), "resnet18_narrow", 13,
           {"input": {0: "batch", 2: "height", 3: "width"}, "output": {0: "batch"}})
    save_io("resnet18_narrow", torch.randn(2, 3, 40, 48), resnet)

    lm = CharTransformer(vocab=88, context=32, d=64, heads=4, layers=2).eval()
    ids = torch.randint(0, 88, (2, 20))
    export(lm, ids[:1, :8], "lm_transformer", 14,
           {"input": {0: "batch", 1: "sequence"}, "output": {0: "batch", 1: "sequence"}})
    save_io("lm_transformer", ids, lm)

    # The fine-tune reference: digits_mlp as exported, trained by plain SGD on one batch of 32 rows.
    x, y, lr = images[100:132], labels[100:132], 0.1
    tuned = DigitsMlp()
    tuned.load_state_dict(mlp.state_dict())
    opt = torch.optim.SGD(tuned.parameters(), lr=lr)
    losses = []
    for _ in range(5):
        loss = F.cross_entropy(tuned(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    save_safetensors({"x": x, "y": y, "lr": torch.tensor([lr]), "losses": torch.tensor(losses)},
                     os.path.join(HERE, "digits_mlp_finetune.safetensors"))
    print("losses of 5 SGD steps:", " ".join(f"{v:.4f}" for v in losses))


if __name__ == "__main__":
    main()
