#!/usr/bin/python3
"""Generates tests/reference/norms_reference.hpp: GroupNorm, RMSNorm and ConvTranspose2d forward values and gradients
from PyTorch 1.13 (Debian's python3-torch) in float64, for tests/ops/norms_layers_test.cpp:

    /usr/bin/python3 tests/reference/gen_norms_reference.py      # rewrites norms_reference.hpp next to this file

  * GroupNorm: torch.nn.functional.group_norm (affine on a 4-D input, no affine on a 3-D one);
  * RMSNorm: PyTorch 1.13 has none, so PyTorch 2.4's definition is written out in torch:
    x / sqrt(mean(x^2, last dim) + eps) * weight; eps=None is the machine epsilon of the input's dtype, so that case
    has one expected array per float type (float32's and float64's), on an input small enough for eps to matter;
  * ConvTranspose2d: torch.nn.functional.conv_transpose2d, weight [C_in, C_out / groups, kH, kW]: a plain case, one
    with stride 2, padding, output_padding, groups 2 and dilation 2, and one whose output_padding reaches the stride
    (stride 1, dilation 2, output_padding 1).
Gradients are those of sum(y * gy) for a fixed gy. Inputs are multiples of 1/16 (exact in float32). Row-major.
"""
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "norms_reference.hpp")
gen = torch.Generator().manual_seed(20261124)
lines = []


def grid(*shape, lo=-2.0, hi=2.0):
    """Random multiples of 1/16 in [lo, hi], float64."""
    n = torch.randint(int(lo * 16), int(hi * 16) + 1, shape, generator=gen)
    return n.to(torch.float64) / 16.0


def emit(name, t, comment=None):
    t = t.detach().to(torch.float64)
    if comment:
        lines.append(f"// {comment}")
    lines.append(f"inline constexpr std::array<int64_t, {t.dim()}> {name}_shape = {{"
                 + ", ".join(str(s) for s in t.shape) + "};")
    body, row = [], "   "
    for v in t.reshape(-1).tolist():
        s = " " + repr(float(v)) + ","
        if len(row) + len(s) > 116:
            body.append(row)
            row = "   "
        row += s
    body.append(row)
    lines.append(f"inline constexpr double {name}[] = {{")
    lines.extend(body)
    lines.append("};")


def section(title):
    lines.append("")
    lines.append(f"// ---------------------------------------------------------------- {title}")


def grads(y, inputs, prefix):
    """Emits gy and the gradients of sum(y * gy) with respect to each named input."""
    gy = grid(*y.shape, lo=-1.0, hi=1.0)
    emit(prefix + "_gy", gy)
    gs = torch.autograd.grad((y * gy).sum(), [t for _, t in inputs])
    for (name, _), g in zip(inputs, gs):
        emit(f"{prefix}_d{name}", g)


# ----------------------------------------------------------------------------------------------- GroupNorm
section("GroupNorm(3, 6) on x [2, 6, 3, 2], eps 1e-5, affine")
x = grid(2, 6, 3, 2).requires_grad_()
w = grid(6, lo=0.5, hi=1.5).requires_grad_()
b = grid(6, lo=-0.5, hi=0.5).requires_grad_()
y = torch.nn.functional.group_norm(x, 3, w, b, 1e-5)
emit("gn_x", x)
emit("gn_w", w)
emit("gn_b", b)
emit("gn_y", y)
grads(y, [("x", x), ("w", w), ("b", b)], "gn")

section("GroupNorm(2, 4, affine=False) on x [2, 4, 5], eps 1e-3")
x = grid(2, 4, 5).requires_grad_()
y = torch.nn.functional.group_norm(x, 2, None, None, 1e-3)
emit("gn3_x", x)
emit("gn3_y", y)
grads(y, [("x", x)], "gn3")


# ----------------------------------------------------------------------------------------------- RMSNorm
def rms_norm(x, w, eps):
    y = x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)
    return y if w is None else y * w


section("RMSNorm(5, eps=1e-6) on x [3, 4, 5]")
x = grid(3, 4, 5).requires_grad_()
w = grid(5, lo=0.5, hi=1.5).requires_grad_()
y = rms_norm(x, w, 1e-6)
emit("rms_x", x)
emit("rms_w", w)
emit("rms_y", y)
grads(y, [("x", x), ("w", w)], "rms")

section("RMSNorm(4, eps=None, elementwise_affine=False) on x [2, 4] of order 1e-4: eps is the dtype's")
x = grid(2, 4) / 4096.0
emit("rms_small_x", x)
emit("rms_small_y_f32", rms_norm(x, None, torch.finfo(torch.float32).eps), "float32's eps")
emit("rms_small_y_f64", rms_norm(x, None, torch.finfo(torch.float64).eps), "float64's eps")


# ----------------------------------------------------------------------------------------------- ConvTranspose2d
def conv_t(prefix, title, x_shape, c_out, k, groups, stride, padding, output_padding, dilation):
    section(title)
    x = grid(*x_shape).requires_grad_()
    w = grid(x_shape[1], c_out // groups, *k, lo=-1.0, hi=1.0).requires_grad_()
    b = grid(c_out, lo=-1.0, hi=1.0).requires_grad_()
    y = torch.nn.functional.conv_transpose2d(x, w, b, stride, padding, output_padding, groups, dilation)
    emit(prefix + "_x", x)
    emit(prefix + "_w", w)
    emit(prefix + "_b", b)
    emit(prefix + "_y", y)
    grads(y, [("x", x), ("w", w), ("b", b)], prefix)


conv_t("ct", "ConvTranspose2d(4, 3, 3) on x [2, 4, 3, 3]", (2, 4, 3, 3), 3, (3, 3), 1, 1, 0, 0, 1)
conv_t("ctg", "ConvTranspose2d(4, 6, (3, 2), stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2, "
       "dilation=(2, 1)) on x [2, 4, 3, 4]", (2, 4, 3, 4), 6, (3, 2), 2, (2, 3), (1, 0), (1, 2), (2, 1))
conv_t("ctd", "ConvTranspose2d(2, 2, 2, stride=1, padding=1, output_padding=1, dilation=2) on x [1, 2, 3, 3]: "
       "output_padding reaches the stride", (1, 2, 3, 3), 2, (2, 2), 1, 1, 1, 1, 2)

header = [
    "#pragma once",
    "// GENERATED by tests/reference/gen_norms_reference.py -- do not edit by hand. Regenerate with",
    "//   /usr/bin/python3 tests/reference/gen_norms_reference.py",
    "// GroupNorm, RMSNorm (PyTorch 2.4's formula) and ConvTranspose2d forward values and gradients from PyTorch in",
    "// float64 (see the generator's docstring). Inputs are multiples of 1/16 (exact in float32). Row-major.",
    f"// torch {torch.__version__.split('+')[0]}.",
    "#include <array>",
    "#include <cstdint>",
    "",
    "namespace ember::test::normsref {",
]
with open(OUT, "w") as f:
    f.write("\n".join(header + lines + ["", "}  // namespace ember::test::normsref", ""]))
print(f"wrote {OUT} ({len(lines)} lines)")
