#!/usr/bin/env bash
# `ember train --model transformer --backend vulkan` and `ember generate --backend vulkan` (the training plugin,
# validation layer on): a tiny model for 4 steps gives the CPU's losses (to the 4 printed digits), and greedy
# sampling on Vulkan gives the CPU's text from the Vulkan-trained record. Exits 77 (meson: skipped) without a
# Vulkan device.
set -euo pipefail
ember="$1"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for i in $(seq 1 40); do printf 'A fool and his money are soon parted.\n%%\n'; done >"$dir/corpus.txt"
tiny=(--model transformer --data "$dir/corpus.txt" --context 8 --d-model 16 --heads 2 --layers 1 --batch-size 4
  --steps 4 --log-every 2 --lr 1e-2 --seed 7 --threads 1 --no-progress)
set +e
vk=$(EMBER_VULKAN_VALIDATION=1 "$ember" train "${tiny[@]}" --backend vulkan --out "$dir/vk.emr" 2>&1)
rc=$?
set -e
echo "$vk"
if [ $rc -ne 0 ]; then
  if echo "$vk" | grep -qi "no physical device\|vkCreateInstance\|no device supports"; then
    echo "no Vulkan device: skipping"; exit 77
  fi
  exit 1
fi
if echo "$vk" | grep -q "ember vulkan validation"; then echo "validation messages while training"; exit 1; fi
cpu=$("$ember" train "${tiny[@]}" --backend cpu --out "$dir/cpu.emr")
losses() { grep -E "^step" | sed -E 's/ +[0-9.]+ ms\/step//'; }
[ "$(echo "$vk" | losses)" = "$(echo "$cpu" | losses)" ] || { echo "Vulkan's losses differ from the CPU's:"; echo "$cpu"; exit 1; }
[ "$(echo "$vk" | losses | wc -l)" -eq 2 ] || { echo "expected 2 step lines"; exit 1; }
g_vk=$(EMBER_VULKAN_VALIDATION=1 "$ember" generate "$dir/vk.emr" --backend vulkan --prompt "A f" --length 6 --top-k 1 2>&1)
g_cpu=$("$ember" generate "$dir/vk.emr" --backend cpu --prompt "A f" --length 6 --top-k 1)
[ "$g_vk" = "$g_cpu" ] || { echo "greedy text on Vulkan '$g_vk', on the CPU '$g_cpu'"; exit 1; }
echo "vulkan lm: ok ('$g_vk')"
