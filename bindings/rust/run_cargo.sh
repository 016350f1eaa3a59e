#!/usr/bin/env bash
# Runs Debian's cargo on the Rust binding for meson (bindings/rust/meson.build), offline, with everything it writes
# inside the meson build dir. The test first has the C example train the reference record.
#
#   run_cargo.sh CARGO RUSTC PYTHON LIBDIR BUILD_DIR test TRAIN_DIGITS_C DIGITS_CSV_GZ EPOCHS
#   run_cargo.sh CARGO RUSTC PYTHON LIBDIR BUILD_DIR overhead [N]      (the per-call overhead example, release)
set -euo pipefail
cargo=$1 rustc=$2 python=$3 libdir=$4 build=$5 what=$6
shift 6
here="$(cd "$(dirname "$0")" && pwd)"

# Debian's cargo would otherwise take whichever rustc / rustdoc come first on PATH (a rustup toolchain, say).
export RUSTC="$rustc"
[ -x "$(dirname "$rustc")/rustdoc" ] && export RUSTDOC="$(dirname "$rustc")/rustdoc"
export CARGO_HOME="$build/cargo-home"
export CARGO_TARGET_DIR="$build/target"
export EMBER_PYTHON="$python"
export EMBER_API_JSON="${EMBER_API_JSON:-$here/../../c_api/ember_api.json}"
export EMBER_LIB_DIR="$libdir"
# Test and example binaries find the libember.so just built (not an installed one) through an rpath.
export RUSTFLAGS="${RUSTFLAGS:-} -C link-arg=-Wl,-rpath,$libdir"
mkdir -p "$build"

case "$what" in
  test)
    train_digits_c=$1 digits=$2 epochs=$3
    ref="$build/train_digits_c.emr"
    EMBER_NUM_THREADS=1 "$train_digits_c" "$digits" "$epochs" "$ref"
    # One test thread: the digits test's epoch lines stay readable (stale handles are safe either way: a handle
    # carries a generation, so a freed one is reported even when its slot was reused by a parallel test).
    EMBER_NUM_THREADS=1 EMBER_DIGITS="$digits" EMBER_DIGITS_EPOCHS="$epochs" EMBER_REF_RECORD="$ref" \
      "$cargo" test --offline --manifest-path "$here/Cargo.toml" -- --test-threads=1 --nocapture
    ;;
  overhead)
    "$cargo" run --offline --quiet --release --manifest-path "$here/Cargo.toml" -p ember --example overhead -- "$@"
    ;;
  *)
    echo "run_cargo.sh: unknown action '$what' (test or overhead)" >&2
    exit 2
    ;;
esac
