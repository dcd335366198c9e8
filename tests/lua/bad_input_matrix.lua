-- The machinery of bad_input_spec.lua: the kinds of argument and field the binding takes,
-- the bad values of each kind with the exact message each one must raise, and the
-- generator that turns the spec's table of functions into cases.
--
-- Every case is called from a small function compiled here with the call written out
-- (`o:solve(...)`, `ik.ground.plane(...)`, `o.tolerance = v`), as user code would call it:
-- the name in "bad argument #n to 'f'" is the one the interpreter sees at the call, and
-- the location prefix is this chunk's own ("bad_input:1: "), so every message is compared
-- whole, byte for byte, on Lua 5.4, 5.1 and LuaJIT.
local ik = require("ik")

local M = {}

local CHUNK = "bad_input"
M.PREFIX = CHUNK .. ":1: "

local compile = loadstring or load -- luacheck: ignore 113 (loadstring is 5.1's and LuaJIT's)
local unpack = table.unpack or unpack -- luacheck: ignore 113

local NAN, INF, HUGE = 0 / 0, math.huge, 1e300

local NOT_FINITE_VEC3 = "finite vec3 expected, got NaN, inf or a huge component"
local NOT_FINITE_QUAT = "finite quat expected, got NaN, inf or a huge component"
M.NOT_FINITE_VEC3 = NOT_FINITE_VEC3

--- How the binding writes a number in a message: "%.14g", and nan, inf, -inf.
function M.num(n)
  if n ~= n then return "nan" end
  if n == INF then return "inf" end
  if n == -INF then return "-inf" end
  return string.format("%.14g", n)
end

-- Values of other types than the one wanted, and how messages name them.
local function wrong_types(except)
  local all = {
    { "boolean", true, "boolean" },
    { "string", "x", "string" },
    { "table", {}, "table" },
    { "function", function() end, "function" },
    { "ik.vec3", ik.vec3(1, 2, 3), "ik.vec3" },
    { "ik.quat", ik.quat(), "ik.quat" },
    { "ik.cone", ik.cone{ angle = 1 }, "ik.cone" },
  }
  local out = {}
  for _, v in ipairs(all) do
    if not (except and except[v[1]]) then out[#out + 1] = v end
  end
  return out
end

-- A bad value: { label, value, text }: text is what the message says in parentheses
-- (arguments) or what follows the field's name (fields).
local function bad(list, label, value, text) list[#list + 1] = { label, value, text } end

local function typed(expected, except)
  local list = {}
  for _, v in ipairs(wrong_types(except)) do bad(list, v[1], v[2], expected .. " expected, got " .. v[3]) end
  return list
end

local function nonfinite_numbers(list, fmt)
  for _, n in ipairs({ NAN, INF, -INF, HUGE, -HUGE }) do bad(list, M.num(n), n, string.format(fmt,
      M.num(n))) end
  return list
end

local function nonfinite_vectors(list, n, text)
  local names = { "NaN", "inf", "-inf", "huge" }
  for i, x in ipairs({ NAN, INF, -INF, HUGE }) do
    local v = { 0, 0, 0, 1 }
    v[(i - 1) % 3 + 1] = x
    if n == 3 then v[4] = nil end
    bad(list, names[i] .. " component", v, text)
  end
  bad(list, "huge x field", { x = HUGE, y = 0, z = 0, w = 1 }, text)
  return list
end

-- ---- argument kinds: { expected = name in "got nil"/"got no value", optional, bad = list } ----

local K = {}
M.kinds = K

K.number = { expected = "number", bad = nonfinite_numbers(typed("number"), "finite number expected, got %s") }

K.non_negative = {
  expected = "number",
  bad = (function()
    local list = nonfinite_numbers(typed("number"), "finite number expected, got %s")
    bad(list, "-1", -1, "non-negative number expected, got -1")
    bad(list, "-1e-300", -1e-300, "non-negative number expected, got -1e-300")
    return list
  end)(),
}

local function vec3_kind(extra)
  local list = typed("vec3", { ["ik.vec3"] = true })
  bad(list, "short array", { 1, 2 }, "vec3 expected, got table")
  bad(list, "string component", { 1, "2", 3 }, "vec3 expected, got table")
  bad(list, "missing z field", { x = 1, y = 2 }, "vec3 expected, got table")
  nonfinite_vectors(list, 3, NOT_FINITE_VEC3)
  if extra then extra(list) end
  return { expected = "vec3", bad = list }
end

K.vec3 = vec3_kind()
K.direction = vec3_kind(function(list) bad(list, "zero", { 0, 0, 0 }, "non-zero vec3 expected") end)

local function quat_kind(extra)
  local list = typed("quat", { ["ik.quat"] = true })
  bad(list, "three components", { 1, 2, 3 }, "quat expected, got table")
  bad(list, "missing w field", { x = 0, y = 0, z = 0 }, "quat expected, got table")
  nonfinite_vectors(list, 4, NOT_FINITE_QUAT)
  if extra then extra(list) end
  return { expected = "quat", bad = list }
end

K.quat = quat_kind()
K.rotation = quat_kind(function(list) bad(list, "zero", { 0, 0, 0, 0 }, "non-zero quat expected") end)

--- An integer index in 1..n, as Lua 5.4's own luaL_checkinteger words it.
function K.index(n)
  local list = typed("number", { string = true })
  bad(list, "string", "x", "number expected, got string")
  local range = "index out of range: 1.." .. n
  for _, i in ipairs({ 0, -1, n + 1, 2 ^ 53 }) do bad(list, M.num(i), i, range) end
  for _, x in ipairs({ 1.5, NAN, INF, -INF, HUGE }) do
    bad(list, M.num(x), x, "number has no integer representation")
  end
  return { expected = "number", bad = list }
end

--- A bone of a skeleton of n bones, by name or index.
function K.bone_ref(n)
  local list = typed("bone name or index", { string = true })
  bad(list, "unknown name", "zz", "no bone named 'zz'")
  local range = "index out of range: 1.." .. n
  for _, i in ipairs({ 0, n + 1, 1.5, NAN, INF }) do bad(list, M.num(i), i, range) end
  return { expected = "bone name or index", bad = list }
end

K.key = { expected = "string", bad = typed("string", { string = true }) }
K.string = { expected = "string", bad = typed("string", { string = true }) }
K.parent = { optional = true, bad = typed("ik.bone, ik.node or nil") }
K.constraint = { optional = true, bad = typed("ik.cone, ik.hinge or nil", { ["ik.cone"] = true }) }

K.quat_or_vec3 = (function()
  local list = typed("quat or vec3", { ["ik.quat"] = true, ["ik.vec3"] = true })
  bad(list, "short array", { 1, 2 }, "quat or vec3 expected, got table")
  nonfinite_vectors(list, 3, NOT_FINITE_VEC3)
  return { expected = "quat or vec3", bad = list }
end)()

K.chain = { expected = "ik.chain", bad = typed("ik.chain") }
K.foot = { optional = true, bad = typed("ik.foot or nil") }

K.spec = { expected = "table", bad = typed("table", { table = true }) }
K.opt_spec = { optional = true, bad = typed("table", { table = true }) }
K.fn = { expected = "function", bad = typed("function", { ["function"] = true }) }

K.path = {
  expected = "string",
  bad = (function()
    local list = typed("string", { string = true })
    bad(list, "empty", "", "file path expected, got an empty string or one with a zero byte")
    bad(list, "zero byte", "a\0b", "file path expected, got an empty string or one with a zero byte")
    return list
  end)(),
}

--- An optional ik.vec3 / ik.quat to write a result into.
function K.out(type_name)
  local list = typed(type_name, { [type_name] = true })
  bad(list, "array", { 1, 2, 3, 4 }, type_name .. " expected, got table")
  return { optional = true, bad = list }
end

-- ---- field kinds: { required, bad = list of { label, value, text } } ----
-- text is the whole parenthesised part after "bad field 'f' ".

local F = {}
M.fields = F

--- A number field: o.expected is the message's wording; lo/hi bound it (open_lo: > lo);
-- integer; required.
function F.number(o)
  local function say(got) return "(" .. o.expected .. " expected, got " .. got .. ")" end
  local list = {}
  for _, v in ipairs(wrong_types()) do bad(list, v[1], v[2], say(v[3])) end
  for _, n in ipairs({ NAN, INF, -INF, HUGE, -HUGE }) do bad(list, M.num(n), n, say(M.num(n))) end
  if o.lo then
    local below = o.open_lo and o.lo or o.lo - 1
    bad(list, M.num(below), below, say(M.num(below)))
    if not o.open_lo and not o.integer then
      local just = o.lo - (ik.real == "float" and 1e-5 or 1e-9) -- beyond the bound as ik_real rounds it
      bad(list, "just below", just, say(M.num(just)))
    end
  end
  if o.hi then
    bad(list, M.num(o.hi + 1), o.hi + 1, say(M.num(o.hi + 1)))
  end
  if o.integer then bad(list, "1.5 more than lo", o.lo + 1.5, say(M.num(o.lo + 1.5))) end
  if o.required then bad(list, "nil", nil, say("nil")) end
  return { bad = list }
end

--- A vec3 field: o.expected for the wrong types; nonzero adds the zero vector with that
-- text; required.
function F.vec3(o)
  local list = {}
  for _, v in ipairs(wrong_types({ ["ik.vec3"] = true })) do
    if not (o.accepts and o.accepts[v[1]]) then
      bad(list, v[1], v[2], "(" .. o.expected .. " expected, got " .. v[3] .. ")")
    end
  end
  bad(list, "short array", { 1, 2 }, "(" .. o.expected .. " expected, got table)")
  nonfinite_vectors(list, 3, "(" .. NOT_FINITE_VEC3 .. ")")
  if o.nonzero then bad(list, "zero", { 0, 0, 0 }, "(" .. o.nonzero .. ")") end
  for _, e in ipairs(o.extra or {}) do list[#list + 1] = e end
  if o.required then bad(list, "nil", nil, "(" .. o.expected .. " expected, got nil)") end
  return { bad = list }
end

--- Any field: the given list of { label, value, text }.
function F.custom(list) return { bad = list } end

-- ---- running a case ----

local function pack(...) return { n = select("#", ...), ... } end

local callers = {}

-- The function that makes the call `code` (its arguments: o, then ... as the call's).
local function caller(code)
  if not callers[code] then
    local src = "local ik, pack = ...; return function(o, ...) return pack(" .. code .. ") end"
    if code:find("=", 1, true) then
      src = "local ik, pack = ...; return function(o, v) " .. code .. " end"
    end
    callers[code] = assert(compile(src, "=" .. CHUNK))(ik, pack)
  end
  return callers[code]
end
M.caller = caller

-- The components of every ik.vec3 and ik.quat among the values: a refused call writes
-- none of them (out arguments).
local function values_state(args)
  local s = {}
  for i = 1, args.n do
    local v = args[i]
    local mt = type(v) == "userdata" and getmetatable(v)
    local name = type(mt) == "table" and rawget(mt, "__name")
    if name == "ik.vec3" then s[i] = { v.x, v.y, v.z } end
    if name == "ik.quat" then s[i] = { v.x, v.y, v.z, v.w } end
  end
  return s
end

--- Calls code with (o, args...) in protected mode; returns ok and the error or results.
function M.call(code, o, args) return pcall(caller(code), o, unpack(args, 1, args.n)) end

local FRESH = {}

--- A value made anew for every case (an object a call may change).
function M.fresh(make) return setmetatable({ make = make }, FRESH) end

--- The arguments `good` (a list; M.fresh entries are made now), with position p
-- replaced by value (or cut there when cut), as a packed list.
function M.args(good, p, value, cut)
  local n = good.n or #good
  local out = { n = n }
  for i = 1, n do
    local g = good[i]
    if getmetatable(g) == FRESH then g = g.make() end
    out[i] = g
  end
  if p then
    if cut then
      out.n = p - 1
      for i = p, n do out[i] = nil end
    else
      out[p] = value
    end
  end
  return out
end

M.values_state = values_state
M.pack = pack

return M
