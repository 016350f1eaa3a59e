-- Trains the digits MLP (64-256-256-10, ReLU, Adam) through the LuaJIT binding, step for step as
-- examples/c/train_digits.c does, so that with the same data, epochs and EMBER_NUM_THREADS=1 it prints the same
-- losses and saves a record byte-identical to the C example's:
--
--   EMBER_LIBRARY=build/c_api/libember.so LUA_PATH='bindings/lua/?.lua;build/bindings/lua/?.lua' \
--     luajit bindings/lua/examples/train_digits.lua [digits.csv.gz] [epochs] [record.emr]
--
-- The data set (data/digits.csv.gz: 8x8 pixels 0..16 and a label per line) is read with zlib through the FFI.
local ffi = require("ffi")
local ember = require("ember")

local PIXELS, CLASSES, BATCH = 64, 10, 64

ffi.cdef [[
typedef struct gzFile_s* gzFile;
gzFile gzopen(const char* path, const char* mode);
char* gzgets(gzFile file, char* buf, int len);
int gzclose(gzFile file);
]]
local zlib_ok, zlib = pcall(ffi.load, "z")
if not zlib_ok then zlib = ffi.load("libz.so.1") end -- without zlib's development symlink

-- The rows as float pixels / 16 and int64 labels (the C example's load_digits).
local function load_digits(path)
  local f = zlib.gzopen(path, "rb")
  if f == nil then return nil end
  local line = ffi.new("char[1024]")
  local rows = {}
  while zlib.gzgets(f, line, 1024) ~= nil do
    local v = {}
    for n in ffi.string(line):gmatch("-?%d+") do v[#v + 1] = tonumber(n) end
    if #v == PIXELS + 1 then rows[#rows + 1] = v end
  end
  zlib.gzclose(f)
  local n = #rows
  local x, y = ffi.new("float[?]", n * PIXELS), ffi.new("int64_t[?]", n)
  for i, v in ipairs(rows) do
    for k = 1, PIXELS do x[(i - 1) * PIXELS + k - 1] = v[k] / 16 end -- exact in float, as (float)v / 16.0f
    y[i - 1] = v[PIXELS + 1]
  end
  return { x = x, y = y, n = n }
end

-- xorshift64* with the C example's seed: uint64_t cdata arithmetic wraps around at 64 bits as C's does.
local rng_state = ffi.new("uint64_t", 2024)
local MULTIPLIER = 2685821657736338717ULL
local function rng_next()
  local s = rng_state
  s = bit.bxor(s, bit.rshift(s, 12))
  s = bit.bxor(s, bit.lshift(s, 25))
  s = bit.bxor(s, bit.rshift(s, 27))
  rng_state = s
  return s * MULTIPLIER
end

-- Shuffles idx[0..n) (a 0-based Lua table) as the C example's shuffle does.
local function shuffle(idx, n)
  for i = n, 2, -1 do
    local j = tonumber(rng_next() % i)
    idx[i - 1], idx[j] = idx[j], idx[i - 1]
  end
end

-- Tensors x [n, 64] and y [n] of the rows idx[first .. first + n).
local function make_batch(d, idx, first, n)
  local xb, yb = ffi.new("float[?]", n * PIXELS), ffi.new("int64_t[?]", n)
  for i = 0, n - 1 do
    local row = idx[first + i]
    ffi.copy(xb + i * PIXELS, d.x + row * PIXELS, PIXELS * ffi.sizeof("float"))
    yb[i] = d.y[row]
  end
  return ember.from_buffer(xb, n * PIXELS * ffi.sizeof("float"), { n, PIXELS }, "f32"),
    ember.from_buffer(yb, n * ffi.sizeof("int64_t"), { n }, "i64")
end

-- Fraction of the rows idx[first .. first + n) classified correctly (eval mode, no graph recorded).
local function accuracy(model, d, idx, first, n)
  local x = make_batch(d, idx, first, n)
  local logits = ember.no_grad(function() return model:forward(x, "eval") end)
  local labels = ffi.new("int64_t[?]", n)
  logits:argmax(1, false):copy_to(labels, n * ffi.sizeof("int64_t"), "i64")
  local correct = 0
  for i = 0, n - 1 do
    if labels[i] == d.y[idx[first + i]] then correct = correct + 1 end
  end
  return correct / n
end

local path = arg[1] or "data/digits.csv.gz"
local epochs = tonumber(arg[2] or "5")
local data = load_digits(path)
if data == nil or data.n == 0 then
  io.stderr:write("cannot read " .. path .. "\n")
  os.exit(2)
end
print(string.format("ember %s (C ABI %d): %d digits from %s", ember.version(), ember.abi_version(), data.n, path))

-- 80% train, 20% test, after a fixed shuffle.
local order = {}
for i = 0, data.n - 1 do order[i] = i end
shuffle(order, data.n)
local n_train = math.floor(data.n * 4 / 5)
local n_test = data.n - n_train

ember.seed(42)
local model = ember.sequential {
  ember.layer("linear", { in_features = PIXELS, out_features = 256 }),
  ember.layer("relu"),
  ember.layer("linear", { in_features = 256, out_features = 256 }),
  ember.layer("relu"),
  ember.layer("linear", { in_features = 256, out_features = CLASSES }),
}
print(string.format("model: %d parameter tensors", model:param_count()))
local optim = ember.optimizer(model, { kind = "adam", lr = 1e-3 })

local acc = 0
for epoch = 1, epochs do
  local loss_sum = 0
  shuffle(order, n_train)
  for start = 0, n_train - 1, BATCH do
    local n = math.min(BATCH, n_train - start)
    local x, y = make_batch(data, order, start, n)
    local loss = ember.cross_entropy(model:forward(x, "train"), y, "mean")
    loss_sum = loss_sum + loss:item() * n
    local grads = loss:backward()
    optim:step(grads)
    -- Freed now rather than by the collector: a training loop should not wait for a GC cycle to give memory back.
    grads:free()
  end
  acc = accuracy(model, data, order, n_train, n_test)
  print(string.format("epoch %d/%d  loss %.4f  test accuracy %.1f%%", epoch, epochs, loss_sum / n_train, 100 * acc))
end

if arg[3] then model:save(arg[3]) end
if acc < 0.9 then
  io.stderr:write(string.format("test accuracy %.1f%% is below 90%%\n", 100 * acc))
  os.exit(1)
end
