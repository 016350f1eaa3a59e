#!/usr/bin/env python3
"""Writes indexing_expected.json: torch 1.13's results (shape and values) for the indexing cases of
test_indexing.py, evaluated on x = arange(60).reshape(3, 4, 5) (reads, errors) and on y = zeros(3, 4, 5) (writes).

    /usr/bin/python3 bindings/python/tests/gen_indexing_expected.py     # Debian's python3-torch

The cases are plain expressions over names both libraries provide (M is the module: torch or ember), so the test
evaluates the same text with ember and compares with what torch gave here.
"""
import json
import os

import torch

# Reads: each is an expression over x (int64, shape [3, 4, 5]), M (the module) and mask (x % 3 == 0).
READS = [
    "x[1]", "x[-1]", "x[1, 2]", "x[1, 2, 3]", "x[:, 1]", "x[..., 2]", "x[1:]", "x[:2, 1:3]", "x[::2]",
    "x[:, ::3, 1::2]", "x[0, 1:, ::3]", "x[None]", "x[:, None, 1]", "x[None, ..., None]", "x[1:3, None, ::2]",
    "x[..., None, 0]", "x[5:]", "x[-10:2]", "x[[0, 2]]", "x[[2, -1, 0]]", "x[:, [0, 1]]", "x[:, [3, 0], 1:4:2]",
    "x[..., [0, 2]]", "x[0, :, [0, 1]]", "x[[0, 1], :, 0]", "x[:, [0, 1], [1, 2]]", "x[[0, 1], :, [1, 2]]",
    "x[[0, 2], :, [1, -1]]", "x[[[0], [1]], :, [1, 2, 3]]", "x[M.tensor([[0, 1], [2, 0]])]",
    "x[:, M.tensor([1, 3]), M.tensor([[0], [4]])]", "x[mask]", "x[:, mask[0]]", "x[:, mask[0, :, 0]]",
    "x[mask[:, :, 1]]", "x[1, mask[1, :, 0], 2:]", "x[[True, False, True]]", "x[None, [1], ..., ::4]",
    "x[M.tensor([1, 0, 2]) > 0]",
]
# Writes: each is a statement over y (float32 zeros [3, 4, 5]), M and mask; the expected value is y afterwards.
WRITES = [
    "y[1] = 1", "y[-1, 2] = 3.5", "y[:, 1] = M.arange(15.).reshape(3, 5)", "y[..., 0] = M.tensor([1., 2., 3., 4.])",
    "y[::2, 1:3] = -2", "y[:, ::3, 1::2] = M.ones(3, 2, 2) * 7", "y[None, 0] = 4", "y[[0, 2]] = 9",
    "y[:, [3, 0], 1:4:2] = M.tensor([[1.], [2.]])", "y[0, :, [0, 1]] = M.arange(8.).reshape(4, 2)",
    "y[[0, 1], :, [1, 2]] = 6", "y[mask] = -1", "y[:, mask[0]] = M.arange(3.).reshape(3, 1)", "y[y == 0] = 0.5",
    "y[:, [0, 0], [1, 1]] = 3",
]
# Errors: each expression must raise this exception class (also a built-in one, so both libraries match).
ERRORS = [
    "x[3]", "x[-4]", "x[[3]]", "x[:, [0, 4]]", "x[::-1]", "x[::0]", "x[0, 0, 0, 0]", "x[1.5]",
    "x[M.tensor([1.0])]", "x[:, [0, 1], [0, 1, 2]]", "x[mask[0, 0]]", "x.unsqueeze(4)", "x.unsqueeze(-5)",
    "x.transpose(0, 3)", "x.flatten(3)", "x.index_select(3, M.tensor([0]))", "x[..., ..., 0]",
]


def main():
    out = {"reads": {}, "writes": {}, "errors": {}}
    x = torch.arange(60).reshape(3, 4, 5)
    env = {"x": x, "M": torch, "mask": x % 3 == 0}
    for e in READS:
        r = eval(e, env)  # noqa: S307 (the checked-in case list above)
        out["reads"][e] = {"shape": list(r.shape), "values": r.tolist()}
    for s in WRITES:
        y = torch.zeros(3, 4, 5)
        exec(s, dict(env, y=y))  # noqa: S102
        out["writes"][s] = y.tolist()
    for e in ERRORS:
        try:
            eval(e, env)  # noqa: S307
        except (IndexError, ValueError, TypeError, RuntimeError) as err:
            out["errors"][e] = next(c.__name__ for c in (IndexError, ValueError, TypeError, RuntimeError)
                                    if isinstance(err, c))
        else:
            raise SystemExit("torch accepts %s" % e)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "indexing_expected.json")
    with open(path, "w") as f:
        json.dump(dict(out, torch=torch.__version__), f, indent=None, separators=(",", ":"))
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
