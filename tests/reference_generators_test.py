#!/usr/bin/python3
"""Checks that the reference generators reproduce the checked-in reference data byte for byte.

Every gen_*.py in tests/reference/, bindings/python/tests/, tests/fuzz/safetensors_corpus/ and the ONNX model dirs is run in a scratch
copy of its directory; each file it writes must equal the checked-in one, and each generator must write at least one file. Reference data that nobody can
regenerate, or that was edited by hand, fails here. Needs NumPy and SciPy (and torch for a generator that imports
it) under this interpreter (Debian's /usr/bin/python3); without them the test exits 77 (meson: skipped), saying
which module is missing.

Usage: reference_generators_test.py SOURCE_ROOT
"""
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77
GENERATOR_DIRS = ["tests/reference", "bindings/python/tests", "tests/fuzz/safetensors_corpus"]
GENERATOR_DIRS += ["tests/c_api/onnx_models"]  # issue 19 (h-onnx-surface): the surface tests' ONNX models
GENERATOR_DIRS += ["tests/onnx/models"]  # issue 19 (h-onnx-models): the PyTorch exports of onnx_models_test


def missing(modules):
    return [m for m in modules if importlib.util.find_spec(m) is None]


def imports_torch(path):
    with open(path) as f:
        return any(line.split()[:2] in (["import", "torch"], ["from", "torch"]) for line in f)


def scratch_tree(root, rel, tmp):
    """A stand-in for the source tree under tmp: `rel` is a real copy, everything else a symlink to the original, so
    a generator reading ../../data/... finds it while its writes land in the copy. Returns the copy's path."""
    root = os.path.abspath(root)
    here, source = tmp, root
    for part in rel.split("/"):
        for entry in os.listdir(source):
            if entry != part:
                os.symlink(os.path.join(source, entry), os.path.join(here, entry))
        here, source = os.path.join(here, part), os.path.join(source, part)
        if source != os.path.join(root, rel):
            os.mkdir(here)
    shutil.copytree(source, here, ignore=shutil.ignore_patterns("__pycache__"))
    return here


def check(gen_dir, name, scratch):
    """Runs generator `name` in `scratch` (a copy of gen_dir); returns a list of problems."""
    # Every file's mtime is set to the past, so the files the generator writes are the ones whose mtime moves.
    past = time.time() - 3600
    for entry in os.scandir(scratch):
        if entry.is_file():
            os.utime(entry.path, (past, past))
    run = subprocess.run([sys.executable, os.path.join(scratch, name)], cwd=scratch, capture_output=True, text=True)
    if run.returncode != 0:
        return [f"{name} exited {run.returncode}: {run.stderr.strip()[-2000:]}"]
    written = [e.name for e in os.scandir(scratch) if e.is_file() and os.stat(e.path).st_mtime > past + 1]
    if not written:
        return [f"{name} wrote no file"]
    problems = []
    for out in sorted(written):
        checked_in = os.path.join(gen_dir, out)
        with open(os.path.join(scratch, out), "rb") as f:
            got = f.read()
        if not os.path.exists(checked_in):
            problems.append(f"{name} wrote {out}, which is not checked in")
            continue
        with open(checked_in, "rb") as f:
            want = f.read()
        if got != want:
            at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            line = want[:at].count(b"\n") + 1
            problems.append(f"{name}: {out} differs from the checked-in file (first at byte {at}, line {line}; "
                            f"{len(got)} bytes generated, {len(want)} checked in)")
        else:
            print(f"  {name}: {out} reproduced ({len(got)} bytes)")
    return problems


def main(root):
    absent = missing(["numpy", "scipy"])
    if absent:
        print(f"skipped: {', '.join(absent)} not importable by {sys.executable}; the reference generators need them")
        return SKIP
    have_torch = not missing(["torch"])
    problems, skipped, ran = [], [], 0
    for rel in GENERATOR_DIRS:
        gen_dir = os.path.join(root, rel)
        for name in sorted(n for n in os.listdir(gen_dir) if n.startswith("gen_") and n.endswith(".py")):
            if imports_torch(os.path.join(gen_dir, name)) and not have_torch:
                skipped.append(f"{rel}/{name} (needs torch)")
                continue
            with tempfile.TemporaryDirectory() as tmp:
                scratch = scratch_tree(root, rel, tmp)
                print(f"{rel}/{name}")
                problems += check(gen_dir, name, scratch)
                ran += 1
    for p in problems:
        print("FAIL: " + p)
    if problems:
        return 1
    if ran == 0:
        print("FAIL: no generator found")
        return 1
    if skipped:
        print(f"skipped: {', '.join(skipped)}; {ran} other generators reproduced their files")
        return SKIP
    print(f"all {ran} generators reproduce the checked-in reference data byte for byte")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
