#!/usr/bin/env python3
"""Trains a residual CNN, written as an nn.Module subclass the way a PyTorch user would, on the digits (8x8
images) through the ember Python binding: DataLoader batches, Adam with a cosine lr schedule, gradient clipping,
then ember.save / ember.load of the state_dict into a fresh model.

    python3 examples/python/train_residual_cnn.py [digits.csv.gz] [epochs]

Prints the mean loss and test accuracy per epoch; exits with status 1 if the final test accuracy is below 90 % or
the reloaded model predicts differently (the meson test relies on it).
"""
import csv
import gzip
import os
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python"))

import ember  # noqa: E402
import ember.nn as nn  # noqa: E402
import ember.nn.functional as F  # noqa: E402
from ember.utils.data import DataLoader, TensorDataset  # noqa: E402


class ResidualCNN(nn.Module):
    """conv stem + BatchNorm, two residual blocks each scaled by a learnable parameter, pooling, linear head."""

    def __init__(self, channels=16, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, channels, 3, padding=1, bias=False), nn.BatchNorm2d(channels),
                                  nn.ReLU())
        self.blocks = nn.ModuleList([
            nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU(),
                          nn.Conv2d(channels, channels, 3, padding=1))
            for _ in range(2)])
        self.res_scale = nn.Parameter(ember.full([2], 0.5))
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Linear(channels * 4 * 4, classes)

    def forward(self, x):
        h = self.stem(x)
        for i, block in enumerate(self.blocks):
            h = F.relu(h + self.res_scale[i] * block(h))
        return self.head(self.pool(h).flatten(1))


def load_digits(path):
    xs, ys = [], []
    with gzip.open(path, "rt", newline="") as f:
        for row in csv.reader(f):
            if len(row) == 65:
                xs.append([int(v) / 16.0 for v in row[:64]])
                ys.append(int(row[64]))
    return xs, ys


def predict(model, x):
    model.eval()
    with ember.no_grad():
        pred = model(x).argmax(dim=1)
    model.train()
    return pred


def main(argv):
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    path = argv[1] if len(argv) > 1 else os.path.join(root, "data", "digits.csv.gz")
    epochs = int(argv[2]) if len(argv) > 2 else 4
    xs, ys = load_digits(path)
    order = list(range(len(xs)))
    random.Random(2024).shuffle(order)
    n_train = len(order) * 4 // 5
    x_all = ember.tensor(xs).reshape(len(xs), 1, 8, 8)
    y_all = ember.tensor(ys)
    train_idx, test_idx = ember.tensor(order[:n_train]), ember.tensor(order[n_train:])
    train = TensorDataset(x_all.index_select(0, train_idx), y_all.index_select(0, train_idx))
    x_test, y_test = x_all.index_select(0, test_idx), y_all.index_select(0, test_idx)

    ember.manual_seed(7)
    model = ResidualCNN()
    print("model: %d parameters; %s" % (sum(p.numel() for p in model.parameters()),
                                        ", ".join(name for name, _ in model.named_parameters())))
    loader = DataLoader(train, batch_size=64, shuffle=True, generator=11)
    opt = ember.optim.Adam(model.parameters(), lr=3e-3)
    sched = ember.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs * len(loader))
    acc = 0.0
    for epoch in range(1, epochs + 1):
        start, total = time.perf_counter(), 0.0
        for xb, yb in loader:
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
            opt.step()
            sched.step()
            total += loss.item()
        acc = (predict(model, x_test) == y_test).float().mean().item()
        print("epoch %d/%d  loss %.4f  test accuracy %.1f%%  lr %.2e  (%.2f s)"
              % (epoch, epochs, total / len(loader), 100 * acc, sched.get_last_lr()[0], time.perf_counter() - start))

    with tempfile.TemporaryDirectory() as tmp:
        saved = os.path.join(tmp, "residual_cnn.pt")
        ember.save(model.state_dict(), saved)
        fresh = ResidualCNN()
        print("reload:", fresh.load_state_dict(ember.load(saved)))
    same = predict(fresh, x_test).tolist() == predict(model, x_test).tolist()
    if acc < 0.9 or not same:
        print("test accuracy %.1f%% (want >= 90%%); reloaded model agrees: %s" % (100 * acc, same), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
