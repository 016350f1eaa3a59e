-- Generic safe wrappers, made at load time from the description's parameter roles, for every function whose
-- roles this file knows (value, handle, string_in, in_array, in_struct; out_handle, out_value, inout_struct,
-- string_out). They make the whole described ABI callable from Lua without a hand-written line per function:
--   ember.fn.tensor_reshape(t, {3, 2})      -- ember_tensor_reshape(t, shape, rank, &out)
--   t:reshape({3, 2})                         -- the same, as a method of the first parameter's handle type
--   ember.fn.load_report_counts(report)       -- three out values -> three results
-- Arguments are the C parameters in order, less what the wrapper derives: array lengths and buffer capacities,
-- out parameters (returned, in order, after the C return value when it is not a status) and structs the callee
-- fills. Arrays are Lua tables, in_structs Lua tables of fields (or struct cdata), enums names or values.
-- Indices and dims are Ember's (from 0). Hand-written methods of ember.lua take precedence over these.
local ffi = require("ffi")

local SUPPORTED = { value = true, handle = true, string_in = true, in_array = true, in_struct = true,
  out_handle = true, out_value = true, inout_struct = true, string_out = true }

-- The pointee of a pointer spelling, consts dropped: "const ember_tensor* const*" -> "ember_tensor*".
local function pointee(spelling)
  local t = spelling:gsub("const ", ""):gsub(" const", "")
  return (t:gsub("%*$", ""))
end

local function install(M, internal)
  local C, api = M.C, M.api
  local check, own, enum_value, enum_name = M.check, internal.own, M.enum_value, M.enum_name
  local handles = {}
  for _, h in ipairs(api.handles) do handles[h.name] = true end

  -- An out value as a Lua value: enum values by short name, 64-bit sizes and counts as numbers (uint64_t stays
  -- cdata: ids and Vulkan handles need all 64 bits), C strings as Lua strings.
  local function out_result(p, ctype, cell)
    local v = cell[0]
    if p.enum then return enum_name(p.enum, v) end
    if ctype == "uint64_t" then return v end
    if ctype == "char*" then return v ~= nil and ffi.string(v) or nil end
    if ctype:find("%*$") then return v end
    return tonumber(v)
  end

  local function wrapper(fn)
    local params = fn.params or {}
    local derived = {} -- parameter name -> what it is derived from
    for _, p in ipairs(params) do
      if not SUPPORTED[p.role] then return nil end
      if p.role == "in_array" then derived[p.length] = p end
      if p.role == "string_out" then derived[p.capacity], derived[p.length] = p, p end
    end
    local index_of = {}
    for i, p in ipairs(params) do index_of[p.name] = i end
    local cfn -- looked up at the first call: a library older than the description still loads the module
    local returns = fn.returns.type
    local n = #params

    return function(...)
      if cfn == nil then
        local found, symbol = pcall(function() return C[fn.name] end)
        if not found then
          error(string.format("ember: the loaded libember has no %s (older than the description?)", fn.name), 2)
        end
        cfn = symbol
      end
      local inputs, used = { ... }, 0
      local args, outs, cells, anchors = {}, {}, {}, {}
      local string_param
      for i, p in ipairs(params) do
        local role = p.role
        if derived[p.name] then
          -- set with the parameter it belongs to
        elseif role == "value" or role == "handle" or role == "string_in" then
          used = used + 1
          local v = inputs[used]
          if p.enum and v ~= nil then v = enum_value(p.enum, v) end
          args[i] = v
        elseif role == "in_array" then
          used = used + 1
          local values = inputs[used] or {}
          local count = #values
          local array = ffi.new(pointee(p.type) .. "[?]", count > 0 and count or 1)
          for k = 1, count do
            array[k - 1] = p.enum and enum_value(p.enum, values[k]) or values[k]
          end
          -- cast to the parameter's own spelling (LuaJIT does not add an inner const by itself); `anchors`
          -- keeps the array alive through the call
          anchors[i] = array
          local length_index = index_of[p.length]
          if args[length_index] ~= nil and args[length_index] ~= count then
            -- arrays sharing one length (ember_tensor_slice's starts and ends) must agree
            error(string.format("ember.fn.%s: %s has %d elements, another array of length %s has %d",
              fn.name:sub(7), p.name, count, p.length, args[length_index]), 2)
          end
          args[i], args[length_index] = ffi.cast(p.type, array), count
        elseif role == "in_struct" then
          used = used + 1
          local v = inputs[used]
          local name = pointee(p.type)
          if type(v) == "table" then v = M.new_struct(name, v) end
          args[i] = v
        elseif role == "out_handle" or role == "out_value" then
          cells[i] = ffi.new(p.type:gsub("%*$", "") .. "[1]") -- consts kept: "const char**" -> "const char*[1]"
          args[i] = cells[i]
          outs[#outs + 1] = i
        elseif role == "inout_struct" then
          local name = pointee(p.type)
          local s = ffi.new(name)
          if M.structs[name].desc.versioned then s.struct_size = ffi.sizeof(name) end
          args[i] = s
          outs[#outs + 1] = i
        elseif role == "string_out" then
          string_param = i
          outs[#outs + 1] = i
        end
      end

      local result
      if string_param then
        -- (buf, capacity, length): asked again with room for *length + 1 when the first buffer was short.
        local p = params[string_param]
        local length_cell = ffi.new("size_t[1]")
        local capacity = 256
        while true do
          local buf = ffi.new("char[?]", capacity)
          args[string_param], args[index_of[p.capacity]], args[index_of[p.length]] = buf, capacity, length_cell
          result = cfn(unpack(args, 1, n))
          local length = tonumber(length_cell[0])
          if result == 0 and length < capacity then
            cells[string_param] = ffi.string(buf, length)
            break
          end
          if result ~= M.EMBER_ERR_BUFFER_TOO_SMALL then check(result) end
          capacity = length + 1
        end
      else
        result = cfn(unpack(args, 1, n))
      end

      local results = {}
      if returns == "ember_status" then
        check(result)
      elseif returns == "const char*" then
        results[1] = result ~= nil and ffi.string(result) or nil
      elseif returns ~= "void" then
        local h = returns:match("^([%w_]+)%*$")
        if h and handles[h] then result = own(h, result) end
        results[1] = result
      end
      for _, i in ipairs(outs) do
        local p = params[i]
        if p.role == "out_handle" then
          local h = pointee(pointee(p.type)) -- "ember_tensor**" -> "ember_tensor"
          results[#results + 1] = own(h, cells[i][0])
        elseif p.role == "out_value" then
          results[#results + 1] = out_result(p, pointee(p.type), cells[i])
        elseif p.role == "inout_struct" then
          results[#results + 1] = args[i]
        else
          results[#results + 1] = cells[i]
        end
      end
      return unpack(results, 1, #results)
    end
  end

  M.fn = {}
  for _, fn in ipairs(api.functions) do
    local w = wrapper(fn)
    if w then
      M.fn[fn.name:gsub("^" .. api.library .. "_", "")] = w
      -- A method of the handle type its first parameter borrows, named without the handle's prefix.
      local first = fn.params and fn.params[1]
      for _, h in ipairs(api.handles) do
        local prefix = h.name .. "_"
        if first and first.role == "handle" and fn.name:sub(1, #prefix) == prefix
          and pointee(first.type) == h.name then
          local methods = internal.handle_methods[h.name]
          local method = fn.name:sub(#prefix + 1)
          if methods[method] == nil then methods[method] = w end
        end
      end
    end
  end
end

return { install = install }
