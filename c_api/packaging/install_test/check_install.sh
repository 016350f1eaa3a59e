#!/usr/bin/env bash
# The c_api_install test (meson.build here): installs the build into a temporary DESTDIR and checks there what
# README's Packaging section promises.
# usage: check_install.sh MESON BUILD_DIR THIS_DIR PREFIX LIBDIR VERSION ABI_VERSION stripped|unstripped
#          static|no-static PYTHON_SITE_DIR|none
set -euo pipefail
meson_cmd="$1" build="$2" here="$3" prefix="$4" libdir="$5" version="$6" abi="$7" strip="$8" static="$9"
python_site="${10}"
tmp=$(mktemp -d)
trap '[[ -n "${KEEP_TMP:-}" ]] || rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

root="$tmp/root"
"$meson_cmd" install -C "$build" --no-rebuild --quiet --destdir "$root" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log"; fail "meson install --destdir failed"; }
[[ "$libdir" == /* ]] || libdir="$prefix/$libdir"
lib="$root$libdir"
echo "installed into $root$prefix"

# SONAME: libember.so.<EMBER_ABI_VERSION>; the file name carries the release version; both links exist.
real="$lib/libember.so.$version"
[[ -f "$real" ]] || fail "$real not installed"
soname=$(readelf -d "$real" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ "$soname" == "libember.so.$abi" ]] || fail "SONAME is '$soname', expected libember.so.$abi (EMBER_ABI_VERSION)"
[[ "$(readlink "$lib/libember.so.$abi")" == "libember.so.$version" ]] ||
  fail "libember.so.$abi does not link to the library"
[[ -L "$lib/libember.so" ]] || fail "no libember.so development link"
echo "SONAME $soname, file libember.so.$version"

# Stripped on install (-Dstrip=true, the default): no symbol table and no debug info left, in libember and in
# every plugin installed beside it; unstripped (-Dstrip=false): libember keeps the boundary files' DWARF.
for so in "$real" "$lib"/libember-*.so; do
  [[ -e "$so" ]] || continue
  sections=$(readelf -S -W "$so")
  if [[ "$strip" == stripped ]]; then
    grep -qE '\.symtab|\.debug_info' <<<"$sections" && fail "$(basename "$so") is not stripped"
  elif [[ "$so" == "$real" ]]; then
    grep -q '\.debug_info' <<<"$sections" || fail "$(basename "$so") lost its debug info with -Dstrip=false"
  fi
  echo "$(basename "$so"): $strip"
done

run_consumer() {  # run_consumer BINARY [env...]: must print the release's version (ember_version()) and 1 + 2 = 3
  local out
  out=$(env "${@:2}" "$1") || fail "$1 failed: $out"
  [[ "$out" == "ember $version: 1 + 2 = 3 on cpu" ]] || fail "$1 printed '$out'"
  echo "  $(basename "$1"): $out"
}
cc=${CC:-cc}

use_plugins() {  # use_plugins WHAT BINARY [env...]: each installed GPU plugin is found and loaded by BINARY
  local plugin name out
  for plugin in "$lib"/libember-*.so; do
    [[ -e "$plugin" ]] || continue
    name=$(basename "$plugin" .so)
    name=${name#libember-}
    out=$(env -u EMBER_PLUGIN_PATH "${@:3}" "$2" "$name") || true
    if [[ "$out" == *"1 + 2 = 3 on $name"* ]]; then
      echo "  $name plugin, $1: $out"
      continue
    fi
    # Found and loaded, but this machine has no such device: the message then names no missing or refused file.
    [[ "$out" == "no $name device"* && "$out" != *"not found"* && "$out" != *"cannot load"* ]] ||
      fail "$name plugin, $1: $out"
    echo "  $name plugin loaded by $1; no device here: $out"
  done
}

# pkg-config: ember.pc from the staged install (the sysroot prefixes its paths with DESTDIR).
export PKG_CONFIG_PATH="$lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$root" PKG_CONFIG_LIBDIR="$lib/pkgconfig"
[[ "$(pkg-config --modversion ember)" == "$version" ]] || fail "ember.pc says version $(pkg-config --modversion ember)"
# shellcheck disable=SC2046
"$cc" -o "$tmp/consumer_pkgconfig" "$here/consumer.c" $(pkg-config --cflags --libs ember)
echo "pkg-config ember:"
run_consumer "$tmp/consumer_pkgconfig" LD_LIBRARY_PATH="$lib"
use_plugins "a program linked to libember.so (plugins beside it)" "$tmp/consumer_pkgconfig" LD_LIBRARY_PATH="$lib"

# CMake: find_package(Ember <major.minor>) through the staged prefix, then a request for a newer release fails.
IFS=. read -r major minor _ <<<"$version"
cmake_build() {  # cmake_build DIR [-D...]
  cmake -S "$here" -B "$1" -DCMAKE_PREFIX_PATH="$root$prefix" -DCMAKE_C_COMPILER="$cc" "${@:2}" \
    >"$1.log" 2>&1 && cmake --build "$1" >>"$1.log" 2>&1
}
cmake_build "$tmp/cmake_shared" -DEMBER_REQUEST="$major.$minor" ||
  { cat "$tmp/cmake_shared.log"; fail "CMake consumer"; }
echo "find_package(Ember $major.$minor), Ember::ember:"
run_consumer "$tmp/cmake_shared/consumer" LD_LIBRARY_PATH="$lib"
grep -q "NEEDED.*\[libember.so.$abi\]" <<<"$(readelf -d "$tmp/cmake_shared/consumer")" ||
  fail "CMake consumer does not need libember.so.$abi"
newer="$major.$((minor + 1))"
cmake_build "$tmp/cmake_newer" -DEMBER_REQUEST="$newer" && fail "find_package(Ember $newer) accepted release $version"
grep -q "requested version \"$newer\"" "$tmp/cmake_newer.log" ||
  fail "find_package(Ember $newer) failed for another reason"
echo "find_package(Ember $newer) refused, as it must be"

if [[ "$static" == static ]]; then
  archive="$lib/libember.a"
  [[ -f "$archive" ]] || fail "libember.a not installed"
  # Only ember_* is defined globally. Exempt: weak (W/V) and GNU-unique (u) definitions, the one-per-program
  # objects of C++ (inline functions' static locals, template statics) that objcopy cannot make local.
  globals=$(nm -g --defined-only "$archive")
  leaked=$(awk 'NF == 3 && $2 !~ /^[WVwvu]$/ && $3 !~ /^ember_/ {print $3}' <<<"$globals")
  [[ -z "$leaked" ]] || fail "libember.a defines non-ember globals: $(head -5 <<<"$leaked")"
  grep -q ' T ember_tensor_add$' <<<"$globals" || fail "libember.a lacks ember_tensor_add"
  echo "libember.a exports ember_* only"
  libs=$(pkg-config --static --libs ember)
  # shellcheck disable=SC2086
  "$cc" -o "$tmp/consumer_static" "$here/consumer.c" $(pkg-config --cflags ember) ${libs/-lember/-l:libember.a}
  echo "pkg-config --static ember:"
  run_consumer "$tmp/consumer_static" LD_LIBRARY_PATH=
  cmake_build "$tmp/cmake_static" -DEMBER_REQUEST="$major.$minor" -DEMBER_STATIC=ON ||
    { cat "$tmp/cmake_static.log"; fail "CMake consumer of Ember::ember_static"; }
  echo "Ember::ember_static:"
  run_consumer "$tmp/cmake_static/consumer" LD_LIBRARY_PATH=
  for exe in "$tmp/consumer_static" "$tmp/cmake_static/consumer"; do
    grep -q 'NEEDED.*libember' <<<"$(readelf -d "$exe")" && fail "$exe still needs libember.so"
  done
  echo "static consumers need no libember.so"
  # The GPU backends stay plugins: a static program finds them next to itself or through EMBER_PLUGIN_PATH.
  use_plugins "the static consumer with EMBER_PLUGIN_PATH" "$tmp/consumer_static" EMBER_PLUGIN_PATH="$lib" \
    LD_LIBRARY_PATH=
fi

# The description under share/ember, where the installed loader finds it by default: its ABI version is the
# SONAME's, and every function it describes is exported by the installed (stripped) library.
share="$root$prefix/share/ember"
exported=$(nm -D --defined-only "$real" | awk '{print $3}')
missing=$(/usr/bin/python3 -B -c '
import sys
sys.path.insert(0, sys.argv[1])
import ember_api
api = ember_api.load()
if str(api["version"]["abi"]) != sys.argv[2]:
    print("description ABI version %s" % api["version"]["abi"])
exported = set(sys.argv[3].split())
print(" ".join(f["name"] for f in api["functions"] if f["name"] not in exported))
' "$share/tools/abi" "$abi" "$exported") || fail "the installed description does not load"
[[ -z "${missing// /}" ]] || fail "installed description vs library: $missing"
echo "share/ember/c_api/ember_api.json: ABI $abi, every described function exported"

# The bindings, where `meson install` put them (README: Packaging).
if [[ "$python_site" != none ]]; then
  site="$root$python_site"
  [[ -f "$site/ember/__init__.py" ]] || fail "the Python package is not in $site"
  out=$(cd "$tmp" && PYTHONPATH="$site" LD_LIBRARY_PATH="$lib" EMBER_LIBRARY= PYTHONDONTWRITEBYTECODE=1 \
    /usr/bin/python3 -c '
import sys, ember
from ember import _lib
lib = next(l.split()[-1] for l in open("/proc/self/maps") if "libember.so" in l)
assert ember.__file__.startswith(sys.argv[1]), ember.__file__
assert lib.startswith(sys.argv[2]), lib
print("1 + 2 = %g, package %s, library %s" % ((ember.full((1,), 1.0) + ember.full((1,), 2.0)).item(),
      ember.__file__, lib))
' "$site" "$lib") || fail "the installed Python package: $out"
  echo "python: $out"
fi
if [[ -n "${EMBER_TEST_LUAJIT:-}" ]]; then
  luadir="$root$prefix/share/lua/5.1"
  [[ -f "$luadir/ember.lua" ]] || fail "the Lua module is not in $luadir"
  out=$(cd "$tmp" && LUA_PATH="$luadir/?.lua" LD_LIBRARY_PATH="$lib" EMBER_LIBRARY= "$EMBER_TEST_LUAJIT" -e '
local ember = require("ember")
local lib
for line in io.lines("/proc/self/maps") do lib = lib or line:match("(/%S*libember%.so%S*)") end
print(string.format("1 + 2 = %g, module %s, library %s", (ember.full({1}, 1) + ember.full({1}, 2)):item(),
  package.searchpath("ember", package.path), lib))') || fail "the installed Lua module: $out"
  [[ "$out" == "1 + 2 = 3, module $luadir/ember.lua, library $lib/"* ]] || fail "the installed Lua module: $out"
  echo "luajit: $out"
fi
if [[ -n "${EMBER_TEST_CARGO:-}" ]]; then
  # The installed crates, built by a project outside the tree: ember-sys's build script generates its declarations
  # from the installed description, and the program links the installed libember.
  rust="$root$prefix/share/ember/bindings/rust"
  [[ -f "$rust/ember/Cargo.toml" ]] || fail "the Rust crates are not in $rust"
  mkdir -p "$tmp/rust/src"
  sed "s|@EMBER_RUST@|$rust|" "$here/rust_consumer/Cargo.toml.in" >"$tmp/rust/Cargo.toml"
  cp "$here/rust_consumer/src/main.rs" "$tmp/rust/src/"
  (cd "$tmp/rust" && CARGO_HOME="$tmp/cargo-home" CARGO_TARGET_DIR="$tmp/rust/target" RUSTC="$EMBER_TEST_RUSTC" \
    EMBER_LIB_DIR="$lib" "$EMBER_TEST_CARGO" build --offline --quiet) >"$tmp/cargo.log" 2>&1 ||
    { cat "$tmp/cargo.log"; fail "cargo build of a project depending on the installed crates"; }
  out=$(LD_LIBRARY_PATH="$lib" "$tmp/rust/target/debug/ember_consumer") || fail "the Rust consumer: $out"
  [[ "$out" == "1 + 2 = 3" ]] || fail "the Rust consumer printed '$out'"
  echo "rust: $out (crates from $rust)"
fi
echo "PASS"
