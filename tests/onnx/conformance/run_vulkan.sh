#!/usr/bin/env bash
# onnx_conformance_vulkan: the conformance runner on Vulkan (lavapipe in CI) with the Khronos validation layer on
# (EMBER_VULKAN_VALIDATION=1); any validation message (printed as "ember vulkan validation ...") fails the test,
# like the other Vulkan tests. The runner's own status passes through (77: no data / no device = skipped).
# Usage: run_vulkan.sh <onnx_conformance> [runner args...]
set -uo pipefail
runner=$1
shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
EMBER_VULKAN_VALIDATION=1 "$runner" --backend vulkan "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ "$rc" -eq 0 ] && grep -q "ember vulkan validation" "$log"; then
  echo "onnx_conformance_vulkan: validation messages (above)"
  exit 1
fi
exit "$rc"
