"""Writes rnn_expected.json: PyTorch 1.13's LSTM / GRU values and gradients over a padded batch (the cases of
tests/reference/rnn_cases.py, shared with the C++ header), for test_rnn.py, so the comparison runs where torch is
not installed.

Run with Debian's python3-torch: /usr/bin/python3 bindings/python/tests/gen_rnn_expected.py
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tests", "reference"))
import rnn_cases  # noqa: E402


def main():
    out = {"input_size": rnn_cases.INPUT, "hidden_size": rnn_cases.HIDDEN, "num_layers": rnn_cases.LAYERS,
           "cases": {}}
    for name, ((kind, batch_first, lengths, _state, _seed), tensors) in rnn_cases.all_cases().items():
        out["cases"][name] = {"kind": kind, "batch_first": batch_first, "lengths": lengths,
                              "tensors": {k: {"shape": list(v.shape), "values": v.reshape(-1).tolist()}
                                          for k, v in tensors.items()}}
    with open(os.path.join(HERE, "rnn_expected.json"), "w") as f:
        json.dump(out, f, separators=(",", ":"), sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
