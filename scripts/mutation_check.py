#!/usr/bin/env python3
"""Mutation check: plants each bug of scripts/mutations.py in a scratch copy of the tree, rebuilds only what the
bug's tests need, runs those tests and reports whether they caught it. Not part of CI (a full run takes long).

  scripts/mutation_check.py                       # every mutation; table on stdout
  scripts/mutation_check.py --only commands_no_barriers,adam_composed_no_bias_correction
  scripts/mutation_check.py --list                # the mutations, their files and tests
  scripts/mutation_check.py --markdown tests/mutation_result.md --results /tmp/mut.jsonl --resume

The scratch copy (--scratch, default /tmp/ember-mutation/src) is a mirror of this checkout without .git and build
dirs, with its own build dir (src/build) configured once (-Dcuda=disabled); the mirror keeps timestamps, so ninja
rebuilds only the files a mutation touches and what depends on them (ccache makes the revert's rebuild cheap). Each mutation must
match its file's text exactly once, or it is reported as "stale" (the code changed under it: update the list).
A mutation is "caught" when a listed test fails (a nonzero exit other than 77, which is a skip), "survived" when
they all pass, "build-error" when the mutated tree does not compile (a bad mutation, not a catch).
Run it with `nice` on a shared machine.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from mutations import MUTATIONS  # noqa: E402

ROOT = HERE.parent


def sh(cmd: list[str], cwd: Path | None = None, timeout: float | None = None, log: Path | None = None) -> int:
    out = open(log, "a") if log else subprocess.DEVNULL
    try:
        return subprocess.run(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        return 124
    finally:
        if log:
            out.close()


EXCLUDED_TOP = ("build", ".gl", ".whl", ".git")  # build dirs (build*), git metadata, local caches


def sync_scratch(src: Path) -> None:
    """Mirrors this checkout into `src` (like rsync -a --delete): a file is copied only when its size or mtime
    differ, with its mtime kept, so unchanged files stay older than their objects and nothing is rebuilt for them."""
    src.mkdir(parents=True, exist_ok=True)
    seen: set[Path] = set()
    for dirpath, dirnames, filenames in os.walk(ROOT):
        rel_dir = Path(dirpath).relative_to(ROOT)
        if rel_dir == Path("."):
            dirnames[:] = [d for d in dirnames if not d.startswith(EXCLUDED_TOP)]
        dirnames[:] = [d for d in dirnames if d not in (".git", "__pycache__")]
        (src / rel_dir).mkdir(parents=True, exist_ok=True)
        seen.add(rel_dir)
        for name in filenames:
            rel = rel_dir / name
            seen.add(rel)
            a, b = ROOT / rel, src / rel
            sa = a.lstat()
            replaced = b.exists() or b.is_symlink()
            if replaced:
                sb = b.lstat()
                if sb.st_size == sa.st_size and int(sb.st_mtime) == int(sa.st_mtime):
                    continue
                b.unlink()
            if a.is_symlink():
                os.symlink(os.readlink(a), b)
            else:
                shutil.copy2(a, b)
                # A file replaced in the copy (a mutation restored by an interrupted run, an edit here) may be older
                # than objects built from other contents: stamp it now so ninja rebuilds what depends on it.
                if replaced:
                    os.utime(b)
    for dirpath, dirnames, filenames in os.walk(src, topdown=False):
        rel_dir = Path(dirpath).relative_to(src)
        if rel_dir.parts and rel_dir.parts[0].startswith(EXCLUDED_TOP):
            continue
        for name in filenames:
            if rel_dir / name not in seen:
                (src / rel_dir / name).unlink()
        if rel_dir not in seen and rel_dir != Path("."):
            shutil.rmtree(src / rel_dir, ignore_errors=True)


def configure(src: Path, build: Path) -> None:
    if (build / "build.ninja").exists():
        return
    env = dict(os.environ, PATH="/usr/local/cuda/bin:" + os.environ.get("PATH", ""))
    r = subprocess.run(["meson", "setup", str(build), "--buildtype=release", "-Dcuda=disabled"], cwd=src, env=env)
    if r.returncode != 0:
        sys.exit("meson setup of the scratch copy failed")


def introspect(build: Path, what: str):
    r = subprocess.run(["meson", "introspect", str(build), what], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


class Tests:
    """The scratch build's meson tests: which ninja targets each needs."""

    def __init__(self, build: Path):
        self.build = build
        self.refresh()

    def refresh(self) -> None:
        targets = {t["id"]: t for t in introspect(self.build, "--targets")}
        self.tests = {}
        for t in introspect(self.build, "--tests"):
            outs = []
            for dep in t.get("depends", []):
                for f in targets.get(dep, {}).get("filename", []):
                    outs.append(os.path.relpath(f, self.build))
            self.tests[t["name"]] = {"targets": outs, "protocol": t.get("protocol", "exitcode")}

    def targets(self, names: list[str]) -> list[str]:
        out: list[str] = []
        for n in names:
            if n not in self.tests:
                raise KeyError(f"no meson test named {n!r}")
            out += [t for t in self.tests[n]["targets"] if t not in out]
        return out


def build(tests: Tests, names: list[str], jobs: int, log: Path, timeout: float) -> bool:
    targets = tests.targets(names)
    return sh(["ninja", "-C", str(tests.build), f"-j{jobs}", *targets], log=log, timeout=timeout) == 0


def run_tests(tests: Tests, spec: list[str], log: Path, timeout: float) -> tuple[str, list[str]]:
    """Runs `name` or `name:gtest_filter` entries; returns ('caught'|'survived', details)."""
    failed, skipped = [], []
    for entry in spec:
        name, _, flt = entry.partition(":")
        cmd = ["meson", "test", "-C", str(tests.build), "--no-rebuild", "--print-errorlogs", name]
        if flt and tests.tests[name]["protocol"] == "gtest":
            cmd.append(f"--test-args=--gtest_filter={flt}")
        with open(log, "a") as f:
            f.write(f"\n$ {' '.join(cmd)}\n")
        start = time.time()
        rc = sh(cmd, log=log, timeout=timeout)
        # meson test exits 0 also when every test was skipped: read its summary from the log.
        text = log.read_text(errors="replace")
        tail = text[text.rfind("$ meson test"):]
        if rc != 0:
            failed.append(f"{entry} ({time.time() - start:.0f}s)")
        elif "Skipped:            1" in tail:
            skipped.append(entry)
    if failed:
        return "caught", failed
    return "survived", [f"skipped: {s}" for s in skipped]


def apply(path: Path, original: str, replacement: str) -> str | None:
    text = path.read_text()
    if text.count(original) != 1:
        return None
    path.write_text(text.replace(original, replacement, 1))
    return text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scratch", type=Path, default=Path("/tmp/ember-mutation"))
    ap.add_argument("--only", help="comma-separated mutation names")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-baseline", action="store_true", help="skip running the tests on the unmutated tree")
    ap.add_argument("--results", type=Path, help="append one JSON line per mutation here")
    ap.add_argument("--resume", action="store_true", help="skip mutations already in --results")
    ap.add_argument("--markdown", type=Path, help="write the result table here")
    ap.add_argument("--build-timeout", type=float, default=3600)
    ap.add_argument("--test-timeout", type=float, default=1200)
    args = ap.parse_args()

    chosen = MUTATIONS
    if args.only:
        want = set(args.only.split(","))
        chosen = [m for m in MUTATIONS if m["name"] in want]
        if missing := want - {m["name"] for m in chosen}:
            sys.exit(f"unknown mutations: {', '.join(sorted(missing))}")
    if args.list:
        for m in chosen:
            print(f"{m['name']:40} {m['area']:16} {m['file']:48} {', '.join(m['tests'])}")
        return 0

    # The build dir sits inside the copy, like a checkout's: compile commands then match this checkout's
    # (relative paths), so ccache serves every file the mutation did not touch.
    src = args.scratch / "src"
    bdir = src / "build"
    logs = args.scratch / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    sync_scratch(src)
    configure(src, bdir)
    tests = Tests(bdir)

    done: dict[str, dict] = {}
    if args.resume and args.results and args.results.exists():
        for line in args.results.read_text().splitlines():
            r = json.loads(line)
            done[r["name"]] = r
    todo = [m for m in chosen if m["name"] not in done]

    if not args.no_baseline and todo:
        names = sorted({e.partition(":")[0] for m in todo for e in m["tests"]})
        log = logs / "baseline.log"
        log.write_text("")
        print(f"baseline: building and running {len(names)} tests on the unmutated tree", flush=True)
        if not build(tests, names, args.jobs, log, args.build_timeout):
            sys.exit(f"the unmutated tree does not build: {log}")
        specs = sorted({e for m in todo for e in m["tests"]})
        verdict, details = run_tests(tests, specs, log, args.test_timeout)
        if verdict == "caught":
            sys.exit(f"tests fail on the unmutated tree ({', '.join(details)}): {log}")

    results = list(done.values())
    for i, m in enumerate(todo, 1):
        path = src / m["file"]
        log = logs / f"{m['name']}.log"
        log.write_text("")
        start = time.time()
        print(f"[{i}/{len(todo)}] {m['name']}: {m['file']}", flush=True)
        saved = apply(path, m["original"], m["replacement"]) if path.exists() else None
        if saved is None:
            verdict, details, build_s = "stale", ["original text not found exactly once"], 0.0
        else:
            try:
                ok = build(tests, [e.partition(":")[0] for e in m["tests"]], args.jobs, log, args.build_timeout)
                build_s = time.time() - start
                if not ok:
                    verdict, details = "build-error", [str(log)]
                else:
                    verdict, details = run_tests(tests, m["tests"], log, args.test_timeout)
            finally:
                path.write_text(saved)  # newer than the mutated objects: the next build recompiles it
        r = {"name": m["name"], "area": m["area"], "file": m["file"], "verdict": verdict, "details": details,
             "tests": m["tests"], "build_s": round(build_s), "total_s": round(time.time() - start),
             "why": m.get("why", "")}
        print(f"    {verdict} in {r['total_s']} s (build {r['build_s']} s) {'; '.join(details)}", flush=True)
        results.append(r)
        if args.results:
            with open(args.results, "a") as f:
                f.write(json.dumps(r) + "\n")

    order = {m["name"]: k for k, m in enumerate(MUTATIONS)}
    results.sort(key=lambda r: order.get(r["name"], 1 << 30))
    table = markdown(results)
    print(table)
    if args.markdown:
        args.markdown.write_text(table)
    return 0 if all(r["verdict"] == "caught" for r in results) else 1


def markdown(results: list[dict]) -> str:
    counts: dict[str, int] = {}
    for r in results:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    lines = ["| # | mutation | area | file | caught by | result | time |", "|---|---|---|---|---|---|---|"]
    for k, r in enumerate(results, 1):
        by = ", ".join(d.split(" (")[0] for d in r["details"]) if r["verdict"] == "caught" else "; ".join(r["details"])
        lines.append(f"| {k} | {r['name']} | {r['area']} | `{r['file']}` | {by} | **{r['verdict']}** | "
                     f"{r['total_s']} s |")
    summary = ", ".join(f"{v} {n}" for v, n in sorted(counts.items()))
    lines.append("")
    lines.append(f"{len(results)} mutations: {summary}.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
