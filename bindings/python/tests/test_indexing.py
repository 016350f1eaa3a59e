"""t[key] and t[key] = value against torch 1.13: the cases and torch's results are in indexing_expected.json
(written by gen_indexing_expected.py with Debian's python3-torch), so this runs without torch; with torch
importable the same cases are also compared live."""
import json
import os
import unittest

import _support  # noqa: F401  (puts the package on sys.path)
import ember
from ember import _tensor_index

try:
    import torch
except ImportError:
    torch = None

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "indexing_expected.json")) as _f:
    EXPECTED = json.load(_f)
_BUILTINS = {"IndexError": IndexError, "ValueError": ValueError, "TypeError": TypeError, "RuntimeError": RuntimeError}


def _env(module):
    x = module.arange(60).reshape(3, 4, 5)
    return {"x": x, "M": module, "mask": x % 3 == 0}


class IndexReadTest(unittest.TestCase):
    def test_reads_match_torch(self):
        self.assertGreater(len(EXPECTED["reads"]), 30)
        env = _env(ember)
        for expr, want in EXPECTED["reads"].items():
            with self.subTest(expr=expr):
                got = eval(expr, env)  # noqa: S307 (the checked-in cases)
                self.assertEqual(list(got.shape), want["shape"])
                self.assertEqual(got.tolist(), want["values"])

    def test_errors_match_torch(self):
        env = _env(ember)
        for expr, name in EXPECTED["errors"].items():
            with self.subTest(expr=expr):
                with self.assertRaises(_BUILTINS[name]):
                    eval(expr, env)  # noqa: S307

    @unittest.skipIf(torch is None, "torch is not importable (Debian: python3-torch)")
    def test_reads_match_live_torch(self):
        env, tenv = _env(ember), _env(torch)
        for expr in EXPECTED["reads"]:
            with self.subTest(expr=expr):
                want = eval(expr, tenv)  # noqa: S307
                got = eval(expr, env)  # noqa: S307
                self.assertEqual((list(got.shape), got.tolist()), (list(want.shape), want.tolist()))

    def test_reads_are_differentiable(self):
        x = ember.arange(12.).reshape(3, 4).requires_grad_()
        (x[:, [0, 2, 2]].sum() + x[x > 9].sum() * 2 + x[::2, 1:3].sum() * 10).backward()
        self.assertEqual(x.grad.tolist(), [[1.0, 10.0, 12.0, 0.0], [1.0, 0.0, 2.0, 0.0],
                                           [1.0, 10.0, 14.0, 2.0]])

    def test_index_tensor_kinds(self):
        x = ember.arange(5)
        self.assertEqual(x[ember.tensor([[4], [0]])].tolist(), [[4], [0]])
        self.assertEqual(x[[True, False, True, False, True]].tolist(), [0, 2, 4])
        with self.assertRaises(IndexError):  # a mask of the wrong length
            x[[True, False]]


class IndexWriteTest(unittest.TestCase):
    def test_writes_match_torch(self):
        self.assertGreater(len(EXPECTED["writes"]), 10)
        for stmt, want in EXPECTED["writes"].items():
            with self.subTest(stmt=stmt):
                env = _env(ember)
                y = ember.zeros(3, 4, 5)
                env["y"] = y
                h = y._h.value
                exec(stmt, env)  # noqa: S102 (the checked-in cases)
                self.assertIs(env["y"], y)
                self.assertEqual(y.tolist(), want)
                self.assertEqual(y._h.value, h)  # the libember handle itself was updated

    def test_writes_without_numpy(self):
        """The host pass that maps written positions has a NumPy and a pure-Python form: both give torch's result."""
        saved = _tensor_index.numpy
        _tensor_index.numpy = None
        try:
            self.test_writes_match_torch()
        finally:
            _tensor_index.numpy = saved

    def test_mask_write_of_a_number(self):
        y = ember.tensor([[1.0, -2.0], [-3.0, 4.0]])
        h = y._h.value
        y[y < 0] = 0
        self.assertEqual((y.tolist(), y._h.value), ([[1.0, 0.0], [0.0, 4.0]], h))

    def test_value_that_does_not_broadcast(self):
        y = ember.zeros(3, 4)
        with self.assertRaises(RuntimeError):
            y[:, 1] = ember.ones(4)
        self.assertEqual(y.sum().item(), 0.0)

    def test_write_casts_to_the_tensor_dtype(self):
        y = ember.zeros(4, dtype="int64")
        y[1:3] = ember.tensor([2.7, -1.2])
        self.assertEqual(y.dtype, "int64")
        self.assertEqual(y.tolist(), [0, 2, -1, 0])

    def test_write_of_a_tracked_value_into_a_plain_tensor(self):
        w = ember.tensor([2.0, 3.0], requires_grad=True)
        y = ember.zeros(4)
        y[1:3] = w * 2
        self.assertEqual((y.requires_grad, y.is_leaf), (True, False))
        (y * ember.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        self.assertEqual(w.grad.tolist(), [4.0, 6.0])

    def test_write_keeps_a_nonleaf_in_the_graph(self):
        x = ember.ones(4, requires_grad=True)
        v = ember.tensor([5.0], requires_grad=True)
        y = x * 2
        y[1] = v * 3
        y.sum().backward()
        self.assertEqual(x.grad.tolist(), [2.0, 0.0, 2.0, 2.0])
        self.assertEqual(v.grad.tolist(), [3.0])


if __name__ == "__main__":
    unittest.main()
