#!/usr/bin/env bash
# Fails when libember exports any dynamic symbol outside the C ABI (ember_*). Usage: check_exports.sh libember.so
set -euo pipefail
lib="$1"
syms=$(nm -D --defined-only "$lib" | awk '{print $NF}')
count=$(grep -c '^ember_' <<<"$syms" || true)
others=$(grep -v '^ember_' <<<"$syms" || true)
if [ -n "$others" ]; then
  echo "libember exports symbols outside the C ABI:" >&2
  echo "$others" | head -50 >&2
  exit 1
fi
echo "libember exports $count symbols, all ember_*"
