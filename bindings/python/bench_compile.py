#!/usr/bin/env python3
"""Eager vs ember.compile(model) training steps per second of the digits MLP (64-256-256-10, ReLU, Adam) through
the Python binding, in one run and interleaved (rounds of eager steps and of compiled steps, which goes first
alternating), so that both see the same machine state. Prints steps/s of each and the ratio compiled / eager.

    python3 bindings/python/bench_compile.py [--batch 64] [--steps 50] [--rounds 5]

Each step is the whole Python training step: forward (the compiled one replays its tape), cross_entropy, backward
(the compiled one replays its backward segment), Adam. The binding finds libember through $EMBER_LIBRARY or the
build folder.
"""
import argparse
import array
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ember  # noqa: E402
import ember.nn as nn  # noqa: E402
import ember.nn.functional as F  # noqa: E402


def model():
    ember.manual_seed(42)
    return nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))


def data(batch, n, seed=3):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        x = ember.tensor(array.array("f", (rng.random() for _ in range(batch * 64))), shape=[batch, 64],
                         dtype="float32")
        y = ember.tensor(array.array("q", (rng.randrange(10) for _ in range(batch))), shape=[batch], dtype="int64")
        out.append((x, y))
    return out


def steps(m, opt, batches):
    start = time.perf_counter()
    for x, y in batches:
        loss = F.cross_entropy(m(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--steps", type=int, default=50, help="steps per round")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    batches = data(args.batch, args.steps)
    eager = model()
    compiled = ember.compile(model())
    opt_e = ember.optim.Adam(eager.parameters(), lr=1e-3)
    opt_c = ember.optim.Adam(compiled.parameters(), lr=1e-3)
    steps(eager, opt_e, batches[:3])  # warm-up; the compiled one captures here
    steps(compiled, opt_c, batches[:3])
    assert compiled.last_call == "replayed", compiled.fallback_reason
    te = tc = 0.0
    for r in range(args.rounds):  # which one goes first alternates, so that neither always follows the other
        if r % 2:
            tc += steps(compiled, opt_c, batches)
            te += steps(eager, opt_e, batches)
        else:
            te += steps(eager, opt_e, batches)
            tc += steps(compiled, opt_c, batches)
    n = args.rounds * args.steps
    print("digits MLP, batch %d, %d steps each, interleaved in %d rounds (ember %s)"
          % (args.batch, n, args.rounds, ember.__version__))
    print("eager     %8.1f steps/s" % (n / te))
    print("compiled  %8.1f steps/s" % (n / tc))
    print("ratio compiled / eager: %.2fx" % (te / tc))


if __name__ == "__main__":
    main()
