"""A residual CNN written as an ember nn.Module subclass (with a user nn.Parameter) trains on digits with PyTorch
1.13's loss curve: same initial weights, same batches, Adam; every epoch's mean loss within LOSS_TOL of torch's.

The reference comes from gen_residual_cnn_reference.py (run with Debian's python3-torch); this test needs only
ember. The model below mirrors the generator's line for line, in ember's names.
"""
import json
import time
import unittest

import _support  # noqa: F401
import ember
import ember.nn as nn
import ember.nn.functional as F
import residual_cnn_common as common

# Per epoch. The curve is chaotic: a last-bit change of the summation order in one GEMM (oneDNN's sgemm instead of
# OpenBLAS's, blas_route.hpp) moves epoch 1 by 3e-7, epoch 2 by 4e-6, epoch 3 by 1.0e-4 and epoch 4 by 2.6e-4, so the
# later epochs get room while the first stay tight: Adam's eps at 1e-6 instead of 1e-8 moves epoch 1 by 2.6e-5 and
# a 1 % larger lr by 1.7e-3, both caught there. With OpenBLAS's GEMMs every epoch agrees to 1e-7.
LOSS_TOL = (1e-5, 1e-4, 1e-3, 1e-3)


class ResidualCNN(nn.Module):
    """stem conv + BatchNorm, one residual block scaled by a learnable res_scale, max-pool, linear head."""

    def __init__(self):
        super().__init__()
        # No bias before BatchNorm: its gradient is zero up to rounding, and Adam would turn that rounding noise
        # into lr-sized steps that no two implementations share.
        self.stem = nn.Conv2d(1, 8, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.block = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1))
        self.res_scale = nn.Parameter(ember.tensor(0.5))
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        h = F.relu(self.bn(self.stem(x)))
        h = F.relu(h + self.res_scale * self.block(h))
        return self.fc(self.pool(h).flatten(1))


def state_from_reference(entries, model_state):
    """The reference's initial state_dict as ember tensors shaped like the model's (torch's rank-0 res_scale and
    num_batches_tracked take whatever shape ember gives a Python scalar)."""
    out = {}
    for name, entry in entries.items():
        dtype = model_state[name].dtype
        values = entry["values"]
        if entry["shape"]:
            out[name] = ember.tensor(values, dtype=dtype).reshape(entry["shape"])
        else:
            out[name] = ember.tensor(values[0], dtype=dtype)
    return out


class ResidualCNNParityTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        with open(common.REFERENCE) as f:
            cls.ref = json.load(f)
        cls.xs, cls.ys = common.load_digits()

    def batch(self, idx):
        x = ember.tensor([self.xs[i] for i in idx], dtype="float32").reshape(len(idx), 1, 8, 8)
        return x, ember.tensor([self.ys[i] for i in idx], dtype="int64")

    def test_loss_curve_matches_pytorch(self):
        ref = self.ref
        self.assertEqual((ref["subset"], ref["batch"], ref["epochs"]), (common.SUBSET, common.BATCH, common.EPOCHS))
        model = ResidualCNN()
        self.assertEqual(list(model.state_dict().keys()), list(ref["initial_state"].keys()))
        result = model.load_state_dict(state_from_reference(ref["initial_state"], model.state_dict()))
        self.assertEqual((result.missing_keys, result.unexpected_keys), ([], []))
        opt = ember.optim.Adam(model.parameters(), lr=ref["lr"])
        start = time.perf_counter()
        losses = []
        for order in ref["orders"]:
            total, batch_list = 0.0, common.batches(ref["rows"], order)
            for idx in batch_list:
                x, y = self.batch(idx)
                loss = F.cross_entropy(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                total += loss.item()
            losses.append(total / len(batch_list))
        elapsed = time.perf_counter() - start
        self.assertEqual(len(losses), len(LOSS_TOL))
        for epoch, (got, want, tol) in enumerate(zip(losses, ref["epoch_losses"], LOSS_TOL), 1):
            self.assertLess(abs(got - want), tol, "epoch %d: ember %.7f, torch %.7f" % (epoch, got, want))
        # the user parameter and the BatchNorm buffers were trained / tracked as in torch
        final = ref["final"]
        self.assertAlmostEqual(model.res_scale.item(), final["res_scale"], delta=1e-3)
        for got, want in zip(model.bn.running_mean.tolist(), final["bn.running_mean"]):
            self.assertAlmostEqual(got, want, delta=1e-3)
        self.assertEqual(model.bn.num_batches_tracked.item(), final["bn.num_batches_tracked"])
        self.assertLess(elapsed, 30.0)


if __name__ == "__main__":
    unittest.main()
