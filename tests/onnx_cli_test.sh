#!/usr/bin/env bash
# issue 19: `ember run MODEL.onnx` (tools/ember/run_onnx.cpp): outputs printed and written as .npy, several inputs
# and outputs, --list-ops, and the errors (wrong input count, a bad .npy, an unsupported operator). Models and
# expected values: tests/c_api/onnx_models/gen_onnx_models.py.
# Usage: onnx_cli_test.sh path/to/ember path/to/libember.so parser(0|1)
set -euo pipefail
ember="$1"
export EMBER_LIBRARY="$2"
parser="$3"
models="$(cd "$(dirname "$0")" && pwd)/c_api/onnx_models"
fail() { echo "FAIL: $*"; exit 1; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

# --list-ops: sorted names and a count line, in every build.
"$ember" run --list-ops >"$dir/ops"
grep -qx 'Identity' "$dir/ops" || fail "--list-ops lacks Identity"
count=$(tail -n 1 "$dir/ops" | grep -oE '^[0-9]+')
[ "$count" -eq "$(($(wc -l <"$dir/ops") - 1))" ] || fail "--list-ops count line disagrees with the list"
head -n -1 "$dir/ops" | sort -c || fail "--list-ops is not sorted"

if [ "$parser" != 1 ]; then
  if "$ember" run "$models/mlp.onnx" --input "$models/mlp_x.npy" >"$dir/out" 2>&1; then fail "loaded without a parser"; fi
  grep -q 'not available' "$dir/out" || { cat "$dir/out"; fail "no UNSUPPORTED message"; }
  echo "onnx_cli_test: no ONNX parser in this build: UNSUPPORTED checked"
  exit 0
fi

# The MLP: the output's shape and leading values printed, the times and backend, y.npy written.
"$ember" run "$models/mlp.onnx" --input "$models/mlp_x.npy" --output "$dir/y.npy" >"$dir/out"
cat "$dir/out"
grep -q "^backend: cpu$" "$dir/out" || fail "no backend line"
grep -qE "^output 0 'y': float32 \[5, 2\] -0\.3618[0-9]* 0\.9435[0-9]* " "$dir/out" || fail "wrong output line"
grep -qE '^load: [0-9.]+ ms, forward: [0-9.]+ ms$' "$dir/out" || fail "no timing line"
cmp -s <(head -c 8 "$dir/y.npy") <(printf '\x93NUMPY\x01\x00') || fail "y.npy is not an .npy file"
if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  /usr/bin/python3 - "$dir/y.npy" "$models/mlp_y.npy" <<'PY' || fail "y.npy differs from torch's output"
import sys
import numpy as np
got, want = np.load(sys.argv[1]), np.load(sys.argv[2])
assert got.dtype == np.float32 and got.shape == want.shape, (got.dtype, got.shape)
assert np.allclose(got, want, atol=1e-4), np.abs(got - want).max()
PY
fi

# --repeat: the steady-state time after the first run.
"$ember" run "$models/mlp.onnx" --input "$models/mlp_x.npy" --repeat 3 >"$dir/out_repeat"
grep -qE '^forward, mean of 2 more runs: [0-9.]+ ms$' "$dir/out_repeat" || fail "no --repeat line"

# Two inputs and two outputs; only the first written.
"$ember" run "$models/two_io.onnx" -i "$models/two_a.npy" "$models/two_b.npy" -o "$dir/sum.npy" >"$dir/out2"
grep -q "^output 1 'prod': float32 \[2, 3\]" "$dir/out2" || fail "no second output"
[ -s "$dir/sum.npy" ] || fail "sum.npy not written"

# Errors: exit 1 with the reason.
expect_error() {
  local what="$1" pattern="$2"
  shift 2
  if "$ember" "$@" >"$dir/err" 2>&1; then fail "$what: succeeded"; fi
  grep -q -- "$pattern" "$dir/err" || { cat "$dir/err"; fail "$what: no '$pattern' in the message"; }
}
expect_error "one input for two" "has 2 input(s) (a, b); 1 --input given" run "$models/two_io.onnx" -i "$models/two_a.npy"
printf 'not an npy file at all' >"$dir/bad.npy"
expect_error "not .npy" "no \\\\x93NUMPY magic" run "$models/mlp.onnx" -i "$dir/bad.npy"
head -c 140 "$models/mlp_x.npy" >"$dir/short.npy"
expect_error "truncated .npy" "needs 60 bytes of data, the file has 12" run "$models/mlp.onnx" -i "$dir/short.npy"
# A header claiming 4e18 float32 elements: refused from the sizes alone, before any allocation.
npy_with_header() {
  local h="$1"
  printf '\x93NUMPY\x01\x00'"\\x$(printf %02x ${#h})"'\x00%s' "$h"
  printf 'abcd'
}
npy_with_header "{'descr': '<f4', 'fortran_order': False, 'shape': (4000000000000000000,), }" >"$dir/huge.npy"
expect_error "huge shape" "is larger than" run "$models/mlp.onnx" -i "$dir/huge.npy"
npy_with_header "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }" >"$dir/big_endian.npy"
expect_error "big-endian" "big-endian data ('>f4') is not supported" run "$models/mlp.onnx" -i "$dir/big_endian.npy"
npy_with_header "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }" >"$dir/complex.npy"
expect_error "complex" "dtype '<c8' is not supported" run "$models/mlp.onnx" -i "$dir/complex.npy"
expect_error "unsupported operator" "NotAnOnnxOp" run "$models/unsupported.onnx" -i "$models/mlp_x.npy"
echo "onnx_cli_test: all checks passed"
