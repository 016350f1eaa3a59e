"""The typed engine's ops that ember.h gained for issue 11, from Python with torch's names: expand, flip, repeat,
scatter_add, masked_fill, var / std, F.adaptive_avg_pool2d (any output size), F.huber_loss / nn.HuberLoss. Values
against torch 1.13 where it is importable, against hand-worked values otherwise."""
import unittest

import _support  # noqa: F401
import ember
import ember.nn as enn
import ember.nn.functional as EF

try:
    import torch
    import torch.nn.functional as TF
except ImportError:  # pragma: no cover - depends on the machine
    torch = None


def close(test, got, want, tol=1e-5):
    got, want = ember.tensor(got).reshape(-1).tolist(), list(want)
    test.assertEqual(len(got), len(want))
    for g, w in zip(got, want):
        test.assertAlmostEqual(g, w, delta=tol)


class EngineOpsTest(unittest.TestCase):
    def test_expand_flip_repeat(self):
        x = ember.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        y = x.expand(2, -1)
        self.assertEqual(tuple(y.shape), (2, 3))
        self.assertEqual(y.tolist(), [[1, 2, 3], [1, 2, 3]])
        y.sum().backward()
        self.assertEqual(x.grad.tolist(), [[2, 2, 2]])
        self.assertEqual(x.expand_as(ember.zeros(2, 2, 3)).shape, (2, 2, 3))
        with self.assertRaises(RuntimeError):
            x.expand(2, 2)
        m = ember.tensor([[1, 2], [3, 4]])
        self.assertEqual(m.flip(0).tolist(), [[3, 4], [1, 2]])
        self.assertEqual(m.flip((0, 1)).tolist(), [[4, 3], [2, 1]])
        self.assertEqual(m.repeat(1, 2).tolist(), [[1, 2, 1, 2], [3, 4, 3, 4]])
        self.assertEqual(tuple(m.repeat(2, 1, 1).shape), (2, 2, 2))

    def test_scatter_add_and_masked_fill(self):
        x = ember.zeros(3)
        y = x.scatter_add(0, ember.tensor([0, 2, 0]), ember.tensor([1.0, 2.0, 3.0]))
        self.assertEqual(y.tolist(), [4, 0, 2])
        m = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
        self.assertEqual(m.masked_fill(ember.tensor([True, False]), -1.0).tolist(), [[-1, 2], [-1, 4]])
        self.assertEqual(m.masked_fill(m > 2, ember.tensor(0.0)).tolist(), [[1, 2], [0, 0]])

    def test_var_and_std(self):
        x = ember.tensor([[1.0, 3.0], [2.0, 6.0]])
        close(self, x.var(1), [2.0, 8.0])
        close(self, x.var(), [14.0 / 3.0])  # mean 3: (4 + 0 + 1 + 9) / 3
        close(self, x.var(0, unbiased=False), [0.25, 2.25])
        close(self, x.var((0, 1), keepdim=True), [14.0 / 3.0])
        self.assertEqual(tuple(x.var((0, 1), keepdim=True).shape), (1, 1))
        close(self, x.std(1, correction=0), [1.0, 2.0])
        if torch is not None:
            t = torch.tensor(x.tolist())
            close(self, x.var(0), t.var(0).tolist())
            close(self, x.std(), [t.std().item()])

    def test_adaptive_avg_pool2d_any_size(self):
        x = ember.arange(0, 15).reshape(1, 1, 3, 5).float()
        y = EF.adaptive_avg_pool2d(x, (2, 3))  # 3 -> 2 and 5 -> 3 do not divide: overlapping windows
        self.assertEqual(tuple(y.shape), (1, 1, 2, 3))
        if torch is not None:
            want = TF.adaptive_avg_pool2d(torch.arange(15.0).reshape(1, 1, 3, 5), (2, 3))
            close(self, y, want.reshape(-1).tolist())
        else:
            close(self, y[0, 0, 0], [3.0, 4.5, 6.0])
        self.assertEqual(tuple(EF.adaptive_avg_pool2d(x, (None, 1)).shape), (1, 1, 3, 1))

    def test_huber_loss(self):
        a = ember.tensor([0.0, 2.0, -0.5], requires_grad=True)
        b = ember.zeros(3)
        loss = EF.huber_loss(a, b, reduction="sum")
        close(self, loss, [1.625])
        loss.backward()
        close(self, a.grad, [0.0, 1.0, -0.5])
        close(self, enn.HuberLoss(delta=0.5)(a, b), [(0 + 0.5 * 1.75 + 0.125) / 3])
        close(self, EF.huber_loss(a, b, reduction="none"), [0.0, 1.5, 0.125])
        if torch is not None:
            ta = torch.tensor([0.0, 2.0, -0.5])
            close(self, EF.huber_loss(a, b, delta=0.7), [TF.huber_loss(ta, torch.zeros(3), delta=0.7).item()])


if __name__ == "__main__":
    unittest.main()
