-- Per-call overhead of a tiny op through the LuaJIT binding: `a + b` on two 1-element tensors and the result's
-- free, N times; prints one line `luajit ns_per_call=<float>` (bench/ffi_overhead reads it beside the other
-- languages'). The best of several repeats, the one least disturbed by other processes.
--
--   EMBER_LIBRARY=... LUA_PATH='bindings/lua/?.lua;build/bindings/lua/?.lua' luajit bench_overhead.lua [N] [--raw]
--
-- --raw times the bare C calls through ffi (ember_tensor_add + ember_tensor_free, no handle objects): the
-- difference is the safe layer's own cost (its line says `luajit_raw`).
local ffi = require("ffi")
local ember = require("ember")
local C = ember.C

local calls, raw = 200000, false
for _, a in ipairs(arg) do
  if a == "--raw" then raw = true else calls = assert(tonumber(a), "usage: bench_overhead.lua [N] [--raw]") end
end

ffi.cdef [[
struct ember_bench_timespec { long tv_sec; long tv_nsec; };
int clock_gettime(int clock_id, struct ember_bench_timespec* tp);
]]
local CLOCK_MONOTONIC = 1
local now_ts = ffi.new("struct ember_bench_timespec")
local function now()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, now_ts)
  return tonumber(now_ts.tv_sec) + tonumber(now_ts.tv_nsec) * 1e-9
end

local a, b = ember.ones({ 1 }), ember.ones({ 1 })

local function safe_loop(n)
  for _ = 1, n do
    local c = a + b
    c:free()
  end
end

local out = ffi.new("ember_tensor*[1]")
local function raw_loop(n)
  for _ = 1, n do
    if C.ember_tensor_add(a, b, out) ~= 0 then ember.check(1) end
    C.ember_tensor_free(out[0])
  end
end

local loop = raw and raw_loop or safe_loop
loop(math.max(1, math.floor(calls / 10))) -- warms up the JIT (its traces) and Ember's allocator
local best = math.huge
for _ = 1, 5 do
  local start = now()
  loop(calls)
  best = math.min(best, (now() - start) / calls)
end
print(string.format("%s ns_per_call=%.1f", raw and "luajit_raw" or "luajit", best * 1e9))
