// Element type of the indexing shaders. Pure moves (gather, index_select) copy raw words: WORD64 (int64) or
// 32-bit (float, Bool words). Accumulating variants (scatter_add, index_select_add) need the arithmetic type and
// its "add": TYPE_F32 float +, TYPE_I64 int64 +, TYPE_U32 Bool words OR (the CPU's accumulate() for Bool).
#include "int64.glsl"
#if defined(TYPE_F32)
#define W float
#define ACCUMULATE(a, b) ((a) + (b))
#elif defined(TYPE_I64)
#define W int64_t
#define ACCUMULATE(a, b) ((a) + (b))
#elif defined(TYPE_U32)
#define W uint
#define ACCUMULATE(a, b) ((a) | (b))
#elif defined(WORD64)
#define W uvec2
#else
#define W uint
#endif
