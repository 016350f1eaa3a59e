#!/usr/bin/env bash
# A Vulkan test binary run where the validation layer cannot be found (VK_LAYER_PATH pointed at an empty folder,
# which replaces the loader's layer search path) must fail with the reason, not exit 77: meson would report that
# as SKIP, and a broken setup would pass as "no device". Skips only where the machine has no Vulkan device at all.
set -u
binary=$1
empty=$(mktemp -d)
trap 'rm -rf "$empty"' EXIT
out=$(env -u VK_INSTANCE_LAYERS -u VK_ADD_LAYER_PATH VK_LAYER_PATH="$empty" "$binary" 2>&1)
rc=$?
echo "$out" | head -5
if [ $rc -eq 77 ]; then
  if echo "$out" | grep -qF "no Vulkan device: skipping"; then  # vulkan_main.cpp: no physical device at all
    echo "no Vulkan device on this machine: skipping"; exit 77
  fi
  echo "FAIL: the binary skipped (exit 77) although a device exists and only the layer is missing"; exit 1
fi
if [ $rc -eq 0 ]; then echo "FAIL: the binary passed without the validation layer"; exit 1; fi
needle="validation requested but VK_LAYER_KHRONOS_validation is not installed"
if ! echo "$out" | grep -qF "$needle"; then echo "FAIL: exit $rc without the message '$needle'"; exit 1; fi
if ! echo "$out" | grep -qF "a Vulkan device exists but the test context could not be created"; then
  echo "FAIL: exit $rc without saying that the context could not be created"; exit 1
fi
echo "ok: exit $rc with the reason"
