#pragma once
// Which library runs the CPU backend's f32 GEMMs (matmul.cpp's gemm<float>: matmul, linear without oneDNN's
// primitive, the im2col convolutions, attention's products).
//
// OpenBLAS is the default. Its DYNAMIC_ARCH build picks a kernel set from the cpuid family / model at load time, and
// a model it does not know gets an old generic set: Debian 12's OpenBLAS 0.3.21 runs Prescott's SSE3 kernels on an
// Emerald Rapids Xeon (family 6, model 207), ~30 GFLOP/s where the AVX-512 FMA peak is ~175 and its own SkylakeX
// kernels reach ~150 (bench/README.md, "OpenBLAS on a CPU it does not know"). Its kernel set cannot be changed after
// load (OPENBLAS_CORETYPE is read by its constructor), so Ember asks it which set it runs and, where that set is for
// an older instruction set than the CPU has, sends f32 GEMMs to oneDNN's sgemm instead, which generates its kernels
// for the CPU it runs on. f64 GEMMs stay on OpenBLAS (oneDNN has no f64 GEMM).
#include <string>
#include <string_view>

namespace ember::cpu::blas {

enum class Sgemm { OpenBlas, OneDnn };

// Instruction-set levels, ordered: what a kernel set is written for, what the CPU runs.
enum class Isa { Unknown = -1, Sse = 0, Avx = 1, Avx2 = 2, Avx512 = 3 };

// The level an OpenBLAS core name's kernels use (openblas_get_corename()); Unknown for a name not in 0.3.21's x86-64
// list (a newer OpenBLAS's own name: trusted).
Isa kernel_isa(std::string_view openblas_core);
// The level this CPU and OS run (cpuid and XCR0, through the compiler's __builtin_cpu_supports).
Isa cpu_isa();
// The rule sgemm_route applies by default: oneDNN when OpenBLAS's kernels are known to be for an older level than
// the CPU's and oneDNN is built in.
Sgemm automatic_route(Isa kernels, Isa cpu, bool have_onednn);

// The route in force: EMBER_SGEMM=openblas|onednn in the environment, else automatic_route on this machine. Set by
// tests and benchmarks with set_sgemm_route (onednn is refused, as OpenBlas, in a build without oneDNN).
Sgemm sgemm_route();
void set_sgemm_route(Sgemm r);

// One line for logs and benchmark headers: "OpenBLAS Prescott kernels on an AVX-512 CPU: f32 GEMMs on oneDNN".
std::string describe();

}  // namespace ember::cpu::blas
