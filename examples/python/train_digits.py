#!/usr/bin/env python3
"""Trains the digits MLP (64-256-256-10, ReLU, Adam) through the ember Python binding alone.

    python3 examples/python/train_digits.py [digits.csv.gz] [epochs] [--compile]

--compile (or EMBER_COMPILE=1) trains the compiled model: `model = ember.compile(model)` right after it is built is
its only effect (issue 14: the forward and its backward captured once and replayed; the loss and Adam stay eager).

The data set is data/digits.csv.gz (UCI handwritten digits: 64 pixel values 0..16 and a label per line), read with
the standard gzip and csv modules; 80 % train / 20 % test after a fixed shuffle. Prints the mean training loss,
the training and test accuracy per epoch, and exits with status 1 if the final test accuracy is below 90 % (the
meson test relies on it). The binding finds libember.so through $EMBER_LIBRARY or the build folder.
"""
import array
import csv
import gzip
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python"))

import ember  # noqa: E402
import ember.nn as nn  # noqa: E402
import ember.nn.functional as F  # noqa: E402

PIXELS, CLASSES, BATCH = 64, 10, 64


def load_digits(path):
    """(pixels, labels): rows of 64 floats scaled to [0, 1], and ints 0..9."""
    xs, ys = [], []
    with gzip.open(path, "rt", newline="") as f:
        for row in csv.reader(f):
            if len(row) != PIXELS + 1:
                continue  # blank or malformed line
            xs.append([int(v) / 16.0 for v in row[:PIXELS]])
            ys.append(int(row[PIXELS]))
    return xs, ys


def batch(xs, ys, idx):
    """Tensors x [n, 64] float32 and y [n] int64 for the rows idx (one copy each, from flat host buffers)."""
    flat = array.array("f")
    for i in idx:
        flat.extend(xs[i])
    x = ember.tensor(flat, shape=[len(idx), PIXELS], dtype="float32")
    y = ember.tensor(array.array("q", (ys[i] for i in idx)), shape=[len(idx)], dtype="int64")
    return x, y


def accuracy(model, x, y):
    """Fraction classified correctly, in eval mode with nothing recorded."""
    model.eval()
    with ember.no_grad():
        pred = model(x).argmax(dim=1)
    model.train()
    return (pred == y).float().mean().item()


def main(argv):
    compiled = "--compile" in argv or os.environ.get("EMBER_COMPILE", "") not in ("", "0")
    argv = [a for a in argv if a != "--compile"]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    path = argv[1] if len(argv) > 1 else os.path.join(root, "data", "digits.csv.gz")
    epochs = int(argv[2]) if len(argv) > 2 else 5
    xs, ys = load_digits(path)
    print("ember %s (%s): %d digits from %s" % (ember.__version__, ember.library_path, len(xs), path))

    order = list(range(len(xs)))
    rng = random.Random(2024)
    rng.shuffle(order)
    n_train = len(order) * 4 // 5
    train_idx, test_idx = order[:n_train], order[n_train:]
    x_train, y_train = batch(xs, ys, train_idx)
    x_test, y_test = batch(xs, ys, test_idx)

    ember.manual_seed(42)
    model = nn.Sequential(
        nn.Linear(PIXELS, 256), nn.ReLU(),
        nn.Linear(256, 256), nn.ReLU(),
        nn.Linear(256, CLASSES))
    if compiled:
        model = ember.compile(model)
    params = list(model.parameters())
    print("model: %d parameters in %d tensors" % (sum(p.numel() for p in params), len(params)))
    optimizer = ember.optim.Adam(model.parameters(), lr=1e-3)

    acc = 0.0
    for epoch in range(1, epochs + 1):
        start = time.perf_counter()
        rng.shuffle(train_idx)
        loss_sum = 0.0
        for b in range(0, n_train, BATCH):
            idx = train_idx[b:b + BATCH]
            x, y = batch(xs, ys, idx)
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_sum += loss.item() * len(idx)
        train_acc = accuracy(model, x_train, y_train)
        acc = accuracy(model, x_test, y_test)
        print("epoch %d/%d  loss %.4f  train accuracy %.1f%%  test accuracy %.1f%%  (%.2f s)"
              % (epoch, epochs, loss_sum / n_train, 100 * train_acc, 100 * acc, time.perf_counter() - start))

    if acc < 0.9:
        print("test accuracy %.1f%% is below 90%%" % (100 * acc), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
