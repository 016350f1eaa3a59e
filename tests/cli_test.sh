#!/usr/bin/env bash
# End-to-end test of the `ember` command line: train -> eval -> inspect, every precision, and bad files.
# Usage: cli_test.sh path/to/ember
set -euo pipefail
ember="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# A short MLP run must already classify well above chance and write the record and the curve.
"$ember" train --model mlp --epochs 3 --out "$dir/mlp.emr" --no-progress --threads 1 >"$dir/train.log"
grep -q "epoch   3/3" "$dir/train.log" || fail "train printed no epoch 3 line"
[ -s "$dir/mlp.emr" ] && [ -s "$dir/mlp.svg" ] || fail "train wrote no record or curve"
grep -q "<svg" "$dir/mlp.svg" || fail "curve is not an SVG"
acc=$("$ember" eval "$dir/mlp.emr" | sed -E 's/.*test accuracy ([0-9.]+)%.*/\1/')
awk -v a="$acc" 'BEGIN { exit !(a > 85) }' || fail "eval accuracy $acc% after 3 epochs"
# eval must reproduce the accuracy train reported for its last epoch.
last=$(grep "epoch   3/3" "$dir/train.log" | sed -E 's/.*test acc +([0-9.]+)%.*/\1/')
awk -v a="$acc" -v b="$last" 'BEGIN { d = a - b; exit !(d < 0.06 && d > -0.06) }' || fail "eval $acc% != train $last%"

# Every precision round-trips through a file; the CNN trains too.
for p in half double; do
  "$ember" train --model mlp --epochs 1 --precision $p --out "$dir/$p.emr" --no-progress --threads 1 >/dev/null
  "$ember" inspect "$dir/$p.emr" | grep -q "precision $p" || fail "inspect does not show precision $p"
  "$ember" eval "$dir/$p.emr" >/dev/null || fail "eval of a $p record"
done
"$ember" train --model cnn --epochs 1 --out "$dir/cnn.emr" --no-progress --threads 1 >/dev/null
"$ember" eval "$dir/cnn.emr" | grep -q "cnn model" || fail "eval of the cnn record"

# inspect shows the tree.
"$ember" inspect "$dir/mlp.emr" >"$dir/tree.txt"
for want in "fc1" "weight" "[64, 256]" "85,002"; do grep -qF "$want" "$dir/tree.txt" || fail "inspect lacks $want"; done

# Bad files fail cleanly, non-zero, with a message, fast.
head -c 100 "$dir/mlp.emr" >"$dir/truncated.emr"
printf 'not a record at all' >"$dir/garbage.emr"
printf 'EMBERREC\x01\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\x7f' >"$dir/huge.emr"
for f in truncated garbage huge missing; do
  for cmd in inspect eval; do
    set +e
    out=$(timeout 5 "$ember" $cmd "$dir/$f.emr" 2>&1)
    rc=$?
    set -e
    [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -lt 128 ] || fail "$cmd $f.emr: exit code $rc"
    echo "$out" | grep -q "error" || fail "$cmd $f.emr: no error message: $out"
  done
done

# Usage errors exit 2.
set +e
"$ember" train --epochs nope >/dev/null 2>&1; [ $? -eq 2 ] || fail "bad --epochs should exit 2"
"$ember" frobnicate >/dev/null 2>&1; [ $? -eq 2 ] || fail "unknown command should exit 2"
set -e
echo "cli_test: all checks passed"
