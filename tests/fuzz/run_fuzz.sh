#!/usr/bin/env bash
# The c_api_fuzz test: builds the C ABI fuzzer in its own clang build and runs it for a bounded time.
#
# Why a second build dir: the project compiles with g++, and libFuzzer (-fsanitize=fuzzer) exists only in clang.
# The fuzzer must also see coverage inside libember and catch its memory errors, so libember itself has to be
# compiled by clang with -fsanitize=fuzzer-no-link and ASan + UBSan; mixing those objects into the g++ build is
# not possible. So this configures <build>/fuzz-build (clang, sanitizers, CPU only, no tests/bench/tools) and
# builds the single target ember_fuzz; ccache makes the rebuilds of later runs cheap.
#
# Usage: run_fuzz.sh <source root> <fuzz build dir> <seconds> [extra libFuzzer args...]
# (EMBER_FUZZ_SECONDS, when set, replaces <seconds>: a longer local run.)
# EMBER_FUZZ_TARGET / EMBER_FUZZ_CORPUS pick another fuzzer of tests/fuzz and its seed corpus (default: ember_fuzz
# over tests/fuzz/corpus; the safetensors_fuzz test: safetensors_fuzz over tests/fuzz/safetensors_corpus).
# Exit 77 (meson's "skipped") when clang or libFuzzer's runtime is missing.
set -euo pipefail
# Absolute: the flags name files under src, and the compiler runs in the build dir.
src=$(realpath "$1") build=$2 seconds=${EMBER_FUZZ_SECONDS:-$3}
shift 3

cxx=${EMBER_FUZZ_CXX:-clang++-14}
if ! command -v "$cxx" >/dev/null; then
  echo "c_api_fuzz: skipped: $cxx not found (Debian: apt-get install clang-14 libclang-rt-14-dev)"
  exit 77
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' > "$probe/p.cpp"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" 2>"$probe/err"; then
  echo "c_api_fuzz: skipped: $cxx cannot link libFuzzer with ASan/UBSan (Debian: libclang-rt-14-dev):"
  cat "$probe/err"
  exit 77
fi

# Sanitized and instrumented everywhere; UB is fatal so that libFuzzer records it as a crash with its input.
# Third-party headers' known reports are exempt at compile time (ubsan_ignorelist.txt says which and why).
flags="-fsanitize=fuzzer-no-link -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
# -O1 with line tables only: the sanitizers' reports keep file:line frames, and the build (the larger part of the
# test's time: the whole runtime and the ONNX importer, instrumented) takes far less than at -O2 -g.
cflags="$flags -O1 -gline-tables-only -fsanitize-ignorelist=$src/tests/fuzz/ubsan_ignorelist.txt"
if [ -f "$build/build.ninja" ]; then
  meson configure "$build" -Dcpp_args="$cflags" -Dcpp_link_args="$flags" >/dev/null  # no-op when unchanged
else
  CXX="$cxx" meson setup "$build" "$src" --buildtype=plain \
    -Db_sanitize=address,undefined -Db_lundef=false -Dcpp_args="$cflags" -Dcpp_link_args="$flags" \
    -Dfuzz=true -Dvulkan=disabled -Dcuda=disabled -Dtests=disabled -Dbench=disabled -Dtools=disabled \
    -Dexamples=disabled -Dbindings=disabled >"$probe/setup.log" 2>&1 || { cat "$probe/setup.log"; exit 1; }
fi
start=$(date +%s)
target=${EMBER_FUZZ_TARGET:-ember_fuzz}
corpus=${EMBER_FUZZ_CORPUS:-$src/tests/fuzz/corpus}
ninja -C "$build" "tests/fuzz/$target"
echo "$target: build took $(($(date +%s) - start)) s"

# The checked-in corpus is read only; what the run discovers goes to a scratch dir (the first dir given is the
# one libFuzzer writes to). Allocations: a hostile size must come back as EMBER_ERR_OUT_OF_MEMORY, so ASan returns
# NULL (allocator_may_return_null) for anything above 64 MiB instead of trying (bigger tensors are legal but take tens
# of seconds per op under ASan, which libFuzzer would report as timeouts); libFuzzer's rss / malloc limits then
# only catch real runaway memory. detect_leaks: every input frees all it made (the harness frees its handles), so
# LeakSanitizer reports what libember itself leaks.
work="$build/corpus-new-$target"
mkdir -p "$work"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1:max_allocation_size_mb=64}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# A fixed seed (EMBER_FUZZ_SEED, 1 by default) makes the suite's run replay the same mutations on every machine, so a
# CI failure reproduces; explore further with another seed and a longer time (see CONTRIBUTING.md).
# -error_exitcode=1: libFuzzer's default for a crash, leak or broken rule is 77, which meson reads as "skipped".
"$build/tests/fuzz/$target" "$work" "$corpus" -max_total_time="$seconds" -seed="${EMBER_FUZZ_SEED:-1}" \
  -error_exitcode=1 -timeout=30 -rss_limit_mb=2048 -malloc_limit_mb=1024 -artifact_prefix="$build/" -print_final_stats=1 "$@"
