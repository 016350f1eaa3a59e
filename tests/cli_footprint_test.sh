#!/usr/bin/env bash
# The `ember` executable's footprint: it links no GPU library (GPU training lives in ember-train-<backend>.so
# plugins, the Vulkan loader is dlopen'ed), `ember --help` peaks at 15 MiB resident or less and a one-epoch CPU
# training run at 40 MiB or less. Further arguments are binaries or plugins built on the Vulkan backend, which must
# not link libvulkan either.
# Usage: cli_footprint_test.sh path/to/ember [binary...]
set -euo pipefail
ember="$1"
shift
fail() { echo "FAIL: $*"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

gpu_libs=$(ldd "$ember" | grep -oE 'lib(vulkan|cuda|cudart|cublas|cublasLt|cufft|nvrtc)[^ ]*' || true)
[ -z "$gpu_libs" ] || fail "ember links GPU libraries: $gpu_libs"
for bin in "$@"; do
  ! ldd "$bin" | grep -q 'libvulkan' || fail "$bin links libvulkan (the loader must be dlopen'ed)"
done

# Peak resident set in KiB of a command: /usr/bin/time's "Maximum resident set size" where installed, else the
# same figure (the kernel's rusage of the child) through python.
max_rss_kib() {
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%M' -o "$dir/rss" "$@" >/dev/null 2>"$dir/err" || { cat "$dir/err"; fail "$* failed"; }
    tail -n 1 "$dir/rss"
  else
    python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
  fi
}

help_kib=$(max_rss_kib "$ember" --help)
echo "ember --help: max RSS $help_kib KiB"
[ "$help_kib" -le $((15 * 1024)) ] || fail "ember --help peaks at $help_kib KiB (> 15 MiB)"

train_kib=$(max_rss_kib "$ember" train --epochs 1 --no-progress --out "$dir/m.emr")
echo "ember train --epochs 1 (cpu): max RSS $train_kib KiB"
[ "$train_kib" -le $((40 * 1024)) ] || fail "a one-epoch CPU training run peaks at $train_kib KiB (> 40 MiB)"
echo "cli_footprint_test: all checks passed"
