"""ember.nn.MultiheadAttention, TransformerEncoder (2 layers, post- and pre-norm) and TransformerDecoderLayer against
PyTorch 1.13 (transformer_expected.json, written by gen_transformer_expected.py): the torch state_dict loads with
load_state_dict (same keys and layouts), forward values and every gradient within 1e-5 in float64 and 1e-4 in
float32. Plus RotaryEmbedding's defining property and the argument errors torch raises."""
import json
import math
import os
import unittest

import _support  # noqa: F401
import ember
import ember.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "transformer_expected.json")) as f:
    EXPECTED = json.load(f)["cases"]


def tensor(entry, dtype):
    if entry["dtype"] == "bool":
        return ember.tensor(entry["values"], dtype="bool").reshape(entry["shape"])
    return ember.tensor(entry["values"], dtype=dtype).reshape(entry["shape"])


def build(c):
    a = dict(c["args"])
    if c["kind"] == "mha":
        return nn.MultiheadAttention(**a)
    if c["kind"] == "encoder":
        num_layers, final_norm = a.pop("num_layers"), a.pop("final_norm")
        layer = nn.TransformerEncoderLayer(**a)
        return nn.TransformerEncoder(layer, num_layers, norm=nn.LayerNorm(a["d_model"]) if final_norm else None)
    return nn.TransformerDecoderLayer(**a)


def run(c, m, x):
    """(out, weights or None), called as the generator called torch."""
    if c["kind"] == "mha":
        kw = {"key_padding_mask": x.get("key_padding_mask"), "attn_mask": x.get("attn_mask")}
        if c["args"].get("kdim"):
            return m(x["query"], x["key"], x["value"], average_attn_weights=False, **kw)
        return m(x["query"], x["key"], x["value"], need_weights="weights" in c, **kw)
    if c["kind"] == "encoder":
        return m(x["src"], mask=x["mask"], src_key_padding_mask=x["src_key_padding_mask"]), None
    return m(x["tgt"], x["memory"], tgt_mask=x["tgt_mask"],
             memory_key_padding_mask=x["memory_key_padding_mask"]), None


class TorchGolden(unittest.TestCase):
    def check(self, got, entry, tol, what):
        self.assertEqual(list(got.shape), entry["shape"], what)
        for i, (g, w) in enumerate(zip(got.reshape(-1).tolist(), entry["values"])):
            self.assertLessEqual(abs(g - w), tol * max(1.0, abs(w)), "%s[%d]: %r, torch %r" % (what, i, g, w))

    def run_case(self, name, dtype, tol):
        c = EXPECTED[name]
        m = build(c)
        if dtype == "float64":
            m = m.double()
        m.load_state_dict({k: tensor(v, dtype) for k, v in c["state"].items()})
        x = {k: tensor(v, dtype) for k, v in c["inputs"].items()}
        for k in c["grads"]:
            if k in x:
                x[k].requires_grad_(True)
        out, weights = run(c, m, x)
        self.check(out, c["out"], tol, name + " out")
        loss = (out * tensor(c["loss_out"], dtype)).sum()
        if "weights" in c:
            self.assertIsNotNone(weights)
            self.check(weights, c["weights"], tol, name + " weights")
            loss = loss + (weights * tensor(c["loss_weights"], dtype)).sum()
        else:
            self.assertIsNone(weights)
        loss.backward()
        params = dict(m.named_parameters())
        for k, want in c["grads"].items():
            got = x[k].grad if k in x else params[k].grad
            self.assertIsNotNone(got, k)
            self.check(got, want, tol, "%s grad %s" % (name, k))

    def test_every_case_f64_and_f32(self):
        for name in sorted(EXPECTED):
            for dtype, tol in (("float64", 1e-5), ("float32", 1e-4)):
                with self.subTest(case=name, dtype=dtype):
                    self.run_case(name, dtype, tol)

    def test_state_dict_keys_are_torchs(self):
        for name, c in EXPECTED.items():
            self.assertEqual(sorted(build(c).state_dict()), sorted(c["state"]), name)


class Behaviour(unittest.TestCase):
    def test_rotary_scores_depend_on_relative_position_only(self):
        rope = nn.RotaryEmbedding(8, base=100.0)
        q = ember.randn(1, 1, 1, 8).double()
        k = ember.randn(1, 1, 1, 8).double()

        def score(m, n):
            return (rope(q, offset=m) * rope(k, offset=n)).sum().item()
        self.assertAlmostEqual(score(5, 2), score(12, 9), places=9)
        self.assertAlmostEqual(score(0, 0), (q * k).sum().item(), places=12)
        self.assertGreater(abs(score(5, 2) - score(2, 5)), 1e-6)

    def test_rotary_rotates_half_pairs(self):
        # one feature pair (x1, x2) = (1, 0) at position 1 with dim 2: theta_0 = 1, so (cos 1, sin 1)
        x = ember.tensor([1.0, 0.0], dtype="float64").reshape(1, 1, 1, 2)
        y = nn.RotaryEmbedding(2)(x, offset=1).reshape(-1).tolist()
        self.assertAlmostEqual(y[0], math.cos(1.0), places=12)
        self.assertAlmostEqual(y[1], math.sin(1.0), places=12)

    def test_errors(self):
        with self.assertRaises(AssertionError):
            nn.MultiheadAttention(6, 4)
        m = nn.MultiheadAttention(4, 2)
        x = ember.zeros(3, 1, 4)
        with self.assertRaises(RuntimeError):
            m(x, x, x, attn_mask=ember.zeros(2, 3))
        with self.assertRaises(RuntimeError):
            m(x, x, x, key_padding_mask=ember.zeros(1, 2))
        with self.assertRaises(RuntimeError):
            nn.TransformerEncoderLayer(4, 2, activation="tanh")

    def test_dropout_applies_in_training_only(self):
        ember.manual_seed(3)
        m = nn.MultiheadAttention(4, 2, dropout=0.5)
        x = ember.randn(5, 2, 4)
        a, b = m(x, x, x)[1], m(x, x, x)[1]
        self.assertNotEqual(a.tolist(), b.tolist())
        m.eval()
        a, b = m(x, x, x)[1], m(x, x, x)[1]
        self.assertEqual(a.tolist(), b.tolist())


if __name__ == "__main__":
    unittest.main()
