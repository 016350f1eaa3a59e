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

# Every command has --help (exit 0, its options listed) and --version.
declare -A options=(
  [train]="--model --backend --epochs --batch-size --lr --precision --out --data --seed --threads --no-progress"
  [eval]="FILE --data"
  [inspect]="FILE"
  [fit]="--steps --lr --hidden --seed --threads"
  [version]="--version")
for cmd in "${!options[@]}"; do
  "$ember" $cmd --help >"$dir/help.txt" || fail "ember $cmd --help exited $?"
  grep -q "Usage: ember $cmd" "$dir/help.txt" || fail "ember $cmd --help prints no usage line"
  for opt in ${options[$cmd]}; do grep -qe "$opt" "$dir/help.txt" || fail "ember $cmd --help lacks $opt"; done
  "$ember" $cmd --version | grep -qE "^ember [0-9]+\.[0-9]+" || fail "ember $cmd --version"
done
"$ember" --help >"$dir/help.txt" || fail "ember --help exited $?"
for cmd in "${!options[@]}"; do grep -q "^  $cmd " "$dir/help.txt" || fail "ember --help lacks $cmd"; done
[ "$("$ember" --version)" = "$("$ember" version)" ] || fail "ember --version differs from ember version"
# --backend's choices come from backends/backend_list.hpp.
grep -q "cpu,vulkan,cuda" <("$ember" train --help) || fail "ember train --help does not list the backends"

# Usage errors exit 2 with the message and the command's usage line on stderr.
usage_error() {  # expected-text usage-line args...
  local want="$1" usage="$2"
  shift 2
  set +e
  "$ember" "$@" >/dev/null 2>"$dir/err.txt"
  local rc=$?
  set -e
  [ $rc -eq 2 ] || fail "ember $*: exit $rc, not 2"
  grep -qF -e "$want" "$dir/err.txt" || fail "ember $*: no '$want' in: $(cat "$dir/err.txt")"
  grep -qF -e "$usage" "$dir/err.txt" || fail "ember $*: no usage line '$usage' in: $(cat "$dir/err.txt")"
}
usage_error "--epochs: expects an integer >= 1, got 'nope'" "Usage: ember train [OPTIONS]" train --epochs nope
usage_error "--frobnicate" "Usage: ember train [OPTIONS]" train --frobnicate
usage_error "--lr: expects a number > 0" "Usage: ember train [OPTIONS]" train --lr -1
usage_error "--bogus" "Usage: ember fit [OPTIONS]" fit --bogus 1
usage_error "unknown command 'frobnicate'" "Usage: ember [OPTIONS] SUBCOMMAND" frobnicate
usage_error "FILE is required" "Usage: ember eval [OPTIONS] FILE" eval
usage_error "--model" "Usage: ember train [OPTIONS]" train --model resnet
usage_error "--backend" "Usage: ember train [OPTIONS]" train --backend tpu
usage_error "required" "Usage: ember [OPTIONS] SUBCOMMAND"
# A GPU backend trains in its plugin, ember-train-<backend>.so beside the executable: a missing, broken or foreign
# plugin fails cleanly (exit 1, no crash) with a message naming the file. A copy of ember in an empty directory
# stands in for an install without the plugin.
gpu=$("$ember" train --help | sed -n 's/.*built here: cpu, \([a-z]*\).*/\1/p')
if [ -n "$gpu" ]; then
  mkdir "$dir/alone"
  cp "$ember" "$dir/alone/ember"
  plugin="$dir/alone/ember-train-$gpu.so"
  plugin_error() {  # expected-text
    set +e
    out=$("$dir/alone/ember" train --backend "$gpu" --epochs 1 --no-progress --out "$dir/alone/m.emr" 2>&1)
    local rc=$?
    set -e
    [ $rc -eq 1 ] || fail "train --backend $gpu with plugin '$1': exit $rc: $out"
    echo "$out" | grep -qF -e "$1" || fail "train --backend $gpu: no '$1' in: $out"
  }
  plugin_error "ember-train-$gpu.so is not installed (looked in $dir/alone"
  printf 'not a shared object' >"$plugin"
  plugin_error "cannot load the $gpu trainer $plugin"
  cp "$(ldd "$ember" | awk '/libz\.so/ { print $3 }')" "$plugin"
  plugin_error "$plugin is not an ember training plugin (it exports no ember_train_plugin)"
fi
echo "cli_test: all checks passed"
