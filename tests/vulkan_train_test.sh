#!/usr/bin/env bash
# `ember train --backend vulkan` end to end: trains the digits MLP on the Vulkan backend (validation layer on), then
# evaluates the saved record on the CPU; fails below 90 % test accuracy (20 epochs reach ~98 %, like the CPU).
# Exits 77 (meson: skipped) when there is no Vulkan device.
set -euo pipefail
ember="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
set +e
out=$(EMBER_VULKAN_VALIDATION=1 "$ember" train --backend vulkan --epochs 5 --no-progress --out "$dir/m.emr" 2>&1)
rc=$?
set -e
echo "$out"
if [ $rc -ne 0 ]; then
  if echo "$out" | grep -qi "no physical device\|vkCreateInstance\|no device supports"; then
    echo "no Vulkan device: skipping"; exit 77
  fi
  exit 1
fi
if echo "$out" | grep -q "ember vulkan validation"; then
  echo "validation messages while training"; exit 1
fi
acc=$("$ember" eval "$dir/m.emr" | sed -n 's/.*test accuracy \([0-9.]*\)%.*/\1/p')
echo "vulkan-trained record: test accuracy $acc%"
python3 -c "import sys; sys.exit(0 if float('$acc') >= 90.0 else 1)"
