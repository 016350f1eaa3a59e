// The element type of Int tensors (and of index tensors). Every shader that touches Int data is compiled twice
// (meson.build): as is, with 64-bit ints (needs the device feature shaderInt64), and with EMBER_NO_INT64 for
// devices without it, where Ember stores Int tensors as 32-bit ints (ContextOptions::shader_int64): int64_t and
// uint64_t then name 32-bit types, so arithmetic wraps around at 32 bits, like a 32-bit device int.
// Values pushed as two 32-bit words (low, high) are read with INT_FROM_WORDS: the low word alone in 32-bit mode
// (the host refuses values outside the int32 range there).
#ifdef EMBER_NO_INT64
#define int64_t int
#define uint64_t uint
#define INT_FROM_WORDS(w) int((w).x)
#define INT64_MIN_VALUE int(0x80000000u)
#define INT64_MAX_VALUE int(0x7FFFFFFFu)
#else
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#define INT_FROM_WORDS(w) int64_t(packUint2x32(w))
#define INT64_MIN_VALUE int64_t(0x8000000000000000ul)
#define INT64_MAX_VALUE int64_t(0x7FFFFFFFFFFFFFFFul)
#endif
