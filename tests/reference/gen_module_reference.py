#!/usr/bin/python3
"""Generates tests/reference/module_reference.hpp: inputs and expected outputs for the module-op tests
(tests/ops/module_ops_test.cpp), computed with NumPy/SciPy independently of Ember's kernels.

    /usr/bin/python3 tests/reference/gen_module_reference.py      # rewrites module_reference.hpp next to this file

Semantics follow PyTorch (torch.nn.functional.conv2d / conv1d / max_pool2d / avg_pool2d / adaptive_avg_pool2d,
ceil_mode=False):
  * conv2d is computed by shift-and-accumulate over kernel taps on an explicitly zero-padded input (no im2col), and
    cross-checked against scipy.signal.correlate for the dense stride-1 / dilation-1 slices of every case;
  * max_pool2d pads with -inf, returns the first maximum in row-major window order, and its index is the flat
    position in the (unpadded) input H*W plane;
  * avg_pool2d divides by the window clipped to the padded input (count_include_pad=True) or to the image
    (count_include_pad=False);
  * adaptive_avg_pool2d averages rows [floor(i*H/Ho), ceil((i+1)*H/Ho)) and likewise for columns.

Inputs are multiples of 1/16 (max-pool inputs: distinct multiples of 1/8), exactly representable in f32, so the
only rounding in the float32 results is in the reductions themselves.
"""
import os

import numpy as np
import scipy.signal

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "module_reference.hpp")


# ----------------------------------------------------------------------------------------------- reference ops
def conv2d_ref(x, w, b, stride, padding, dilation, groups):
    n, c, h, wd = x.shape
    cout, cg, kh, kw = w.shape
    sh, sw = stride
    ph, pw = padding
    dh, dw = dilation
    assert c == cg * groups and cout % groups == 0
    ho = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    wo = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    xp = np.zeros((n, c, h + 2 * ph, wd + 2 * pw))
    xp[:, :, ph:ph + h, pw:pw + wd] = x
    y = np.zeros((n, cout, ho, wo))
    cog = cout // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                r0, c0 = i * dh, j * dw
                patch = xs[:, :, r0:r0 + sh * (ho - 1) + 1:sh, c0:c0 + sw * (wo - 1) + 1:sw]  # [n, cg, ho, wo]
                wij = w[g * cog:(g + 1) * cog, :, i, j]  # [cog, cg]
                y[:, g * cog:(g + 1) * cog] += np.einsum("nchw,oc->nohw", patch, wij)
    if b is not None:
        y += b[None, :, None, None]
    return y


def conv2d_scipy_check(x, w, b, stride, padding, dilation, groups, y):
    """Independent cross-check: scipy.signal.correlate on the zero-padded image with the dilated kernel, then
    strided sub-sampling."""
    n, c, h, wd = x.shape
    cout, cg, kh, kw = w.shape
    ph, pw = padding
    dh, dw = dilation
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    cog = cout // groups
    ho, wo = y.shape[2], y.shape[3]
    for bi in range(n):
        for co in range(cout):
            g = co // cog
            wdil = np.zeros((cg, dh * (kh - 1) + 1, dw * (kw - 1) + 1))
            wdil[:, ::dh, ::dw] = w[co]
            full = scipy.signal.correlate(xp[bi, g * cg:(g + 1) * cg], wdil, mode="valid", method="direct")[0]
            got = full[::stride[0], ::stride[1]][:ho, :wo] + (b[co] if b is not None else 0.0)
            assert np.allclose(got, y[bi, co], rtol=1e-12, atol=1e-12), "scipy cross-check failed"


def max_pool2d_ref(x, kernel, stride, padding, dilation):
    n, c, h, wd = x.shape
    kh, kw = kernel
    ho = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, c, ho, wo))
    idx = np.zeros((n, c, ho, wo), dtype=np.int64)
    for bi in range(n):
        for ci in range(c):
            for oh in range(ho):
                for ow in range(wo):
                    best, arg = -np.inf, -1
                    for i in range(kh):
                        for j in range(kw):
                            r = oh * stride[0] - padding[0] + i * dilation[0]
                            q = ow * stride[1] - padding[1] + j * dilation[1]
                            if 0 <= r < h and 0 <= q < wd and (arg < 0 or x[bi, ci, r, q] > best):
                                best, arg = x[bi, ci, r, q], r * wd + q
                    y[bi, ci, oh, ow], idx[bi, ci, oh, ow] = best, arg
    return y, idx


def avg_pool2d_ref(x, kernel, stride, padding, count_include_pad):
    n, c, h, wd = x.shape
    kh, kw = kernel
    ho = (h + 2 * padding[0] - kh) // stride[0] + 1
    wo = (wd + 2 * padding[1] - kw) // stride[1] + 1
    y = np.zeros((n, c, ho, wo))
    for oh in range(ho):
        for ow in range(wo):
            h0, w0 = oh * stride[0] - padding[0], ow * stride[1] - padding[1]
            h1, w1 = min(h0 + kh, h + padding[0]), min(w0 + kw, wd + padding[1])
            pad_count = (h1 - h0) * (w1 - w0)
            h0c, w0c, h1c, w1c = max(h0, 0), max(w0, 0), min(h1, h), min(w1, wd)
            s = x[:, :, h0c:h1c, w0c:w1c].sum(axis=(2, 3))
            y[:, :, oh, ow] = s / (pad_count if count_include_pad else (h1c - h0c) * (w1c - w0c))
    return y


def adaptive_avg_pool2d_ref(x, out_hw):
    n, c, h, wd = x.shape
    ho, wo = out_hw
    y = np.zeros((n, c, ho, wo))
    for oh in range(ho):
        h0, h1 = (oh * h) // ho, -((-(oh + 1) * h) // ho)
        for ow in range(wo):
            w0, w1 = (ow * wd) // wo, -((-(ow + 1) * wd) // wo)
            y[:, :, oh, ow] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    return y


# ----------------------------------------------------------------------------------------------- emission
rng = np.random.default_rng(20240611)
lines = []


def sixteenths(shape):
    return rng.integers(-32, 33, size=shape).astype(np.float64) / 16.0


def distinct(shape, negative=False):
    n = int(np.prod(shape))
    v = (rng.permutation(n) - (n // 2)).astype(np.float64) / 8.0
    if negative:
        v = -(rng.permutation(n) + 1).astype(np.float64) / 8.0
    return v.reshape(shape)


def emit_array(name, arr, ctype="double"):
    flat = np.asarray(arr).ravel()
    if ctype == "double":
        vals = [repr(float(v)) for v in flat]
    else:
        vals = [str(int(v)) for v in flat]
    body = []
    row = "   "
    for v in vals:
        if len(row) + len(v) + 2 > 118:
            body.append(row)
            row = "   "
        row += " " + v + ","
    body.append(row)
    lines.append(f"inline constexpr {ctype} {name}[] = {{")
    lines.extend(body)
    lines.append("};")


def emit_shape(name, shape):
    lines.append(f"inline constexpr std::array<int64_t, {len(shape)}> {name} = {{"
                 + ", ".join(str(int(s)) for s in shape) + "};")


def conv2d_case(name, n, c, h, w, cout, kh, kw, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
                bias=True, comment=""):
    x = sixteenths((n, c, h, w))
    wt = sixteenths((cout, c // groups, kh, kw))
    b = sixteenths((cout,)) if bias else None
    y = conv2d_ref(x, wt, b, stride, padding, dilation, groups)
    conv2d_scipy_check(x, wt, b, stride, padding, dilation, groups, y)
    lines.append(f"// conv2d {name}: {comment}")
    emit_shape(f"conv2d_{name}_x_shape", x.shape)
    emit_shape(f"conv2d_{name}_w_shape", wt.shape)
    emit_shape(f"conv2d_{name}_y_shape", y.shape)
    lines.append(f"// stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups, has_bias")
    emit_array(f"conv2d_{name}_opts", [*stride, *padding, *dilation, groups, int(bias)], "int64_t")
    emit_array(f"conv2d_{name}_x", x)
    emit_array(f"conv2d_{name}_w", wt)
    if bias:
        emit_array(f"conv2d_{name}_b", b)
    emit_array(f"conv2d_{name}_y", y)
    lines.append("")


def conv1d_case(name, n, c, length, cout, k, stride=1, padding=0, dilation=1, groups=1, bias=True, comment=""):
    x = sixteenths((n, c, length))
    wt = sixteenths((cout, c // groups, k))
    b = sixteenths((cout,)) if bias else None
    # Direct 1-D loops (not via the 2-D reference): y[n, o, t] = b[o] + sum_{c, k} w[o, c, k] * xpad[n, g*cg + c, t*s + k*d]
    cg, cog = c // groups, cout // groups
    lo = (length + 2 * padding - dilation * (k - 1) - 1) // stride + 1
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding)))
    y = np.zeros((n, cout, lo))
    for bi in range(n):
        for o in range(cout):
            g = o // cog
            for t in range(lo):
                s = b[o] if bias else 0.0
                for ci in range(cg):
                    for kk in range(k):
                        s += wt[o, ci, kk] * xp[bi, g * cg + ci, t * stride + kk * dilation]
                y[bi, o, t] = s
    lines.append(f"// conv1d {name}: {comment}")
    emit_shape(f"conv1d_{name}_x_shape", x.shape)
    emit_shape(f"conv1d_{name}_w_shape", wt.shape)
    emit_shape(f"conv1d_{name}_y_shape", y.shape)
    lines.append(f"// stride, padding, dilation, groups, has_bias")
    emit_array(f"conv1d_{name}_opts", [stride, padding, dilation, groups, int(bias)], "int64_t")
    emit_array(f"conv1d_{name}_x", x)
    emit_array(f"conv1d_{name}_w", wt)
    if bias:
        emit_array(f"conv1d_{name}_b", b)
    emit_array(f"conv1d_{name}_y", y)
    lines.append("")


def max_pool_case(name, shape, kernel, stride, padding=(0, 0), dilation=(1, 1), negative=False, comment=""):
    x = distinct(shape, negative)
    y, idx = max_pool2d_ref(x, kernel, stride, padding, dilation)
    lines.append(f"// max_pool2d {name}: {comment}")
    emit_shape(f"max_pool2d_{name}_x_shape", x.shape)
    emit_shape(f"max_pool2d_{name}_y_shape", y.shape)
    lines.append(f"// kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w")
    emit_array(f"max_pool2d_{name}_opts", [*kernel, *stride, *padding, *dilation], "int64_t")
    emit_array(f"max_pool2d_{name}_x", x)
    emit_array(f"max_pool2d_{name}_y", y)
    emit_array(f"max_pool2d_{name}_idx", idx, "int64_t")
    lines.append("")


def avg_pool_case(name, shape, kernel, stride, padding=(0, 0), comment=""):
    x = sixteenths(shape)
    lines.append(f"// avg_pool2d {name}: {comment}")
    emit_shape(f"avg_pool2d_{name}_x_shape", x.shape)
    lines.append(f"// kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w")
    emit_array(f"avg_pool2d_{name}_opts", [*kernel, *stride, *padding], "int64_t")
    emit_array(f"avg_pool2d_{name}_x", x)
    y_inc = avg_pool2d_ref(x, kernel, stride, padding, True)
    y_exc = avg_pool2d_ref(x, kernel, stride, padding, False)
    emit_shape(f"avg_pool2d_{name}_y_shape", y_inc.shape)
    emit_array(f"avg_pool2d_{name}_y_include_pad", y_inc)
    emit_array(f"avg_pool2d_{name}_y_exclude_pad", y_exc)
    lines.append("")


def adaptive_case(name, shape, out_hw, comment=""):
    x = sixteenths(shape)
    y = adaptive_avg_pool2d_ref(x, out_hw)
    lines.append(f"// adaptive_avg_pool2d {name}: {comment}")
    emit_shape(f"adaptive_{name}_x_shape", x.shape)
    emit_shape(f"adaptive_{name}_y_shape", y.shape)
    emit_array(f"adaptive_{name}_x", x)
    emit_array(f"adaptive_{name}_y", y)
    lines.append("")


# ----------------------------------------------------------------------------------------------- cases
conv2d_case("basic", 2, 3, 5, 6, 4, 3, 3, comment="batch 2, 3x3, stride 1, no padding, bias")
conv2d_case("stride_pad", 1, 2, 7, 6, 3, 3, 2, stride=(2, 3), padding=(1, 2), bias=False,
            comment="non-square 3x2 kernel, stride (2, 3), padding (1, 2), no bias")
conv2d_case("dilation", 2, 2, 8, 7, 2, 3, 3, padding=(2, 1), dilation=(2, 3),
            comment="dilation (2, 3), padding (2, 1), bias")
conv2d_case("groups", 2, 4, 5, 5, 6, 3, 3, padding=(1, 1), groups=2, comment="groups 2, padding 1, bias")
conv2d_case("depthwise", 2, 3, 6, 5, 6, 3, 3, stride=(2, 2), padding=(1, 1), groups=3, bias=False,
            comment="depthwise with channel multiplier 2 (groups = C_in = 3), stride 2, padding 1, no bias")
conv2d_case("depthwise_pure", 3, 4, 5, 5, 4, 3, 3, padding=(1, 1), groups=4,
            comment="pure depthwise (groups = C_in = C_out = 4), batch 3, padding 1, bias")
conv2d_case("pointwise", 3, 5, 4, 3, 2, 1, 1, comment="1x1 kernel, batch 3, bias")
conv2d_case("pointwise_stride", 2, 3, 5, 6, 4, 1, 1, stride=(2, 2), bias=False, comment="1x1 kernel, stride 2")
conv2d_case("single_image", 1, 3, 6, 6, 4, 3, 3, padding=(1, 1), comment="batch 1 (in-place GEMM path), padding 1")
conv2d_case("all_options", 3, 6, 9, 8, 4, 3, 2, stride=(2, 1), padding=(2, 1), dilation=(2, 2), groups=2,
            comment="stride, padding, dilation and groups together, batch 3, bias")
conv2d_case("medium", 4, 8, 12, 12, 8, 3, 3, padding=(1, 1),
            comment="batch 4, 8 -> 8 channels, 12x12, 3x3 pad 1 (larger GEMM, multi-chunk loops)")

conv1d_case("basic", 2, 3, 9, 4, 3, comment="batch 2, kernel 3, bias")
conv1d_case("all_options", 2, 4, 10, 6, 3, stride=2, padding=1, dilation=2, groups=2,
            comment="stride 2, padding 1, dilation 2, groups 2, bias")
conv1d_case("depthwise", 1, 3, 7, 3, 2, padding=1, groups=3, bias=False, comment="depthwise, padding 1, no bias")

max_pool_case("basic", (2, 2, 6, 5), (2, 2), (2, 2), comment="2x2 stride 2, odd width (last column dropped)")
max_pool_case("overlap", (1, 2, 5, 6), (3, 3), (1, 2), comment="3x3 windows overlapping along H (stride (1, 2))")
max_pool_case("padding", (2, 3, 7, 7), (3, 3), (2, 2), (1, 1), negative=True,
              comment="3x3 stride 2 padding 1 on an all-negative input (padding must act as -inf, not 0)")
max_pool_case("dilation", (1, 2, 8, 9), (3, 2), (1, 2), (1, 1), (2, 2),
              comment="3x2 kernel, stride (1, 2), padding 1, dilation 2")

avg_pool_case("basic", (2, 2, 6, 5), (2, 2), (2, 2), comment="2x2 stride 2, no padding (both flags agree)")
avg_pool_case("pad", (2, 3, 5, 6), (3, 3), (2, 2), (1, 1), comment="3x3 stride 2 padding 1")
avg_pool_case("rect_pad", (1, 2, 6, 7), (3, 2), (1, 2), (1, 1), comment="3x2 kernel, stride (1, 2), padding 1")

adaptive_case("down_divisible", (2, 2, 6, 8), (3, 4), comment="6x8 -> 3x4 (plain 2x2 average)")
adaptive_case("down_uneven", (2, 3, 7, 5), (3, 2), comment="7x5 -> 3x2 (uneven, overlapping windows)")
adaptive_case("up", (1, 2, 3, 2), (5, 7), comment="3x2 -> 5x7 (upsampling: windows repeat input pixels)")
adaptive_case("global", (2, 3, 5, 4), (1, 1), comment="5x4 -> 1x1 (global average)")
adaptive_case("mixed", (1, 2, 4, 9), (6, 4), comment="4x9 -> 6x4 (up along H, down along W)")

header = [
    "#pragma once",
    "// GENERATED by tests/reference/gen_module_reference.py -- do not edit by hand. Regenerate with",
    "//   /usr/bin/python3 tests/reference/gen_module_reference.py",
    "// Expected values for tests/ops/module_ops_test.cpp, computed in float64 with NumPy (shift-and-accumulate",
    "// convolution cross-checked with scipy.signal.correlate; explicit window loops for pooling), following PyTorch",
    "// semantics. Inputs are exact in float32. Layouts are row-major NCHW (NCL for conv1d).",
    f"// numpy {np.__version__}, scipy {scipy.__version__}.",
    "#include <array>",
    "#include <cstdint>",
    "",
    "namespace ember::test::ref {",
    "",
]
with open(OUT, "w") as f:
    f.write("\n".join(header + lines + ["}  // namespace ember::test::ref", ""]))
print(f"wrote {OUT}")
