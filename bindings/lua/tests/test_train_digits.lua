-- The common test of every binding (issue 12): the digits MLP trained through the LuaJIT binding prints the C
-- example's losses and accuracies and saves a record byte-identical to the one train_digits_c saves.
--
--   luajit test_train_digits.lua TRAIN_DIGITS_C TRAIN_DIGITS_LUA DIGITS.csv.gz EPOCHS
--
-- Both run as child processes with this process's environment (meson sets EMBER_NUM_THREADS=1, EMBER_LIBRARY and
-- LUA_PATH); the Lua one with the interpreter running this test.
local train_c, train_lua, data, epochs = arg[1], arg[2], arg[3], arg[4]
if not epochs then
  io.stderr:write("usage: test_train_digits.lua TRAIN_DIGITS_C TRAIN_DIGITS_LUA DIGITS.csv.gz EPOCHS\n")
  os.exit(2)
end
local interpreter = arg[-1]

local function quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function read_file(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

-- Runs the command, its stdout to a temporary file; returns the output, or fails the test on a non-zero exit.
local function run(label, command)
  local out_path = os.tmpname()
  local status = os.execute(command .. " > " .. quote(out_path))
  local output = read_file(out_path)
  os.remove(out_path)
  io.write("---- ", label, "\n", output)
  if status ~= 0 and status ~= true then
    io.stderr:write(label .. " failed (" .. tostring(status) .. "): " .. command .. "\n")
    os.exit(1)
  end
  return output
end

local function epoch_lines(output)
  local lines = {}
  for line in output:gmatch("[^\n]+") do
    if line:match("^epoch ") then lines[#lines + 1] = line end
  end
  return lines
end

local ref_record, lua_record = os.tmpname(), os.tmpname()
local c_out = run("train_digits_c", table.concat({ quote(train_c), quote(data), epochs, quote(ref_record) }, " "))
local lua_out = run("train_digits.lua",
  table.concat({ quote(interpreter), quote(train_lua), quote(data), epochs, quote(lua_record) }, " "))
local ref_bytes, lua_bytes = read_file(ref_record), read_file(lua_record)
os.remove(ref_record)
os.remove(lua_record)

local failures = 0
local c_epochs, lua_epochs = epoch_lines(c_out), epoch_lines(lua_out)
if #c_epochs ~= tonumber(epochs) or #lua_epochs ~= #c_epochs then
  print(string.format("FAIL: %d epoch lines from C, %d from Lua (expected %s)", #c_epochs, #lua_epochs, epochs))
  failures = failures + 1
end
for i = 1, math.max(#c_epochs, #lua_epochs) do
  if c_epochs[i] ~= lua_epochs[i] then
    print(string.format("FAIL: epoch line %d differs\n  C:   %s\n  Lua: %s", i, tostring(c_epochs[i]),
      tostring(lua_epochs[i])))
    failures = failures + 1
  end
end
if #ref_bytes == 0 then
  print("FAIL: train_digits_c wrote an empty record")
  failures = failures + 1
elseif lua_bytes ~= ref_bytes then
  local first = 1
  while first <= #ref_bytes and ref_bytes:byte(first) == lua_bytes:byte(first) do first = first + 1 end
  print(string.format("FAIL: the records differ (%d bytes from C, %d from Lua; first difference at byte %d)",
    #ref_bytes, #lua_bytes, first - 1))
  failures = failures + 1
else
  print(string.format("records byte-identical (%d bytes)", #ref_bytes))
end
os.exit(failures == 0 and 0 or 1)
