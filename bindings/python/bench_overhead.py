#!/usr/bin/env python3
"""Per-call overhead of a tiny op through the Python binding (the bar: <= 15 us per call).

    EMBER_LIBRARY=build/c_api/libember.so python3 bindings/python/bench_overhead.py [--check] [--calls N]

Times `a + b` on two one-element float tensors: the Python operator, the ctypes call into ember_tensor_add, the
status check, wrapping the result in an ember.Tensor, and freeing the previous result (its __del__ calls
ember_tensor_free). For reference it also times the bare ctypes calls (add + free) and a tensor-scalar add.
Reports the best of several repeats (least disturbed by other processes). --check exits 1 above 15 us.
"""
import argparse
import ctypes
import os
import sys
import timeit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ember  # noqa: E402
from ember import _lib  # noqa: E402

BAR_US = 15.0


def best_us(stmt, calls, repeats):
    return min(timeit.repeat(stmt, number=calls, repeat=repeats)) / calls * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=100000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--check", action="store_true", help="exit 1 if a + b costs more than %g us" % BAR_US)
    args = ap.parse_args()

    a, b = ember.ones(1), ember.ones(1)
    out = ctypes.c_void_p()
    add, free, byref = _lib.tensor_add, _lib.tensor_free, ctypes.byref
    ha, hb = a._h, b._h

    def raw():
        add(ha, hb, byref(out))
        free(out)

    results = [
        ("a + b (ember.Tensor)", best_us(lambda: a + b, args.calls, args.repeats)),
        ("a + 1.0 (scalar)", best_us(lambda: a + 1.0, args.calls, args.repeats)),
        ("bare ctypes add + free", best_us(raw, args.calls, args.repeats)),
        ("empty Python lambda", best_us(lambda: None, args.calls, args.repeats)),
    ]
    print("ember %s, %s" % (ember.__version__, _lib.path))
    for name, us in results:
        print("%-26s %7.2f us/call" % (name, us))
    overhead = results[0][1]
    print("python binding per-call overhead (a + b): %.2f us (bar %.0f us): %s"
          % (overhead, BAR_US, "ok" if overhead <= BAR_US else "ABOVE THE BAR"))
    return 1 if args.check and overhead > BAR_US else 0


if __name__ == "__main__":
    sys.exit(main())
