#!/usr/bin/python3
"""Writes tests/reference/fft_reference.hpp: inputs and expected outputs for tests/ops/fft_test.cpp.

    /usr/bin/python3 tests/reference/gen_fft_reference.py      # rewrites fft_reference.hpp next to this file

Expected values are numpy.fft (pocketfft) results in float64, each cross-checked against a direct O(n^2) DFT-matrix
product, with NumPy's default ("backward") norm: fft / rfft unscaled, ifft / irfft scaled by 1/n. Complex values
are stored as a trailing dim of size 2 (re, im), the layout of Ember's fft ops. irfft inputs have nonzero imaginary
parts in bin 0 and (even n) bin n/2, which irfft must ignore, as numpy does.

Inputs are uniform in [-1, 1) rounded to float32, so the same input is exact on f32 and f64 backends.
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fft_reference.hpp")
SIZES = [1, 2, 5, 8, 13, 64, 97, 128]  # 13 and 97 are primes (kissfft's generic butterfly, VkFFT's Bluestein)

rng = np.random.default_rng(20261122)
lines = []
cases = []  # (name, op, n, input array, expected array)


def f32_uniform(shape):
    return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32).astype(np.float64)


def to_pairs(z):
    return np.stack([z.real, z.imag], axis=-1)


def from_pairs(a):
    return a[..., 0] + 1j * a[..., 1]


def dft_matrix(n, inverse):
    j = np.arange(n)
    sign = 1.0 if inverse else -1.0
    return np.exp(sign * 2j * np.pi * np.outer(j, j) / n)


def direct(op, x, n):
    """The same transforms as explicit DFT-matrix products over the last (signal) axis."""
    if op == "fft":
        return from_pairs(x) @ dft_matrix(n, False).T
    if op == "ifft":
        return from_pairs(x) @ dft_matrix(n, True).T / n
    if op == "rfft":
        return (x @ dft_matrix(n, False).T)[..., : n // 2 + 1]
    # irfft: rebuild the Hermitian spectrum; bin 0 and (even n) bin n/2 are real.
    z = from_pairs(x).copy()
    z[..., 0] = z[..., 0].real
    if n % 2 == 0:
        z[..., n // 2] = z[..., n // 2].real
    full = np.concatenate([z, np.conj(z[..., 1:(n + 1) // 2][..., ::-1])], axis=-1)
    assert full.shape[-1] == n
    return (full @ dft_matrix(n, True).T / n).real


def reference(op, x, n):
    if op == "fft":
        y = np.fft.fft(from_pairs(x), axis=-1)
    elif op == "ifft":
        y = np.fft.ifft(from_pairs(x), axis=-1)
    elif op == "rfft":
        y = np.fft.rfft(x, axis=-1)
    else:
        y = np.fft.irfft(from_pairs(x), n=n, axis=-1)
    d = direct(op, x, n)
    assert np.allclose(y, d, rtol=0, atol=1e-10 * max(1.0, np.abs(d).max())), f"{op} n={n}: numpy != direct DFT"
    return to_pairs(y) if np.iscomplexobj(y) else y


def add_case(name, op, n, x):
    cases.append((name, op, n, x, reference(op, x, n)))


def complex_input(batch, n):
    return f32_uniform((*batch, n, 2))


def spectrum_input(batch, n):
    # m = n/2 + 1 bins with random imaginary parts everywhere, including the bins irfft must treat as real.
    return f32_uniform((*batch, n // 2 + 1, 2))


# One signal of each size, per op.
for n in SIZES:
    add_case(f"fft_n{n}", "fft", n, complex_input((), n))
    add_case(f"ifft_n{n}", "ifft", n, complex_input((), n))
    add_case(f"rfft_n{n}", "rfft", n, f32_uniform((n,)))
    add_case(f"irfft_n{n}", "irfft", n, spectrum_input((), n))
# Odd irfft lengths whose default (2*(m-1)) would be even: the caller passes n.
for n in [3, 7, 9]:
    add_case(f"irfft_n{n}", "irfft", n, spectrum_input((), n))
# Batches: every leading dim is an independent signal.
add_case("fft_batch_4x6", "fft", 6, complex_input((4,), 6))
add_case("fft_batch_2x3x13", "fft", 13, complex_input((2, 3), 13))
add_case("ifft_batch_3x10", "ifft", 10, complex_input((3,), 10))
add_case("ifft_batch_2x2x7", "ifft", 7, complex_input((2, 2), 7))
add_case("rfft_batch_3x16", "rfft", 16, f32_uniform((3, 16)))
add_case("rfft_batch_2x3x9", "rfft", 9, f32_uniform((2, 3, 9)))
add_case("irfft_batch_3x12", "irfft", 12, spectrum_input((3,), 12))
add_case("irfft_batch_2x2x11", "irfft", 11, spectrum_input((2, 2), 11))


def literal_list(values):
    body, row = [], "   "
    for v in (repr(float(v)) for v in np.asarray(values).ravel()):
        if len(row) + len(v) + 2 > 118:
            body.append(row)
            row = "   "
        row += " " + v + ","
    body.append(row)
    return body


def emit_array(name, values, ctype="double"):
    if ctype == "double":
        lines.append(f"inline constexpr double {name}[] = {{")
        lines.extend(literal_list(values))
        lines.append("};")
    else:
        lines.append(f"inline constexpr int64_t {name}[] = {{" + ", ".join(str(int(v)) for v in values) + "};")


for name, op, n, x, y in cases:
    lines.append(f"// {name}: {op} of {list(x.shape)} -> {list(y.shape)}, n = {n}")
    emit_array(f"{name}_in_shape", x.shape, "int64_t")
    emit_array(f"{name}_out_shape", y.shape, "int64_t")
    emit_array(f"{name}_in", x)
    emit_array(f"{name}_out", y)
    lines.append("")

lines.append("// Every case above, for the tests to loop over.")
lines.append("inline constexpr FftCase fft_cases[] = {")
for name, op, n, _, _ in cases:
    lines.append(f'    {{"{name}", "{op}", {n}, {name}_in_shape, {name}_in,')
    lines.append(f'     {name}_out_shape, {name}_out}},')
lines.append("};")

header = [
    "#pragma once",
    "// GENERATED by tests/reference/gen_fft_reference.py -- do not edit by hand; rerun the script instead:",
    "//   /usr/bin/python3 tests/reference/gen_fft_reference.py",
    f"// (numpy {np.__version__}). numpy.fft float64 results, cross-checked against direct DFT-matrix products, for",
    "// float32-exact inputs. Complex values are a trailing dim of 2 (re, im); arrays are row-major.",
    "#include <cstdint>",
    "#include <span>",
    "",
    "namespace ember::test::ref {",
    "",
    "// One transform: op is \"fft\", \"ifft\", \"rfft\" or \"irfft\"; n is the signal length (irfft: the output's).",
    "struct FftCase {",
    "  const char* name;",
    "  const char* op;",
    "  int64_t n;",
    "  std::span<const int64_t> in_shape;",
    "  std::span<const double> in;",
    "  std::span<const int64_t> out_shape;",
    "  std::span<const double> out;",
    "};",
    "",
]

with open(OUT, "w") as f:
    f.write("\n".join(header + lines + ["", "}  // namespace ember::test::ref", ""]))
print(f"wrote {OUT} ({len(cases)} cases)")
