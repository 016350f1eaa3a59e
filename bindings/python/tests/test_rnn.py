"""ember.nn.LSTM / ember.nn.GRU against PyTorch 1.13 (rnn_expected.json from gen_rnn_expected.py): a 2-layer
bidirectional RNN over a padded batch of unsorted lengths, time-major and batch_first, with initial states; forward
values and the gradients w.r.t. the input, the initial states and every param, in float64 (1e-5) and float32
(1e-4); the lengths argument and pack_padded_sequence / pad_packed_sequence give the same results."""
import json
import os
import unittest

import _support  # noqa: F401
import ember
from ember.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "rnn_expected.json")) as _f:
    E = json.load(_f)


def _flat(v):
    return [x for row in v for x in _flat(row)] if isinstance(v, list) else [v]


def _t(case, name, dtype, grad=False):
    spec = case["tensors"][name]
    return ember.tensor(spec["values"], shape=spec["shape"], dtype=dtype, requires_grad=grad)


def _module(case, dtype):
    cls = ember.nn.LSTM if case["kind"] == "lstm" else ember.nn.GRU
    m = cls(E["input_size"], E["hidden_size"], num_layers=E["num_layers"], bidirectional=True,
            batch_first=case["batch_first"], dtype=dtype)
    state = {k[len("param_"):]: _t(case, k, dtype) for k in case["tensors"] if k.startswith("param_")}
    m.load_state_dict(state)
    return m


class RnnAgainstTorch(unittest.TestCase):
    def _close(self, got, case, name, tol):
        want = case["tensors"][name]
        self.assertEqual(list(got.shape), want["shape"], name)
        worst = max(abs(a - b) for a, b in zip(_flat(got.tolist()), want["values"]))
        self.assertLessEqual(worst, tol, name)

    def _check(self, name, dtype, tol, packed=False):
        case = E["cases"][name]
        m = _module(case, dtype)
        x = _t(case, "x", dtype, grad=True)
        h0 = _t(case, "h0", dtype, grad=True) if "h0" in case["tensors"] else None
        c0 = _t(case, "c0", dtype, grad=True) if "c0" in case["tensors"] else None
        hx = (h0, c0) if case["kind"] == "lstm" and h0 is not None else h0
        if packed:
            seq = pack_padded_sequence(x, case["lengths"], batch_first=case["batch_first"], enforce_sorted=False)
            out, fin = m(seq, hx)
            out, lens = pad_packed_sequence(out, batch_first=case["batch_first"])
            self.assertEqual(lens.tolist(), case["lengths"])
        else:
            out, fin = m(x, hx, lengths=case["lengths"])
        finals = {"h_n": fin[0], "c_n": fin[1]} if case["kind"] == "lstm" else {"h_n": fin}
        self._close(out, case, "output", tol)
        loss = (out * _t(case, "w_out", dtype)).sum()
        for k, v in finals.items():
            self._close(v, case, k, tol)
            loss = loss + (v * _t(case, "w_" + k[0], dtype)).sum()
        loss.backward()
        self._close(x.grad, case, "grad_x", tol)
        for leaf, key in ((h0, "grad_h0"), (c0, "grad_c0")):
            if leaf is not None:
                self._close(leaf.grad, case, key, tol)
        for pname, p in m.named_parameters():
            self._close(p.grad, case, "grad_" + pname, tol)

    def test_lstm_packed_f64(self):
        self._check("lstm_packed", "float64", 1e-5)

    def test_lstm_batch_first_f32_through_pack_padded_sequence(self):
        self._check("lstm_packed_batch_first", "float32", 1e-4, packed=True)

    def test_lstm_full_length_f32(self):
        self._check("lstm_full", "float32", 1e-4)

    def test_gru_packed_f64_through_pack_padded_sequence(self):
        self._check("gru_packed", "float64", 1e-5, packed=True)

    def test_gru_batch_first_f32(self):
        self._check("gru_packed_batch_first", "float32", 1e-4)

    def test_state_dict_names_are_torchs(self):
        m = ember.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
        names = [k for k in E["cases"]["lstm_packed"]["tensors"] if k.startswith("param_")]
        keys = list(m.state_dict().keys())
        self.assertEqual(sorted(keys), sorted(k[len("param_"):] for k in names))
        self.assertEqual(keys[:5], ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                                    "weight_ih_l0_reverse"])  # torch's order
        self.assertEqual(list(m.weight_ih_l1_reverse.shape), [16, 8])
        g = ember.nn.GRU(3, 4, bias=False)
        self.assertEqual(list(g.state_dict().keys()), ["weight_ih_l0", "weight_hh_l0"])

    def test_pad_packed_sequence_total_length_and_padding_value(self):
        m = ember.nn.LSTM(2, 3, batch_first=True)
        seq = pack_padded_sequence(ember.randn(2, 4, 2), [3, 1], batch_first=True)
        out, lens = pad_packed_sequence(m(seq)[0], batch_first=True, padding_value=-1.0, total_length=5)
        self.assertEqual(list(out.shape), [2, 5, 3])
        self.assertEqual(lens.tolist(), [3, 1])
        rows = out.tolist()
        for n, length in enumerate([3, 1]):
            for t in range(5):
                inside = [v != -1.0 for v in rows[n][t]]
                self.assertEqual(inside, [t < length] * 3, (n, t))
        with self.assertRaises(ValueError):
            pad_packed_sequence(m(seq)[0], batch_first=True, total_length=2)

    def test_unbatched_input_and_refusals(self):
        m = ember.nn.GRU(2, 3)
        x = ember.randn(4, 2)
        out, h = m(x)
        self.assertEqual(list(out.shape), [4, 3])
        self.assertEqual(list(h.shape), [1, 3])
        batched, hb = m(x.unsqueeze(1))
        self.assertLess(max(abs(a - b) for a, b in zip(_flat(out.tolist()), _flat(batched.tolist()))), 1e-6)
        with self.assertRaises(RuntimeError):
            m(ember.randn(4, 1, 5))
        with self.assertRaises(ValueError):
            m(ember.randn(4, 2, 2), lengths=[5, 1])
        with self.assertRaises(RuntimeError):
            pack_padded_sequence(ember.randn(4, 2, 2), [1, 3])  # enforce_sorted
        with self.assertRaises(ValueError):
            ember.nn.LSTM(2, 3, dropout=1.5)


if __name__ == "__main__":
    unittest.main()
