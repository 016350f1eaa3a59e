"""In-place ops keep the tensor (the Python object and, with libember's in-place ABI, the handle); .data, .grad,
is_leaf and the leaf refusal follow torch 1.13."""
import unittest

import _support  # noqa: F401  (puts the package on sys.path)
import ember


class InplaceOpsTest(unittest.TestCase):
    def test_each_op(self):
        x = ember.tensor([1.0, 2.0, 4.0])
        ident = id(x)
        self.assertIs(x.add_(1), x)
        self.assertEqual(x.tolist(), [2.0, 3.0, 5.0])
        x.sub_(ember.tensor([1.0, 1.0, 1.0]), alpha=2)
        self.assertEqual(x.tolist(), [0.0, 1.0, 3.0])
        x.mul_(ember.tensor([[2.0, 3.0, 4.0]])[0])
        self.assertEqual(x.tolist(), [0.0, 3.0, 12.0])
        x.div_(3)
        self.assertEqual(x.tolist(), [0.0, 1.0, 4.0])
        x.clamp_(0.5, 2.0)
        self.assertEqual(x.tolist(), [0.5, 1.0, 2.0])
        x.copy_(ember.tensor([7.0]))  # broadcast
        self.assertEqual(x.tolist(), [7.0, 7.0, 7.0])
        x.fill_(-1.5)
        self.assertEqual(x.tolist(), [-1.5, -1.5, -1.5])
        x.zero_()
        self.assertEqual(x.tolist(), [0.0, 0.0, 0.0])
        self.assertEqual(id(x), ident)

    def test_augmented_assignment_keeps_the_object_and_handle(self):
        x = ember.ones(2, 3)
        y, h = x, x._h.value
        x += 1
        x *= ember.tensor([1.0, 2.0, 3.0])
        x -= 0.5
        x /= 2
        self.assertIs(x, y)
        self.assertEqual(x.tolist(), [[0.75, 1.75, 2.75]] * 2)
        self.assertEqual(x._h.value, h)

    def test_int_tensor_rules(self):
        x = ember.tensor([5, -7])
        x += 2
        x *= ember.tensor([2, 3])
        self.assertEqual((x.dtype, x.tolist()), ("int64", [14, -15]))
        with self.assertRaises(RuntimeError):  # torch: result type Float can't be cast to Long
            x += 0.5
        with self.assertRaises(RuntimeError):
            x /= 2
        with self.assertRaises(RuntimeError):
            x.add_(ember.tensor([1.0, 1.0]))

    def test_shape_must_not_grow(self):
        x = ember.ones(3)
        with self.assertRaises(RuntimeError):
            x.add_(ember.ones(2, 3))
        self.assertEqual(x.tolist(), [1.0, 1.0, 1.0])

    def test_sgd_step_by_hand(self):
        """The issue's pattern: `w -= lr * w.grad` under no_grad updates w; the next backward works on it."""
        w = ember.tensor([1.0, -2.0], requires_grad=True)
        for _ in range(3):
            loss = (w * w).sum()
            loss.backward()
            with ember.no_grad():
                w -= 0.25 * w.grad
            w.grad = None
        self.assertEqual(w.tolist(), [0.125, -0.25])  # each step halves w
        self.assertTrue(w.requires_grad)
        self.assertTrue(w.is_leaf)
        (w * 4).sum().backward()
        self.assertEqual(w.grad.tolist(), [4.0, 4.0])

    def test_leaf_refuses_inplace_in_grad_mode(self):
        w = ember.ones(2, requires_grad=True)
        with self.assertRaises(RuntimeError):
            w.add_(1)
        with self.assertRaises(RuntimeError):
            w[0] = 3
        self.assertEqual(w.tolist(), [1.0, 1.0])

    def test_data_is_an_alias(self):
        w = ember.tensor([1.0, 2.0], requires_grad=True)
        d = w.data
        self.assertFalse(d.requires_grad)
        d.mul_(3)  # allowed: .data is outside autograd
        self.assertEqual(w.tolist(), [3.0, 6.0])
        self.assertEqual(d.tolist(), [3.0, 6.0])
        w.data.copy_(ember.tensor([0.5, 0.5]))
        w.data[1] = 9
        self.assertEqual(w.tolist(), [0.5, 9.0])
        self.assertTrue(w.requires_grad)
        w.data = ember.tensor([1.0, 1.0])
        self.assertEqual(w.tolist(), [1.0, 1.0])
        (w * 2).sum().backward()
        self.assertEqual(w.grad.tolist(), [2.0, 2.0])

    def test_grad_assignment(self):
        w = ember.ones(2, requires_grad=True)
        self.assertIsNone(w.grad)
        w.grad = ember.tensor([1.0, 2.0])
        (w * 3).sum().backward()
        self.assertEqual(w.grad.tolist(), [4.0, 5.0])  # accumulates into the assigned grad
        w.grad = None
        self.assertIsNone(w.grad)
        with self.assertRaises(RuntimeError):
            w.grad = ember.ones(3)

    def test_is_leaf(self):
        a = ember.ones(2)
        b = ember.ones(2, requires_grad=True)
        c = b * 2
        self.assertEqual((a.is_leaf, b.is_leaf, c.is_leaf), (True, True, False))

    def test_version_counts_inplace_ops(self):
        x = ember.ones(2)
        v = x._version
        x.add_(1)
        x[0] = 2
        self.assertEqual(x._version, v + 2)

    def test_grad_of_a_leaf_seen_by_an_object_made_later(self):
        w = ember.ones(3, requires_grad=True)
        (w * 2).sum().backward()
        later = w.data._base  # the same Python object
        self.assertIs(later, w)
        clone = w.clone()  # a second handle of the same leaf
        self.assertEqual(clone.grad.tolist(), [2.0, 2.0, 2.0])

    def test_inplace_on_grad_writes_the_slot(self):
        w = ember.ones(3, requires_grad=True)
        (w * 2).sum().backward()
        w.grad.mul_(0.5)
        w.grad[1] = 7
        self.assertEqual(w.grad.tolist(), [1.0, 7.0, 1.0])
        w.grad.zero_()
        (w * 3).sum().backward()
        self.assertEqual(w.grad.tolist(), [3.0, 3.0, 3.0])


if __name__ == "__main__":
    unittest.main()
