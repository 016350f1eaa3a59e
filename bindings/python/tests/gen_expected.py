#!/usr/bin/env python3
"""Writes expected_values.json: forward values and gradients computed with NumPy alone (no ember).

    /usr/bin/python3 bindings/python/tests/gen_expected.py      (needs python3-numpy)

Each case has float32 inputs (drawn from a fixed-seed NumPy generator, rounded to float32 so both sides see the same
numbers), an upstream gradient `seed` of the output's shape, the forward output computed in float64, and the
gradient of sum(output * seed) with respect to each float input, by central finite differences of the same float64
NumPy forward (step 1e-6; inputs are drawn away from kinks such as relu's 0 and max-pool ties). test_values.py
runs the same cases through ember and compares. Re-run after adding a case; the file is checked in.
"""
import json
import math
import os

import numpy as np

rng = np.random.default_rng(20240611)
erf = np.vectorize(math.erf)


def arr(*shape, lo=-2.0, hi=2.0, away=0.0):
    """float32-representable float64 values in [lo, hi), at least `away` from 0."""
    a = rng.uniform(lo, hi, size=shape)
    if away:
        a = np.where(np.abs(a) < away, np.sign(a + 1e-12) * away + a, a)
    return a.astype(np.float32).astype(np.float64)


def ints(hi, *shape):
    return rng.integers(0, hi, size=shape).astype(np.int64)


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def gelu(x):
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def conv2d(x, w, b, stride, pad):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = np.einsum("nckl,ockl->no", patch, w)
    return out + b.reshape(1, -1, 1, 1)


def max_pool2d(x, k):
    n, c, h, w = x.shape
    return x.reshape(n, c, h // k, k, w // k, k).max(axis=(3, 5))


def layer_norm(x, g, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def cross_entropy(logits, t, reduction):
    nll = -log_softmax(logits, 1)[np.arange(len(t)), t]
    return {"mean": nll.mean(), "sum": nll.sum(), "none": nll}[reduction]  # reduced: rank 0, as PyTorch


# name -> (inputs, numpy forward). Names match the ember forms in test_values.py.
CASES = {
    "add_broadcast": ({"a": arr(2, 3), "b": arr(3)}, lambda a, b: a + b),
    "sub": ({"a": arr(2, 3), "b": arr(2, 3)}, lambda a, b: a - b),
    "mul_broadcast": ({"a": arr(2, 1, 3), "b": arr(4, 3)}, lambda a, b: a * b),
    "div": ({"a": arr(2, 3), "b": arr(2, 3, lo=0.5, hi=2.0)}, lambda a, b: a / b),
    "scalar_ops": ({"x": arr(3, 2, lo=0.5, hi=2.0)}, lambda x: (2.5 - x) * 3 + x / 4 - 1 + 3 / x),
    "pow_scalar": ({"x": arr(5, lo=0.5, hi=2.0)}, lambda x: x ** 3),
    "pow_tensor": ({"a": arr(4, lo=0.5, hi=2.0), "b": arr(4)}, lambda a, b: a ** b),
    "neg": ({"x": arr(4)}, lambda x: -x),
    "matmul": ({"a": arr(3, 4), "b": arr(4, 5)}, lambda a, b: a @ b),
    "matmul_batched": ({"a": arr(2, 3, 4), "b": arr(4, 2)}, lambda a, b: a @ b),
    "exp": ({"x": arr(2, 3)}, lambda x: np.exp(x)),
    "log": ({"x": arr(2, 3, lo=0.2, hi=3.0)}, lambda x: np.log(x)),
    "abs": ({"x": arr(6, away=0.05)}, lambda x: np.abs(x)),
    "tanh": ({"x": arr(2, 3)}, lambda x: np.tanh(x)),
    "sigmoid": ({"x": arr(2, 3)}, lambda x: 1 / (1 + np.exp(-x))),
    "relu": ({"x": arr(3, 4, away=0.05)}, lambda x: np.maximum(x, 0)),
    "gelu": ({"x": arr(3, 4)}, lambda x: gelu(x)),
    "gelu_tanh": ({"x": arr(3, 4)}, lambda x: gelu_tanh(x)),
    "sum_dim": ({"x": arr(3, 4)}, lambda x: x.sum(axis=1)),
    "mean_keepdim": ({"x": arr(3, 4)}, lambda x: x.mean(axis=0, keepdims=True)),
    "sum_all": ({"x": arr(3, 4)}, lambda x: x.sum()),
    "max_dim": ({"x": arr(3, 4)}, lambda x: x.max(axis=1)),
    "t_reshape_permute": ({"x": arr(2, 3)},
                          lambda x: (x.T.reshape(3, 2, 1).transpose(2, 0, 1) * np.arange(6).reshape(1, 3, 2))),
    "softmax": ({"x": arr(3, 5)}, lambda x: softmax(x, 1)),
    "log_softmax": ({"x": arr(3, 5)}, lambda x: log_softmax(x, -1)),
    "cross_entropy_mean": ({"x": arr(4, 5), "t": ints(5, 4)}, lambda x, t: cross_entropy(x, t, "mean")),
    "cross_entropy_sum": ({"x": arr(4, 5), "t": ints(5, 4)}, lambda x, t: cross_entropy(x, t, "sum")),
    "cross_entropy_none": ({"x": arr(4, 5), "t": ints(5, 4)}, lambda x, t: cross_entropy(x, t, "none")),
    "mse_mean": ({"a": arr(3, 4), "b": arr(3, 4)}, lambda a, b: ((a - b) ** 2).mean()),
    "mse_sum": ({"a": arr(3, 4), "b": arr(3, 4)}, lambda a, b: ((a - b) ** 2).sum()),
    "linear": ({"x": arr(3, 4), "w": arr(5, 4), "b": arr(5)}, lambda x, w, b: x @ w.T + b),
    "conv2d_pad1": ({"x": arr(2, 3, 6, 6), "w": arr(4, 3, 3, 3), "b": arr(4)},
                    lambda x, w, b: conv2d(x, w, b, 1, 1)),
    "conv2d_stride2": ({"x": arr(1, 2, 7, 7), "w": arr(3, 2, 3, 3), "b": arr(3)},
                       lambda x, w, b: conv2d(x, w, b, 2, 0)),
    "max_pool2d": ({"x": arr(2, 2, 4, 4)}, lambda x: max_pool2d(x, 2)),
    "layer_norm": ({"x": arr(3, 5), "g": arr(5), "b": arr(5)}, lambda x, g, b: layer_norm(x, g, b)),
    "embedding": ({"i": ints(7, 2, 3), "w": arr(7, 4)}, lambda i, w: w[i]),
    "prelu": ({"x": arr(2, 3, 4, away=0.05), "w": arr(3, lo=0.1, hi=0.5)},
              lambda x, w: np.maximum(x, 0) + w.reshape(3, 1) * np.minimum(x, 0)),
    "threshold": ({"x": arr(3, 4, away=0.05)}, lambda x: np.where(x > 0.1, x, -1.0)),
    "leaky_relu": ({"x": arr(3, 4, away=0.05)}, lambda x: np.where(x > 0, x, 0.2 * x)),
}


def finite_difference(fn, inputs, name, seed, h=1e-6):
    x = inputs[name]
    grad = np.zeros_like(x)
    flat = x.reshape(-1)
    for k in range(flat.size):
        saved = flat[k]
        flat[k] = saved + h
        up = (fn(**inputs) * seed).sum()
        flat[k] = saved - h
        down = (fn(**inputs) * seed).sum()
        flat[k] = saved
        grad.reshape(-1)[k] = (up - down) / (2 * h)
    return grad


def encode(a):
    return {"shape": list(a.shape), "data": a.reshape(-1).tolist(),
            "dtype": "int64" if a.dtype.kind == "i" else "float32"}


def main():
    out = {"generator": "gen_expected.py, NumPy %s, float64 forward, central differences h=1e-6" % np.__version__,
           "cases": {}}
    for name, (inputs, fn) in CASES.items():
        y = np.asarray(fn(**inputs), dtype=np.float64)
        seed = arr(*y.shape, lo=-1.0, hi=1.0)
        grads = {k: encode(finite_difference(fn, inputs, k, seed)) for k, v in inputs.items() if v.dtype.kind == "f"}
        out["cases"][name] = {"inputs": {k: encode(v) for k, v in inputs.items()}, "seed": encode(seed),
                              "output": encode(y), "grads": grads}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "expected_values.json")
    with open(path, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print("wrote %d cases to %s" % (len(CASES), path))


if __name__ == "__main__":
    main()
