"""The binding's one-call fast paths of small ops (issue 11's overhead bar) give what the general paths give:
x[i] (ember_tensor_select), x[a:b, c:d] with int or None bounds (one ember_tensor_slice taking Python's negative
and clamped bounds), a + b and an in-place add_; their errors are torch's. The calls they make without argtypes
(_lib.hot / _lib.quick) get the values the declared functions would convert."""
import ctypes
import gc
import unittest

import _support  # noqa: F401  (puts the package on sys.path)
import ember
from ember import _lib


def _x():
    return ember.arange(12.).reshape(3, 4)


class SelectPathTest(unittest.TestCase):
    def test_int_key_selects_a_row(self):
        x = _x()
        self.assertEqual(x[1].tolist(), [4.0, 5.0, 6.0, 7.0])
        self.assertEqual(x[-3].tolist(), [0.0, 1.0, 2.0, 3.0])
        self.assertEqual(list(x[2].shape), [4])
        v = ember.arange(5)
        self.assertEqual(list(v[3].shape), [])
        self.assertEqual(v[-1].item(), 4)

    def test_int_key_takes_the_one_call_path(self):
        # ember_tensor_select_or_null's returned handle (a _lib.Handle, made by ctypes), usable by every declared call
        row = _x()[2]
        self.assertIsInstance(row._h, _lib.Handle)
        self.assertEqual((row * 2).tolist(), [16.0, 18.0, 20.0, 22.0])

    def test_int_key_errors_are_torchs(self):
        x = _x()
        with self.assertRaisesRegex(IndexError, "index 3 is out of bounds for dimension 0 with size 3"):
            x[3]
        with self.assertRaisesRegex(IndexError, "index -4 is out of bounds for dimension 0 with size 3"):
            x[-4]
        with self.assertRaisesRegex(IndexError, "invalid index of a 0-dim tensor"):
            ember.tensor(1.0)[0]

    def test_int_key_beyond_int64_is_out_of_bounds(self):  # not wrapped around by the int64 conversion
        x = _x()
        for key in (2**64 + 1, -(2**64) + 1, 2**63):
            with self.subTest(key=key), self.assertRaisesRegex(IndexError, "out of bounds for dimension 0"):
                x[key]

    def test_int_keys_beyond_the_cached_indices_select_too(self):
        # _tensor_index caches the index objects of -1024..1023; other ints make theirs per call
        v = ember.arange(3000)
        for key in (1023, 1024, 2999, -1024, -1025, -3000):
            with self.subTest(key=key):
                self.assertEqual(v[key].item(), key % 3000)
        for key in (3000, -3001, 2**40):
            with self.subTest(key=key), self.assertRaisesRegex(IndexError, "index %d is out of bounds" % key):
                v[key]

    def test_rows_are_values_whose_storage_outlives_the_tensor(self):
        # libember shares x's storage with x[i] and x[a:b] (no copy) but keeps copy semantics, as this binding
        # always had (README: "Indexing copies"): writes through either are not seen in the other, unlike
        # torch's views; and the rows stay readable after x is gone.
        x = _x()
        row, rows = x[1], x[1:3]
        x.add_(100)
        self.assertEqual(row.tolist(), [4.0, 5.0, 6.0, 7.0])
        row.fill_(-1)
        rows[0] = 9
        self.assertEqual(x[1].tolist(), [104.0, 105.0, 106.0, 107.0])
        self.assertEqual(row.tolist(), [-1.0] * 4)
        del x
        gc.collect()
        self.assertEqual(rows.tolist(), [[9.0] * 4, [8.0, 9.0, 10.0, 11.0]])
        self.assertEqual(rows[1][2].item(), 10.0)

    def test_select_is_differentiable(self):
        x = _x().requires_grad_()
        (x[1] * 2).sum().backward()
        self.assertEqual(x.grad.tolist(), [[0.0] * 4, [2.0] * 4, [0.0] * 4])


class SlicePathTest(unittest.TestCase):
    def test_bounds_follow_python(self):
        x = _x()
        rows = x.tolist()
        for key in [(slice(None), slice(1, 3)), (slice(-2, None), slice(None, -1)), (slice(1, 100), slice(-100, 2)),
                    (slice(2, 1),), (slice(None), slice(3, 1)), (slice(0, 2**70), slice(-2**70, 2))]:
            with self.subTest(key=key):
                got = x[key]
                r, c = key if len(key) == 2 else (key[0], slice(None))
                want = [row[c] for row in rows[r]]
                self.assertEqual(got.tolist(), want)
                self.assertEqual(list(got.shape), [len(want), len(want[0]) if want else 4])

    def test_too_many_slices_is_torchs_error(self):
        with self.assertRaisesRegex(IndexError, "too many indices for tensor of dimension 2"):
            _x()[:, :, :]

    def test_non_int_bounds_take_the_general_path(self):
        x = _x()
        self.assertEqual(x[:, ember.tensor(1):3].tolist(), x[:, 1:3].tolist())
        self.assertEqual(x[:, ::2].tolist(), [r[::2] for r in x.tolist()])


class ArithmeticPathTest(unittest.TestCase):
    def test_add_and_add_(self):
        a, b = ember.tensor([1.0, 2.0]), ember.tensor([10.0, 20.0])
        self.assertEqual((a + b).tolist(), [11.0, 22.0])
        acc = ember.zeros(2)
        for _ in range(3):
            acc.add_(b)
        self.assertEqual(acc.tolist(), [30.0, 60.0])
        self.assertEqual(acc._version, 3)
        with self.assertRaises(RuntimeError):
            acc.add_(ember.ones(3))

    def test_scalar_operands_reach_c_as_doubles(self):
        a = ember.tensor([1.0, 2.0])
        self.assertEqual((a + 0.25).tolist(), [1.25, 2.25])
        self.assertEqual((a * 3).tolist(), [3.0, 6.0])
        self.assertEqual((a - True).tolist(), [0.0, 1.0])
        self.assertEqual(a.clone().fill_(2**40).tolist(), [2.0**40] * 2)
        self.assertEqual(a.clone().mul_(0.5).tolist(), [0.5, 1.0])
        with self.assertRaises(ValueError):
            a.fill_("x")  # float("x"), as before the call lost its argtypes


class UndeclaredCallsTest(unittest.TestCase):
    def test_hot_functions_are_separate_from_the_declared_ones(self):
        from ember import _lib
        for name in ("tensor_add", "tensor_select", "tensor_slice", "tensor_free", "tensor_shape"):
            with self.subTest(name=name):
                declared = getattr(_lib, name)
                fast = getattr(_lib.hot, name, None) or getattr(_lib.quick, name)
                self.assertIsNot(fast, declared)
                self.assertIsNotNone(declared.argtypes)  # the declared function still converts its arguments
                self.assertIsNone(fast.argtypes)
                self.assertIs(fast.restype, ctypes.c_int32)


if __name__ == "__main__":
    unittest.main()
