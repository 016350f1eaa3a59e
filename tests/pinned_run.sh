#!/usr/bin/env bash
# Runs a seeded training program on one CPU thread (EMBER_NUM_THREADS=1: bit-reproducible on one build) and compares
# each "epoch N/M  loss X ... test acc[uracy] Y%" line it prints with the recorded values, within +-0.01 loss (a
# different compiler's rounding moves them by < 1e-3) and +-1.2 accuracy points (4 of the 360 test samples). The
# program's own exit status must be 0 too. A bar like "> 90 %" would not do: Adam without bias correction trains
# *better* on these runs and passed it.
# Usage: pinned_run.sh "LOSS:ACC LOSS:ACC ..." program args...   (one LOSS:ACC per epoch, in order)
set -euo pipefail
recorded=($1)
shift
out=$(EMBER_NUM_THREADS=1 "$@" 2>&1) || { echo "$out"; echo "FAIL: $* exited $?"; exit 1; }
echo "$out"
near() { awk -v v="$1" -v w="$2" -v t="$3" 'BEGIN { d = v - w; exit !(v != "" && d <= t && -d <= t) }'; }
epochs=$(echo "$out" | grep -cE "^epoch [0-9]+/[0-9]+ " || true)
[ "$epochs" -eq ${#recorded[@]} ] || { echo "FAIL: $epochs epoch lines, ${#recorded[@]} recorded"; exit 1; }
for i in "${!recorded[@]}"; do
  epoch=$((i + 1))
  want_loss=${recorded[$i]%%:*}
  want_acc=${recorded[$i]#*:}
  line=$(echo "$out" | grep -E "^epoch $epoch/")
  loss=$(echo "$line" | sed -E 's/.* loss ([0-9.]+) .*/\1/')
  acc=$(echo "$line" | sed -E 's/.*test acc(uracy)? +([0-9.]+)%.*/\2/')
  near "$loss" "$want_loss" 0.01 || { echo "FAIL: epoch $epoch: loss $loss, recorded $want_loss (+-0.01)"; exit 1; }
  near "$acc" "$want_acc" 1.2 || { echo "FAIL: epoch $epoch: test accuracy $acc%, recorded $want_acc% (+-1.2)"; exit 1; }
done
echo "pinned_run: ${#recorded[@]} epochs match the recorded losses and accuracies"
