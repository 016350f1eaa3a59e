"""bench/compare.py --peers: runs ember_peer_bench (bench/peers) once per thread count and judges every workload as
the ratio of Ember's median time to LibTorch's median time measured in the same process, with the repetitions of
all benchmarks randomly interleaved (load from other users of a shared machine then hits both sides alike).

    bench/compare.py --peers                              # build/bench/peers/ember_peer_bench, threads 1 and 2
    bench/compare.py --peers --threads 1 --repetitions 3
    bench/compare.py --peers --save run.json              # keeps the raw JSON of every thread count
    bench/compare.py --peers --json run.json              # re-judges a saved run
    bench/compare.py --peers --markdown -- --benchmark_min_time=0.1

Bars (issue 15), all judged on ratios from the same run, never on absolute times:
  * 1 thread: every workload's Ember/LibTorch time ratio <= 1.0; conv2d fwd+bwd <= 0.9; digits MLP epoch <= 0.55;
    batch-1 MLP inference >= 3x LibTorch's samples/s (time ratio <= 1/3);
  * Ember's 2-thread speed-up (1-thread time / 2-thread time) >= 1.7 on MLP batch-256 inference and conv fwd+bwd;
  * the digits MLP epoch's GFLOP/s on 1 thread as a fraction of the FMA peak measured in the same run >= 0.75.
"""
import json
import os
import subprocess
import sys

RATIO_BARS = [  # (workload prefix, bar on Ember/LibTorch time at 1 thread); the first matching prefix applies
    ("conv2d_fwdbwd/", 0.9),
    ("mlp_epoch", 0.55),
    ("mlp_infer/b1", 1.0 / 3.0),
    ("", 1.0),
]
SCALING_BAR = 1.7
SCALING_WORKLOADS = ("mlp_infer/b256", "conv2d_fwdbwd/")
PEAK_FRACTION_BAR = 0.75


def run_process(path, threads, repetitions, extra, benchmark_filter=None):
    cmd = [path, f"--threads={threads}", "--benchmark_format=json", f"--benchmark_repetitions={repetitions}",
           "--benchmark_min_time=0.2", "--benchmark_min_warmup_time=0.1"]
    if repetitions > 1:
        cmd += ["--benchmark_report_aggregates_only=true", "--benchmark_enable_random_interleaving=true"]
    user = [a for a in extra if a.startswith("--benchmark_filter=")]
    if benchmark_filter:
        # One POSIX regex holds both (Google Benchmark takes only the last --benchmark_filter); the FMA peak always
        # runs with Ember's side.
        wanted = user[-1].split("=", 1)[1] if user else ""
        cmd.append(f"--benchmark_filter=({wanted}).*/{benchmark_filter}/" + ("|fma_peak" if benchmark_filter == "ember" else ""))
        extra = [a for a in extra if a not in user]
    cmd += extra
    print("running:", " ".join(cmd), file=sys.stderr)
    return json.loads(subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout)


def run(path, threads, repetitions, extra):
    """One thread: both sides in one process, repetitions randomly interleaved. More threads: alternating processes
    (Ember's side, then LibTorch's, `repetitions` times) and the median of each benchmark over them, so that neither
    side's idle threads (LibTorch's OpenMP workers and OpenBLAS's threads spin-wait after a parallel region) sit on
    the cores the other side needs."""
    load_before = os.getloadavg()
    if threads == 1:
        data = run_process(path, threads, repetitions, extra)
    else:
        samples, data = {}, None
        for _ in range(repetitions):
            for side in ("ember", "torch"):
                d = run_process(path, threads, 1, extra, side)
                data = data or d
                for b in d["benchmarks"]:
                    samples.setdefault(b.get("run_name", b["name"]), []).append(b)
        data["benchmarks"] = [sorted(v, key=lambda b: b["real_time"])[len(v) // 2] for v in samples.values()]
    data["load_before"], data["load_after"] = list(load_before), list(os.getloadavg())
    return data


def pairs(res, time_ns):
    """workload -> (ember ns, torch ns, ember entry) for every workload measured on both sides."""
    out = {}
    for name, b in res.items():
        if "/ember/" not in name:
            continue
        workload = name.split("/ember/")[0]
        t = res.get(name.replace("/ember/", "/torch/"))
        if t:
            out[workload] = (time_ns(b), time_ns(t), b)
    return out


def fma_peak(res):
    """(label, FLOP/s) of the fastest FMA width measured, or None."""
    best = None
    for name, b in res.items():
        if name.startswith("fma_peak/") and "FLOP/s" in b and (best is None or b["FLOP/s"] > best[1]):
            best = (name.split("/")[1], b["FLOP/s"])
    return best


def judge(args, medians, time_ns, table, fmt_time):
    path = args.bench
    threads = [int(t) for t in args.threads.split(",")]
    if args.json:
        with open(args.json) as f:
            runs = {int(k): v for k, v in json.load(f).items()}
    else:
        runs = {t: run(path, t, args.repetitions, args.extra) for t in threads}
    if args.save:
        with open(args.save, "w") as f:
            json.dump(runs, f, indent=1)

    missed, per_threads = False, {}
    for t, data in sorted(runs.items()):
        ctx = data.get("context", {})
        print(f"threads: {t}  date: {ctx.get('date', '?')}  host: {ctx.get('host_name', '?')}  cpus: "
              f"{ctx.get('num_cpus', '?')}  load before: {' '.join(f'{v:.2f}' for v in data['load_before'])}  "
              f"after: {' '.join(f'{v:.2f}' for v in data['load_after'])}")
        if "sgemm" in ctx:
            print(f"sgemm: {ctx['sgemm']}")
        res = medians(data)
        per_threads[t] = (res, pairs(res, time_ns))
        rows = []
        for workload, (e, p, _) in sorted(per_threads[t][1].items()):
            ratio = e / p
            bar = next(b for prefix, b in RATIO_BARS if workload.startswith(prefix))
            verdict = ""
            if t == 1:
                ok = ratio <= bar
                missed |= not ok
                verdict = "PASS" if ok else "MISS"
            rows.append([workload, fmt_time(e), fmt_time(p), f"{ratio:.3f}", f"<= {bar:.2f}" if t == 1 else "",
                         verdict])
        print(table(["workload", "Ember (median)", "LibTorch (median)", "Ember/LibTorch", "bar (1 thread)", "result"],
                    rows, args.markdown))
        peak = fma_peak(res)
        if peak:
            print(f"\nFMA peak on {t} thread(s): {peak[1] / 1e9:.1f} GFLOP/s ({peak[0]})")
        print()

    if 1 in per_threads:
        res, pr = per_threads[1]
        peak = fma_peak(res)
        if peak and "mlp_epoch" in pr:
            achieved = pr["mlp_epoch"][2].get("FLOP/s", 0.0)
            torch_rate = res.get("mlp_epoch/torch/real_time", {}).get("FLOP/s", 0.0)
            frac = achieved / peak[1]
            ok = frac >= PEAK_FRACTION_BAR
            missed |= not ok
            print(table(["1 thread", "GFLOP/s", "fraction of FMA peak", "bar", "result"], [
                ["FMA peak (" + peak[0] + ")", f"{peak[1] / 1e9:.1f}", "1.000", "", ""],
                ["digits MLP epoch, Ember", f"{achieved / 1e9:.1f}", f"{frac:.3f}", f">= {PEAK_FRACTION_BAR}",
                 "PASS" if ok else "MISS"],
                ["digits MLP epoch, LibTorch", f"{torch_rate / 1e9:.1f}", f"{torch_rate / peak[1]:.3f}", "", ""],
            ], args.markdown))
            print()
    if 1 in per_threads and len(per_threads) > 1:
        rows = []
        for t in sorted(per_threads):
            if t == 1:
                continue
            one, many = per_threads[1][1], per_threads[t][1]
            for workload in sorted(one):
                if workload not in many:
                    continue
                ember_speedup = one[workload][0] / many[workload][0]
                torch_speedup = one[workload][1] / many[workload][1]
                judged = workload.startswith(SCALING_WORKLOADS)
                verdict = ""
                if judged:
                    ok = ember_speedup >= SCALING_BAR
                    missed |= not ok
                    verdict = "PASS" if ok else "MISS"
                rows.append([workload, str(t), f"{ember_speedup:.2f}", f"{torch_speedup:.2f}",
                             f">= {SCALING_BAR}" if judged else "", verdict])
        print(table(["workload", "threads", "Ember speed-up vs 1 thread", "LibTorch speed-up", "bar", "result"], rows,
                    args.markdown))
    sys.exit(1 if missed else 0)
