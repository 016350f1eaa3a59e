-- ember: the LuaJIT binding of Ember's C ABI (libember).
--
--   local ember = require("ember")
--   local a = ember.tensor({{1, 2}, {3, 4}})
--   print((a + a * 2):to_table())
--
-- Everything ABI-specific comes from the generated module `ember_api` (bindings/lua/gen_ember_api.py run on
-- c_api/ember_api.json at build time): the ffi.cdef text, constants, enum values, struct layouts and each handle's
-- free function. This file is the safe layer on top of it:
--  * handles (ember_tensor*, ember_module*, ...) are cdata pointers with a metatable, freed by the garbage
--    collector through ffi.gc; `h:free()` frees at once and disarms the collector, so a handle is freed once;
--    a later use of it is passed to Ember, which reports it (EMBER_ERR_INVALID_HANDLE) like any other error;
--  * every non-OK status is raised as a Lua error: an ember.Error table {status, name, message} whose tostring is
--    "EMBER_ERR_SHAPE: <ember_last_error()>";
--  * enum arguments take the value, the full name ("EMBER_DTYPE_F32") or the short one ("f32");
--  * indices that Ember counts from 0 (param indices) are counted from 1 here, as Lua does.
-- The library is ffi.load(EMBER_LIBRARY) when that variable is set, else the system's libember.
local ffi = require("ffi")
local api = require("ember_api")

ffi.cdef(api.cdef)

local M = { api = api }

local function load_library()
  local path = os.getenv("EMBER_LIBRARY")
  if path and path ~= "" then return ffi.load(path) end
  local ok, lib = pcall(ffi.load, api.library)
  if ok then return lib end
  -- Without the development symlink (libember.so) only the SONAME file is there: libember.so.<ABI version> (the
  -- packaging's SONAME policy), before it libember.so.<major>.
  for _, soversion in ipairs({ api.version.abi, api.version.major }) do
    ok, lib = pcall(ffi.load, "lib" .. api.library .. ".so." .. soversion)
    if ok then return lib end
  end
  error("ember: cannot load lib" .. api.library .. ".so (set EMBER_LIBRARY to its path): " .. tostring(lib), 0)
end

local C = load_library()
M.C = C -- the raw functions, for what the safe layer does not cover

-- ---------------------------------------------------------------- constants and enums
M.enums = {} -- enum name -> {short name -> value}, e.g. M.enums.ember_dtype.f32 == 0
local enum_names = {} -- enum name -> {value -> short name}

-- The short name of a value is its name without the prefix all values of the enum share ("EMBER_DTYPE_").
local function common_prefix(values)
  if #values == 0 then return "" end
  local prefix = values[1].name
  for i = 2, #values do
    local name = values[i].name
    local n = 0
    while n < #prefix and n < #name and prefix:byte(n + 1) == name:byte(n + 1) do n = n + 1 end
    prefix = prefix:sub(1, n)
  end
  if #values == 1 then prefix = prefix:match("^(.*_)[^_]*$") or "" end
  return prefix:match("^(.*_)") or ""
end

for _, c in ipairs(api.constants or {}) do M[c.name] = c.value end
for _, e in ipairs(api.enums or {}) do
  local by_short, by_value = {}, {}
  local prefix = common_prefix(e.values)
  for _, v in ipairs(e.values) do
    local short = v.name:sub(#prefix + 1):lower()
    M[v.name] = v.value
    by_short[short], by_short[v.name] = v.value, v.value
    if by_value[v.value] == nil then by_value[v.value] = short end
  end
  M.enums[e.name], enum_names[e.name] = by_short, by_value
end

-- An enum argument as its int32 value: a number, "EMBER_..." or a short name.
local function enum_value(enum, v)
  if type(v) == "number" then return v end
  local value = M.enums[enum] and M.enums[enum][v]
  if value == nil then error(string.format("ember: %s is not a value of %s", tostring(v), enum), 3) end
  return value
end
M.enum_value = enum_value

-- The short name of an enum value ("f32"), or the number when the description does not know it.
function M.enum_name(enum, value)
  local names = enum_names[enum]
  return names and names[value] or value
end

-- ---------------------------------------------------------------- errors
local Error = {}
Error.__index = Error
Error.__tostring = function(e) return e.name .. ": " .. e.message end
M.Error = Error

-- Raises the status as an ember.Error carrying Ember's status name and this thread's last error message
-- (`extra` fields are added to the error, e.g. the load report of a failed strict load).
local function raise(status, extra)
  local e = extra or {}
  e.status, e.name, e.message = status, ffi.string(C.ember_status_name(status)), ffi.string(C.ember_last_error())
  error(setmetatable(e, Error), 0)
end

local function check(status)
  if status ~= 0 then raise(status) end
end
M.check = check

function M.is_error(e) return getmetatable(e) == Error end

-- ---------------------------------------------------------------- handles
local handle_free = {} -- handle name -> C free function
local handle_methods = {} -- handle name -> methods table
local handle_meta = {} -- handle name -> metatable (for operators)
local out_slot = {} -- handle name -> a reused T*[1] for out parameters (a Lua state is single-threaded)

for _, h in ipairs(api.handles or {}) do
  local free = C[h.free]
  local methods = {}
  -- Frees now and disarms the collector's finalizer, so that it never frees the handle again.
  function methods.free(self)
    ffi.gc(self, nil)
    check(free(self))
  end
  local mt = {
    __index = methods,
    __tostring = function(self) return h.name .. ": " .. tostring(ffi.cast("void*", self)) end,
  }
  handle_free[h.name], handle_methods[h.name], handle_meta[h.name] = free, methods, mt
  out_slot[h.name] = ffi.new(h.name .. "*[1]")
  ffi.metatype(h.name, mt)
end

-- Takes ownership of a handle just returned by Ember: the collector frees it unless :free() does first.
local function own(kind, ptr)
  if ptr == nil then return nil end
  return ffi.gc(ptr, handle_free[kind])
end

-- The handle an out parameter received: `take(kind, <ember call>(..., slot(kind)))` checks the status and owns
-- slot(kind)[0]. No closure per call: LuaJIT does not compile closure creation, and a tiny op's cost is its call.
local function slot(kind) return out_slot[kind] end
local function take(kind, status)
  if status ~= 0 then raise(status) end
  return own(kind, out_slot[kind][0])
end
local tensor_out, free_tensor = out_slot.ember_tensor, handle_free.ember_tensor
local function take_tensor(status)
  if status ~= 0 then raise(status) end
  return ffi.gc(tensor_out[0], free_tensor)
end

-- ---------------------------------------------------------------- strings and small out values
local size_out = ffi.new("size_t[1]")
local i64_out = ffi.new("int64_t[1]")
local i32_out = ffi.new("int32_t[1]")
local f64_out = ffi.new("double[1]")
local BUFFER_TOO_SMALL = M.EMBER_ERR_BUFFER_TOO_SMALL

-- A string function (..., char* buf, size_t capacity, size_t* length): asks again with room for *length + 1.
local function string_result(call)
  local capacity = 256
  while true do
    local buf = ffi.new("char[?]", capacity)
    local status = call(buf, capacity, size_out)
    local length = tonumber(size_out[0])
    if status == 0 and length < capacity then return ffi.string(buf, length) end
    if status ~= 0 and status ~= BUFFER_TOO_SMALL then raise(status) end
    capacity = length + 1
  end
end

function M.version() return ffi.string(C.ember_version()) end
function M.abi_version() return C.ember_abi_version() end
function M.last_error() return ffi.string(C.ember_last_error()) end
function M.seed(seed) check(C.ember_seed(seed)) end
function M.set_num_threads(n) check(C.ember_set_num_threads(n)) end

-- ---------------------------------------------------------------- structs
local struct_desc = {}
for _, s in ipairs(api.structs or {}) do
  local fields = {}
  for _, f in ipairs(s.fields) do fields[f.name] = f end
  struct_desc[s.name] = { desc = s, fields = fields }
end
M.structs = struct_desc

-- Lua values a struct's pointer fields point into (a Lua string set as a const char* field), kept as long as the
-- struct cdata lives: the struct itself holds no reference the collector sees.
local struct_anchors = setmetatable({}, { __mode = "k" })

-- Sets the fields of struct cdata `s` from a Lua table: enum fields take names, array fields a table (or one
-- number for every element). An unknown field is an error, not silently ignored.
local function fill_struct(name, s, values)
  local known = struct_desc[name].fields
  for k, v in pairs(values or {}) do
    local f = known[k]
    if f == nil or k == "struct_size" then error(string.format("ember: %s has no settable field %s", name, k), 3) end
    if f.array then
      for i = 0, ffi.sizeof(s[k]) / ffi.sizeof(s[k][0]) - 1 do
        s[k][i] = type(v) == "table" and v[i + 1] or v
      end
    elseif f.enum then
      s[k] = enum_value(f.enum, v)
    else
      if type(v) == "string" or type(v) == "cdata" then
        struct_anchors[s] = struct_anchors[s] or {}
        table.insert(struct_anchors[s], v)
      end
      s[k] = v
    end
  end
  return s
end

local function_desc = {}
for _, fn in ipairs(api.functions) do function_desc[fn.name] = fn end
M.functions = function_desc

-- A struct with its _init defaults, then `values`. An init with a second parameter (ember_layer_init's kind) takes
-- it from the value of that name: new_struct("ember_layer_desc", {kind = "linear", in_features = 4}).
local function new_struct(name, values)
  local s = ffi.new(name)
  local init = struct_desc[name].desc.init
  if init then
    local extra = function_desc[init].params[2]
    if extra then
      local v = values and values[extra.name]
      if v == nil then error(string.format("ember: %s needs %s", name, extra.name), 3) end
      check(C[init](s, extra.enum and enum_value(extra.enum, v) or v))
    else
      check(C[init](s))
    end
  elseif struct_desc[name].desc.versioned then
    s.struct_size = ffi.sizeof(name)
  end
  return fill_struct(name, s, values)
end
M.new_struct = new_struct

-- ---------------------------------------------------------------- tensors
local Tensor = handle_methods.ember_tensor
local tensor_meta = handle_meta.ember_tensor
M.Tensor = Tensor

local dtype_ctype = { f32 = "float", f64 = "double", i32 = "int32_t", i64 = "int64_t", u8 = "uint8_t",
  bool = "uint8_t", i16 = "int16_t" }

local function is_tensor(x) return type(x) == "cdata" and ffi.istype("ember_tensor*", x) end
M.is_tensor = is_tensor

local function int64_array(t)
  local n = #t
  local a = ffi.new("int64_t[?]", n > 0 and n or 1)
  for i = 1, n do a[i - 1] = t[i] end
  return a, n
end

-- A tensor holding a copy of `bytes` bytes at `ptr` (row-major elements of `dtype`) shaped `shape`.
function M.from_buffer(ptr, bytes, shape, dtype, device)
  local dims, rank = int64_array(shape)
  local code = enum_value("ember_dtype", dtype or "f32")
  return take_tensor(C.ember_tensor_from_data(device, code, ptr, bytes, dims, rank, tensor_out))
end

-- A tensor from a (nested) Lua table of numbers: ember.tensor({{1, 2}, {3, 4}}), or flat values with a shape:
-- ember.tensor({1, 2, 3, 4}, {2, 2}); dtype "f32" unless given.
function M.tensor(values, shape, dtype)
  if type(shape) == "string" then shape, dtype = nil, shape end
  dtype = dtype or "f32"
  local flat = {}
  if shape == nil then
    shape = {}
    local level = values
    while type(level) == "table" do
      shape[#shape + 1] = #level
      level = level[1]
    end
    local function walk(t, depth)
      if depth > #shape then
        flat[#flat + 1] = t
        return
      end
      if type(t) ~= "table" or #t ~= shape[depth] then error("ember.tensor: ragged nested table", 3) end
      for i = 1, #t do walk(t[i], depth + 1) end
    end
    walk(values, 1)
  else
    flat = type(values) == "table" and values or { values }
  end
  local short = dtype
  if type(dtype) == "number" then
    short = M.enum_name("ember_dtype", dtype)
  else
    short = dtype:lower():gsub("^ember_dtype_", "")
  end
  local ctype = dtype_ctype[short]
  if ctype == nil then error("ember.tensor: no Lua conversion for dtype " .. tostring(dtype), 2) end
  local n = #flat
  local data = ffi.new(ctype .. "[?]", n > 0 and n or 1)
  for i = 1, n do data[i - 1] = flat[i] end
  return M.from_buffer(data, n * ffi.sizeof(ctype), shape, dtype)
end

function M.full(shape, value, dtype, device)
  local dims, rank = int64_array(shape)
  local code = enum_value("ember_dtype", dtype or "f32")
  return take_tensor(C.ember_tensor_full(device, code, dims, rank, value, tensor_out))
end
function M.zeros(shape, dtype, device) return M.full(shape, 0, dtype, device) end
function M.ones(shape, dtype, device) return M.full(shape, 1, dtype, device) end

function Tensor.rank(t)
  check(C.ember_tensor_rank(t, size_out))
  return tonumber(size_out[0])
end

-- The dims as a Lua table ({} for a scalar).
function Tensor.shape(t)
  local dims = ffi.new("int64_t[?]", M.EMBER_MAX_RANK or 8)
  check(C.ember_tensor_shape(t, dims, M.EMBER_MAX_RANK or 8, size_out))
  local shape = {}
  for i = 1, tonumber(size_out[0]) do shape[i] = tonumber(dims[i - 1]) end
  return shape
end

function Tensor.numel(t)
  check(C.ember_tensor_numel(t, i64_out))
  return tonumber(i64_out[0])
end

-- "f32", "i64", ... (the storage dtype).
function Tensor.dtype(t)
  check(C.ember_tensor_dtype(t, i32_out))
  return M.enum_name("ember_dtype", i32_out[0])
end

function Tensor.item(t)
  check(C.ember_tensor_item(t, f64_out))
  return f64_out[0]
end

-- Copies the elements, converted to `dtype`, into `bytes` bytes at `ptr`.
function Tensor.copy_to(t, ptr, bytes, dtype)
  check(C.ember_tensor_copy_to(t, enum_value("ember_dtype", dtype or "f32"), ptr, bytes, nil))
end

-- The elements as a flat Lua table (float tensors as doubles, int and bool tensors as integers).
function Tensor.to_table(t)
  local n = t:numel()
  local kind = t:dtype()
  local ctype = (kind == "f32" or kind == "f64" or kind == "f16") and "double" or "int64_t"
  local buf = ffi.new(ctype .. "[?]", n > 0 and n or 1)
  t:copy_to(buf, n * ffi.sizeof(ctype), ctype == "double" and "f64" or "i64")
  local out = {}
  for i = 1, n do out[i] = tonumber(buf[i - 1]) end
  return out
end

local function binary(fn)
  return function(a, b)
    return take_tensor(fn(a, b, tensor_out))
  end
end
Tensor.add = binary(C.ember_tensor_add)
Tensor.sub = binary(C.ember_tensor_sub)
Tensor.mul = binary(C.ember_tensor_mul)
Tensor.div = binary(C.ember_tensor_div)
Tensor.matmul = binary(C.ember_tensor_matmul)
function Tensor.pow(a, b)
  return take_tensor(C.ember_tensor_binary(a, b, M.EMBER_BINARY_POW, tensor_out))
end

-- x (op) s for a number s; op an ember_scalar_op.
function Tensor.scalar(x, op, s)
  return take_tensor(C.ember_tensor_scalar(x, enum_value("ember_scalar_op", op), s, tensor_out))
end

function Tensor.unary(x, op)
  return take_tensor(C.ember_tensor_unary(x, enum_value("ember_unary_op", op), tensor_out))
end
function Tensor.relu(x) return x:unary("relu") end

function Tensor.argmax(x, dim, keepdim)
  return take_tensor(C.ember_tensor_argmax(x, dim, keepdim and 1 or 0, tensor_out))
end

-- Gradients of this (scalar) tensor with respect to every leaf that requires grad; grad may be nil.
function Tensor.backward(t, grad)
  return take("ember_grads", C.ember_tensor_backward(t, grad, slot("ember_grads")))
end

-- Operators: tensor (op) tensor through the binary ops; a number on either side through ember_tensor_scalar.
local function operator(fn, scalar_op, reversed_op)
  return function(a, b)
    if type(b) == "number" then return a:scalar(scalar_op, b) end
    if type(a) == "number" then
      if reversed_op then return b:scalar(reversed_op, a) end
      return fn(M.full(b:shape(), a, b:dtype()), b) -- no scalar op for it (number ^ tensor)
    end
    return fn(a, b)
  end
end
tensor_meta.__add = operator(Tensor.add, "add", "add")
tensor_meta.__sub = operator(Tensor.sub, "sub", "rsub")
tensor_meta.__mul = operator(Tensor.mul, "mul", "mul")
tensor_meta.__div = operator(Tensor.div, "div", "rdiv")
tensor_meta.__pow = operator(Tensor.pow, "pow", nil)
tensor_meta.__unm = function(x) return x:unary("neg") end
-- #t is the size of the first dim, as len() of a tensor in PyTorch.
tensor_meta.__len = function(t)
  local shape = t:shape()
  if #shape == 0 then error("ember: # of a scalar (rank 0) tensor", 2) end
  return shape[1]
end
tensor_meta.__tostring = function(t)
  return string.format("ember.tensor(shape={%s}, dtype=%s)", table.concat(t:shape(), ", "), t:dtype())
end

-- ---------------------------------------------------------------- autodiff
local Grads = handle_methods.ember_grads

-- The gradient of `tensor` (nil-free: Ember reports a tensor it has no gradient for).
function Grads.get(g, tensor)
  return take_tensor(C.ember_grads_get(g, tensor, tensor_out))
end

function M.is_grad_enabled()
  check(C.ember_is_grad_enabled(i32_out))
  return i32_out[0] ~= 0
end

-- Runs fn(...) with no graph recorded (this thread), and returns its results; the scope ends also on an error.
function M.no_grad(fn, ...)
  check(C.ember_no_grad_enter())
  local results = { pcall(fn, ...) }
  check(C.ember_no_grad_exit())
  if not results[1] then error(results[2], 0) end
  return unpack(results, 2, table.maxn(results))
end

-- ---------------------------------------------------------------- losses
function M.cross_entropy(logits, targets, reduction)
  local code = enum_value("ember_reduction", reduction or "mean")
  return take_tensor(C.ember_loss_cross_entropy(logits, targets, code, tensor_out))
end

-- ---------------------------------------------------------------- modules
local Module = handle_methods.ember_module
local module_meta = handle_meta.ember_module
M.Module = Module

-- One layer description: ember.layer("linear", {in_features = 64, out_features = 256}).
function M.layer(kind, fields)
  local values = { kind = kind }
  for k, v in pairs(fields or {}) do values[k] = v end
  return new_struct("ember_layer_desc", values)
end

-- A Sequential of layer descriptions (from ember.layer).
function M.sequential(layers, device)
  local n = #layers
  local descs = ffi.new("ember_layer_desc[?]", n > 0 and n or 1)
  for i = 1, n do descs[i - 1] = layers[i] end
  return take("ember_module", C.ember_module_sequential(device, descs, n, slot("ember_module")))
end

-- mode: "train" (default, as a new PyTorch module) or "eval".
function Module.forward(m, x, mode)
  return take_tensor(C.ember_module_forward(m, x, enum_value("ember_mode", mode or "train"), tensor_out))
end
module_meta.__call = Module.forward

function Module.param_count(m)
  check(C.ember_module_param_count(m, size_out))
  return tonumber(size_out[0])
end

-- The i-th param's path ("layers.0.weight"), i from 1.
function Module.param_name(m, i)
  return string_result(function(buf, capacity, length)
    return C.ember_module_param_name(m, i - 1, buf, capacity, length)
  end)
end

-- The i-th param's description as a table (i from 1).
function Module.param_info(m, i)
  local info = new_struct("ember_param_info")
  check(C.ember_module_param_info(m, i - 1, info))
  local shape = {}
  for d = 1, info.rank do shape[d] = tonumber(info.shape[d - 1]) end
  return { dtype = M.enum_name("ember_dtype", info.dtype), role = M.enum_name("ember_param_role", info.role),
    requires_grad = info.requires_grad ~= 0, id = info.id, numel = tonumber(info.numel), shape = shape }
end

-- The i-th param's current value (i from 1): a leaf that requires grad when the param does.
function Module.param_value(m, i)
  return take_tensor(C.ember_module_param_value(m, i - 1, tensor_out))
end

local function record_options(options)
  if options == nil then return nil end
  return new_struct("ember_record_options", options)
end

-- Saves the params as a record file; options: {recorder = "binary" | "json" | "compact", precision = ...}.
function Module.save(m, path, options)
  check(C.ember_module_save(m, path, record_options(options)))
end

-- Loads a record file (mode "strict", the default, or "partial"); returns the load report. A failed load raises
-- an ember.Error whose `report` field holds the report (Ember fills it also when a strict load fails).
function Module.load(m, path, mode)
  local report_out = slot("ember_load_report")
  report_out[0] = nil
  local status = C.ember_module_load(m, path, enum_value("ember_load_mode", mode or "strict"), report_out)
  local report = own("ember_load_report", report_out[0])
  if status ~= 0 then raise(status, { report = report }) end
  return report
end

function Module.to_record(m)
  return take("ember_record", C.ember_module_to_record(m, slot("ember_record")))
end

-- ---------------------------------------------------------------- records
local Record = handle_methods.ember_record

function Record.entry_count(r)
  check(C.ember_record_entry_count(r, size_out))
  return tonumber(size_out[0])
end

-- The record file's bytes as a Lua string.
function Record.to_bytes(r, options)
  local opts = record_options(options)
  local status = C.ember_record_to_bytes(r, opts, nil, 0, size_out)
  if status ~= 0 and status ~= BUFFER_TOO_SMALL then raise(status) end
  local size = tonumber(size_out[0])
  local buf = ffi.new("uint8_t[?]", size > 0 and size or 1)
  check(C.ember_record_to_bytes(r, opts, buf, size, size_out))
  return ffi.string(buf, size)
end

local Report = handle_methods.ember_load_report

-- One line per missing, unexpected or mismatching entry ("" when everything matched).
function Report.text(rep)
  return string_result(function(buf, capacity, length) return C.ember_load_report_text(rep, buf, capacity, length) end)
end

-- ---------------------------------------------------------------- optimizers
local Optimizer = handle_methods.ember_optimizer

-- An optimizer over the module's trainable params: ember.optimizer(model, {kind = "adam", lr = 1e-3}); the other
-- fields are ember_optimizer_options' (PyTorch's defaults for the kind).
function M.optimizer(module, options)
  local values = { kind = "adam" }
  for k, v in pairs(options or {}) do values[k] = v end
  local opts = new_struct("ember_optimizer_options", values)
  return take("ember_optimizer", C.ember_optimizer_create(module, opts, slot("ember_optimizer")))
end

-- One update with the pending gradients plus `grads` (may be nil).
function Optimizer.step(o, grads) check(C.ember_optimizer_step(o, grads)) end
function Optimizer.zero_grad(o) check(C.ember_optimizer_zero_grad(o)) end
function Optimizer.set_lr(o, lr) check(C.ember_optimizer_set_lr(o, lr)) end
function Optimizer.lr(o)
  check(C.ember_optimizer_get_lr(o, f64_out))
  return f64_out[0]
end

-- Every other described function: ember.fn.<name> and methods of the handle types (ember_calls.lua).
require("ember_calls").install(M, { own = own, handle_methods = handle_methods })

return M
