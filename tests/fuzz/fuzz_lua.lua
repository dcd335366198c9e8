-- fuzz_lua.lua: the Lua half of fuzz_lua.c. Called with (ik, input, fail): decodes the
-- input bytes into a sequence of calls on the `ik` module and checks what each did.
--
-- The functions called are found at start-up, not listed: every function of the module
-- table (and its sub-tables, as ik.ground), and every method and metamethod of every
-- "ik.*" metatable in the registry, so a new function is fuzzed as soon as it exists.
-- Arguments are drawn from a pool: nil, booleans, numbers (NaN, infinities, huge,
-- denormal, integers at their limits), strings, tables (empty, arrays, vec3-like, spec
-- tables with random and misspelt fields), functions (that return, raise, collect
-- garbage or call back into `ik`), and the objects earlier calls made, closed ones too.
-- Objects whose __gc calls methods are dropped along the way, and `collectgarbage()`
-- runs between calls.
--
-- Invariants (fail() aborts the process, which the fuzzer reports):
--   - no call brings the process down (the sanitizers watch the C side);
--   - an error is a string, unless a function of ours raised something else;
--   - a call that raised on an object left it as it was (its observable state) and
--     still working, unless a callback or finaliser of ours ran inside that call (they
--     may close or change it on purpose).
local ik, input, fail = ...

local pos = 1
local function byte()
  local b = input:byte(pos) or 0
  pos = pos + 1
  return b
end
local function more() return pos <= #input end
local function pick(list) return list[byte() % #list + 1] end

local unpack = table.unpack or unpack -- luacheck: ignore 143
local nan, inf = 0 / 0, math.huge
local maxint, minint = math.maxinteger or 2 ^ 53, math.mininteger or -2 ^ 53

-- ---------------------------------------------------------------------------------------
-- What a callback of ours did during a call.

local reentered = false    -- a callback or finaliser of ours ran and may have changed objects
local raised_other = false -- a function of ours raised a non-string

-- ---------------------------------------------------------------------------------------
-- The functions: constructors and methods, found at start-up.

local calls = {} -- { name =, fn =, tname = (the metatable's name for methods) }

local function add_call(name, fn, tname)
  calls[#calls + 1] = { name = name, fn = fn, tname = tname }
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do
    if type(k) == "string" then keys[#keys + 1] = k end
  end
  table.sort(keys)
  return keys
end

-- ik.watch touches the file system and gives answers that depend on timing: left out;
-- so is ik.import, which reads files (ik.import_string, the same loader on a string, and
-- fuzz_gltf cover it).
local SKIP = { watch = true, ["ik.watch"] = true, import = true }

for _, name in ipairs(sorted_keys(ik)) do
  local v = ik[name]
  if not SKIP[name] then
    if type(v) == "function" then
      add_call("ik." .. name, v)
    elseif type(v) == "table" then
      for _, sub in ipairs(sorted_keys(v)) do
        if type(v[sub]) == "function" then add_call("ik." .. name .. "." .. sub, v[sub]) end
      end
      local mt = getmetatable(v)
      if type(mt) == "table" and type(mt.__call) == "function" then
        add_call("ik." .. name .. "()", function(...) return v(...) end)
      end
    end
  end
end

local registry = debug.getregistry()
local types = {} -- tname -> true
for _, tname in ipairs(sorted_keys(registry)) do
  local mt = registry[tname]
  if tname:match("^ik%.") and type(mt) == "table" and not SKIP[tname] then
    types[tname] = true
    for _, k in ipairs(sorted_keys(mt)) do
      if type(mt[k]) == "function" then add_call(tname .. ":" .. k, mt[k], tname) end
    end
    local methods = mt.__index
    if type(methods) == "function" then
      local _, up = debug.getupvalue(methods, 1)
      methods = up
    end
    if type(methods) == "table" then
      for _, k in ipairs(sorted_keys(methods)) do
        if type(methods[k]) == "function" then add_call(tname .. ":" .. k, methods[k], tname) end
      end
    end
  end
end

-- FUZZ_VERBOSE=1 in the environment: every call and its outcome on stderr (to read what
-- an input does); FUZZ_VERBOSE=list: the functions, numbered as the input picks them.
local verbose = os.getenv("FUZZ_VERBOSE")
local function say(...)
  if verbose then io.stderr:write(table.concat({ ... }, " "), "\n") end
end
if verbose == "list" then
  for i, c in ipairs(calls) do say(i - 1, c.name) end
end

-- ---------------------------------------------------------------------------------------
-- Objects made so far, by type name.

local objects = {} -- list of userdata
local MAX_OBJECTS = 48

local function tname_of(v)
  local mt = debug.getmetatable(v)
  local name = type(mt) == "table" and rawget(mt, "__name")
  if type(name) == "string" and types[name] then return name end
  return nil
end

local function keep(v)
  if type(v) == "userdata" and tname_of(v) then
    if #objects < MAX_OBJECTS then
      objects[#objects + 1] = v
    else
      objects[byte() % MAX_OBJECTS + 1] = v
    end
  end
end

local function object_of(tname)
  local first = byte() % (#objects + 1)
  for k = 0, #objects - 1 do
    local o = objects[(first + k) % #objects + 1]
    if tname == nil or tname_of(o) == tname then return o end
  end
  return nil
end

-- ---------------------------------------------------------------------------------------
-- Values.

local NUMBERS = { 0, -0.0, 1, -1, 2, 3, 0.5, -0.5, 1e-3, 10, 100, 1e6, nan, inf, -inf, 1e308, -1e308,
  5e-324, 2.2250738585072014e-308, 1e140, 1e15, 3.4028234663852886e38, 2 ^ 53, 2 ^ 63, maxint, minint,
  math.pi, -math.pi, 2 * math.pi, 1 / 3, 0.999999, 1.000001, 200, 201, 4, 64, 1e-300 }
local STRINGS = { "", "x", "y", "z", "w", "fabrik", "ccd", "dls", "two_bone", "plain", "refined", "plane",
  "heightfield", "mesh", "custom", "position", "positions", "bones", "solver", "iterations", "tolerance",
  "weight", "pole", "target", "mode", "angle", "axis", "min", "max", "parent", "name", "ground",
  "rotation", "normal", "point", "origin", "cell_size", "columns", "rows", "heights", "vertices",
  "triangles", "ray_height", "ray_length", "foot_offset", "smooth_time", "up", "chains", "threads",
  "constraints", "base_direction", "close", "__gc", "\0", "1", "nan", "0x10", ("a"):rep(300), "ik.vec3" }
local FIELDS = { "x", "y", "z", "w", "position", "positions", "bones", "solver", "iterations", "tolerance",
  "weight", "pole", "target", "mode", "angle", "axis", "min", "max", "parent", "name", "ground", "rotation",
  "normal", "point", "origin", "cell_size", "columns", "rows", "heights", "vertices", "triangles",
  "ray_height", "ray_length", "foot_offset", "smooth_time", "up", "chains", "threads", "solverr", 1, 2, 3 }

local value -- forward

local function number() return pick(NUMBERS) end

local function small_number()
  local b = byte()
  if b < 200 then return (b - 100) / 16 end
  return number()
end

local function vec_table()
  local k = byte() % 4
  if k == 0 then return { small_number(), small_number(), small_number() } end
  if k == 1 then return { x = small_number(), y = small_number(), z = small_number() } end
  if k == 2 then return { small_number(), small_number() } end
  return { x = value(2), y = small_number(), z = small_number() }
end

local function points(n)
  local t = {}
  for i = 1, n do t[i] = byte() < 240 and { i - 1 + small_number() / 64, small_number(), 0 } or value(2) end
  return t
end

-- A table with random fields: a spec table of any constructor, usually half right.
local function spec(depth)
  local t = {}
  if byte() % 2 == 0 then t.positions = points(byte() % 6) end
  for _ = 1, byte() % 5 do
    local k = pick(FIELDS)
    t[k] = value(depth + 1)
  end
  return t
end

local function callback()
  local k = byte() % 8
  if k == 0 then return function() end end
  if k == 1 then return function() error("callback error") end end
  if k == 2 then
    return function()
      raised_other = true
      error({ "not a string" })
    end
  end
  if k == 3 then return function() return small_number(), vec_table(), small_number() end end
  if k == 4 then return function(...) return ... end end
  if k == 5 then
    return function()
      reentered = true
      collectgarbage()
    end
  end
  if k == 6 then return function() return nan, { nan, inf, 0 } end end
  -- Calls back into ik: may close or change what the outer call is working on.
  local c, o, a = pick(calls), object_of(nil), value(3)
  return function()
    reentered = true
    return select(2, pcall(c.fn, o, a))
  end
end

-- A transform by contract (get_position, get_rotation, set_rotation) made of values.
local function transform()
  local p, q = vec_table(), { 0, 0, 0, 1 }
  local t = {}
  function t.get_position() return p end
  function t.get_rotation() return q end
  function t.set_rotation(_, r) q = r end
  function t.set_position(_, v) p = v end
  if byte() % 4 == 0 then t.get_position = callback() end
  return t
end

value = function(depth)
  depth = depth or 0
  local k = byte() % (depth > 2 and 6 or 14)
  if k == 0 then return nil end
  if k == 1 then return byte() % 2 == 0 end
  if k == 2 then return number() end
  if k == 3 then return small_number() end
  if k == 4 then return pick(STRINGS) end
  if k == 5 then return object_of(nil) end
  if k == 6 then return vec_table() end
  if k == 7 then return spec(depth) end
  if k == 8 then return callback() end
  if k == 9 then return transform() end
  if k == 10 then return points(byte() % 8) end
  if k == 11 then return object_of(nil) end
  if k == 12 then return setmetatable({}, { __index = function() error("no such field") end }) end
  return { value(depth + 1), value(depth + 1), value(depth + 1) }
end

-- An argument a method is likely to take.
local function plausible()
  local k = byte() % 8
  if k == 0 then return small_number() end
  if k == 1 then return object_of("ik.vec3") or vec_table() end
  if k == 2 then return object_of("ik.quat") or { 0, 0, 0, 1 } end
  if k == 3 then return vec_table() end
  if k == 4 then return 1 + byte() % 8 end
  if k == 5 then return pick(STRINGS) end
  if k == 6 then return byte() % 2 == 0 end
  return object_of(nil)
end

-- ---------------------------------------------------------------------------------------
-- Recipes: arguments a constructor takes, then spoilt now and then (a field replaced by
-- any value), so that most calls make an object and the rest probe each field's checks.
-- A constructor with no recipe (a new one) gets values from the pool.

local function maybe(v) if byte() % 4 == 0 then return value(1) end return v end

local function chain_points()
  local b = byte()
  local n = b < 240 and 2 + b % 7 or 100 + b % 101
  local t = {}
  for i = 1, n do t[i] = { (i - 1) * (0.5 + (byte() % 8) / 8), small_number() / 4, small_number() / 8 } end
  return t
end

local function bones_of(sk)
  local ok, list = pcall(function() return sk:bones() end)
  if ok and type(list) == "table" then return list end
  return { transform(), transform(), transform() }
end

local SOLVERS = { "fabrik", "ccd", "dls", "two_bone" }
local RECIPES = {
  ["ik.vec3()"] = function() return small_number(), small_number(), small_number() end,
  ["ik.quat()"] = function() return 0, 0, maybe(0), maybe(1) end,
  ["ik.quat.axis_angle"] = function() return vec_table(), small_number() end,
  ["ik.quat.from_to"] = function() return vec_table(), vec_table() end,
  ["ik.pole"] = function() return { position = maybe(vec_table()), weight = maybe(0.5) } end,
  ["ik.cone"] = function() return { angle = maybe(byte() / 64) } end,
  ["ik.hinge"] = function()
    return { axis = maybe({ 0, 0, 1 }), min = maybe(-1), max = maybe(byte() / 64) }
  end,
  ["ik.node"] = function()
    return { position = maybe(vec_table()), rotation = byte() % 2 == 0 and { 0, 0, 0, 1 } or nil,
             parent = byte() % 4 == 0 and object_of("ik.node") or nil }
  end,
  ["ik.skeleton"] = function()
    local bones = {}
    for i = 1, 2 + byte() % 5 do
      bones[i] = { name = "b" .. i, parent = i > 1 and "b" .. (i - 1) or nil,
                   position = { i > 1 and 1 or 0, 0, 0 } }
      if byte() % 8 == 0 then bones[i][pick(FIELDS)] = value(1) end
    end
    return bones
  end,
  ["ik.chain"] = function()
    local chain_spec
    if byte() % 3 == 0 then
      chain_spec = { bones = bones_of(object_of("ik.skeleton")),
                     target = object_of("ik.node") or transform() }
    else
      chain_spec = { positions = chain_points() }
    end
    chain_spec.solver = pick(SOLVERS)
    if byte() % 2 == 0 then chain_spec.iterations = 1 + byte() % 30 end
    if byte() % 2 == 0 then chain_spec.tolerance = byte() / 1000 end
    if byte() % 3 == 0 then chain_spec.pole = object_of("ik.pole") or vec_table() end
    if byte() % 4 == 0 then chain_spec.mode = byte() % 2 == 0 and "plain" or "refined" end
    if byte() % 4 == 0 then chain_spec[pick(FIELDS)] = value(1) end
    return chain_spec
  end,
  ["ik.ground.plane"] = function() return { point = maybe({ 0, 0, 0 }), normal = maybe({ 0, 1, 0 }) } end,
  ["ik.ground.heightfield"] = function()
    local c, r = 2 + byte() % 4, 2 + byte() % 4
    local h = {}
    for i = 1, c * r do h[i] = small_number() / 16 end
    return { origin = maybe({ -1, 0, -1 }), cell_size = maybe(0.5), columns = maybe(c), rows = maybe(r),
             heights = h }
  end,
  ["ik.ground.mesh"] = function()
    return { vertices = { { -1, 0, -1 }, { 1, 0, -1 }, { 1, 0, 1 }, maybe({ -1, 0, 1 }) },
             triangles = { { 1, 2, 3 }, maybe({ 1, 3, 4 }) } }
  end,
  ["ik.ground.custom"] = function() return callback() end,
  ["ik.foot"] = function()
    return { ground = object_of("ik.ground"), foot_offset = maybe(0.08), smooth_time = maybe(0.05) }
  end,
  ["ik.pelvis"] = function() return { smooth_time = maybe(0.05) } end,
  ["ik.batch"] = function()
    local chains = {}
    for i = 1, byte() % 4 do chains[i] = object_of("ik.chain") end
    return { chains = chains, threads = maybe(1 + byte() % 2) }
  end,
}

-- ---------------------------------------------------------------------------------------
-- An object's observable state, to compare across a call that raised. nil when it cannot
-- be read (closed, or a type with nothing to read).

local function num(n)
  if type(n) ~= "number" then return tostring(n) end
  if n ~= n then return "nan" end
  return string.format("%a", n)
end

local function vec_string(v)
  if type(v) ~= "userdata" then return tostring(v) end
  local ok, x, y, z, w = pcall(function() return v.x, v.y, v.z, tname_of(v) == "ik.quat" and v.w or 0 end)
  if not ok then return "?" end
  return num(x) .. "," .. num(y) .. "," .. num(z) .. "," .. num(w)
end

local STATE = {
  ["ik.vec3"] = function(o) return vec_string(o) end,
  ["ik.quat"] = function(o) return vec_string(o) end,
  ["ik.chain"] = function(o)
    local parts = { #o, tostring(o.solver), num(o.iterations), num(o.tolerance), num(o.weight) }
    for i = 1, #o do parts[#parts + 1] = vec_string(o:joint(i)) end
    return table.concat(parts, " ")
  end,
  ["ik.node"] = function(o)
    return vec_string(o:get_local_position()) .. " " .. vec_string(o:get_local_rotation())
  end,
  ["ik.bone"] = function(o)
    return vec_string(o:get_local_position()) .. " " .. vec_string(o:get_local_rotation())
  end,
  ["ik.pole"] = function(o) return vec_string(o.position) .. " " .. num(o.weight) end,
}

local function state_of(o)
  local f = STATE[tname_of(o)]
  if not f then return nil end
  local ok, s = pcall(f, o)
  if ok then return s end
  return nil
end

-- ---------------------------------------------------------------------------------------
-- The operations.

local function check_error(c, err)
  if type(err) ~= "string" and not raised_other then
    fail(c.name .. " raised a " .. type(err) .. ", not a string")
  end
end

local make_one -- forward

local function call_one()
  local c = pick(calls)
  local self
  if c.tname and byte() % 4 ~= 0 then
    self = object_of(c.tname)
    -- None of that type yet: make something instead (nil as self is tried often enough).
    if self == nil and byte() % 4 ~= 0 then return make_one() end
  else
    self = value()
  end
  -- Half the calls get a few likely arguments (methods check their extra arguments, so
  -- pool values alone would stop most calls at the first one), half anything.
  local args = {}
  local n, gen
  if byte() % 2 == 0 then
    n, gen = byte() % 3, plausible
  else
    n, gen = byte() % 5, value
  end
  for i = 1, n do args[i] = gen() end
  reentered, raised_other = false, false
  local before = type(self) == "userdata" and state_of(self)
  local tostring_ok = before and pcall(tostring, self)
  local res = table.pack(pcall(c.fn, self, unpack(args, 1, n)))
  say(c.name, tostring(self), "+" .. n, "->", tostring(res[1]), tostring(res[2]))
  if res[1] then
    for i = 2, res.n do keep(res[i]) end
    return
  end
  check_error(c, res[2])
  if before and not reentered then
    local after = state_of(self)
    local why = c.name .. " raised (" .. tostring(res[2]) .. ")"
    if after == nil then fail(why .. " and left its object unreadable") end
    if after ~= before then
      fail(why .. " and changed its object: " .. before .. " -> " .. after)
    end
    if tostring_ok and not pcall(tostring, self) then fail(c.name .. " raised and broke tostring") end
  end
end

-- A constructor with its recipe's arguments.
local makers = {}
for _, c in ipairs(calls) do
  if not c.tname then makers[#makers + 1] = c end
end

make_one = function()
  local c = pick(makers)
  local recipe = RECIPES[c.name]
  if not recipe then return call_one() end
  reentered, raised_other = false, false
  local res = table.pack(pcall(function() return c.fn(recipe()) end))
  say(c.name, "(recipe) ->", tostring(res[1]), tostring(res[2]))
  if res[1] then
    for i = 2, res.n do keep(res[i]) end
  else
    check_error(c, res[2])
  end
end

local function close_one()
  local o = object_of(nil)
  if o == nil then return end
  local ok, close = pcall(function() return o.close end)
  if ok and type(close) == "function" then
    reentered, raised_other = false, false
    local ok2, err = pcall(close, o)
    if not ok2 then check_error({ name = tname_of(o) .. ":close" }, err) end
  end
end

-- An object whose finaliser calls a method with arguments chosen now.
local function finaliser()
  local c, o = pick(calls), object_of(nil)
  local a, b = value(2), value(2)
  setmetatable({}, { __gc = function()
    reentered = true
    pcall(c.fn, o, a, b)
  end })
end

local OPS = {
  function() return "+", function(a, b) return a + b end end,
  function() return "-", function(a, b) return a - b end end,
  function() return "*", function(a, b) return a * b end end,
  function() return "/", function(a, b) return a / b end end,
  function() return "unm", function(a) return -a end end,
  function() return "==", function(a, b) return a == b end end,
  function() return "#", function(a) return #a end end,
  function() return "tostring", function(a) return tostring(a) end end,
  function() return "index", function(a, b) return a[b] end end,
  function() return "newindex", function(a, b, v) a[b] = v end end,
  function() return "call", function(a, b) return a(b) end end,
}

local function operator()
  local name, f = pick(OPS)()
  local a = byte() % 2 == 0 and object_of(nil) or value()
  local b = byte() % 2 == 0 and pick(STRINGS) or value()
  reentered, raised_other = false, false
  local ok, r = pcall(f, a, b, value())
  if ok then keep(r) else check_error({ name = "operator " .. name }, r) end
end

local steps = 0
while more() and steps < 200 do
  steps = steps + 1
  local op = byte() % 16
  if op < 5 then
    make_one()
  elseif op < 10 then
    call_one()
  elseif op == 10 then
    collectgarbage()
  elseif op == 11 then
    close_one()
  elseif op == 12 then
    finaliser()
  elseif op == 13 then
    operator()
  elseif op == 14 then
    -- Forget an object: its __gc runs at the next collection, while others may use it.
    if #objects > 0 then table.remove(objects, byte() % #objects + 1) end
  else
    collectgarbage("step")
  end
end
objects = nil
collectgarbage()
collectgarbage()
