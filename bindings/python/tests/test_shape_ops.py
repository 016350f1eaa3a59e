"""Issue 13's shape ops through the binding (F.pad, step slices, ember.baddbmm, ember.einsum, Tensor.logsumexp /
std, F.interpolate, nn.Upsample) against PyTorch 1.13's values and gradients: shape_ops_expected.json, written by
gen_shape_ops_expected.py with Debian's python3-torch, so the comparison runs where torch is not installed. Every
case runs in float64 (tolerance 1e-5) and float32 (1e-4), forward and gradients; then the refusals."""
import json
import math
import os
import unittest

import _support  # noqa: F401
import ember
import ember.nn as nn
import ember.nn.functional as F

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "shape_ops_expected.json")) as _f:
    E = json.load(_f)["cases"]

TOL = {"float64": 1e-5, "float32": 1e-4}

# The same names as the generator's CASES, over ember.
CASES = {
    "pad_constant": lambda x: F.pad(x, (1, 2, 0, 1), value=0.5),
    "pad_constant_crop": lambda x: F.pad(x, (-1, 2, 1, -2)),
    "pad_reflect": lambda x: F.pad(x, (2, 1, 1, 2), mode="reflect"),
    "pad_reflect1d": lambda x: F.pad(x, (3, 1), mode="reflect"),
    "pad_replicate": lambda x: F.pad(x, (1, 3, 2, 0), mode="replicate"),
    "pad_replicate3d": lambda x: F.pad(x, (1, 1, 1, 0, 0, 2), mode="replicate"),
    "step_2d": lambda x: x[::2, 1:7:3],
    "step_3d": lambda x: x[1:, ::3, -3:],
    "step_ellipsis_int": lambda x: x[..., 1, ::2],
    "baddbmm": lambda i, a, b: ember.baddbmm(i, a, b, beta=0.5, alpha=1.5),
    "einsum_bmm": lambda a, b: ember.einsum("bij,bjk->bik", a, b),
    "einsum_qk": lambda q, k: ember.einsum("bhqd,bhkd->bhqk", q, k),
    "einsum_av": lambda a, v: ember.einsum("bhqk,bhkd->bhqd", [a, v]),
    "einsum_transpose": lambda a: ember.einsum("ij->ji", a),
    "einsum_diag": lambda a: ember.einsum("ii->i", a),
    "einsum_trace": lambda a: ember.einsum("ii", a),
    "einsum_outer": lambda u, v: ember.einsum("i,j->ij", u, v),
    "einsum_ellipsis": lambda a, w: ember.einsum("...ij,...jk->...ik", a, w),
    "einsum_implicit": lambda a, w: ember.einsum("bij,jk", a, w),
    "einsum_sum": lambda a: ember.einsum("bij->", a),
    "einsum_bilinear": lambda x1, w, x2: ember.einsum("bn,anm,bm->ba", x1, w, x2),
    "logsumexp_dim": lambda x: ember.logsumexp(x * 20, 1),
    "logsumexp_dims_keepdim": lambda x: x.logsumexp((0, 2), keepdim=True),
    "std_dims": lambda x: x.std((0, 2)),
    "std_biased_keepdim": lambda x: x.std(1, unbiased=False, keepdim=True),
    "std_all": lambda x: x.std(),
    "std_correction": lambda x: x.std(1, correction=2),
    "interp_nearest_size": lambda x: F.interpolate(x, size=(5, 7)),
    "interp_nearest_scale": lambda x: F.interpolate(x, scale_factor=(1.7, 2.0)),
    "interp_nearest_int_scale": lambda x: F.interpolate(x, scale_factor=3),
    "interp_bilinear": lambda x: F.interpolate(x, size=(5, 6), mode="bilinear", align_corners=False),
    "interp_bilinear_ac": lambda x: F.interpolate(x, size=(4, 7), mode="bilinear", align_corners=True),
    "interp_bilinear_scale": lambda x: F.interpolate(x, scale_factor=(2.0, 1.5), mode="bilinear",
                                                     align_corners=False),
    "interp_recompute": lambda x: F.interpolate(x, scale_factor=1.7, mode="bilinear", align_corners=False,
                                                recompute_scale_factor=True),
    "upsample_nearest": lambda x: nn.Upsample(scale_factor=2)(x),
    "upsample_bilinear2d": lambda x: nn.UpsamplingBilinear2d(size=(3, 5))(x),
}


def _close(test, got, want, tol, what):
    test.assertEqual(len(got), len(want), what)
    scale = max([abs(w) for w in want] + [1.0])
    for k, (a, b) in enumerate(zip(got, want)):
        test.assertLessEqual(abs(a - b), tol * scale, "%s[%d]: got %r, torch %r" % (what, k, a, b))


class ShapeOpsTest(unittest.TestCase):
    def test_every_case_has_a_golden(self):
        self.assertEqual(sorted(CASES), sorted(E))

    def test_values_and_gradients_match_torch(self):
        for name, fn in CASES.items():
            case = E[name]
            for dtype, tol in TOL.items():
                with self.subTest(case=name, dtype=dtype):
                    ins = [ember.tensor(v, shape=s, dtype=dtype, requires_grad=True) for v, s in case["inputs"]]
                    y = fn(*ins)
                    self.assertEqual(list(y.shape), case["shape"])
                    _close(self, y.reshape(-1).tolist(), case["out"], tol, name)
                    n = len(case["out"])
                    w = ember.tensor([math.cos(0.3 * k + 0.2) for k in range(n)], dtype=dtype)
                    (y.reshape(-1) * w).sum().backward()
                    for i, g in enumerate(case["grads"]):
                        _close(self, ins[i].grad.reshape(-1).tolist(), g, tol, "%s grad %d" % (name, i))

    def test_step_slice_write_and_int_tensors(self):
        x = ember.arange(10)
        self.assertEqual(x[1:8:3].tolist(), [1, 4, 7])
        y = ember.zeros(6)
        y[::2] = 1.0
        self.assertEqual(y.tolist(), [1.0, 0.0, 1.0, 0.0, 1.0, 0.0])
        with self.assertRaises(ValueError):
            x[::0]
        self.assertEqual(F.pad(ember.tensor([[1, 2]], dtype="int64"), (1, 1), value=7).tolist(), [[7, 1, 2, 7]])

    def test_refusals(self):
        x = ember.zeros(1, 2, 3, 4)
        with self.assertRaises(ValueError):
            ember.einsum("ij,jk->ik", ember.zeros(2, 3), ember.zeros(4, 5))  # j: 3 and 4
        with self.assertRaises(ValueError):
            ember.einsum("i?->i", ember.zeros(2, 3))
        with self.assertRaises(ValueError):
            ember.einsum("ij,jk->ik", ember.zeros(2, 3))
        with self.assertRaises(ValueError):
            F.pad(x, (1, 2, 3))
        with self.assertRaises(ValueError):
            F.pad(x, (4, 0), mode="reflect")
        with self.assertRaises(NotImplementedError):
            F.pad(x, (1, 1), mode="circular")
        with self.assertRaises(ValueError):
            F.interpolate(x, size=(2, 2), scale_factor=2)
        with self.assertRaises(ValueError):
            F.interpolate(x, size=(2, 2), align_corners=True)
        with self.assertRaises(NotImplementedError):
            F.interpolate(x, size=(2, 2), mode="bicubic")
        with self.assertRaises(ValueError):
            ember.baddbmm(ember.zeros(2, 3), ember.zeros(1, 2, 3), ember.zeros(1, 2, 3))


if __name__ == "__main__":
    unittest.main()
