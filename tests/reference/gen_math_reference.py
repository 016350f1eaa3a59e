#!/usr/bin/python3
"""Writes tests/reference/math_reference.hpp: reference values for the op suite (tests/ops/*_test.cpp).

Run from anywhere:   /usr/bin/python3 tests/reference/gen_math_reference.py
Needs numpy and scipy (checked in output made with numpy 1.24, scipy 1.10).

Every input is rounded to float32 first and stored as the exact double of that float, so the same input is exact on
f32 and f64 backends; every expected value is computed in float64 by numpy/scipy from that input (an independent
implementation: scipy.special for erf/expit/ndtr/softmax, numpy for the rest). Inf and NaN are spelled kInf / kNaN.
"""
import math
import os

import numpy as np
from scipy import special

from cpp_reference import ReferenceLines, f32

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "math_reference.hpp")

lines = ReferenceLines()
emit, emit_int, emit_shape, section = lines.emit, lines.emit_int, lines.emit_shape, lines.section


np.seterr(all="ignore")

# ------------------------------------------------------------------ unary float ops
section("unary float ops on unary_x (shape [unary_n])")
unary_x = f32([-20.0, -8.5, -5.0, -3.75, -2.5, -2.0, -1.5, -1.0, -0.75, -0.5, -0.3, -0.1, -1e-3, -1e-6, -0.0,
               0.0, 1e-30, 1e-6, 1e-3, 0.1, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 3.75, 5.0, 8.5, 20.0])
lines.append(f"inline constexpr std::size_t unary_n = {len(unary_x)};")
emit("unary_x", unary_x, "inputs: negatives, signed zeros, tiny values, halves (for round), large magnitudes")
x = unary_x
SQRT2 = math.sqrt(2.0)
unary = {
    "neg": -x,
    "abs": np.abs(x),
    "exp": np.exp(x),
    "log": np.log(x),
    "log1p": np.log1p(x),
    "sqrt": np.sqrt(x),
    "sin": np.sin(x),
    "cos": np.cos(x),
    "tanh": np.tanh(x),
    "sigmoid": special.expit(x),
    "erf": special.erf(x),
    "recip": 1.0 / x,
    "sign": np.sign(x),
    "floor": np.floor(x),
    "ceil": np.ceil(x),
    "round": np.round(x),  # half to even
    "relu": np.maximum(x, 0.0),
    "gelu": x * special.ndtr(x),  # x * Phi(x), no cancellation for negative x
    "gelu_tanh": 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3))),
}
for name, y in unary.items():
    emit(f"{name}_out", y)

# ------------------------------------------------------------------ scalar ops
section("scalar ops: x (op) s on scalar_x")
scalar_x = f32([-3.0, -1.5, -0.5, 0.0, 0.25, 1.0, 2.0, 4.5])
emit("scalar_x", scalar_x)
s = 2.5
x = scalar_x
emit("add_s_out", x + s, "s = 2.5 for add/sub/mul/div/rsub/rdiv")
emit("sub_s_out", x - s)
emit("mul_s_out", x * s)
emit("div_s_out", x / s)
emit("rsub_s_out", s - x)
emit("rdiv_s_out", s / x)
emit("clamp_min_s_out", np.maximum(x, -1.0), "clamp_min(-1), clamp_max(1.5), clamp(-1, 1.5)")
emit("clamp_max_s_out", np.minimum(x, 1.5))
emit("clamp_s_out", np.clip(x, -1.0, 1.5))
for e, tag in [(2.0, "2"), (3.0, "3"), (0.5, "half"), (-1.0, "m1"), (1.0, "1"), (1.5, "1_5"), (0.0, "0")]:
    emit(f"pow_s{tag}_out", np.power(x, e), f"pow_scalar({e})")

# ------------------------------------------------------------------ binary ops with broadcasting
section("binary ops with NumPy broadcasting")
bin_a = f32([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]])
bin_b = f32([[2.0, -0.5, 3.0]])
bin_c = f32([[1.25], [-3.0]])
bin_d = f32(np.arange(12).reshape(4, 1, 3) * 0.5 - 2.0)
bin_e = f32([[[1.5], [-2.0]]])
emit("bin_a", bin_a, "[2, 3]")
emit("bin_b", bin_b, "[1, 3]")
emit("bin_c", bin_c, "[2, 1]")
emit("bin_d", bin_d, "[4, 1, 3]")
emit("bin_e", bin_e, "[1, 2, 1]")
ops = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "pow": np.power,
    "max": np.maximum,
    "min": np.minimum,
}
for name, f in ops.items():
    emit(f"{name}_ab_out", f(bin_a, bin_b), f"{name}: [2, 3] with [1, 3] -> [2, 3]")
    emit(f"{name}_cb_out", f(bin_c, bin_b), f"{name}: [2, 1] with [1, 3] -> [2, 3]")
    emit(f"{name}_de_out", f(bin_d, bin_e), f"{name}: [4, 1, 3] with [1, 2, 1] -> [4, 2, 3]")

# ------------------------------------------------------------------ reductions
section("reductions over red_x [2, 3, 4] (float) and red_i [2, 3, 4] (int); per-dim results keep the dim")
red_x = f32(np.array([3.0, -1.0, 2.5, 0.5, 4.0, 4.0, -2.0, 1.0, 0.25, 1.5, -3.0, 2.0,
                      -1.5, 2.0, 0.75, 5.0, 1.0, 1.0, -0.5, 3.0, 2.0, -2.5, 1.25, -4.0]).reshape(2, 3, 4))
red_i = np.array([3, -7, 2, 5, 4, 4, -2, 1, 0, 9, -3, 2, -1, 2, 7, 5, 1, 1, -6, 3, 2, -8, 1, -4],
                 dtype=np.int64).reshape(2, 3, 4)
emit("red_x", red_x)
emit_int("red_i", red_i)
x = red_x
emit("red_sum_all", [x.sum()])
emit("red_mean_all", [x.mean()])
emit("red_prod_all", [x.prod()])
emit("red_max_all", [x.max()])
emit("red_min_all", [x.min()])
emit_int("red_i_sum_all", [red_i.sum()])
emit_int("red_i_mean_all", [int(np.trunc(red_i.sum() / red_i.size))], "int mean truncates toward zero")
emit_int("red_i_prod_all", [red_i.prod()])
emit_int("red_i_max_all", [red_i.max()])
emit_int("red_i_min_all", [red_i.min()])


def int_mean_trunc(a, axis):
    s = a.sum(axis=axis, keepdims=True)
    n = a.shape[axis]
    return np.sign(s) * (np.abs(s) // n)


for d in range(3):
    emit(f"red_sum_d{d}", x.sum(axis=d, keepdims=True), f"dim {d}")
    emit(f"red_mean_d{d}", x.mean(axis=d, keepdims=True))
    emit(f"red_prod_d{d}", x.prod(axis=d, keepdims=True))
    emit(f"red_max_d{d}", x.max(axis=d, keepdims=True))
    emit(f"red_min_d{d}", x.min(axis=d, keepdims=True))
    emit(f"red_var0_d{d}", x.var(axis=d, ddof=0, keepdims=True))
    emit(f"red_var1_d{d}", x.var(axis=d, ddof=1, keepdims=True))
    emit(f"red_softmax_d{d}", special.softmax(x, axis=d))
    emit(f"red_log_softmax_d{d}", special.log_softmax(x, axis=d))
    emit_int(f"red_argmax_d{d}", np.expand_dims(x.argmax(axis=d), d), "first occurrence on ties")
    emit_int(f"red_argmin_d{d}", np.expand_dims(x.argmin(axis=d), d))
    emit_int(f"red_i_sum_d{d}", red_i.sum(axis=d, keepdims=True))
    emit_int(f"red_i_mean_d{d}", int_mean_trunc(red_i, d))
    emit_int(f"red_i_prod_d{d}", red_i.prod(axis=d, keepdims=True))
    emit_int(f"red_i_max_d{d}", red_i.max(axis=d, keepdims=True))
    emit_int(f"red_i_min_d{d}", red_i.min(axis=d, keepdims=True))
    emit_int(f"red_i_argmax_d{d}", np.expand_dims(red_i.argmax(axis=d), d))
    emit_int(f"red_i_argmin_d{d}", np.expand_dims(red_i.argmin(axis=d), d))

section("softmax over extreme logits (rows of [3, 4], dim 1)")
sm_x = f32([[1000.0, -1000.0, 0.0, 999.0], [-1000.0, -1000.0, -1001.0, -1000.5], [80.0, 90.0, 100.0, 88.5]])
emit("sm_x", sm_x)
emit("sm_softmax", special.softmax(sm_x, axis=1))
emit("sm_log_softmax", special.log_softmax(sm_x, axis=1))

# ------------------------------------------------------------------ matmul
section("matmul (numpy float64 on float32-exact inputs)")
rng = np.random.default_rng(20240607)
mm_a = f32(rng.integers(-32, 33, size=(2, 1, 3, 4)) / 16.0)
mm_b = f32(rng.integers(-32, 33, size=(1, 5, 4, 2)) / 16.0)
emit("mm_a", mm_a, "[2, 1, 3, 4]")
emit("mm_b", mm_b, "[1, 5, 4, 2]")
emit("mm_ab", np.matmul(mm_a, mm_b), "[2, 5, 3, 2]")
mm_p = f32(rng.integers(-32, 33, size=(3, 5)) / 8.0)
mm_q = f32(rng.integers(-32, 33, size=(5, 2)) / 8.0)
emit("mm_p", mm_p, "[3, 5]")
emit("mm_q", mm_q, "[5, 2]")
emit("mm_pq", mm_p @ mm_q, "[3, 2]")

header = [
    "#pragma once",
    "// GENERATED by tests/reference/gen_math_reference.py -- do not edit by hand; rerun the script instead:",
    "//   /usr/bin/python3 tests/reference/gen_math_reference.py",
    f"// (numpy {np.__version__}, scipy {__import__('scipy').__version__}). Inputs are float32-exact doubles;",
    "// expected values are numpy/scipy float64 results for those inputs (scipy.special for erf, expit, ndtr,",
    "// softmax, log_softmax). Shapes are given in the comments; arrays are row-major.",
    "#include <array>",
    "#include <cstddef>",
    "#include <cstdint>",
    "#include <limits>",
    "",
    "namespace ember::test::ref {",
    "",
    "inline constexpr double kInf = std::numeric_limits<double>::infinity();",
    "inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();",
]
footer = ["", "}  // namespace ember::test::ref", ""]
with open(OUT, "w") as f:
    f.write("\n".join(header + lines + footer))
print(f"wrote {OUT} ({len(lines)} lines)")
