"""Writes sort_scan_expected.json: PyTorch 1.13's values and gradients for test_sort_scan.py (sort, argsort, topk,
cumsum, masked_select, tril, triu, one_hot), so the binding's tests compare against torch without needing it.

Run with Debian's python3-torch: /usr/bin/python3 bindings/python/tests/gen_sort_scan_expected.py
"""
import json
import os

import torch

NAN, INF = float("nan"), float("inf")
# Ties, NaN, infinities: torch's stable sort puts NaN last ascending, first descending.
SORT_X = [[3.0, 1.0, NAN, 1.0, -2.0], [INF, -INF, 0.5, NAN, 0.5], [2.0, 2.0, 2.0, -0.0, 7.25]]
# Distinct values (torch leaves the order of tied topk values open) with one NaN.
TOPK_X = [[0.5, -1.0, 4.0, 2.5, NAN, 3.0], [9.0, 8.0, -7.0, 6.0, 5.0, -4.0]]
GRAD_X = [[0.3, -1.2, 2.5, 0.7], [-0.4, 1.9, -2.2, 0.1], [1.1, 0.0, -0.6, 3.3]]
WEIGHTS = [[1.0, -2.0, 3.0, 0.5], [0.25, 4.0, -1.5, 2.0], [-3.0, 1.5, 0.75, -0.5]]
SCAN_X = [[[0.5, -1.25, 2.0], [3.5, -0.75, 1.0]], [[4.25, -2.5, 0.125], [6.0, -3.0, 1.5]]]
MASK = [[True, False, True, False], [False, False, False, True], [True, True, False, False]]
CLASSES = [[0, 3, 1], [2, 3, 0]]


def vi(pair):
    return {"values": pair.values.tolist(), "indices": pair.indices.tolist()}


def grad_of(f, x, weights):
    t = torch.tensor(x, requires_grad=True)
    y = f(t)
    (y * torch.tensor(weights)[tuple(slice(0, n) for n in y.shape)]).sum().backward()
    return t.grad.tolist()


def main():
    sx, tx, gx, cx = (torch.tensor(v) for v in (SORT_X, TOPK_X, GRAD_X, SCAN_X))
    out = {
        "torch": torch.__version__,
        "sort_x": SORT_X, "topk_x": TOPK_X, "grad_x": GRAD_X, "weights": WEIGHTS, "scan_x": SCAN_X,
        "mask": MASK, "classes": CLASSES,
        "sort": {f"{dim},{int(desc)}": vi(torch.sort(sx, dim=dim, descending=desc, stable=True))
                 for dim in (0, 1, -1) for desc in (False, True)},
        "argsort_desc_d0": torch.argsort(sx, dim=0, descending=True).tolist(),
        "topk": {f"{k},{dim},{int(largest)}": vi(torch.topk(tx, k, dim=dim, largest=largest))
                 for k, dim, largest in ((2, 1, True), (3, -1, False), (1, 0, True), (2, 0, False))},
        "cumsum": {str(d): torch.cumsum(cx, dim=d).tolist() for d in (0, 1, 2, -1)},
        "grad": {
            "sort_desc_d1": grad_of(lambda t: t.sort(dim=1, descending=True).values, GRAD_X, WEIGHTS),
            "topk_2_d0": grad_of(lambda t: t.topk(2, dim=0).values, GRAD_X, WEIGHTS),
            "cumsum_d1": grad_of(lambda t: t.cumsum(1), GRAD_X, WEIGHTS),
            "cumsum_d0": grad_of(lambda t: t.cumsum(0), GRAD_X, WEIGHTS),
            "tril_m1": grad_of(lambda t: t.tril(-1), GRAD_X, WEIGHTS),
            "masked_select": grad_of(lambda t: t.masked_select(torch.tensor(MASK)).unsqueeze(0), GRAD_X,
                                     [sum(WEIGHTS, [])]),
        },
        "masked_select": gx.masked_select(torch.tensor(MASK)).tolist(),
        "masked_select_row": gx.masked_select(torch.tensor([[False, True, True, False]])).tolist(),
        "tril": {str(d): gx.tril(d).tolist() for d in (0, -1, 2)},
        "triu": {str(d): gx.triu(d).tolist() for d in (0, 1, -2)},
        "one_hot": torch.nn.functional.one_hot(torch.tensor(CLASSES)).tolist(),
        "one_hot_5": torch.nn.functional.one_hot(torch.tensor(CLASSES), 5).tolist(),
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sort_scan_expected.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print("wrote", path)


if __name__ == "__main__":
    main()
