"""ember.nn.functional.scaled_dot_product_attention (issue 13): values and gradients against torch 1.13
(sdpa_expected.json, made by gen_sdpa_expected.py) with a bool mask and with causal attention on rank-3 inputs,
fully masked rows giving 0, and the argument checks."""
import json
import math
import os
import unittest

import _support  # noqa: F401
import ember
import ember.nn.functional as EF

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "sdpa_expected.json")) as _f:
    EXPECTED = json.load(_f)


def flat(t):
    return t.reshape(-1).tolist()


class SdpaTest(unittest.TestCase):
    def assert_close(self, got, want, tol=1e-4):
        self.assertEqual(len(got), len(want))
        for i, (g, w) in enumerate(zip(got, want)):
            self.assertAlmostEqual(g, w, delta=tol * max(1.0, abs(w)), msg="element %d" % i)

    def test_against_torch(self):
        for c in EXPECTED["cases"]:
            with self.subTest(c["name"]):
                q = ember.tensor(c["q"]).reshape(*c["q_shape"]).requires_grad_()
                k = ember.tensor(c["k"]).reshape(*c["k_shape"]).requires_grad_()
                v = ember.tensor(c["v"]).reshape(*c["v_shape"]).requires_grad_()
                mask = ember.tensor(c["mask"]) if c["mask"] is not None else None
                out = EF.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=c["causal"],
                                                      scale=c["scale"])
                self.assertEqual(list(out.shape), c["q_shape"][:-1] + [c["v_shape"][-1]])
                self.assert_close(flat(out), c["out"])
                (out * ember.tensor(c["w"]).reshape(*out.shape)).sum().backward()
                self.assert_close(flat(q.grad), c["dq"])
                self.assert_close(flat(k.grad), c["dk"])
                self.assert_close(flat(v.grad), c["dv"])

    def test_fully_masked_row_is_zero(self):
        q = ember.tensor([[[[0.5, -1.0], [1.0, 2.0]]]])
        mask = ember.tensor([[True, True, False], [False, False, False]])
        k = ember.tensor([[[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]]])
        out = EF.scaled_dot_product_attention(q, k, k, attn_mask=mask)
        rows = out.tolist()[0][0]
        self.assertEqual(rows[1], [0.0, 0.0])
        self.assertTrue(all(math.isfinite(x) for x in rows[0]))

    def test_arguments_are_checked(self):
        q = ember.tensor([[[1.0, 2.0]]])
        with self.assertRaises(ValueError):
            EF.scaled_dot_product_attention(q, q, q, dropout_p=0.1)
        with self.assertRaises(ember.errors.EmberError):
            EF.scaled_dot_product_attention(q, ember.tensor([[[1.0, 2.0, 3.0]]]), q)


if __name__ == "__main__":
    unittest.main()
