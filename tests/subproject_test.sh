#!/usr/bin/env bash
# Ember as a meson subproject: a parent project finds dependency('ember') (C ABI) and dependency('ember-cpp')
# (typed engine) through meson.override_dependency, and Ember's tests, tools, examples, bindings and benches stay
# out of the parent's build by default. Configure-only (no compile: the parent would rebuild all of Ember).
# Usage: subproject_test.sh <ember source root>
set -euo pipefail
src="$(cd "$1" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/parent/subprojects"
ln -s "$src" "$work/parent/subprojects/ember"
cat > "$work/parent/meson.build" <<'MESON'
project('parent', 'c', 'cpp', default_options : ['cpp_std=c++20'])
ember_c = dependency('ember')
ember_cpp = dependency('ember-cpp')
executable('uses_c_abi', 'main.c', dependencies : ember_c)
executable('uses_engine', 'main.cpp', dependencies : ember_cpp)
MESON
printf '#include "ember.h"\nint main(void) { return ember_version() == 0; }\n' > "$work/parent/main.c"
printf '#include "engine/ember.hpp"\nint main() { return 0; }\n' > "$work/parent/main.cpp"
meson setup "$work/build" "$work/parent" -Dember:vulkan=disabled -Dember:cuda=disabled > "$work/setup.log" 2>&1 ||
  { cat "$work/setup.log"; echo "FAIL: the parent project does not configure"; exit 1; }
targets="$(meson introspect --targets "$work/build")"
for t in uses_c_abi uses_engine ember; do
  grep -q "\"name\": \"$t\"" <<<"$targets" || { echo "FAIL: target $t missing"; exit 1; }
done
for t in op_suite ember_bench train_digits_c; do
  if grep -q "\"name\": \"$t\"" <<<"$targets"; then echo "FAIL: $t is built in a parent project"; exit 1; fi
done
# The CLI (an executable named ember) must not be there either: the only "ember" target is libember.
if grep -q '"filename": \[[^]]*/tools/ember"' <<<"$targets"; then echo "FAIL: the ember CLI is built in a parent project"; exit 1; fi
echo "ok: dependency('ember') and dependency('ember-cpp') resolve; tests, tools, examples and benches left out"
