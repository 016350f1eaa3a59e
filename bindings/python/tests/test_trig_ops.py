"""The inverse trigonometric / hyperbolic ops, atan2, remainder and isnan/isinf through the binding, against
PyTorch 1.13's values and gradients (domain edges included): trig_expected.json, written by gen_trig_expected.py
with Debian's python3-torch, so the comparison runs where torch is not installed."""
import json
import math
import os
import unittest

import _support  # noqa: F401
import ember

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "trig_expected.json")) as _f:
    T = json.load(_f)
X = T["x"]


# Relative tolerances, from the worst errors measured against torch 1.13 (f32 both): values 8.9e-8 (cosh), so 5e-7
# (~6x); gradients 0 (the binding's f32 rules round exactly like torch's), so 1e-6 (~8 ulp of f32) leaves room for
# another libm only.
VALUE_TOL = 5e-7
GRAD_TOL = 1e-6


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


class TrigOpsTest(unittest.TestCase):
    def test_unary_forward_matches_torch(self):
        x = ember.tensor(X)
        for name, want in T["unary"].items():
            _same(self, getattr(x, name)().tolist(), want, VALUE_TOL, "Tensor." + name)
            _same(self, getattr(ember, name)(x).tolist(), want, VALUE_TOL, "ember." + name)

    def test_unary_gradients_match_torch(self):
        for name, case in T["unary_grad"].items():
            x = ember.tensor(case["x"], requires_grad=True)
            getattr(x, name)().sum().backward()
            _same(self, x.grad.tolist(), case["grad"], GRAD_TOL, name + " grad")

    def test_atan2_broadcasts_like_torch(self):
        c = T["atan2"]
        want = sum(c["value"], [])
        got = ember.tensor(c["y"]).atan2(ember.tensor(c["x"]))
        self.assertEqual(list(got.shape), c["shape"])
        _same(self, sum(got.tolist(), []), want, VALUE_TOL, "atan2")
        _same(self, sum(ember.atan2(ember.tensor(c["y"]), ember.tensor(c["x"])).tolist(), []), want, VALUE_TOL,
              "ember.atan2")
        a, b = ember.tensor(c["grad_a"], requires_grad=True), ember.tensor(c["grad_b"], requires_grad=True)
        a.atan2(b).sum().backward()
        _same(self, a.grad.tolist() + b.grad.tolist(), c["grad"], GRAD_TOL, "atan2 grad")

    def test_remainder_float_int_and_scalar_like_torch(self):
        c = T["remainder"]
        a = c["a"]
        for key, want in c["by_tensor"].items():
            _same(self, ember.tensor(a).remainder(ember.tensor([float(key)])).tolist(), want, VALUE_TOL,
                  "remainder by " + key)
            _same(self, (ember.tensor(a) % float(key)).tolist(), c["by_scalar"][key], VALUE_TOL, "% " + key)
        ia, ib = c["int_a"], c["int_b"]
        self.assertEqual(ember.remainder(ember.tensor(ia), ember.tensor(ib)).tolist(), c["int"])
        self.assertEqual((ember.tensor(ia) % -4).tolist(), c["int_by_minus4"])
        with self.assertRaises(ember.InvalidArgumentError):
            ember.tensor(ia) % ember.tensor([1, 0, 1, 1, 1, 1, 1])
        with self.assertRaises(ember.InvalidArgumentError):
            ember.tensor(ia) % 0

    def test_remainder_gradients_follow_torch(self):
        c = T["remainder"]
        a, b = ember.tensor(c["grad_a"], requires_grad=True), ember.tensor(c["grad_b"], requires_grad=True)
        a.remainder(b).sum().backward()
        _same(self, a.grad.tolist() + b.grad.tolist(), c["grad"], GRAD_TOL, "remainder grad")

    def test_isnan_isinf(self):
        x = ember.tensor(X)
        self.assertEqual(x.isnan().tolist(), T["isnan"])
        self.assertEqual(ember.isinf(x).tolist(), T["isinf"])
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
