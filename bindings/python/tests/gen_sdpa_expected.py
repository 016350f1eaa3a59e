#!/usr/bin/python3
"""Writes sdpa_expected.json (next to this file) for test_sdpa.py: torch 1.13's
softmax(q @ k^T * scale + mask) @ v in float64 and the gradients of sum(out * w) for q, k, v, on a bool mask
(True: attend, converted by Ember to a -inf bias) and on causal attention with a custom scale.

    /usr/bin/python3 bindings/python/tests/gen_sdpa_expected.py
"""
import json
import math
import os

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sdpa_expected.json")
rng = np.random.default_rng(1324)


def f32(shape):
    return rng.uniform(-1.5, 1.5, size=shape).astype(np.float32).astype(np.float64)


def case(name, q_shape, k_shape, v_shape, mask, causal, scale):
    q, k, v = f32(q_shape), f32(k_shape), f32(v_shape)
    tq, tk, tv = (torch.tensor(a, requires_grad=True) for a in (q, k, v))
    L, S = q_shape[-2], k_shape[-2]
    bias = torch.zeros(L, S, dtype=torch.float64)
    if mask is not None:
        bias = bias.masked_fill(~torch.tensor(mask), -math.inf)
    if causal:
        bias = bias.masked_fill(torch.ones(L, S, dtype=torch.bool).triu(1), -math.inf)
    sc = scale if scale is not None else 1.0 / math.sqrt(q_shape[-1])
    out = torch.softmax(tq @ tk.transpose(-2, -1) * sc + bias, -1) @ tv
    w = torch.tensor([(1 if i % 2 else -1) * (0.5 + (i % 7) / 7.0) for i in range(out.numel())],
                     dtype=torch.float64).reshape(out.shape)
    (out * w).sum().backward()
    flat = lambda t: t.detach().numpy().ravel().tolist()  # noqa: E731
    return {"name": name, "q_shape": q_shape, "k_shape": k_shape, "v_shape": v_shape, "mask": mask,
            "causal": causal, "scale": scale, "q": q.ravel().tolist(), "k": k.ravel().tolist(),
            "v": v.ravel().tolist(), "w": flat(w), "out": flat(out), "dq": flat(tq.grad), "dk": flat(tk.grad),
            "dv": flat(tv.grad)}


CASES = [
    case("bool_mask", [2, 2, 3, 4], [2, 2, 5, 4], [2, 2, 5, 3],
         [[True, True, False, True, True], [True, False, True, True, False], [False, True, True, True, True]],
         False, None),
    case("causal_rank3", [2, 4, 3], [2, 4, 3], [2, 4, 2], None, True, 0.7),
]
with open(OUT, "w") as fh:
    json.dump({"generator": "bindings/python/tests/gen_sdpa_expected.py", "torch": torch.__version__,
               "cases": CASES}, fh, separators=(",", ":"))
    fh.write("\n")
