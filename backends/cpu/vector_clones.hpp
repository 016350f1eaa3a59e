#pragma once
// The CPU kernels' hot loops compiled for AVX-512, AVX2+FMA and baseline x86-64 and picked at load time
// (target_clones), so they run at vector speed on any x86-64 machine without -march=native. Not under
// ThreadSanitizer (the ifunc resolvers run before its runtime is initialized and crash the process at load) and not
// with clang (its target_clones differs); there the functions are compiled once, for the baseline.
//
// EMBER_CPU_CLONES_NO_CONTRACT also keeps multiplies and adds apart (no FMA contraction), so every clone rounds as
// the baseline does: for loops whose bits are compared with a composed or scalar path.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define EMBER_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define EMBER_CPU_CLONES_NO_CONTRACT \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default"), optimize("fp-contract=off")))
#else
#define EMBER_CPU_CLONES
#define EMBER_CPU_CLONES_NO_CONTRACT
#endif
