"""Writes norms_expected.json: PyTorch 1.13's values and gradients for test_norms.py (F.conv_transpose2d /
nn.ConvTranspose2d with stride 2, output_padding, groups and dilation, and output_size; F.group_norm /
nn.GroupNorm), and PyTorch 2.4's RMSNorm (absent from 1.13) written out in torch: x / sqrt(mean(x^2) + eps) * weight
over the trailing normalized_shape dims. Computed in float64 from inputs that are multiples of 1/16 (exact in
float32); gradients are those of sum(y * gy).

Run with Debian's python3-torch: /usr/bin/python3 bindings/python/tests/gen_norms_expected.py
"""
import json
import os

import torch

gen = torch.Generator().manual_seed(13013)


def grid(*shape, lo=-2.0, hi=2.0):
    return (torch.randint(int(lo * 16), int(hi * 16) + 1, shape, generator=gen).to(torch.float64) / 16.0)


def case(f, inputs, **extra):
    """f(*inputs) with its gradients for a random gy."""
    ts = [t.clone().requires_grad_() for t in inputs]
    y = f(*ts)
    gy = grid(*y.shape, lo=-1.0, hi=1.0)
    grads = torch.autograd.grad((y * gy).sum(), ts)
    out = {"inputs": [t.tolist() for t in inputs], "y": y.tolist(), "shape": list(y.shape), "gy": gy.tolist(),
           "grads": [g.tolist() for g in grads]}
    out.update(extra)
    return out


def rms(x, w, dims, eps):
    axes = tuple(range(-dims, 0))
    y = x / torch.sqrt((x * x).mean(axes, keepdim=True) + eps)
    return y if w is None else y * w


def main():
    F = torch.nn.functional
    ct = dict(stride=(2, 1), padding=(1, 0), output_padding=(1, 0), groups=2, dilation=(1, 2))
    out = {
        "torch": torch.__version__.split("+")[0],
        "conv_transpose2d": case(lambda x, w, b: F.conv_transpose2d(x, w, b, **ct),
                                 [grid(2, 4, 3, 3), grid(4, 3, 2, 3, lo=-1, hi=1), grid(6, lo=-1, hi=1)],
                                 options={k: list(v) if isinstance(v, tuple) else v for k, v in ct.items()}),
        "conv_transpose2d_plain": case(lambda x, w: F.conv_transpose2d(x, w),
                                       [grid(1, 2, 2, 3), grid(2, 3, 3, 2, lo=-1, hi=1)]),
        "group_norm": case(lambda x, w, b: F.group_norm(x, 2, w, b, 1e-5),
                           [grid(2, 4, 3), grid(4, lo=0.5, hi=1.5), grid(4, lo=-0.5, hi=0.5)]),
        "rms_norm": case(lambda x, w: rms(x, w, 1, 1e-6), [grid(3, 5), grid(5, lo=0.5, hi=1.5)]),
        "rms_norm_2d": case(lambda x, w: rms(x, w, 2, 1e-5), [grid(2, 3, 4), grid(3, 4, lo=0.5, hi=1.5)]),
    }
    small = grid(2, 4) / 4096.0
    out["rms_norm_default_eps"] = {"x": small.tolist(),
                                   "y": rms(small, None, 1, torch.finfo(torch.float32).eps).tolist()}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "norms_expected.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
