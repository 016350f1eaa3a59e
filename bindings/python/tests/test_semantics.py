"""Tensor semantics of issue 11 against torch 1.13: // and % (torch's signs), 1-D matmul, rank 0 and __format__,
float64 end to end, ember.fft, autograd.grad / retain_graph, and the errors torch raises (F.one_hot out of range,
dims out of range, a non-scalar backward without a gradient). Expected values: semantics_expected.json, written by
gen_semantics_expected.py with Debian's python3-torch."""
import json
import math
import os
import unittest

import _support  # noqa: F401  (puts the package on sys.path)
import ember
import ember.nn.functional as F

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "semantics_expected.json")) as _f:
    EXPECTED = json.load(_f)
F64_CASES = [c for c in EXPECTED["cases"] if "float64" in c]


def _close(test, got, want, tol):
    if isinstance(want, list):
        test.assertEqual(len(got), len(want))
        for g, w in zip(got, want):
            _close(test, g, w, tol)
    else:
        test.assertLessEqual(abs(got - want), tol * max(1.0, abs(want)), (got, want))


class ArithmeticTest(unittest.TestCase):
    def test_cases_match_torch(self):
        for expr, want in EXPECTED["cases"].items():
            if expr in F64_CASES:
                continue
            with self.subTest(expr=expr):
                got = eval(expr, {"M": ember})  # noqa: S307 (the checked-in cases)
                values = want["values"]
                self.assertEqual(list(got.shape), want["shape"])
                self.assertEqual(got.dtype, EXPECTED["dtypes"][expr])
                self.assertEqual(got.tolist(), values)

    def test_int_floor_divide_by_zero_raises(self):
        with self.assertRaises(RuntimeError):
            ember.tensor([1, 2]) // 0

    def test_floor_divide_function(self):
        self.assertEqual(ember.floor_divide(ember.tensor([7, -7]), 2).tolist(), [3, -4])

    def test_matmul_vector_grads(self):
        v = ember.tensor([1.0, 2.0], requires_grad=True)
        m = ember.tensor([[1.0, 3.0], [2.0, 4.0]], requires_grad=True)
        (v @ m @ v).backward()
        self.assertEqual(v.grad.tolist(), [12.0, 21.0])  # (M + M^T) v
        self.assertEqual(m.grad.tolist(), [[1.0, 2.0], [2.0, 4.0]])  # v v^T


class RankZeroTest(unittest.TestCase):
    def test_format_and_conversions(self):
        loss = ember.tensor([0.25, 0.5]).mean()
        self.assertEqual(f"{loss:.4f}", "0.3750")
        self.assertEqual(float(loss), 0.375)
        self.assertEqual(int(ember.tensor([7, 1]).sum()), 8)
        self.assertTrue(bool(ember.tensor([3]).sum()))
        self.assertEqual(ember.tensor([2.5]).sum().item(), 2.5)
        with self.assertRaises(Exception):
            ember.tensor([1.0, 2.0]).item()

    def test_reductions_and_losses_are_rank_0(self):
        x = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
        for r in (x.sum(), x.mean(), x.max(), ember.tensor([1.0, 2.0]).sum(0), x[1, 0], ember.tensor(3.0),
                  F.mse_loss(x, x * 2), F.cross_entropy(x, ember.tensor([0, 1])),
                  ember.tensor([1.0, 2.0]) @ ember.tensor([3.0, 4.0])):
            self.assertEqual(r.shape, ())
            self.assertEqual(r.ndim, 0)
        self.assertEqual(x.sum().tolist(), 10.0)
        self.assertEqual(f"{x.sum():.1f}", "10.0")
        with self.assertRaises(TypeError):
            f"{x:.1f}"  # noqa: B018 (only rank 0 takes a number's format, as torch)
        with self.assertRaises(IndexError):
            x.sum()[0]


class Float64Test(unittest.TestCase):
    def test_float64_end_to_end(self):
        for expr in F64_CASES:
            with self.subTest(expr=expr):
                got = eval(expr, {"M": ember})  # noqa: S307
                want = EXPECTED["cases"][expr]
                self.assertEqual(got if isinstance(got, list) else got.tolist(), want["values"])
                if EXPECTED["dtypes"][expr]:
                    self.assertEqual(got.dtype, EXPECTED["dtypes"][expr])
        w = ember.tensor([0.1, 0.7], dtype=ember.float64, requires_grad=True)
        (w * w).sum().backward()
        self.assertEqual(w.grad.dtype, "float64")
        self.assertEqual(w.grad.tolist(), [0.2, 1.4])
        self.assertEqual(ember.zeros(2, dtype="float64").dtype, "float64")


class FftTest(unittest.TestCase):
    def x(self, dtype="float64"):
        return ember.tensor(EXPECTED["fft_input"], dtype=dtype)

    def test_1d_transforms(self):
        tol = 1e-12
        for key, want in EXPECTED["fft"].items():
            name, kw = key.split(" ", 1)
            with self.subTest(case=key):
                got = getattr(ember.fft, name)(self.x(), **json.loads(kw))
                self.assertIsInstance(got, ember.fft.ComplexTensor)
                _close(self, ember.view_as_real(got).tolist(), want, tol)

    def test_dims_and_inverse(self):
        tol = 1e-12
        m = self.x().reshape(2, 3)
        _close(self, ember.view_as_real(ember.fft.fft(m, dim=0)).tolist(), EXPECTED["fft_2d"]["fft dim=0"], tol)
        _close(self, ember.view_as_real(ember.fft.rfft(m, dim=1)).tolist(), EXPECTED["fft_2d"]["rfft dim=1"], tol)
        _close(self, ember.fft.irfft(ember.fft.rfft(self.x())).tolist(), EXPECTED["irfft"]["default"], tol)
        spec = ember.fft.rfft(self.x(), norm="ortho")
        _close(self, ember.fft.irfft(spec, n=6, norm="ortho").tolist(), EXPECTED["irfft"]["n=6 ortho"], tol)
        back = ember.fft.ifft(ember.fft.fft(self.x()))
        _close(self, back.real.tolist(), EXPECTED["fft_input"], tol)

    def test_fft_is_differentiable(self):
        x = self.x("float32").requires_grad_()
        ember.view_as_real(ember.fft.rfft(x))[..., 0].sum().backward()  # d/dx_j sum_k cos(2 pi j k / 6)
        want = [sum(math.cos(2 * math.pi * j * k / 6) for k in range(4)) for j in range(6)]
        _close(self, x.grad.tolist(), want, 1e-5)

    def test_errors(self):
        with self.assertRaises(ValueError):
            ember.fft.fft(self.x(), norm="sideways")
        with self.assertRaises(IndexError):
            ember.fft.fft(self.x(), dim=1)
        with self.assertRaises(RuntimeError):
            ember.fft.rfft(ember.fft.fft(self.x()))


class ErrorsLikeTorchTest(unittest.TestCase):
    def test_one_hot_out_of_range(self):
        with self.assertRaises(RuntimeError):
            F.one_hot(ember.tensor([0, 3]), 3)
        with self.assertRaises(RuntimeError):
            F.one_hot(ember.tensor([-1, 0]), 3)
        self.assertEqual(F.one_hot(ember.tensor([2, 0])).tolist(), [[0, 0, 1], [1, 0, 0]])

    def test_dims_out_of_range(self):
        x = ember.ones(2, 3)
        for f in (lambda: x.unsqueeze(5), lambda: x.unsqueeze(-4), lambda: x.transpose(0, 2),
                  lambda: x.squeeze(2), lambda: x.flatten(0, 2), lambda: x.sum(2), lambda: x.softmax(3)):
            with self.assertRaises(IndexError):
                f()
        self.assertEqual(x.unsqueeze(2).shape, (2, 3, 1))
        self.assertEqual(x.unsqueeze(-3).shape, (1, 2, 3))

    def test_non_scalar_backward_needs_a_gradient(self):
        x = ember.ones(2, requires_grad=True)
        with self.assertRaises(RuntimeError) as cm:
            (x * 2).backward()
        self.assertIn("scalar outputs", str(cm.exception))
        (x * 2).backward(ember.tensor([1.0, 3.0]))
        self.assertEqual(x.grad.tolist(), [2.0, 6.0])


class AutogradGradTest(unittest.TestCase):
    def test_grad_of_leaves_and_intermediates(self):
        x = ember.tensor([1.0, 2.0], requires_grad=True)
        h = x * x
        y = (h * 3).sum()
        gx, gh = ember.autograd.grad(y, [x, h])
        self.assertEqual(gx.tolist(), [6.0, 12.0])
        self.assertEqual(gh.tolist(), [3.0, 3.0])
        self.assertIsNone(x.grad)  # autograd.grad does not touch .grad

    def test_grad_outputs_retain_graph_and_unused(self):
        x = ember.tensor([1.0, 2.0], requires_grad=True)
        z = ember.tensor([1.0], requires_grad=True)
        y = x * 2
        (g,) = ember.autograd.grad([y], [x], grad_outputs=[ember.tensor([1.0, -1.0])], retain_graph=True)
        self.assertEqual(g.tolist(), [2.0, -2.0])
        g2, gz = ember.autograd.grad(y.sum(), [x, z], allow_unused=True)
        self.assertEqual(g2.tolist(), [2.0, 2.0])
        self.assertIsNone(gz)
        with self.assertRaises(RuntimeError):
            ember.autograd.grad((x * 3).sum(), [x, z])
        with self.assertRaises(RuntimeError):
            ember.autograd.grad(x * 3, [x])


class RetainGraphTest(unittest.TestCase):
    def test_second_backward_needs_retain_graph(self):
        x = ember.tensor([1.0, 2.0], requires_grad=True)
        y = (x * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        self.assertEqual(x.grad.tolist(), [4.0, 8.0])
        with self.assertRaises(RuntimeError):
            y.backward()


if __name__ == "__main__":
    unittest.main()
