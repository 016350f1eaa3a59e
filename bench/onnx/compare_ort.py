#!/usr/bin/python3
"""Ember's ONNX importer beside ONNX Runtime (issue 19): the same model files and the same inputs, CPU, one thread,
interleaved in one run.

    bench/onnx/compare_ort.py [--ember build/bench/onnx/ember_onnx_worker] [--rounds 15] [--block 0.1] [--markdown]

Both sides are long-lived worker processes speaking the same line protocol (ort_worker.js has it): ONNX Runtime's
CPU provider (npm onnxruntime-node, intra- and inter-op threads 1) and ember_onnx_worker (OnnxModel on the CPU
backend, Ember's pool and OpenBLAS at 1 thread). Each loads every workload once; then, for each round and each
workload, both run a block of the same number of iterations (sized so that a block takes about --block seconds on
ORT), the side that goes first alternating from round to round, so load from other users of the machine hits both
alike. A workload's time per inference is the median over the rounds of block time / iterations; the ratio is
Ember / ORT (below 1: Ember is faster).

Before timing, each workload's output is taken from both sides and compared (max |ember - ort| against 1e-4 of the
output's scale); a mismatch stops the run, since timing two different computations would mean nothing.

Workloads (the models of tests/onnx/models): the digits MLP and CNN at batch 1 and 64 (rows of data/digits.csv.gz)
and the ResNet-18-shaped CNN at batch 1 on a 3x224x224 image (seeded normal values). Install ONNX Runtime first:
    npm install --ignore-scripts --prefix bench/onnx       (bench/onnx/package.json pins the version)
"""
import argparse
import gzip
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
MODELS = os.path.join(ROOT, "tests", "onnx", "models")


def save_input(path, array):
    """One tensor "input" in the safetensors layout both workers read."""
    raw = np.ascontiguousarray(array, dtype=np.float32).tobytes()
    header = json.dumps({"input": {"dtype": "F32", "shape": list(array.shape), "data_offsets": [0, len(raw)]}},
                        separators=(",", ":")).encode()
    header += b" " * (-len(header) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + raw)


def workloads(tmp):
    """(name, model file, input file) of every workload, the inputs written under tmp."""
    with gzip.open(os.path.join(ROOT, "data", "digits.csv.gz"), "rt") as f:
        rows = np.array([[int(v) for v in line.split(",")[:64]] for line in f if line.strip()], dtype=np.float32)
    rows /= 16.0
    image = np.random.default_rng(19).standard_normal((1, 3, 224, 224), dtype=np.float32)
    inputs = {"digits_b1": rows[:1], "digits_b64": rows[:64], "image_224": image}
    for name, array in inputs.items():
        save_input(os.path.join(tmp, name + ".safetensors"), array)
    out = []
    for model, inp in [("digits_mlp", "digits_b1"), ("digits_mlp", "digits_b64"), ("digits_cnn", "digits_b1"),
                       ("digits_cnn", "digits_b64"), ("resnet18_narrow", "image_224")]:
        label = f"{model}/b{inputs[inp].shape[0]}" + ("@224" if inp == "image_224" else "")
        out.append((label, os.path.join(MODELS, model + ".onnx"), os.path.join(tmp, inp + ".safetensors")))
    return out


class Worker:
    def __init__(self, side, argv):
        self.side = side
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)

    def ask(self, *words):
        self.proc.stdin.write(" ".join(str(w) for w in words) + "\n")
        reply = self.proc.stdout.readline().strip()
        if not reply or reply.startswith("error"):
            raise SystemExit(f"{self.side}: {' '.join(map(str, words))}: {reply or 'no answer (the worker died)'}")
        return reply

    def close(self):
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        self.proc.wait(timeout=30)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ember", default=os.path.join(ROOT, "build", "bench", "onnx", "ember_onnx_worker"))
    ap.add_argument("--node", default="node")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--block", type=float, default=0.1, help="seconds per timed block (on ORT)")
    ap.add_argument("--filter", default="", help="only workloads whose name contains this")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    if not os.path.isdir(os.path.join(HERE, "node_modules", "onnxruntime-node")):
        raise SystemExit("onnxruntime-node is not installed: npm install --ignore-scripts --prefix bench/onnx")
    if not os.access(args.ember, os.X_OK):
        raise SystemExit(f"{args.ember} is not built (ninja -C build bench/onnx/ember_onnx_worker)")

    with tempfile.TemporaryDirectory() as tmp:
        jobs = [w for w in workloads(tmp) if args.filter in w[0]]
        sides = [Worker("ember", [args.ember]), Worker("ort", [args.node, os.path.join(HERE, "ort_worker.js")])]
        iters, times = {}, {(name, s.side): [] for name, _, _ in jobs for s in sides}
        for name, model, inp in jobs:
            outs = []
            for s in sides:
                s.ask("load", name, model, inp)
                path = os.path.join(tmp, f"{s.side}.out")
                s.ask("out", name, path)
                outs.append(np.fromfile(path, dtype=np.float32))
            scale = max(1.0, float(np.abs(outs[1]).max()))
            diff = float(np.abs(outs[0] - outs[1]).max()) if outs[0].shape == outs[1].shape else float("inf")
            if not diff <= 1e-4 * scale:
                raise SystemExit(f"{name}: Ember's and ORT's outputs differ (max |diff| {diff:g}, "
                                 f"{outs[0].size} vs {outs[1].size} values)")
            print(f"{name}: outputs agree (max |ember - ort| = {diff:.2e})", file=sys.stderr)
            # Warm both up, then size the block on ORT.
            for s in sides:
                s.ask("time", name, 20)
            per = float(sides[1].ask("time", name, 50)) / 50
            iters[name] = max(1, int(args.block / max(per, 1e-7)))
        for r in range(args.rounds):
            for name, _, _ in jobs:
                for s in (sides if r % 2 == 0 else sides[::-1]):
                    times[(name, s.side)].append(float(s.ask("time", name, iters[name])) / iters[name])
        for s in sides:
            s.close()

    load = os.getloadavg()
    rows = []
    for name, _, _ in jobs:
        e, o = float(np.median(times[(name, "ember")])), float(np.median(times[(name, "ort")]))
        rows.append((name, e, o, e / o))
    if args.markdown:
        print("| workload | Ember (median) | ONNX Runtime (median) | Ember / ORT |")
        print("|---|---|---|---|")
        for name, e, o, ratio in rows:
            print(f"| {name} | {e * 1e6:.1f} us | {o * 1e6:.1f} us | {ratio:.2f} |")
    else:
        print(f"{'workload':<26}{'ember us':>12}{'ort us':>12}{'ember/ort':>11}")
        for name, e, o, ratio in rows:
            print(f"{name:<26}{e * 1e6:>12.1f}{o * 1e6:>12.1f}{ratio:>11.2f}")
    print(f"{args.rounds} rounds, blocks of ~{args.block} s; load average at the end {load[0]:.2f} / {load[1]:.2f} / "
          f"{load[2]:.2f}")


if __name__ == "__main__":
    main()
