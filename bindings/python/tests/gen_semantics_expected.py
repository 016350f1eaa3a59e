#!/usr/bin/env python3
"""Writes semantics_expected.json: torch 1.13's results for the cases of test_semantics.py (// and % signs, 1-D
matmul, float64 values, torch.fft as view_as_real).

    /usr/bin/python3 bindings/python/tests/gen_semantics_expected.py     # Debian's python3-torch

Each case is an expression over M (torch or ember) that both libraries spell the same way; fft cases read the result
as torch.view_as_real would (ember's complex layout).
"""
import json
import os

import torch

CASES = [
    "M.tensor([-7, 7, -8, 8, 0]) // 3", "M.tensor([-7, 7, -8, 8, 0]) // -3", "M.tensor([-7, 7, -8, 8]) % 3",
    "M.tensor([-7, 7, -8, 8]) % -3", "17 // M.tensor([-5, 5, 4])", "17 % M.tensor([-5, 5, 4])",
    "M.tensor([-7.5, 7.5, -0.5, 2.0]) // 2", "M.tensor([-7.5, 7.5, -0.5, 2.0]) % -2",
    "M.tensor([-7, 7]) // M.tensor([2.0, -2.0])", "M.tensor([5, -5]) // M.tensor([2, 2])",
    "M.tensor([1.0, 2.0, 3.0]) @ M.tensor([[1.0, 0.5], [2.0, -1.0], [0.0, 4.0]])",
    "M.tensor([[1.0, 0.5, 2.0], [2.0, -1.0, 0.0]]) @ M.tensor([3.0, 1.0, -2.0])",
    "M.tensor([1.0, 2.0, 3.0]) @ M.tensor([4.0, -5.0, 6.0])",
    "M.ones(2, 3, 4) @ M.tensor([1.0, 2.0, 3.0, 4.0])",
    "(M.tensor([0.1, 0.2], dtype=M.float64) * 3).tolist()",
    "(M.tensor([1.0], dtype=M.float64) / 3 + M.tensor([1.0]))",
]
FFT_INPUT = [1.0, 2.0, 0.0, -1.0, 3.0, 0.5]
FFT_CASES = [
    ("fft", {}), ("fft", {"n": 4}), ("fft", {"n": 8, "norm": "ortho"}), ("ifft", {}), ("ifft", {"norm": "forward"}),
    ("rfft", {}), ("rfft", {"n": 5}), ("rfft", {"norm": "forward"}),
]


def to_list(r):
    return r.tolist() if hasattr(r, "tolist") else r


def main():
    out = {"cases": {}, "fft": {}, "fft_2d": {}, "irfft": {}, "dtypes": {}}
    for e in CASES:
        r = eval(e, {"M": torch})  # noqa: S307 (the checked-in cases)
        out["cases"][e] = {"shape": list(r.shape) if hasattr(r, "shape") else None, "values": to_list(r)}
        out["dtypes"][e] = str(r.dtype).replace("torch.", "") if hasattr(r, "dtype") else None
    x = torch.tensor(FFT_INPUT, dtype=torch.float64)
    for name, kw in FFT_CASES:
        key = "%s %s" % (name, json.dumps(kw, sort_keys=True))
        out["fft"][key] = torch.view_as_real(getattr(torch.fft, name)(x, **kw).resolve_conj()).tolist()
    m = x.reshape(2, 3)
    out["fft_2d"]["fft dim=0"] = torch.view_as_real(torch.fft.fft(m, dim=0)).tolist()
    out["fft_2d"]["rfft dim=1"] = torch.view_as_real(torch.fft.rfft(m, dim=1)).tolist()
    spec = torch.fft.rfft(x)
    out["irfft"]["default"] = torch.fft.irfft(spec).tolist()
    out["irfft"]["n=6 ortho"] = torch.fft.irfft(torch.fft.rfft(x, norm="ortho"), n=6, norm="ortho").tolist()
    out["fft_input"] = FFT_INPUT
    out["torch"] = torch.__version__
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "semantics_expected.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
