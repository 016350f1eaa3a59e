"""Writes shape_ops_expected.json: PyTorch 1.13's values and gradients for test_shape_ops.py (F.pad, step
slices, baddbmm, einsum, logsumexp, std, F.interpolate, nn.Upsample), so the binding's tests compare against torch
without needing it. Each case: its inputs (float32-exact values), torch's output in float64 and the gradient of
sum(out * w) for the fixed weights w = cos(0.3 k + 0.2) over the output's elements.

Run with Debian's python3-torch: /usr/bin/python3 bindings/python/tests/gen_shape_ops_expected.py
"""
import json
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

# name -> (torch function of the inputs, input shapes); test_shape_ops.py has the same names over ember.
CASES = {
    "pad_constant": (lambda x: F.pad(x, (1, 2, 0, 1), value=0.5), [[1, 2, 3, 4]]),
    "pad_constant_crop": (lambda x: F.pad(x, (-1, 2, 1, -2)), [[2, 3, 5]]),
    "pad_reflect": (lambda x: F.pad(x, (2, 1, 1, 2), mode="reflect"), [[1, 2, 3, 4]]),
    "pad_reflect1d": (lambda x: F.pad(x, (3, 1), mode="reflect"), [[2, 3, 5]]),
    "pad_replicate": (lambda x: F.pad(x, (1, 3, 2, 0), mode="replicate"), [[1, 2, 3, 4]]),
    "pad_replicate3d": (lambda x: F.pad(x, (1, 1, 1, 0, 0, 2), mode="replicate"), [[1, 1, 2, 3, 3]]),
    "step_2d": (lambda x: x[::2, 1:7:3], [[5, 7]]),
    "step_3d": (lambda x: x[1:, ::3, -3:], [[4, 3, 5]]),
    "step_ellipsis_int": (lambda x: x[..., 1, ::2], [[2, 3, 5]]),
    "baddbmm": (lambda i, a, b: torch.baddbmm(i, a, b, beta=0.5, alpha=1.5), [[3, 4], [2, 3, 5], [2, 5, 4]]),
    "einsum_bmm": (lambda a, b: torch.einsum("bij,bjk->bik", a, b), [[2, 3, 4], [2, 4, 5]]),
    "einsum_qk": (lambda q, k: torch.einsum("bhqd,bhkd->bhqk", q, k), [[1, 2, 3, 4], [1, 2, 5, 4]]),
    "einsum_av": (lambda a, v: torch.einsum("bhqk,bhkd->bhqd", a, v), [[1, 2, 3, 5], [1, 2, 5, 4]]),
    "einsum_transpose": (lambda a: torch.einsum("ij->ji", a), [[3, 4]]),
    "einsum_diag": (lambda a: torch.einsum("ii->i", a), [[3, 3]]),
    "einsum_trace": (lambda a: torch.einsum("ii", a), [[3, 3]]),
    "einsum_outer": (lambda u, v: torch.einsum("i,j->ij", u, v), [[3], [4]]),
    "einsum_ellipsis": (lambda a, w: torch.einsum("...ij,...jk->...ik", a, w), [[2, 3, 4], [4, 5]]),
    "einsum_implicit": (lambda a, w: torch.einsum("bij,jk", a, w), [[2, 3, 4], [4, 5]]),
    "einsum_sum": (lambda a: torch.einsum("bij->", a), [[2, 3, 4]]),
    "einsum_bilinear": (lambda x1, w, x2: torch.einsum("bn,anm,bm->ba", x1, w, x2), [[2, 3], [4, 3, 5], [2, 5]]),
    "logsumexp_dim": (lambda x: torch.logsumexp(x * 20, 1), [[3, 4]]),
    "logsumexp_dims_keepdim": (lambda x: x.logsumexp((0, 2), keepdim=True), [[2, 3, 4]]),
    "std_dims": (lambda x: torch.std(x, (0, 2)), [[3, 4, 5]]),
    "std_biased_keepdim": (lambda x: x.std(1, unbiased=False, keepdim=True), [[3, 4, 5]]),
    "std_all": (lambda x: x.std(), [[3, 4]]),
    "std_correction": (lambda x: torch.std(x, 1, correction=2), [[3, 5]]),
    "interp_nearest_size": (lambda x: F.interpolate(x, size=(5, 7)), [[1, 2, 3, 4]]),
    "interp_nearest_scale": (lambda x: F.interpolate(x, scale_factor=(1.7, 2.0)), [[1, 2, 3, 4]]),
    "interp_nearest_int_scale": (lambda x: F.interpolate(x, scale_factor=3), [[1, 1, 2, 3]]),
    "interp_bilinear": (lambda x: F.interpolate(x, size=(5, 6), mode="bilinear", align_corners=False),
                        [[1, 2, 3, 4]]),
    "interp_bilinear_ac": (lambda x: F.interpolate(x, size=(4, 7), mode="bilinear", align_corners=True),
                           [[1, 2, 3, 4]]),
    "interp_bilinear_scale": (lambda x: F.interpolate(x, scale_factor=(2.0, 1.5), mode="bilinear",
                                                      align_corners=False), [[1, 2, 3, 4]]),
    "interp_recompute": (lambda x: F.interpolate(x, scale_factor=1.7, mode="bilinear", align_corners=False,
                                                 recompute_scale_factor=True), [[1, 2, 3, 4]]),
    "upsample_nearest": (lambda x: torch.nn.Upsample(scale_factor=2)(x), [[2, 1, 2, 3]]),
    "upsample_bilinear2d": (lambda x: torch.nn.UpsamplingBilinear2d(size=(3, 5))(x), [[1, 2, 2, 3]]),
}


def values(shape, seed):
    n = int(np.prod(shape))
    return np.asarray(np.sin(0.37 * np.arange(n) + 0.11 + seed) * 2, dtype=np.float32).astype(np.float64)


def main():
    out = {"torch": torch.__version__.split("+")[0], "cases": {}}
    for name, (fn, shapes) in CASES.items():
        ins = [torch.tensor(values(s, i).reshape(s), requires_grad=True) for i, s in enumerate(shapes)]
        y = fn(*ins)
        w = torch.tensor([math.cos(0.3 * k + 0.2) for k in range(y.numel())], dtype=torch.float64).reshape(y.shape)
        (y * w).sum().backward()
        out["cases"][name] = {
            "inputs": [[x.detach().reshape(-1).tolist(), list(x.shape)] for x in ins],
            "out": y.detach().reshape(-1).tolist(),
            "shape": list(y.shape),
            "grads": [x.grad.reshape(-1).tolist() for x in ins],
        }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shape_ops_expected.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
