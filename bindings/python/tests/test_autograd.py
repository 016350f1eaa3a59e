"""Autodiff through the binding: requires_grad, backward (seeded or not), .grad accumulation, detach, no_grad."""
import threading
import unittest

import _support  # noqa: F401
import ember
import ember.nn as nn


class AutogradTest(unittest.TestCase):
    def test_backward_fills_leaf_grads(self):
        x = ember.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        w = ember.tensor([[0.5], [-1.0]], requires_grad=True)
        (x @ w).sum().backward()
        self.assertEqual(x.grad.tolist(), [[0.5, -1.0], [0.5, -1.0]])
        self.assertEqual(w.grad.tolist(), [[4.0], [6.0]])
        self.assertFalse(x.grad.requires_grad)

    def test_seeded_backward(self):
        x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * x
        y.backward(ember.tensor([1.0, 0.0, -1.0]))
        self.assertEqual(x.grad.tolist(), [2.0, 0.0, -6.0])

    def test_grads_accumulate_until_cleared(self):
        x = ember.tensor([1.0, 2.0], requires_grad=True)
        (x * 3).sum().backward()
        (x * x).sum().backward()
        self.assertEqual(x.grad.tolist(), [5.0, 7.0])
        x.grad = None
        (x * 3).sum().backward()
        self.assertEqual(x.grad.tolist(), [3.0, 3.0])

    def test_unreached_leaf_has_no_grad(self):
        x = ember.ones(2, requires_grad=True)
        z = ember.ones(2, requires_grad=True)
        (x * 2).sum().backward()
        self.assertIsNone(z.grad)

    def test_requires_grad_flags(self):
        x = ember.ones(2)
        self.assertFalse(x.requires_grad)
        x.requires_grad_()
        self.assertTrue(x.requires_grad)
        self.assertTrue((x * 2).requires_grad)
        x.requires_grad = False
        self.assertFalse((x * 2).requires_grad)

    def test_detach_cuts_the_graph(self):
        x = ember.tensor([2.0], requires_grad=True)
        y = x * x.detach()
        self.assertFalse(x.detach().requires_grad)
        y.sum().backward()
        self.assertEqual(x.grad.tolist(), [2.0])

    def test_no_grad(self):
        x = ember.ones(2, requires_grad=True)
        self.assertTrue(ember.is_grad_enabled())
        with ember.no_grad():
            self.assertFalse(ember.is_grad_enabled())
            y = x * 2
            with ember.no_grad():
                self.assertFalse(ember.is_grad_enabled())
            self.assertFalse(ember.is_grad_enabled())
        self.assertTrue(ember.is_grad_enabled())
        self.assertFalse(y.requires_grad)
        with self.assertRaises(ember.EmberError):
            y.sum().backward()

    def test_no_grad_restores_on_exception(self):
        with self.assertRaises(KeyError):
            with ember.no_grad():
                raise KeyError("x")
        self.assertTrue(ember.is_grad_enabled())

    def test_no_grad_decorator(self):
        @ember.no_grad()
        def f(t):
            return t * 2, ember.is_grad_enabled()

        y, enabled = f(ember.ones(1, requires_grad=True))
        self.assertFalse(enabled)
        self.assertFalse(y.requires_grad)
        self.assertTrue(ember.is_grad_enabled())

    def test_no_grad_is_per_thread(self):
        seen = []
        with ember.no_grad():
            t = threading.Thread(target=lambda: seen.append(ember.is_grad_enabled()))
            t.start()
            t.join()
        self.assertEqual(seen, [True])

    def test_module_params_get_grads(self):
        model = nn.Sequential(nn.Linear(3, 2))
        w, b = model.parameters()
        x = ember.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        model(x).sum().backward()
        self.assertEqual(w.grad.tolist(), [[5.0, 7.0, 9.0], [5.0, 7.0, 9.0]])  # torch's layout [out, in]
        self.assertEqual(b.grad.tolist(), [2.0, 2.0])
        model.zero_grad()
        self.assertIsNone(w.grad)

    def test_eval_forward_under_no_grad_records_nothing(self):
        model = nn.Sequential(nn.Linear(3, 2))
        model.eval()
        with ember.no_grad():
            y = model(ember.ones(1, 3))
        self.assertFalse(y.requires_grad)


if __name__ == "__main__":
    unittest.main()
