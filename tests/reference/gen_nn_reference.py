#!/usr/bin/python3
"""Generates tests/reference/nn_reference.hpp: inputs and expected outputs for tests/nn_test.cpp (ember::nn layers,
activations and losses), computed in float64 with NumPy/SciPy by writing PyTorch's documented formulas out directly
(torch is not needed, nor used):

    /usr/bin/python3 tests/reference/gen_nn_reference.py      # rewrites nn_reference.hpp next to this file

  * GELU: x * Phi(x) with scipy.special.erf; tanh form 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)));
  * PReLU: x if x >= 0 else w[c] x, channel dim 1; Threshold: x if x > threshold else value (x == threshold gives
    value); LeakyReLU, SiLU; Softplus: x where beta x > threshold, else logaddexp(0, beta x) / beta;
  * LayerNorm (biased variance), BatchNorm train (biased variance to normalize, unbiased into running_var,
    momentum 0.1) for two steps, then eval with the running statistics;
  * cross_entropy with label smoothing: (1 - s) nll + s / C * sum_c -log_softmax, log_softmax through
    scipy.special.logsumexp; BCE with logits as t logaddexp(0, -x) + (1 - t) logaddexp(0, x) (a different stable
    form from Ember's max(x, 0) - x t + log1p(exp(-|x|))); Huber; Linear (x W + b with W [in, out]).

Inputs are multiples of 1/16, exactly representable in float32.
"""
import os

import numpy as np
import scipy
import scipy.special

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "nn_reference.hpp")
rng = np.random.default_rng(20240611)
lines = []


def grid(shape, lo=-2.0, hi=2.0):
    """Random multiples of 1/16 in [lo, hi]."""
    return rng.integers(int(lo * 16), int(hi * 16) + 1, size=shape).astype(np.float64) / 16.0


def emit(name, arr, comment=None):
    arr = np.asarray(arr, dtype=np.float64)
    if comment:
        lines.append(f"// {comment}")
    if arr.ndim > 0:
        lines.append(f"inline constexpr std::array<int64_t, {arr.ndim}> {name}_shape = {{"
                     + ", ".join(str(s) for s in arr.shape) + "};")
    flat = arr.reshape(-1)
    body = []
    row = "   "
    for v in flat:
        s = " " + repr(float(v)) + ","
        if len(row) + len(s) > 116:
            body.append(row)
            row = "   "
        row += s
    body.append(row)
    lines.append(f"inline constexpr double {name}[] = {{")
    lines.extend(body)
    lines.append("};")


def emit_int(name, arr):
    arr = np.asarray(arr, dtype=np.int64).reshape(-1)
    lines.append(f"inline constexpr int64_t {name}[] = {{" + ", ".join(str(int(v)) for v in arr) + "};")


def section(title):
    lines.append("")
    lines.append(f"// ---------------------------------------------------------------- {title}")


# ----------------------------------------------------------------------------------------------- activations
section("activations")
act_x = np.concatenate([np.linspace(-4, 4, 17), grid((15,), -3, 3)])
emit("act_x", act_x, "shared input for the elementwise activations")
emit("gelu_exact", act_x * 0.5 * (1.0 + scipy.special.erf(act_x / np.sqrt(2.0))))
emit("gelu_tanh", 0.5 * act_x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (act_x + 0.044715 * act_x ** 3))))
emit("silu", act_x / (1.0 + np.exp(-act_x)))
emit("leaky_relu_0_2", np.where(act_x > 0, act_x, 0.2 * act_x), "LeakyReLU(negative_slope=0.2)")

# Threshold(0.5, -2): the input holds 0.5 exactly, and values just either side of it.
thr_x = np.array([0.5, 0.4375, 0.5625, -1.0, 3.0, 0.0, 0.5, 2.0])
emit("threshold_x", thr_x, "Threshold(threshold=0.5, value=-2)")
emit("threshold_y", np.where(thr_x > 0.5, thr_x, -2.0))

# PReLU per channel: x [2, 3, 4], weight [3].
prelu_x = grid((2, 3, 4))
prelu_w = np.array([0.25, -0.5, 1.5])
emit("prelu_x", prelu_x, "PReLU(num_parameters=3): channel dim 1")
emit("prelu_w", prelu_w)
emit("prelu_y", np.where(prelu_x >= 0, prelu_x, prelu_w[None, :, None] * prelu_x))


def softplus(x, beta, threshold):
    return np.where(beta * x > threshold, x, np.logaddexp(0.0, beta * x) / beta)


# beta 2, threshold 5: beta x = 5 exactly stays on the soft branch, 5.125 switches to x.
sp_x = np.array([2.5, 2.5625, 2.4375, -3.0, 0.0, 1.0, 10.0, -10.0])
emit("softplus_b2_t5_x", sp_x, "Softplus(beta=2, threshold=5)")
emit("softplus_b2_t5_y", softplus(sp_x, 2.0, 5.0))
sp_dx = np.array([19.5, 20.0, 20.5, 30.0, -30.0, 0.0, -1.0, 1.0])
emit("softplus_default_x", sp_dx, "Softplus() (beta=1, threshold=20)")
emit("softplus_default_y", softplus(sp_dx, 1.0, 20.0))

sm_x = grid((2, 5), -3, 3)
emit("softmax_x", sm_x, "Softmax(dim=1) / LogSoftmax(dim=1)")
emit("log_softmax_y", sm_x - scipy.special.logsumexp(sm_x, axis=1, keepdims=True))
emit("softmax_y", scipy.special.softmax(sm_x, axis=1))

# ----------------------------------------------------------------------------------------------- layers
section("layers")
lin_x = grid((2, 3, 4))
lin_w = grid((4, 5), -1, 1)
lin_b = grid((5,), -1, 1)
emit("linear_x", lin_x, "Linear(4, 5): x [2, 3, 4], weight [in=4, out=5], bias [5]")
emit("linear_w", lin_w)
emit("linear_b", lin_b)
emit("linear_y", lin_x @ lin_w + lin_b)

ln_x = grid((2, 3, 5))
ln_g = grid((5,), 0.5, 1.5)
ln_b = grid((5,), -0.5, 0.5)
mu = ln_x.mean(-1, keepdims=True)
var = ((ln_x - mu) ** 2).mean(-1, keepdims=True)
emit("layer_norm_x", ln_x, "LayerNorm(5, eps=1e-5): x [2, 3, 5]")
emit("layer_norm_gamma", ln_g)
emit("layer_norm_beta", ln_b)
emit("layer_norm_y", (ln_x - mu) / np.sqrt(var + 1e-5) * ln_g + ln_b)


class BatchNormRef:
    def __init__(self, c, momentum=0.1, eps=1e-5):
        self.rm, self.rv = np.zeros(c), np.ones(c)
        self.momentum, self.eps = momentum, eps

    def bshape(self, x, v):
        s = [1] * x.ndim
        s[1] = -1
        return v.reshape(s)

    def train(self, x, g, b):
        axes = tuple(i for i in range(x.ndim) if i != 1)
        n = x.size // x.shape[1]
        mean = x.mean(axis=axes)
        var_b = x.var(axis=axes)  # ddof 0: normalization
        var_u = x.var(axis=axes, ddof=1)  # ddof 1: running statistic
        y = (x - self.bshape(x, mean)) / np.sqrt(self.bshape(x, var_b) + self.eps) * self.bshape(x, g) \
            + self.bshape(x, b)
        assert np.allclose(var_u, var_b * n / (n - 1))
        self.rm = (1 - self.momentum) * self.rm + self.momentum * mean
        self.rv = (1 - self.momentum) * self.rv + self.momentum * var_u
        return y

    def eval(self, x, g, b):
        return (x - self.bshape(x, self.rm)) / np.sqrt(self.bshape(x, self.rv) + self.eps) * self.bshape(x, g) \
            + self.bshape(x, b)


def batch_norm_case(prefix, shape, eval_shape, comment):
    c = shape[1]
    bn = BatchNormRef(c)
    g = grid((c,), 0.5, 1.5)
    b = grid((c,), -0.5, 0.5)
    x1, x2, x3 = grid(shape), grid(shape, -1, 3), grid(eval_shape)
    emit(f"{prefix}_gamma", g, comment)
    emit(f"{prefix}_beta", b)
    emit(f"{prefix}_x1", x1)
    emit(f"{prefix}_y1", bn.train(x1, g, b))
    emit(f"{prefix}_rm1", bn.rm)
    emit(f"{prefix}_rv1", bn.rv)
    emit(f"{prefix}_x2", x2)
    emit(f"{prefix}_y2", bn.train(x2, g, b))
    emit(f"{prefix}_rm2", bn.rm)
    emit(f"{prefix}_rv2", bn.rv)
    emit(f"{prefix}_x3", x3)
    emit(f"{prefix}_y3", bn.eval(x3, g, b))


batch_norm_case("bn2d", (2, 3, 2, 3), (1, 3, 2, 3),
                "BatchNorm2d(3): train on x1, train on x2 (running stats after each), eval on x3")
batch_norm_case("bn1d", (4, 3), (2, 3), "BatchNorm1d(3) on [N, C]: same protocol")
batch_norm_case("bn1d_ncl", (2, 3, 4), (1, 3, 4), "BatchNorm1d(3) on [N, C, L]: same protocol")

# ----------------------------------------------------------------------------------------------- losses
section("losses")
ce_x = grid((4, 5), -3, 3)
ce_x[3] += 1000.0  # a row of huge logits: must stay finite (log_softmax is shifted)
ce_t = np.array([1, 0, 4, 2])
logp = ce_x - scipy.special.logsumexp(ce_x, axis=1, keepdims=True)
nll = -logp[np.arange(4), ce_t]
emit("ce_logits", ce_x, "cross_entropy: logits [4, 5] (row 3 shifted by +1000), targets [4]")
emit_int("ce_targets", ce_t)
emit("ce_logp", logp, "log_softmax(logits, 1), the input of nll_loss")
for s in (0.0, 0.1, 0.25):
    per = (1 - s) * nll + s / 5.0 * (-logp.sum(axis=1))
    tag = str(s).replace(".", "_")
    emit(f"ce_mean_ls{tag}", [per.mean()], f"label_smoothing={s}, mean")
    emit(f"ce_sum_ls{tag}", [per.sum()], f"label_smoothing={s}, sum")
emit("nll_mean", [nll.mean()], "nll_loss(ce_logp, ce_targets), mean")

bce_x = np.array([-1000.0, -100.0, -30.0, -5.0, -1.0, 0.0, 0.5, 3.0, 30.0, 100.0, 1000.0, 40.0])
bce_t = np.array([0.0, 1.0, 0.0, 1.0, 0.25, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.75])
bce = bce_t * np.logaddexp(0.0, -bce_x) + (1 - bce_t) * np.logaddexp(0.0, bce_x)
emit("bce_x", bce_x, "binary_cross_entropy_with_logits: per element and mean (large |x| included)")
emit("bce_t", bce_t)
emit("bce_per", bce)
emit("bce_mean", [bce.mean()])

hub_x = grid((3, 4), -3, 3)
hub_t = grid((3, 4), -1, 1)


def huber(d, delta):
    a = np.abs(d)
    return np.where(a <= delta, 0.5 * d * d, delta * (a - 0.5 * delta))


emit("huber_x", hub_x, "huber_loss(x, t, delta), mean")
emit("huber_t", hub_t)
emit("huber_d1", [huber(hub_x - hub_t, 1.0).mean()])
emit("huber_d0_5", [huber(hub_x - hub_t, 0.5).mean()])
emit("huber_d2_sum", [huber(hub_x - hub_t, 2.0).sum()], "delta 2, sum")
emit("mse_mean", [((hub_x - hub_t) ** 2).mean()], "mse_loss(huber_x, huber_t), mean")

header = [
    "#pragma once",
    "// GENERATED by tests/reference/gen_nn_reference.py -- do not edit by hand. Regenerate with",
    "//   /usr/bin/python3 tests/reference/gen_nn_reference.py",
    "// Expected values for tests/nn_test.cpp (ember::nn), computed in float64 with NumPy/SciPy from PyTorch's",
    "// formulas (see the generator's docstring). Inputs are multiples of 1/16 (exact in float32). Row-major.",
    f"// numpy {np.__version__}, scipy {scipy.__version__}.",
    "#include <array>",
    "#include <cstdint>",
    "",
    "namespace ember::test::nnref {",
]
with open(OUT, "w") as f:
    f.write("\n".join(header + lines + ["", "}  // namespace ember::test::nnref", ""]))
print(f"wrote {OUT} ({len(lines)} lines)")
