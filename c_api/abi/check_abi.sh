#!/usr/bin/env bash
# Compares the freshly built libember against the checked-in ABI baseline with abidiff (libabigail).
# Usage: check_abi.sh libember.so libember.abi libember.abignore include_dir
# Passes when the only differences are additions: new functions, new enum values, fields appended to an ember_*
# struct (libember.abignore). Fails on removed or changed functions and types. Exits 77 (meson: skipped) when
# abigail-tools is not installed. README.md here says how to update the baseline.
set -uo pipefail
lib="$1" baseline="$2" suppressions="$3" headers="$4"
if ! command -v abidiff >/dev/null 2>&1; then
  echo "SKIP: abidiff not found (install Debian's abigail-tools, listed in scripts/setup.sh)"
  exit 77
fi
out=$(abidiff --suppressions "$suppressions" --headers-dir2 "$headers" --drop-private-types \
  --exported-interfaces-only "$baseline" "$lib" 2>&1)
rc=$?
echo "$out"
# abidiff's exit status is a bit field: 1 error, 2 usage error, 4 ABI change, 8 incompatible change. Bit 4 is set
# for additions too, so the summary lines ("N Removed, M Changed ..., K Added") decide.
if (( rc & 3 )); then
  echo "abidiff failed to run (status $rc)" >&2
  exit 1
fi
removed=$(grep -oE '[0-9]+ Removed' <<<"$out" | awk '{s += $1} END {print s + 0}')
changed=$(grep -oE '[0-9]+ Changed' <<<"$out" | awk '{s += $1} END {print s + 0}')
if (( rc & 8 )) || (( removed > 0 )) || (( changed > 0 )); then
  echo "INCOMPATIBLE ABI change against the baseline: $removed removed, $changed changed (report above)." >&2
  exit 1
fi
if (( rc & 4 )); then
  echo "ABI extended compatibly (additions only); refresh the baseline (c_api/abi/README.md)."
fi
echo "ABI compatible with the baseline"
