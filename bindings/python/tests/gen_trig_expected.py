"""Writes trig_expected.json: PyTorch 1.13's values and gradients for test_trig_ops.py (the inverse trigonometric /
hyperbolic ops, atan2, remainder, isnan/isinf), so the binding's tests compare against torch without needing it.

Run with Debian's python3-torch: /usr/bin/python3 bindings/python/tests/gen_trig_expected.py
"""
import json
import os

import torch

X = [-2.0, -1.0, -0.999, -0.5, -1e-4, -0.0, 0.0, 1e-4, 0.5, 0.999, 1.0, 1.5, 2.0, 10.0,
     float("inf"), float("-inf"), float("nan")]
UNARY = ("asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh")
INNER = [-0.9, -0.3, 0.2, 0.8]
GRAD_INPUTS = {"asin": INNER, "acos": INNER, "atanh": INNER, "atan": [-3.0, 0.5, 2.0], "sinh": [-2.0, 0.1, 3.0],
               "cosh": [-2.0, 0.1, 3.0], "asinh": [-3.0, 0.2, 5.0], "acosh": [1.1, 2.0, 7.5]}
ATAN2_Y = [[1.0], [-1.0], [0.0], [-0.0], [float("inf")], [float("nan")]]
ATAN2_X = [[1.0, -1.0, 0.0, -0.0, float("-inf"), 2.5]]
REM_A = [5.5, -5.5, 7.0, -7.0, 0.0, 1e-3, 123.25]
REM_B = [2.0, -2.0, 0.75, -3.5]
INT_A, INT_B = [7, -7, 7, -7, 0, 6, -6], [3, 3, -3, -3, 5, -4, 4]


def grads_of(f, *inputs):
    ts = [torch.tensor(v, requires_grad=True) for v in inputs]
    f(*ts).sum().backward()
    return [t.grad.tolist() for t in ts]


def main():
    tx = torch.tensor(X, dtype=torch.float32)
    out = {
        "torch": torch.__version__,
        "x": X,
        "unary": {name: getattr(torch, name)(tx).tolist() for name in UNARY},
        "unary_grad": {name: {"x": xs, "grad": grads_of(getattr(torch, name), xs)[0]}
                       for name, xs in GRAD_INPUTS.items()},
        "atan2": {"y": ATAN2_Y, "x": ATAN2_X, "shape": list(torch.atan2(torch.tensor(ATAN2_Y),
                                                                         torch.tensor(ATAN2_X)).shape),
                  "value": torch.atan2(torch.tensor(ATAN2_Y), torch.tensor(ATAN2_X)).tolist(),
                  "grad_a": [0.5, -2.0], "grad_b": [1.5, 0.7],
                  "grad": sum(grads_of(torch.atan2, [0.5, -2.0], [1.5, 0.7]), [])},
        "remainder": {"a": REM_A,
                      "by_tensor": {str(b): torch.remainder(torch.tensor(REM_A), torch.tensor([b])).tolist()
                                    for b in REM_B},
                      "by_scalar": {str(b): torch.remainder(torch.tensor(REM_A), b).tolist() for b in REM_B},
                      "int_a": INT_A, "int_b": INT_B,
                      "int": torch.remainder(torch.tensor(INT_A), torch.tensor(INT_B)).tolist(),
                      "int_by_minus4": (torch.tensor(INT_A) % -4).tolist(),
                      "grad_a": [5.3, -2.2, 1.1], "grad_b": [2.0, 1.5, -0.7],
                      "grad": sum(grads_of(torch.remainder, [5.3, -2.2, 1.1], [2.0, 1.5, -0.7]), [])},
        "isnan": torch.isnan(tx).tolist(),
        "isinf": torch.isinf(tx).tolist(),
    }
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trig_expected.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
