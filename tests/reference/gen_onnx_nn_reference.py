#!/usr/bin/python3
"""Writes tests/reference/onnx_nn_reference.hpp: inputs and expected outputs for tests/onnx/nn_ops_test.cpp.

    /usr/bin/python3 tests/reference/gen_onnx_nn_reference.py      # rewrites onnx_nn_reference.hpp next to this file

The ONNX nn-family converters (onnx/ops/nn*.cpp) against independent references in float64:
  - PyTorch (conv / conv_transpose of every rank, with ONNX's asymmetric pads applied as an explicit F.pad or as a
    crop of the full transposed output; bilinear / bicubic / nearest interpolation; gradients through autograd);
  - NumPy versions of ONNX's reference semantics where PyTorch has none (pools with asymmetric pads and ceil_mode
    that count only the input or input + pads, MaxPool's flat Indices, BatchNormalization, LayerNormalization's
    Mean / InvStdDev outputs, LRN with an even size, MeanVarianceNormalization, Gemm, MatMul with a 1-D operand).
Inputs are multiples of 1/16 (exact in float32). Row-major.
"""
import itertools
import os
import textwrap

import numpy as np
import torch
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "onnx_nn_reference.hpp")
rng = np.random.default_rng(20261124)
out_lines = []


def x16(*shape, lo=-2.0, hi=2.0):
    return np.round(rng.uniform(lo, hi, size=shape) * 16) / 16


def emit(name, a, comment=None):
    a = np.asarray(a, dtype=np.float64)
    if comment:
        out_lines.append(f"// {comment}")
    dims = ", ".join(str(d) for d in a.shape)
    vals = textwrap.fill(", ".join(repr(float(v)) for v in a.reshape(-1)), 114, initial_indent="    ",
                         subsequent_indent="    ")
    out_lines.append(f"inline const Array {name}{{{{{dims}}},\n{{\n{vals}\n}}}};")


def t(a, grad=False):
    return torch.tensor(a, dtype=torch.float64, requires_grad=grad)


# ---------------------------------------------------------------- Conv
# 2-D: group 2, strides [2, 1], dilations [1, 2], pads begin (1, 0) end (0, 1).
x = x16(1, 4, 5, 6); w = x16(6, 2, 3, 2); b = x16(6)
y = F.conv2d(F.pad(t(x), (0, 1, 1, 0)), t(w), t(b), stride=(2, 1), dilation=(1, 2), groups=2)
emit("conv2d_x", x, "Conv 2-D: group 2, strides [2,1], dilations [1,2], pads [1,0,0,1]"); emit("conv2d_w", w)
emit("conv2d_b", b); emit("conv2d_y", y.detach())
# 1-D: auto_pad SAME_LOWER, kernel 4, stride 2 on length 7: out 4, total pad 3 -> begin 2, end 1.
x = x16(2, 3, 7); w = x16(4, 3, 4)
y = F.conv1d(F.pad(t(x), (2, 1)), t(w), stride=2)
emit("conv1d_x", x, "Conv 1-D: auto_pad SAME_LOWER, stride 2, no bias"); emit("conv1d_w", w); emit("conv1d_y", y.detach())
# 3-D: group 2, strides [2, 1, 2], dilations [1, 1, 2], pads begin (1, 1, 0) end (0, 1, 1); gradients too.
x = x16(1, 2, 4, 5, 4); w = x16(4, 1, 2, 3, 2); b = x16(4)
xt, wt, bt = t(x, True), t(w, True), t(b, True)
y = F.conv3d(F.pad(xt, (0, 1, 1, 1, 1, 0)), wt, bt, stride=(2, 1, 2), dilation=(1, 1, 2), groups=2)
g = x16(*y.shape)
y.backward(t(g))
emit("conv3d_x", x, "Conv 3-D: group 2, strides [2,1,2], dilations [1,1,2], pads [1,1,0,0,1,1]; gradients of sum(y * g)")
emit("conv3d_w", w); emit("conv3d_b", b); emit("conv3d_y", y.detach()); emit("conv3d_g", g)
emit("conv3d_dx", xt.grad); emit("conv3d_dw", wt.grad); emit("conv3d_db", bt.grad)

# ---------------------------------------------------------------- ConvTranspose
# 2-D: strides [2, 3], pads begin (1, 0) end (0, 2), output_padding [1, 2]: the full output (+ output_padding,
# which torch zero-fills then adds the bias to) cropped by the pads.
x = x16(1, 2, 3, 4); w = x16(2, 3, 3, 3); b = x16(3)
xt, wt, bt = t(x, True), t(w, True), t(b, True)
full = F.conv_transpose2d(xt, wt, bt, stride=(2, 3), output_padding=(1, 2))
y = full[:, :, 1:full.shape[2], 0:full.shape[3] - 2]
g = x16(*y.shape)
y.backward(t(g))
emit("convt2d_x", x, "ConvTranspose 2-D: strides [2,3], pads [1,0,0,2], output_padding [1,2]; gradients of sum(y * g)")
emit("convt2d_w", w); emit("convt2d_b", b); emit("convt2d_y", y.detach()); emit("convt2d_g", g)
emit("convt2d_dx", xt.grad); emit("convt2d_dw", wt.grad)
# 1-D: group 2, stride 2, output_shape [12] on length 5 (full 11: one more zero column + bias at the end).
x = x16(1, 4, 5); w = x16(4, 1, 3); b = x16(2)
y = F.conv_transpose1d(t(x), t(w), t(b), stride=2, output_padding=1, groups=2)
emit("convt1d_x", x, "ConvTranspose 1-D: group 2, stride 2, output_shape [12]"); emit("convt1d_w", w)
emit("convt1d_b", b); emit("convt1d_y", y.detach())
# 3-D: strides [2, 1, 2], dilations [1, 2, 1], pads begin (0, 1, 0) end (1, 0, 0).
x = x16(1, 2, 2, 3, 2); w = x16(2, 2, 2, 2, 3); b = x16(2)
full = F.conv_transpose3d(t(x), t(w), t(b), stride=(2, 1, 2), dilation=(1, 2, 1))
y = full[:, :, 0:full.shape[2] - 1, 1:, :]
emit("convt3d_x", x, "ConvTranspose 3-D: strides [2,1,2], dilations [1,2,1], pads [0,1,0,1,0,0]"); emit("convt3d_w", w)
emit("convt3d_b", b); emit("convt3d_y", y.detach())


# ---------------------------------------------------------------- pools (ONNX's reference semantics in NumPy)
def onnx_pool(x, kind, kernel, strides, pads, dilations=None, ceil=False, count_include_pad=False):
    """Windows over x padded with NaN (or 0 where pads count), overhanging ceil windows truncated; NaNs skipped."""
    n = len(kernel)
    dilations = dilations or [1] * n
    fill = 0.0 if (kind == "avg" and count_include_pad) else np.nan
    padded = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[n + i]) for i in range(n)], constant_values=fill)
    outs, idx_out = [], []
    for i in range(n):
        span = dilations[i] * (kernel[i] - 1) + 1
        room = x.shape[2 + i] + pads[i] + pads[n + i] - span
        outs.append((-(-room // strides[i]) if ceil else room // strides[i]) + 1)
    y = np.zeros(x.shape[:2] + tuple(outs))
    ind = np.zeros(x.shape[:2] + tuple(outs), dtype=np.int64)
    for nb, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for o in itertools.product(*[range(v) for v in outs]):
            vals, where = [], []
            for k in itertools.product(*[range(v) for v in kernel]):
                p = [o[i] * strides[i] + k[i] * dilations[i] for i in range(n)]
                if any(p[i] >= padded.shape[2 + i] for i in range(n)):
                    continue
                v = padded[(nb, c) + tuple(p)]
                if np.isnan(v):
                    continue
                vals.append(v)
                src = [p[i] - pads[i] for i in range(n)]
                flat = nb * x.shape[1] + c
                for i in range(n):
                    flat = flat * x.shape[2 + i] + min(max(src[i], 0), x.shape[2 + i] - 1)
                where.append(flat)
            y[(nb, c) + o] = np.max(vals) if kind == "max" else np.mean(vals)
            ind[(nb, c) + o] = where[int(np.argmax(vals))]
    return y, ind


x = x16(1, 2, 5, 7)
y, ind = onnx_pool(x, "max", [3, 2], [2, 2], [1, 0, 0, 0], ceil=True)
emit("maxpool2d_x", x, "MaxPool 2-D: kernel [3,2], strides [2,2], pads [1,0,0,0], ceil_mode; Indices over N, C, H, W")
emit("maxpool2d_y", y); emit("maxpool2d_i", ind)
x = x16(2, 3, 9)
y, _ = onnx_pool(x, "max", [3], [2], [1, 2], dilations=[2])
emit("maxpool1d_x", x, "MaxPool 1-D: kernel 3, stride 2, dilation 2, pads [1,2]"); emit("maxpool1d_y", y)
x = x16(1, 1, 5, 7)
y0, _ = onnx_pool(x, "avg", [3, 3], [2, 2], [1, 1, 1, 0], ceil=True, count_include_pad=False)
y1, _ = onnx_pool(x, "avg", [3, 3], [2, 2], [1, 1, 1, 0], ceil=True, count_include_pad=True)
emit("avgpool2d_x", x, "AveragePool 2-D: kernel [3,3], strides [2,2], pads [1,1,1,0], ceil_mode; count_include_pad 0 / 1")
emit("avgpool2d_y_exclude", y0); emit("avgpool2d_y_include", y1)
x = x16(1, 2, 4, 5, 3)
y, _ = onnx_pool(x, "avg", [2, 3, 2], [2, 2, 1], [0, 1, 1, 1, 0, 0])
emit("avgpool3d_x", x, "AveragePool 3-D: kernel [2,3,2], strides [2,2,1], pads [0,1,1,1,0,0], count_include_pad 0")
emit("avgpool3d_y", y)
y, _ = onnx_pool(x, "max", [2, 2, 2], [1, 2, 1], [1, 0, 0, 0, 1, 1])
emit("maxpool3d_y", y, "MaxPool 3-D on avgpool3d_x: kernel [2,2,2], strides [1,2,1], pads [1,0,0,0,1,1]")
y0, _ = onnx_pool(x, "avg", [3, 3, 3], [2, 2, 1], [1, 1, 1, 1, 1, 1])
y1, _ = onnx_pool(x, "max", [3, 3, 3], [2, 2, 1], [1, 1, 1, 1, 1, 1])
emit("pool3d_sym_avg", y0, "AveragePool (count_include_pad 0) and MaxPool 3-D on avgpool3d_x: kernel 3, strides [2,2,1], pads 1")
emit("pool3d_sym_max", y1)
# AveragePool gradient (symmetric pads, count_include_pad 0), where torch agrees with ONNX.
x = x16(1, 1, 5, 5)
xt = t(x, True)
y = F.avg_pool2d(xt, 3, 2, padding=1, count_include_pad=False)
g = x16(*y.shape)
y.backward(t(g))
emit("avgpool_grad_x", x, "AveragePool kernel 3, stride 2, pads 1, count_include_pad 0: y and dx of sum(y * g)")
emit("avgpool_grad_y", y.detach()); emit("avgpool_grad_g", g); emit("avgpool_grad_dx", xt.grad)

# ---------------------------------------------------------------- normalizations
x = x16(2, 3, 2, 2); s = x16(3); bb = x16(3); m = x16(3); v = x16(3, lo=0.25, hi=2.0)
eps = 1e-3
bs = lambda a: a.reshape(1, 3, 1, 1)
y = (x - bs(m)) / np.sqrt(bs(v) + eps) * bs(s) + bs(bb)
emit("bn_x", x, "BatchNormalization, epsilon 1e-3, momentum 0.8: inference, then training_mode's Y / running stats")
emit("bn_scale", s); emit("bn_bias", bb); emit("bn_mean", m); emit("bn_var", v); emit("bn_y", y)
bm = x.mean(axis=(0, 2, 3)); bv = x.var(axis=(0, 2, 3))
emit("bn_train_y", (x - bs(bm)) / np.sqrt(bs(bv) + eps) * bs(s) + bs(bb))
emit("bn_train_mean", m * 0.8 + bm * 0.2); emit("bn_train_var", v * 0.8 + bv * 0.2)
x = x16(2, 3, 4); s = x16(3, 4); bb = x16(3, 4)
mean = x.mean(axis=(1, 2), keepdims=True); var = x.var(axis=(1, 2), keepdims=True)
istd = 1 / np.sqrt(var + 1e-5)
emit("ln_x", x, "LayerNormalization axis 1: Y, Mean, InvStdDev"); emit("ln_scale", s); emit("ln_bias", bb)
emit("ln_y", (x - mean) * istd * s + bb); emit("ln_mean", mean); emit("ln_istd", istd)
x = x16(2, 3, 5); s = x16(3); bb = x16(3)
mean = x.mean(axis=2, keepdims=True); var = x.var(axis=2, keepdims=True)
emit("in_x", x, "InstanceNormalization, epsilon 1e-4"); emit("in_scale", s); emit("in_bias", bb)
emit("in_y", (x - mean) / np.sqrt(var + 1e-4) * s.reshape(1, 3, 1) + bb.reshape(1, 3, 1))
x = x16(2, 3, 2, 3)
mean = x.mean(axis=(0, 2, 3), keepdims=True); sd = np.sqrt((x ** 2).mean(axis=(0, 2, 3), keepdims=True) - mean ** 2)
emit("mvn_x", x, "MeanVarianceNormalization, default axes [0, 2, 3]"); emit("mvn_y", (x - mean) / (sd + 1e-9))
x = x16(1, 5, 2, 2)
size, alpha, beta, bias = 4, 0.3, 0.6, 1.5
sq = np.zeros_like(x)
for c in range(5):
    lo, hi = max(0, c - (size - 1) // 2), min(4, c + -(-(size - 1) // 2))
    sq[:, c] = (x[:, lo:hi + 1] ** 2).sum(axis=1)
emit("lrn_x", x, "LRN size 4 (even: 1 channel before, 2 after), alpha 0.3, beta 0.6, bias 1.5")
emit("lrn_y", x / (bias + alpha / size * sq) ** beta)

# ---------------------------------------------------------------- Gemm, MatMul
a = x16(4, 3); b = x16(5, 4); c = x16(1, 5)
emit("gemm_a", a, "Gemm transA, transB, alpha 0.5, beta 2, C [1, 5] broadcast"); emit("gemm_b", b); emit("gemm_c", c)
emit("gemm_y", 0.5 * a.T @ b.T + 2 * c)
a = x16(2, 6); b = x16(5, 6); c = x16(5)
emit("linear_a", a, "Gemm transB (PyTorch's Linear), C [5]: A [2, 6] and its first row"); emit("linear_b", b)
emit("linear_c", c); emit("linear_y", a @ b.T + c); emit("linear_a1", a[:1]); emit("linear_y1", a[:1] @ b.T + c)
a = x16(3); b = x16(2, 3, 4)
emit("matmul_a", a, "MatMul [3] x [2, 3, 4] -> [2, 4]"); emit("matmul_b", b); emit("matmul_y", np.matmul(a, b))

# ---------------------------------------------------------------- Resize
x = x16(1, 2, 3, 4)
xt = t(x, True)
y = F.interpolate(xt, size=(5, 7), mode="bilinear", align_corners=False)
g = x16(*y.shape)
y.backward(t(g))
emit("resize_x", x, "Resize [1,2,3,4] -> sizes [1,2,5,7]: linear half_pixel (and dx of sum(y * g)), cubic align_corners, nearest asymmetric floor")
emit("resize_linear_y", y.detach()); emit("resize_linear_g", g); emit("resize_linear_dx", xt.grad)
emit("resize_cubic_y", F.interpolate(t(x), size=(5, 7), mode="bicubic", align_corners=True))
emit("resize_nearest_y", F.interpolate(t(x), size=(5, 7), mode="nearest"))

with open(OUT, "w") as f:
    f.write("#pragma once\n")
    f.write("// GENERATED by tests/reference/gen_onnx_nn_reference.py -- do not edit by hand. Regenerate with\n")
    f.write("//   /usr/bin/python3 tests/reference/gen_onnx_nn_reference.py\n")
    f.write("// Inputs and expected outputs of the ONNX nn-family converters (see the generator's docstring).\n")
    f.write(f"// torch {torch.__version__}, numpy {np.__version__}.\n")
    f.write("#include <cstdint>\n#include <vector>\n\nnamespace ember::test::onnxnnref {\n\n")
    f.write("struct Array {\n  std::vector<int64_t> shape;\n  std::vector<double> data;\n};\n\n")
    f.write("\n".join(out_lines))
    f.write("\n\n}  // namespace ember::test::onnxnnref\n")
