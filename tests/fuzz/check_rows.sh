#!/usr/bin/env bash
# The c_api_fuzz_rows test: every function ember.h declares (EMBER_API) is called by the fuzzer (tests/fuzz sources,
# comments aside) or listed in not_fuzzed.txt with the reason it cannot be. A function appended to ember.h without a
# fuzz row fails here, so the fuzzer's reach does not silently shrink as the ABI grows.
#
# Usage: check_rows.sh <source root>
set -euo pipefail
src=$1
header=$src/c_api/include/ember.h
allow=$src/tests/fuzz/not_fuzzed.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Declared: the name before the first '(' of each EMBER_API declaration (declarations may span lines).
tr '\n' ' ' <"$header" | grep -oP 'EMBER_API\s[^;(]*?\bember_\w+\s*\(' | grep -oP 'ember_\w+(?=\s*\()' | sort -u \
  >"$tmp/declared"
[ -s "$tmp/declared" ] || { echo "c_api_fuzz_rows: no EMBER_API declaration found in $header"; exit 1; }

# Called: every ember_* name in the fuzzer's code with // comments stripped.
sed 's://.*$::' "$src"/tests/fuzz/*.cpp "$src"/tests/fuzz/*.hpp | grep -oP '\bember_\w+\b' | sort -u >"$tmp/called"

# Allowed: "name  reason" lines; '#' starts a comment. A line without a reason is itself an error.
status=0
: >"$tmp/allowed"
while read -r name reason; do
  [ -z "$name" ] && continue
  if [ -z "$reason" ]; then echo "c_api_fuzz_rows: $allow: '$name' has no reason"; status=1; fi
  if ! grep -qx "$name" "$tmp/declared"; then echo "c_api_fuzz_rows: $allow: '$name' is not in ember.h"; status=1; fi
  if grep -qx "$name" "$tmp/called"; then echo "c_api_fuzz_rows: $allow: '$name' is fuzzed: drop it from the list"; status=1; fi
  echo "$name" >>"$tmp/allowed"
done < <(sed 's/#.*$//' "$allow")
sort -u -o "$tmp/allowed" "$tmp/allowed"

missing=$(comm -23 "$tmp/declared" <(sort -u "$tmp/called" "$tmp/allowed"))
if [ -n "$missing" ]; then
  echo "c_api_fuzz_rows: ember.h functions without a row in tests/fuzz/fuzz_actions.cpp (add one, or list the"
  echo "function in tests/fuzz/not_fuzzed.txt with the reason it cannot be fuzzed):"
  echo "$missing" | sed 's/^/  /'
  status=1
fi
echo "c_api_fuzz_rows: $(wc -l <"$tmp/declared") functions in ember.h, $(comm -12 "$tmp/declared" "$tmp/called" | wc -l) fuzzed, $(wc -l <"$tmp/allowed") allowed unfuzzed"
exit $status
