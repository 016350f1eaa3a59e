#!/usr/bin/python3
"""Writes residual_cnn_reference.json: a residual CNN (an nn.Module subclass with a learnable residual scale, a
user nn.Parameter) trained with PyTorch on a subset of the digits, for test_residual_cnn_parity.py to replay in
ember from the same initial weights and batches.

    /usr/bin/python3 bindings/python/tests/gen_residual_cnn_reference.py    (needs Debian's python3-torch)

The file holds the subset's row indices, each epoch's order, the initial state_dict (float32 values, exact as
JSON numbers), the mean training loss of every epoch, and a few final values. Deterministic: same file on every
run with the same torch.
"""
import json
import random
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import residual_cnn_common as common


class ResidualCNN(nn.Module):
    """stem conv + BatchNorm, one residual block scaled by a learnable res_scale, max-pool, linear head."""

    def __init__(self):
        super().__init__()
        # No bias before BatchNorm: its gradient is zero up to rounding, and Adam would turn that rounding noise
        # into lr-sized steps that no two implementations share.
        self.stem = nn.Conv2d(1, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.block = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1))
        self.res_scale = nn.Parameter(torch.tensor(0.5))
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        h = F.relu(self.bn(self.stem(x)))
        h = F.relu(h + self.res_scale * self.block(h))
        return self.fc(self.pool(h).flatten(1))


def tensors(xs, ys, idx):
    x = torch.tensor([xs[i] for i in idx], dtype=torch.float32).reshape(len(idx), 1, 8, 8)
    return x, torch.tensor([ys[i] for i in idx], dtype=torch.int64)


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    xs, ys = common.load_digits()
    rng = random.Random(common.SEED)
    rows = rng.sample(range(len(xs)), common.SUBSET)
    orders = []
    for _ in range(common.EPOCHS):
        order = list(range(common.SUBSET))
        rng.shuffle(order)
        orders.append(order)

    model = ResidualCNN()
    initial = {k: {"shape": list(v.shape), "values": v.reshape(-1).tolist()} for k, v in model.state_dict().items()}
    opt = torch.optim.Adam(model.parameters(), lr=common.LR)
    losses = []
    for order in orders:
        total = 0.0
        batch_list = common.batches(rows, order)
        for idx in batch_list:
            x, y = tensors(xs, ys, idx)
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        losses.append(total / len(batch_list))
        print("epoch %d: mean loss %.6f" % (len(losses), losses[-1]))
    ref = {
        "torch": torch.__version__,
        "subset": common.SUBSET, "batch": common.BATCH, "epochs": common.EPOCHS, "lr": common.LR,
        "rows": rows, "orders": orders, "initial_state": initial, "epoch_losses": losses,
        "final": {"res_scale": model.res_scale.item(), "bn.running_mean": model.bn.running_mean.tolist(),
                  "bn.num_batches_tracked": model.bn.num_batches_tracked.item()},
    }
    with open(common.REFERENCE, "w") as f:
        json.dump(ref, f, separators=(",", ":"))
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
