"""The inverse trigonometric / hyperbolic ops, atan2, remainder and isnan/isinf through the binding, against
PyTorch (values and gradients, domain edges included). Skipped without torch."""
import math
import unittest

import _support  # noqa: F401
import ember

try:
    import torch
except ImportError:  # pragma: no cover - torch is optional for the binding's tests
    torch = None

X = [-2.0, -1.0, -0.999, -0.5, -1e-4, -0.0, 0.0, 1e-4, 0.5, 0.999, 1.0, 1.5, 2.0, 10.0,
     float("inf"), float("-inf"), float("nan")]


def _same(test, got, want, tol, what):
    """Elementwise: NaN where torch has NaN, the same infinity, else relative error <= tol."""
    test.assertEqual(len(got), len(want), what)
    for k, (a, b) in enumerate(zip(got, want)):
        if math.isnan(b):
            test.assertTrue(math.isnan(a), "%s[%d]: got %r, torch %r" % (what, k, a, b))
        elif math.isinf(b):
            test.assertEqual(a, b, "%s[%d]" % (what, k))
        else:
            test.assertLessEqual(abs(a - b), tol * max(abs(b), 1e-30), "%s[%d]: got %r, torch %r" % (what, k, a, b))


@unittest.skipIf(torch is None, "torch is not installed")
class TrigOpsTest(unittest.TestCase):
    def test_unary_forward_matches_torch(self):
        x, tx = ember.tensor(X), torch.tensor(X, dtype=torch.float32)
        for name in ("asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"):
            want = getattr(torch, name)(tx).tolist()
            _same(self, getattr(x, name)().tolist(), want, 1e-6, "Tensor." + name)
            _same(self, getattr(ember, name)(x).tolist(), want, 1e-6, "ember." + name)

    def test_unary_gradients_match_torch(self):
        inner = [-0.9, -0.3, 0.2, 0.8]
        for name, xs in [("asin", inner), ("acos", inner), ("atanh", inner), ("atan", [-3.0, 0.5, 2.0]),
                         ("sinh", [-2.0, 0.1, 3.0]), ("cosh", [-2.0, 0.1, 3.0]), ("asinh", [-3.0, 0.2, 5.0]),
                         ("acosh", [1.1, 2.0, 7.5])]:
            x = ember.tensor(xs, requires_grad=True)
            tx = torch.tensor(xs, requires_grad=True)
            getattr(x, name)().sum().backward()
            getattr(torch, name)(tx).sum().backward()
            _same(self, x.grad.tolist(), tx.grad.tolist(), 1e-5, name + " grad")

    def test_atan2_broadcasts_like_torch(self):
        ys = [[1.0], [-1.0], [0.0], [-0.0], [float("inf")], [float("nan")]]
        xs = [[1.0, -1.0, 0.0, -0.0, float("-inf"), 2.5]]
        got = ember.tensor(ys).atan2(ember.tensor(xs))
        want = torch.atan2(torch.tensor(ys), torch.tensor(xs))
        self.assertEqual(list(got.shape), list(want.shape))
        _same(self, sum(got.tolist(), []), sum(want.tolist(), []), 1e-6, "atan2")
        _same(self, sum(ember.atan2(ember.tensor(ys), ember.tensor(xs)).tolist(), []), sum(want.tolist(), []), 1e-6,
              "ember.atan2")
        a, b = ember.tensor([0.5, -2.0], requires_grad=True), ember.tensor([1.5, 0.7], requires_grad=True)
        ta, tb = torch.tensor([0.5, -2.0], requires_grad=True), torch.tensor([1.5, 0.7], requires_grad=True)
        a.atan2(b).sum().backward()
        torch.atan2(ta, tb).sum().backward()
        _same(self, a.grad.tolist() + b.grad.tolist(), ta.grad.tolist() + tb.grad.tolist(), 1e-5, "atan2 grad")

    def test_remainder_float_int_and_scalar_like_torch(self):
        a = [5.5, -5.5, 7.0, -7.0, 0.0, 1e-3, 123.25]
        for b in ([2.0], [-2.0], [0.75], [-3.5]):
            want = torch.remainder(torch.tensor(a), torch.tensor(b)).tolist()
            _same(self, ember.tensor(a).remainder(ember.tensor(b)).tolist(), want, 1e-6, "remainder by %s" % b)
            _same(self, (ember.tensor(a) % b[0]).tolist(), torch.remainder(torch.tensor(a), b[0]).tolist(), 1e-6,
                  "%% %s" % b[0])
        ia, ib = [7, -7, 7, -7, 0, 6, -6], [3, 3, -3, -3, 5, -4, 4]
        self.assertEqual(ember.remainder(ember.tensor(ia), ember.tensor(ib)).tolist(),
                         torch.remainder(torch.tensor(ia), torch.tensor(ib)).tolist())
        self.assertEqual((ember.tensor(ia) % -4).tolist(), (torch.tensor(ia) % -4).tolist())
        with self.assertRaises(ember.InvalidArgumentError):
            ember.tensor(ia) % ember.tensor([1, 0, 1, 1, 1, 1, 1])
        with self.assertRaises(ember.InvalidArgumentError):
            ember.tensor(ia) % 0

    def test_remainder_gradients_follow_torch(self):
        a, b = ember.tensor([5.3, -2.2, 1.1], requires_grad=True), ember.tensor([2.0, 1.5, -0.7], requires_grad=True)
        ta, tb = torch.tensor([5.3, -2.2, 1.1], requires_grad=True), torch.tensor([2.0, 1.5, -0.7], requires_grad=True)
        a.remainder(b).sum().backward()
        torch.remainder(ta, tb).sum().backward()
        _same(self, a.grad.tolist() + b.grad.tolist(), ta.grad.tolist() + tb.grad.tolist(), 1e-6, "remainder grad")

    def test_isnan_isinf(self):
        x, tx = ember.tensor(X), torch.tensor(X)
        self.assertEqual(x.isnan().tolist(), torch.isnan(tx).tolist())
        self.assertEqual(ember.isinf(x).tolist(), torch.isinf(tx).tolist())
        self.assertEqual(x.isnan().dtype, ember.tensor([True]).dtype)
        with self.assertRaises(ember.DTypeError):
            ember.tensor([1, 2]).isnan()

    def test_float_only_ops_refuse_int_tensors(self):
        with self.assertRaises(ember.DTypeError):
            ember.tensor([1, 2]).asin()
        with self.assertRaises(ember.DTypeError):
            ember.tensor([1, 2]).atan2(ember.tensor([1, 2]))


if __name__ == "__main__":
    unittest.main()
