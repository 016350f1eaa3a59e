#!/usr/bin/env bash
# Fails unless a backend plugin (libember-<name>.so) exports exactly its entry point, ember_backend_plugin
# (c_api/src/runtime/plugin_api.hpp), and links no libember. Usage: check_plugin_exports.sh libember-<name>.so
set -euo pipefail
lib="$1"
syms=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sort)
if [ "$syms" != "ember_backend_plugin" ]; then
  echo "$lib must export exactly ember_backend_plugin, exports:" >&2
  echo "$syms" | head -50 >&2
  exit 1
fi
echo "$lib exports ember_backend_plugin only"
