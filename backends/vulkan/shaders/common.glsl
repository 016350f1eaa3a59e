// Shared by every Ember compute shader: workgroup size from specialization constant 0 and the grid-stride loop
// bounds (launch.hpp dispatches at most 65535 workgroups, so each invocation may handle several items).
layout(local_size_x_id = 0) in;

#define GRID_STRIDE (gl_NumWorkGroups.x * gl_WorkGroupSize.x)
#define FOR_EACH(i, n) for (uint i = gl_GlobalInvocationID.x; i < (n); i += GRID_STRIDE)

// Up to 8 dims after merging (launch.hpp kMaxDims).
#define MAX_DIMS 8
