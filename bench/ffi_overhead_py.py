#!/usr/bin/env python3
"""The Python rows of bench/ffi_overhead.py: ember_tensor_add of two 1-element tensors and the free of the result,
N times after N/10 warm-up calls, two ways:

    python         the binding's public API: `a + b`, the result freed when its last reference goes
    python_ctypes  the raw ctypes functions the binding declares (argtypes from the description): ember_tensor_add,
                   a status check, ember_tensor_free

    EMBER_LIBRARY=build/c_api/libember.so PYTHONPATH=bindings/python /usr/bin/python3 bench/ffi_overhead_py.py [N]

Prints one line per row, `LANG ns_per_call=<float>`.
"""
import ctypes
import sys
import time

import ember
from ember import _lib


def per_call_ns(loop, n):
    loop(n // 10)  # warm-up: allocator, caches
    start = time.perf_counter_ns()
    loop(n)
    return (time.perf_counter_ns() - start) / n


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
    a, b = ember.full((1,), 1.0), ember.full((1,), 2.0)

    def public(count):
        for _ in range(count):
            a + b

    add, free, lib_error = _lib.lib.ember_tensor_add, _lib.lib.ember_tensor_free, _lib.error
    ha, hb = a._h, b._h

    def raw(count):
        out = ctypes.c_void_p()
        ref = ctypes.byref(out)
        for _ in range(count):
            status = add(ha, hb, ref)
            if status:
                raise lib_error(status)
            free(out)

    print("python ns_per_call=%.1f" % per_call_ns(public, n))
    print("python_ctypes ns_per_call=%.1f" % per_call_ns(raw, n))


if __name__ == "__main__":
    main()
