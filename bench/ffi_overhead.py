#!/usr/bin/env python3
"""Per-call overhead of a tiny op from each language, beside C, in one run (issue 12).

Every program makes the same call N times, ember_tensor_add of two 1-element tensors and the free of the result,
and prints one line per row, `LANG ns_per_call=<float>`: bench/ffi_overhead_c.c (the baseline), bench/ffi_overhead_
py.py (Python's public API and its raw ctypes functions) and each language binding's overhead program (Rust,
C#, LuaJIT: bindings/<lang>/meson.build). The programs run in rounds, their order rotated from round to round, so
that load from other processes falls on all of them alike; the table gives the median of the rounds (and the best)
and the ratio of each median to C's.

    bench/ffi_overhead.py --c build/bench/ffi_overhead_c --python-lib build/c_api/libember.so \\
        [--program 'rust=COMMAND' ...] [--calls 200000] [--rounds 5] [--markdown]

A `--program` is a shell command; the runner appends N to it. `meson test -C build --benchmark ffi_overhead` runs
this with every program the build defines (bench/meson.build). Exits 1 when a program fails or prints no row.
"""
import argparse
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time

ROW = re.compile(r"^(\w+) ns_per_call=([0-9.eE+-]+)\s*$")
HERE = os.path.dirname(os.path.abspath(__file__))


def machine():
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return "%s, %d cores" % (model, os.cpu_count() or 0)


def load():
    try:
        return "%.2f / %.2f / %.2f" % os.getloadavg()
    except OSError:
        return "?"


def run(name, command, calls, env):
    """Runs one program; returns ({label: ns}, error or None)."""
    try:
        done = subprocess.run(command + " " + str(calls), shell=True, env=env, capture_output=True, text=True,
                              timeout=600)
    except subprocess.TimeoutExpired:
        return {}, "timed out"
    rows = {}
    for line in done.stdout.splitlines():
        m = ROW.match(line.strip())
        if m:
            rows[m.group(1)] = float(m.group(2))
    if done.returncode != 0 or not rows:
        tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-3:]
        return rows, "%s exited %d, %d rows: %s" % (name, done.returncode, len(rows), " | ".join(tail))
    return rows, None


def table(results, order, markdown):
    c = statistics.median(results["c"]) if results.get("c") else None
    head = ("language", "ns/call (median)", "best", "ratio to C", "rounds")
    lines = []
    fmt = "| %s |" if markdown else "%s"
    sep = " | " if markdown else "  "
    widths = (16, 17, 10, 11, 6)
    def line(cells):
        if markdown:
            return fmt % sep.join(cells)
        return sep.join(str(cell).ljust(w) for cell, w in zip(cells, widths))
    lines.append(line(head))
    if markdown:
        lines.append("|" + "---|" * len(head))
    for label in order:
        values = results[label]
        med = statistics.median(values)
        ratio = "%.2f" % (med / c) if c else "-"
        lines.append(line((label, "%.1f" % med, "%.1f" % min(values), ratio, str(len(values)))))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--c", required=True, help="the ffi_overhead_c executable")
    ap.add_argument("--python", default="/usr/bin/python3", help="the Python that runs ffi_overhead_py.py")
    ap.add_argument("--python-lib",
                    help="libember.so for the Python binding (EMBER_LIBRARY); no Python rows without it")
    ap.add_argument("--python-path", default=os.path.join(HERE, "..", "bindings", "python"),
                    help="the directory holding the ember package")
    ap.add_argument("--program", action="append", default=[], metavar="NAME=COMMAND",
                    help="another language's overhead program (a shell command; N is appended)")
    ap.add_argument("--calls", type=int, default=200000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()

    programs = [("c", shlex.quote(args.c))]
    if args.python_lib:
        programs.append(("python", "%s %s" % (shlex.quote(args.python),
                                              shlex.quote(os.path.join(HERE, "ffi_overhead_py.py")))))
    for p in args.program:
        name, sep, command = p.partition("=")
        if not sep or not name or not command:
            ap.error("--program takes NAME=COMMAND, got %r" % p)
        programs.append((name, command))

    env = dict(os.environ, EMBER_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    if args.python_lib:
        env["EMBER_LIBRARY"] = os.path.abspath(args.python_lib)
        env["PYTHONPATH"] = os.path.abspath(args.python_path) + os.pathsep + env.get("PYTHONPATH", "")

    print("ffi_overhead: %s calls per program and round, %d rounds; %s; %s UTC; load %s" % (
        args.calls, args.rounds, machine(), time.strftime("%Y-%m-%d %H:%M", time.gmtime()), load()))
    results, first_seen, errors = {}, {}, []
    for r in range(args.rounds):
        shift = r % len(programs)
        for name, command in programs[shift:] + programs[:shift]:
            rows, error = run(name, command, args.calls, env)
            if error:
                errors.append("round %d: %s" % (r + 1, error))
            for label, ns in rows.items():
                results.setdefault(label, []).append(ns)
                first_seen.setdefault(label, ([n for n, _ in programs].index(name), label != name, label))
    print("load after: %s" % load())
    # Rows in the order of the programs given, each program's own-named row first.
    order = sorted(results, key=lambda label: first_seen[label])
    print(table(results, order, args.markdown))
    for e in errors:
        print("FAILED: " + e, file=sys.stderr)
    return 1 if errors or "c" not in results else 0


if __name__ == "__main__":
    sys.exit(main())
