#!/usr/bin/env bash
# Installs what is missing (Debian 12 packages, idempotent), then configures Ember in ./build and builds what the
# main job needs: the `ember` command line (the CPU backend, records; GPU backends are plugins it loads on demand).
# The README's second command (`setup.sh all`, then `meson test`) builds everything, benches included.
# Usage: bash scripts/setup.sh [ninja targets...]   (default: tools/ember; `all` builds everything)
#        (from anywhere; run as root or with sudo available)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(g++ meson ninja-build pkg-config libopenblas-dev libgtest-dev libbenchmark-dev libcereal-dev libboost-dev
  zlib1g-dev abigail-tools python3 python3-numpy libfmt-dev libcli11-dev
  libkissfft-dev
  # issue 14: Xbyak (header-only) for the CPU's fused chains compiled to AVX-512 code at run time (optional in meson:
  # the chains run in their tiled interpreter without it).
  libxbyak-dev
  # Packaging (the c_api_install test): a CMake project built against the installed EmberConfig.cmake.
  cmake
  # Vulkan backend: loader + headers, lavapipe (a CPU Vulkan device, so it runs and is tested everywhere), the
  # Khronos validation layer the tests enable, shader compiler, VkFFT and its runtime GLSL compiler.
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers glslc glslang-dev spirv-tools libvkfft-dev
  # The C ABI fuzzer (tests/fuzz, the c_api_fuzz test): clang with libFuzzer and the sanitizer runtimes.
  clang-14 libclang-rt-14-dev
  # issue 12: the Rust binding's test (bindings/rust) builds with Debian's toolchain (rustc 1.63), not rustup's.
  rustc cargo
  # The LuaJIT binding's tests (bindings/lua).
  luajit
  # The C# binding (bindings/csharp): Mono's compiler and runtime (GZipStream included; no mono-devel needed).
  mono-mcs mono-runtime
  # issue 15: oneDNN for the CPU backend's convolutions and pooling (optional in meson: the im2col + GEMM path stays
  # when it is absent), and LibTorch's C++ API for bench/peers (built only when found).
  libdnnl-dev libtorch-dev
  # issue 19: the ONNX importer's parser (ONNX's protobuf schema and library) and ONNX's backend test suite, the
  # onnx_conformance_* tests' data; python3-onnx makes small test models.
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata python3-onnx)

missing=()
# issue 13: the language model's corpus (`ember train --model transformer`, data/README.md) and LibTorch, the peer
# of its training-step benchmark (bench/lm, built only when found).
packages+=(fortunes-min fortunes libtorch-dev)
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Meson 1.0 finds nvcc only on PATH (it ignores CUDACXX): expose the CUDA toolkit, when installed, to the setup.
cuda_path="$PATH"
[ -x /usr/local/cuda/bin/nvcc ] && cuda_path="/usr/local/cuda/bin:$PATH"
if [ -f build/build.ninja ]; then
  PATH="$cuda_path" meson setup --reconfigure build >/dev/null
else
  PATH="$cuda_path" meson setup build --buildtype=release
fi
targets=("$@")
((${#targets[@]})) || targets=(tools/ember)
ninja -C build -j"$(nproc)" "${targets[@]}"
