"""sort, argsort, topk, cumsum, masked_select, tril, triu and nn.functional.one_hot through the binding, against
PyTorch 1.13's values and gradients (NaN, infinities, ties): sort_scan_expected.json, written by
gen_sort_scan_expected.py with Debian's python3-torch, so the comparison runs where torch is not installed."""
import json
import math
import os
import unittest

import _support  # noqa: F401
import ember
import ember.nn.functional as F

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "sort_scan_expected.json")) as _f:
    T = json.load(_f)

TOL = 1e-6  # f32 sums of a few terms; sorts, masks and gradients routed through indices are exact


def _flat(v):
    return [x for row in v for x in _flat(row)] if isinstance(v, list) else [v]


def _same(test, got, want, what, tol=TOL):
    """Same nesting, NaN where torch has NaN, the same infinity, else |got - want| <= tol * max(1, |want|)."""
    g, w = _flat(got), _flat(want)
    test.assertEqual(len(g), len(w), what)
    test.assertEqual(_shape(got), _shape(want), what)
    for k, (a, b) in enumerate(zip(g, w)):
        if isinstance(b, float) and math.isnan(b):
            test.assertTrue(math.isnan(a), "%s[%d]: got %r, torch %r" % (what, k, a, b))
        elif math.isinf(b):
            test.assertEqual(a, b, "%s[%d]" % (what, k))
        else:
            test.assertLessEqual(abs(a - b), tol * max(1.0, abs(b)), "%s[%d]: got %r, torch %r" % (what, k, a, b))


def _shape(v):
    return [len(v)] + _shape(v[0]) if isinstance(v, list) and v else ([0] if isinstance(v, list) else [])


class SortScanTest(unittest.TestCase):
    def test_sort_and_argsort_match_torch(self):
        x = ember.tensor(T["sort_x"])
        for key, want in T["sort"].items():
            dim, desc = (int(s) for s in key.split(","))
            for got in (x.sort(dim, bool(desc)), ember.sort(x, dim=dim, descending=bool(desc), stable=True)):
                _same(self, got.values.tolist(), want["values"], "sort %s values" % key, 0)
                self.assertEqual(got.indices.tolist(), want["indices"], "sort %s indices" % key)
                self.assertEqual(got.indices.dtype, ember.int64)
            self.assertEqual(x.argsort(dim=dim, descending=bool(desc)).tolist(), want["indices"])
        self.assertEqual(ember.argsort(x, 0, descending=True).tolist(), T["argsort_desc_d0"])

    def test_topk_matches_torch(self):
        x = ember.tensor(T["topk_x"])
        for key, want in T["topk"].items():
            k, dim, largest = (int(s) for s in key.split(","))
            values, indices = ember.topk(x, k, dim=dim, largest=bool(largest))
            _same(self, values.tolist(), want["values"], "topk %s values" % key, 0)
            self.assertEqual(indices.tolist(), want["indices"], "topk %s indices" % key)
        with self.assertRaises(ember.InvalidArgumentError):
            x.topk(7)

    def test_cumsum_tril_triu_masked_select_match_torch(self):
        c = ember.tensor(T["scan_x"])
        for d, want in T["cumsum"].items():
            _same(self, c.cumsum(int(d)).tolist(), want, "cumsum dim " + d)
            _same(self, ember.cumsum(c, int(d)).tolist(), want, "ember.cumsum dim " + d)
        x = ember.tensor(T["grad_x"])
        for d, want in T["tril"].items():
            _same(self, ember.tril(x, int(d)).tolist(), want, "tril " + d, 0)
        for d, want in T["triu"].items():
            _same(self, x.triu(diagonal=int(d)).tolist(), want, "triu " + d, 0)
        _same(self, x.masked_select(ember.tensor(T["mask"])).tolist(), T["masked_select"], "masked_select", 0)
        _same(self, ember.masked_select(x, ember.tensor([[False, True, True, False]])).tolist(),
              T["masked_select_row"], "masked_select broadcast", 0)

    def test_gradients_match_torch(self):
        w = T["weights"]
        cases = {
            "sort_desc_d1": lambda t: t.sort(dim=1, descending=True).values,
            "topk_2_d0": lambda t: t.topk(2, dim=0).values,
            "cumsum_d1": lambda t: t.cumsum(1),
            "cumsum_d0": lambda t: t.cumsum(0),
            "tril_m1": lambda t: t.tril(-1),
        }
        for name, f in cases.items():
            x = ember.tensor(T["grad_x"], requires_grad=True)
            y = f(x)
            rows, cols = y.shape
            (y * ember.tensor([row[:cols] for row in w[:rows]])).sum().backward()
            _same(self, x.grad.tolist(), T["grad"][name], name + " grad")
        x = ember.tensor(T["grad_x"], requires_grad=True)
        y = x.masked_select(ember.tensor(T["mask"]))
        (y * ember.tensor(_flat(w)[:y.shape[0]])).sum().backward()
        _same(self, x.grad.tolist(), T["grad"]["masked_select"], "masked_select grad")

    def test_one_hot_matches_torch_and_refuses_out_of_range_classes(self):
        c = ember.tensor(T["classes"])
        self.assertEqual(F.one_hot(c).tolist(), T["one_hot"])
        self.assertEqual(F.one_hot(c, num_classes=5).tolist(), T["one_hot_5"])
        with self.assertRaisesRegex(ember.InvalidArgumentError, "out of range"):
            F.one_hot(c, 3)
        with self.assertRaises(ember.InvalidArgumentError):
            F.one_hot(ember.tensor([0, -1]))
        with self.assertRaises(ember.DTypeError):
            F.one_hot(ember.tensor([0.0, 1.0]))


if __name__ == "__main__":
    unittest.main()
