"""Forward values and gradients against expected_values.json (NumPy, written by gen_expected.py; no ember)."""
import json
import os
import unittest

import _support  # noqa: F401  (finds the package and the library)
import ember
import ember.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "expected_values.json")) as _f:
    EXPECTED = json.load(_f)["cases"]

# The ember forms of the cases in gen_expected.py, argument names as there.
FORMS = {
    "add_broadcast": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul_broadcast": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "scalar_ops": lambda x: (2.5 - x) * 3 + x / 4 - 1 + 3 / x,
    "pow_scalar": lambda x: x ** 3,
    "pow_tensor": lambda a, b: a.pow(b),
    "neg": lambda x: -x,
    "matmul": lambda a, b: a @ b,
    "matmul_batched": lambda a, b: a @ b,
    "exp": lambda x: x.exp(),
    "log": lambda x: x.log(),
    "abs": lambda x: x.abs(),
    "tanh": lambda x: F.tanh(x),
    "sigmoid": lambda x: F.sigmoid(x),
    "relu": lambda x: F.relu(x),
    "gelu": lambda x: F.gelu(x),
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "sum_dim": lambda x: x.sum(dim=1),
    "mean_keepdim": lambda x: x.mean(dim=0, keepdim=True),
    "sum_all": lambda x: x.sum(),
    "max_dim": lambda x: x.max(dim=1).values,
    "t_reshape_permute": lambda x: x.t().reshape(3, 2, 1).permute(2, 0, 1) * ember.arange(6).reshape(1, 3, 2),
    "softmax": lambda x: F.softmax(x, dim=1),
    "log_softmax": lambda x: F.log_softmax(x, dim=-1),
    "cross_entropy_mean": lambda x, t: F.cross_entropy(x, t),
    "cross_entropy_sum": lambda x, t: F.cross_entropy(x, t, reduction="sum"),
    "cross_entropy_none": lambda x, t: F.cross_entropy(x, t, reduction="none"),
    "mse_mean": lambda a, b: F.mse_loss(a, b),
    "mse_sum": lambda a, b: F.mse_loss(a, b, reduction="sum"),
    "linear": lambda x, w, b: F.linear(x, w, b),
    "conv2d_pad1": lambda x, w, b: F.conv2d(x, w, b, stride=1, padding=1),
    "conv2d_stride2": lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=0),
    "max_pool2d": lambda x: F.max_pool2d(x, 2),
    "layer_norm": lambda x, g, b: F.layer_norm(x, [5], g, b),
    "embedding": lambda i, w: F.embedding(i, w),
    "prelu": lambda x, w: F.prelu(x, w),
    "threshold": lambda x: F.threshold(x, 0.1, -1.0),
    "leaky_relu": lambda x: F.leaky_relu(x, 0.2),
}


def _flat(nested):
    if isinstance(nested, list):
        out = []
        for x in nested:
            out.extend(_flat(x))
        return out
    return [nested]


# Tolerances on |got - want| / (1 + |want|), ~4x and ~8x the worst errors measured over every case (f32 against
# NumPy's f64): forward 5.3e-7 (conv2d_pad1), gradients 6.3e-7 (conv2d_pad1 d/dw).
FORWARD_TOL = 2e-6
GRAD_TOL = 5e-6

# Cases whose output torch gives rank 0 (expected_values.json writes them as [1], what a libember without rank 0
# gives).
RANK0_OUTPUTS = {"sum_all", "mse_mean", "mse_sum", "cross_entropy_mean", "cross_entropy_sum"}


class ValuesTest(unittest.TestCase):
    def assertClose(self, got, want, tol, what):
        shape = want["shape"]
        if what.split(" ")[0] in RANK0_OUTPUTS and what.endswith(" forward"):
            shape = []
        self.assertEqual(list(got.shape), shape, what + ": shape")
        g = _flat(got.tolist()) if got.ndim else [got.item()]
        for k, (a, b) in enumerate(zip(g, want["data"])):
            if abs(a - b) > tol * (1 + abs(b)):
                self.fail("%s: element %d is %r, expected %r (tolerance %g)" % (what, k, a, b, tol))

    def test_every_case_has_a_form(self):
        self.assertEqual(sorted(FORMS), sorted(EXPECTED))


def _make(name):
    case = EXPECTED[name]

    def test(self):
        inputs = {}
        for k, e in case["inputs"].items():
            inputs[k] = ember.tensor(e["data"], shape=e["shape"], dtype=e["dtype"],
                                     requires_grad=e["dtype"] == "float32")
        out = FORMS[name](**inputs)
        self.assertClose(out, case["output"], FORWARD_TOL, name + " forward")
        seed = ember.tensor(case["seed"]["data"], shape=list(out.shape))
        out.backward(seed)
        for k, want in case["grads"].items():
            self.assertIsNotNone(inputs[k].grad, "%s: no gradient for %s" % (name, k))
            self.assertClose(inputs[k].grad, want, GRAD_TOL, "%s d/d%s" % (name, k))

    test.__name__ = "test_" + name
    return test


for _name in EXPECTED:
    setattr(ValuesTest, "test_" + _name, _make(_name))


if __name__ == "__main__":
    unittest.main()
