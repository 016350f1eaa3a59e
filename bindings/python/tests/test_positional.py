"""ember.nn.RotaryEmbedding / ember.nn.functional.rotary_embedding (over the C function
ember_tensor_rotary_embedding) and ember.nn.LearnedPositionalEmbedding against PyTorch 1.13 golden values computed by
the formula (positional_expected.json, written by tests/reference/gen_positional_reference.py): forward and
gradients within 1e-12 in float64 and 1e-4 in float32, plus the argument errors."""
import json
import os
import unittest

import _support  # noqa: F401
import ember
import ember.nn as nn
import ember.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "positional_expected.json")) as f:
    EXPECTED = json.load(f)

TOLERANCES = (("float64", 1e-12), ("float32", 1e-4))


def flat(t):
    return t.reshape(-1).tolist()


class Golden(unittest.TestCase):
    def assert_close(self, got, want, tol, what):
        self.assertEqual(len(got), len(want), what)
        for i, (g, w) in enumerate(zip(got, want)):
            self.assertLessEqual(abs(g - w), tol * max(1.0, abs(w)), "%s[%d]: %r, torch %r" % (what, i, g, w))

    def test_rotary_embedding_module_and_function(self):
        for c in EXPECTED["rope"]:
            for dtype, tol in TOLERANCES:
                for how in ("module", "function"):
                    with self.subTest(case=c["name"], dtype=dtype, how=how):
                        x = ember.tensor(c["x"], dtype=dtype).reshape(*c["shape"]).requires_grad_()
                        if how == "module":
                            out = nn.RotaryEmbedding(c["dim"], base=c["base"])(x, offset=c["offset"])
                        else:
                            out = F.rotary_embedding(x, c["dim"], c["base"], c["offset"])
                        self.assertEqual(list(out.shape), c["shape"])
                        self.assertEqual(out.dtype, dtype)
                        self.assert_close(flat(out), c["out"], tol, "out")
                        (out * ember.tensor(c["w"], dtype=dtype).reshape(*c["shape"])).sum().backward()
                        self.assert_close(flat(x.grad), c["dx"], tol, "dx")

    def test_learned_positional_embedding(self):
        for c in EXPECTED["learned"]:
            for dtype, tol in TOLERANCES:
                with self.subTest(case=c["name"], dtype=dtype):
                    shape = [c["N"], c["T"], c["d_model"]] if c["batch_first"] else [c["T"], c["N"], c["d_model"]]
                    m = nn.LearnedPositionalEmbedding(c["max_len"], c["d_model"], batch_first=c["batch_first"],
                                                      dtype=dtype)
                    self.assertEqual(sorted(m.state_dict()), ["weight"])
                    m.load_state_dict({"weight": ember.tensor(c["weight"], dtype=dtype)
                                       .reshape(c["max_len"], c["d_model"])})
                    x = ember.tensor(c["x"], dtype=dtype).reshape(*shape).requires_grad_()
                    out = m(x, offset=c["offset"])
                    self.assert_close(flat(out), c["out"], tol, "out")
                    (out * ember.tensor(c["w"], dtype=dtype).reshape(*shape)).sum().backward()
                    self.assert_close(flat(x.grad), c["dx"], tol, "dx")
                    self.assert_close(flat(m.weight.grad), c["dweight"], tol, "dweight")


class Errors(unittest.TestCase):
    def test_rotary_arguments(self):
        x = ember.zeros(2, 3, 4)
        with self.assertRaises(ValueError):
            nn.RotaryEmbedding(3)
        with self.assertRaises(ValueError):
            nn.RotaryEmbedding(6)(x)  # dim > head dim
        with self.assertRaises(ValueError):
            F.rotary_embedding(x, 4, offset=-1)
        with self.assertRaises(ValueError):
            F.rotary_embedding(ember.zeros(4), 2)
        with self.assertRaises(ember.errors.EmberError):  # the C function's own check
            F.rotary_embedding(x, 4, base=0.0)
        with self.assertRaises(ember.errors.DTypeError):
            F.rotary_embedding(ember.zeros(2, 4, dtype="int64"), 2)

    def test_learned_arguments(self):
        m = nn.LearnedPositionalEmbedding(4, 3)
        self.assertEqual(list(m.weight.shape), [4, 3])
        with self.assertRaises(IndexError):
            m(ember.zeros(3, 1, 3), offset=2)
        with self.assertRaises(ValueError):
            m(ember.zeros(3, 1, 5))
        with self.assertRaises(ValueError):
            nn.LearnedPositionalEmbedding(0, 3)


if __name__ == "__main__":
    unittest.main()
