"""What the residual-CNN parity generator (torch) and test (ember) share: the data subset and the training setup.

Both read data/digits.csv.gz with the standard library only, so the two sides see the same float32 inputs.
"""
import csv
import gzip
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
DIGITS = os.path.join(ROOT, "data", "digits.csv.gz")
REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "residual_cnn_reference.json")

SUBSET, BATCH, EPOCHS, LR, SEED = 384, 32, 4, 3e-3, 2024


def load_digits(path=DIGITS):
    """(pixels, labels): rows of 64 values scaled to [0, 1] (exact in float32), and ints 0..9."""
    xs, ys = [], []
    with gzip.open(path, "rt", newline="") as f:
        for row in csv.reader(f):
            if len(row) != 65:
                continue
            xs.append([int(v) / 16.0 for v in row[:64]])
            ys.append(int(row[64]))
    return xs, ys


def batches(rows, order):
    """The row indices of each batch of one epoch (`order` is a permutation of range(len(rows)))."""
    return [[rows[i] for i in order[b:b + BATCH]] for b in range(0, len(order), BATCH)]
