#!/usr/bin/env bash
# Builds the static libember.a from the archives that make libember.so (c_api/packaging/meson.build):
# usage: make_static_lib.sh OUT.a strip-debug|keep-debug ARCHIVE.a...
# The archives are linked into one relocatable object (ld -r) whose only global definitions are the ember_*
# functions; everything else (Ember's C++ engine, its template instantiations) is made local, as the version
# script does for libember.so, so a program linking libember.a cannot clash with Ember's internals. COMDAT groups
# are dissolved first: a local symbol left in a group that the final link discards in favour of the program's own
# copy (same std:: instantiation) would be a dangling reference.
set -euo pipefail
out="$1" debug="$2"
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ld -r -o "$tmp/ember.o" --whole-archive "$@" --no-whole-archive
flags=(--wildcard --keep-global-symbol='ember_*' --remove-section=.group)
[[ "$debug" == strip-debug ]] && flags+=(--strip-debug)
objcopy "${flags[@]}" "$tmp/ember.o" "$tmp/ember_local.o"
rm -f "$out"
ar rcsD "$out" "$tmp/ember_local.o"
