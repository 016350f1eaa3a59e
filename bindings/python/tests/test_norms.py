"""GroupNorm, RMSNorm and ConvTranspose2d (ember.nn and ember.nn.functional) against PyTorch's values and gradients:
norms_expected.json, written by gen_norms_expected.py with Debian's python3-torch (RMSNorm: PyTorch 2.4's formula),
so the comparison runs where torch is not installed."""
import json
import os
import unittest

import _support  # noqa: F401
import ember
import ember.nn as nn
import ember.nn.functional as F

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "norms_expected.json")) as _f:
    E = json.load(_f)

# PyTorch's float32 tolerance for golden values (the references are float64 from float32-exact inputs).
TOL = 1e-4


def _flat(v):
    return [a for row in v for a in _flat(row)] if isinstance(v, list) else [v]


class NormsTest(unittest.TestCase):
    def close(self, got, want, what):
        g, w = _flat(got), _flat(want)
        self.assertEqual(len(g), len(w), what)
        for k, (a, b) in enumerate(zip(g, w)):
            self.assertLessEqual(abs(a - b), TOL, "%s[%d]: got %r, torch %r" % (what, k, a, b))

    def run_case(self, name, f):
        """f(*inputs) and its gradients for the case's gy, against torch's."""
        c = E[name]
        xs = [ember.tensor(v, requires_grad=True) for v in c["inputs"]]
        y = f(*xs)
        self.assertEqual(list(y.shape), c["shape"], name)
        self.close(y.tolist(), c["y"], name)
        y.backward(ember.tensor(c["gy"]))
        for i, (x, g) in enumerate(zip(xs, c["grads"])):
            self.close(x.grad.tolist(), g, "%s grad %d" % (name, i))

    def test_conv_transpose2d_stride_output_padding_groups_dilation(self):
        o = E["conv_transpose2d"]["options"]
        self.run_case("conv_transpose2d", lambda x, w, b: F.conv_transpose2d(
            x, w, b, stride=tuple(o["stride"]), padding=tuple(o["padding"]),
            output_padding=tuple(o["output_padding"]), groups=o["groups"], dilation=tuple(o["dilation"])))
        self.run_case("conv_transpose2d_plain", lambda x, w: F.conv_transpose2d(x, w))

    def test_conv_transpose2d_module_loads_torch_state_dict_and_output_size(self):
        c = E["conv_transpose2d"]
        o = c["options"]
        m = nn.ConvTranspose2d(4, 6, (2, 3), stride=tuple(o["stride"]), padding=tuple(o["padding"]),
                               output_padding=tuple(o["output_padding"]), groups=o["groups"],
                               dilation=tuple(o["dilation"]))
        self.assertEqual(list(m.weight.shape), [4, 3, 2, 3])  # torch's [in, out / groups, kH, kW]
        m.load_state_dict({"weight": ember.tensor(c["inputs"][1]), "bias": ember.tensor(c["inputs"][2])})
        x = ember.tensor(c["inputs"][0])
        self.close(m(x).tolist(), c["y"], "ConvTranspose2d")
        # output_size picks the output_padding (torch's rule); the configured one gives the same size here.
        self.close(m(x, output_size=c["shape"]).tolist(), c["y"], "ConvTranspose2d(output_size)")
        small = list(c["shape"])
        small[2] -= 1
        self.assertEqual(list(m(x, output_size=small[2:]).shape), small)
        with self.assertRaises(ValueError):
            m(x, output_size=[small[2] + 5, small[3]])
        with self.assertRaises(ember.errors.EmberError):
            F.conv_transpose2d(x, m.weight, None, stride=1, output_padding=1)  # not smaller than stride or dilation

    def test_conv_transpose2d_init_bounds_are_torchs(self):
        ember.manual_seed(0)
        m = nn.ConvTranspose2d(4, 6, 3, groups=2)
        bound = 1 / (3 * 9) ** 0.5  # fan_in = weight dim 1 * kH * kW
        self.assertLessEqual(max(abs(v) for v in _flat(m.weight.tolist())), bound)
        self.assertLessEqual(max(abs(v) for v in _flat(m.bias.tolist())), bound)
        self.assertIsNone(nn.ConvTranspose2d(2, 2, 1, bias=False).bias)

    def test_group_norm(self):
        self.run_case("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b, 1e-5))
        c = E["group_norm"]
        m = nn.GroupNorm(2, 4)
        self.assertEqual(_flat(m.weight.tolist()), [1.0] * 4)
        m.load_state_dict({"weight": ember.tensor(c["inputs"][1]), "bias": ember.tensor(c["inputs"][2])})
        self.close(m(ember.tensor(c["inputs"][0])).tolist(), c["y"], "GroupNorm")
        self.assertEqual(list(nn.GroupNorm(2, 4, affine=False).parameters()), [])
        with self.assertRaises(ValueError):
            nn.GroupNorm(3, 4)

    def test_rms_norm(self):
        self.run_case("rms_norm", lambda x, w: F.rms_norm(x, [5], w, 1e-6))
        self.run_case("rms_norm_2d", lambda x, w: F.rms_norm(x, (3, 4), w, 1e-5))
        c = E["rms_norm_2d"]
        m = nn.RMSNorm((3, 4), eps=1e-5)
        m.load_state_dict({"weight": ember.tensor(c["inputs"][1])})
        self.close(m(ember.tensor(c["inputs"][0])).tolist(), c["y"], "RMSNorm((3, 4))")
        # eps=None: float32's machine epsilon, which matters at this input's scale.
        d = E["rms_norm_default_eps"]
        self.close(nn.RMSNorm(4, elementwise_affine=False)(ember.tensor(d["x"])).tolist(), d["y"], "RMSNorm eps=None")
        with self.assertRaises(ember.errors.ShapeError):
            F.rms_norm(ember.tensor(d["x"]), 5)


if __name__ == "__main__":
    unittest.main()
