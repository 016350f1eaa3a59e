"""The binding's one-call fast paths of small ops (issue 11's overhead bar) give what the general paths give:
x[i] (ember_tensor_select), x[a:b, c:d] with int or None bounds (one ember_tensor_slice taking Python's negative
and clamped bounds), a + b and an in-place add_; their errors are torch's."""
import unittest

import _support  # noqa: F401  (puts the package on sys.path)
import ember


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

    def test_int_key_errors_are_torchs(self):
        x = _x()
        with self.assertRaisesRegex(IndexError, "index 3 is out of bounds for dimension 0 with size 3"):
            x[3]
        with self.assertRaisesRegex(IndexError, "index -4 is out of bounds for dimension 0 with size 3"):
            x[-4]
        with self.assertRaisesRegex(IndexError, "invalid index of a 0-dim tensor"):
            ember.tensor(1.0)[0]

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


if __name__ == "__main__":
    unittest.main()
