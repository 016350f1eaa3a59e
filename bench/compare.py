#!/usr/bin/env python3
"""Runs ember_bench and checks the medians against Ember's performance bars.

    bench/compare.py                               # runs build-bench/bench/ember_bench, 5 repetitions
    bench/compare.py --bench PATH --repetitions 3  # another binary / fewer repetitions
    bench/compare.py --json results.json           # re-check a saved --benchmark_format=json output
    bench/compare.py --save results.json           # keep the raw JSON of this run
    bench/compare.py --markdown                    # tables as Markdown (for bench/README.md)
    bench/compare.py --clock cpu                   # judge bars on CPU time (single-threaded runs on a loaded machine)
    bench/compare.py -- --benchmark_filter=Gemm    # anything after -- goes to ember_bench
    bench/compare.py --peers                       # Ember beside LibTorch in one run, judged as ratios
                                                   # (bench/peers/compare_peers.py says how)

Rates are decimal: GB/s = 1e9 bytes/s, GFLOP/s = 1e9 FLOP/s (Google Benchmark's console output prints bytes in
binary GiB/s). Exits 1 when a bar is missed, 2 when a benchmark needed by a bar is missing.
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (label, kind, benchmark(s), bar). kind "min": value must be >= bar; "max": value must be <= bar.
BARS = [
    ("GEMM 1024 f32, Ember / raw cblas_sgemm", "min", ("BM_Gemm_Ember/1024/real_time", "BM_Gemm_RawBlas/1024/real_time"), 0.95),
    ("add 16M f32 (GB/s)", "min", "BM_Add_16M/real_time", 12.0),
    ("tanh 16M f32 (GB/s)", "min", "BM_Tanh_16M/real_time", 10.0),
    ("tiny-op overhead, add of 4 on Cpu f32 (ns/op)", "max", "BM_TinyAdd_Cpu/real_time", 1000.0),
    ("conv2d 32->64 16x16 b32 fwd+bwd, Autodiff (ms)", "max", "BM_Conv2d_FwdBwd_Autodiff/real_time", 15.0),
    ("digits MLP 64-256-256-10 train epoch, Adam b64 (ms)", "max", "BM_DigitsMlpTrainEpoch/real_time", 12.0),
    ("digits MLP batch-1 inference (k samples/s)", "min", "BM_DigitsMlpInferBatch1/real_time", 150.0),
]

TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}

# Table order (random interleaving shuffles the JSON): by family, then by numeric argument.
ORDER = ["BM_Gemm_Ember", "BM_Gemm_RawBlas", "BM_Add", "BM_Relu", "BM_Tanh", "BM_Gelu", "BM_Sum_", "BM_SumDim",
         "BM_Conv2d_Fwd/", "BM_Conv2d_FwdBwd", "BM_TinyAdd_Cpu", "BM_TinyAdd_Autodiff/", "BM_TinyAdd_AutodiffTracked",
         "BM_DigitsMlpTrainEpoch", "BM_DigitsMlpInferBatch1"]


def order_key(name):
    family = next((i for i, p in enumerate(ORDER) if name.startswith(p)), len(ORDER))
    args = [int(t.split(":")[-1]) for t in name.split("/")[1:] if t.split(":")[-1].isdigit()]
    return family, args, name


def run_bench(path, repetitions, extra):
    cmd = [path, "--benchmark_format=json", f"--benchmark_repetitions={repetitions}"]
    if repetitions > 1:
        # Repetitions of different benchmarks interleaved in random order: load from other users of a shared
        # machine then hits Ember and its baseline alike instead of skewing one of them.
        cmd += ["--benchmark_report_aggregates_only=true", "--benchmark_enable_random_interleaving=true"]
    cmd += extra
    print("running:", " ".join(cmd), file=sys.stderr)
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out)


def medians(data):
    """run_name -> benchmark entry: the median aggregate when there are repetitions, else the single run."""
    res, stats = {}, {}
    for b in data["benchmarks"]:
        name = b.get("run_name", b["name"])
        if b.get("run_type") == "aggregate":
            stats.setdefault(name, {})[b["aggregate_name"]] = b
        else:
            res.setdefault(name, b)
    for name, agg in stats.items():
        if "median" in agg:
            entry = dict(agg["median"])
            if "cv" in agg:
                entry["_cv"] = agg["cv"]["real_time"]
            res[name] = entry
    return res


def time_ns(b, clock="real"):
    return b[f"{clock}_time"] * TO_NS[b.get("time_unit", "ns")]


def scaled(b, key, clock):
    """Counter `key` (a rate over real time, as the benchmarks use UseRealTime) re-expressed over `clock`."""
    return b[key] * (b["real_time"] / b["cpu_time"] if clock == "cpu" else 1.0)


def fmt_time(ns):
    if ns >= 1e6:
        return f"{ns / 1e6:.3f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} us"
    return f"{ns:.1f} ns"


def rate(b, clock="real"):
    if "FLOP/s" in b:
        return f"{scaled(b, 'FLOP/s', clock) / 1e9:.1f} GFLOP/s"
    if "bytes_per_second" in b:
        return f"{scaled(b, 'bytes_per_second', clock) / 1e9:.2f} GB/s"
    return ""


def table(headers, rows, markdown):
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*headers), fmt.format(*("-" * w for w in widths))] + [fmt.format(*r) for r in rows])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", help="the benchmark binary (default: build-bench/bench/ember_bench, with --peers "
                                    "build/bench/peers/ember_peer_bench)")
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--json", help="read results from this file instead of running the benchmark")
    ap.add_argument("--save", help="write the raw JSON results here")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--clock", choices=("real", "cpu"), default="real",
                    help="judge the bars on wall-clock time (default) or on the main thread's CPU time, which "
                         "leaves out time the process was preempted on a loaded machine (single-threaded runs only)")
    ap.add_argument("--peers", action="store_true",
                    help="run bench/peers' ember_peer_bench (Ember and LibTorch interleaved in one process) and "
                         "judge Ember/LibTorch ratios; --bench defaults to build/bench/peers/ember_peer_bench")
    ap.add_argument("--threads", default="1,2", help="--peers: the thread counts to run, comma-separated")
    ap.add_argument("extra", nargs="*", help="extra ember_bench arguments (after --)")
    args = ap.parse_args()
    if args.peers:
        sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
        import compare_peers
        args.bench = args.bench or os.path.join(ROOT, "build", "bench", "peers", "ember_peer_bench")
        compare_peers.judge(args, medians, time_ns, table, fmt_time)

    args.bench = args.bench or os.path.join(ROOT, "build-bench", "bench", "ember_bench")
    load_before = os.getloadavg()
    if args.json:
        with open(args.json) as f:
            data = json.load(f)
    else:
        data = run_bench(args.bench, args.repetitions, args.extra)
    load_after = os.getloadavg()
    if args.save:
        with open(args.save, "w") as f:
            json.dump(data, f, indent=1)

    ctx = data.get("context", {})
    print(f"date: {ctx.get('date', datetime.datetime.now().isoformat())}  host: {ctx.get('host_name', platform.node())}"
          f"  cpus: {ctx.get('num_cpus', '?')} @ {ctx.get('mhz_per_cpu', '?')} MHz"
          f"  ember_threads: {ctx.get('ember_threads', '?')}  OPENBLAS_CORETYPE: {ctx.get('OPENBLAS_CORETYPE', '-')}")
    if args.json:
        print(f"load average recorded by the benchmark: {ctx.get('load_avg', '?')}")
    else:
        print(f"load average before: {' '.join(f'{v:.2f}' for v in load_before)}"
              f"  after: {' '.join(f'{v:.2f}' for v in load_after)}")
    print()

    res = medians(data)
    rows = []
    for name, b in sorted(res.items(), key=lambda kv: order_key(kv[0])):
        cv = f"{100 * b['_cv']:.1f}%" if "_cv" in b else ""
        rows.append([name.replace("/real_time", ""), fmt_time(time_ns(b)), rate(b), fmt_time(time_ns(b, "cpu")),
                     rate(b, "cpu"), cv])
    stat = "median" if args.repetitions > 1 or args.json else "single run"
    print(table(["benchmark", f"wall time ({stat})", "rate (wall)", "cpu time", "rate (cpu)", "cv (wall)"], rows,
                args.markdown))
    print()

    gemm_rows = []
    for n in (256, 512, 1024, 2048):
        e, r = res.get(f"BM_Gemm_Ember/{n}/real_time"), res.get(f"BM_Gemm_RawBlas/{n}/real_time")
        if e and r:
            row = [str(n)]
            for clock in ("real", "cpu"):
                fe, fr = scaled(e, "FLOP/s", clock), scaled(r, "FLOP/s", clock)
                row += [f"{fe / 1e9:.1f}", f"{fr / 1e9:.1f}", f"{fe / fr:.3f}"]
            gemm_rows.append(row)
    if gemm_rows:
        print(table(["GEMM n", "Ember GFLOP/s (wall)", "raw GFLOP/s (wall)", "Ember/raw (wall)", "Ember GFLOP/s (cpu)",
                     "raw GFLOP/s (cpu)", "Ember/raw (cpu)"], gemm_rows, args.markdown))
        print()

    def measure(kind, names, label, clock):
        if isinstance(names, tuple):  # ratio of FLOP rates
            return scaled(res[names[0]], "FLOP/s", clock) / scaled(res[names[1]], "FLOP/s", clock)
        if "GB/s" in label:
            return scaled(res[names], "bytes_per_second", clock) / 1e9
        if "(ns/op)" in label:
            return time_ns(res[names], clock)
        if "(k samples/s)" in label:
            return 1e6 / time_ns(res[names], clock)
        return time_ns(res[names], clock) / 1e6

    missing, missed, bar_rows = False, False, []
    for label, kind, names, bar in BARS:
        try:
            values = {c: measure(kind, names, label, c) for c in ("real", "cpu")}
        except KeyError as e:
            missing = True
            bar_rows.append([label, "missing " + str(e), "", "", "", "MISSING"])
            continue
        digits = 3 if isinstance(names, tuple) else 2
        shown = {c: f"{v:.{digits}f}" for c, v in values.items()}
        bar_s = (">= " if kind == "min" else "<= ") + f"{bar:g}"
        value = values[args.clock]
        ratio = value / bar if kind == "min" else bar / value  # >= 1 means the bar is met
        ok = ratio >= 1.0
        missed |= not ok
        bar_rows.append([label, shown["real"], shown["cpu"], bar_s, f"{ratio:.2f}", "PASS" if ok else "MISS"])
    print(table(["bar", "wall", "cpu", "bar", f"margin on {'wall' if args.clock == 'real' else 'cpu'} (>=1 passes)", "result"], bar_rows,
                args.markdown))
    sys.exit(2 if missing else (1 if missed else 0))


if __name__ == "__main__":
    main()
