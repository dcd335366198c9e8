--- Option checking for the rigs: what a value is, how it reads in a message, and the
-- checked options of a rig's `new{...}` with their defaults.
--
-- Every message names its owner ("ik.rigs.arm") and the option: "<owner>: option
-- '<name>' (<expected> expected, got <value>)". `ik.rigs.common` hands all of this on
-- under the same names (`common.options` is `options.check`).
-- @module ik.rigs.options

local ik = require("ik")

local huge = math.huge

local options = {}

--- Default blend time in seconds: how long the applied weight takes from 0 to 1.
options.BLEND_TIME = 0.2

--- Whether v is a finite number (not NaN, not infinite).
-- @param v any value
-- @treturn boolean
-- @usage local options = require("ik.rigs.options")
-- assert(options.finite(1) and not options.finite(0 / 0) and not options.finite("1"))
function options.finite(v)
  return type(v) == "number" and v == v and v > -huge and v < huge
end
local finite = options.finite

--- How a value reads in a message: a number as itself, a string quoted, anything else
-- by its type (`__name` for userdata that have one, like "ik.bone").
-- @param v any value
-- @treturn string
-- @usage local options = require("ik.rigs.options")
-- assert(options.describe(nil) == "nil" and options.describe(2) == "2")
function options.describe(v)
  local t = type(v)
  if t == "number" then return string.format("%.14g", v) end
  if t == "string" then return string.format("%q", v) end
  if t == "userdata" or t == "table" then
    local mt = getmetatable(v)
    if type(mt) == "table" and type(rawget(mt, "__name")) == "string" then return mt.__name end
  end
  return t
end
local describe = options.describe

local function index(v, name) return v[name] end

--- The method `name` of v (a function, or a table with `__call`), or nil; never raises
-- (a closed ik object raises on any index).
-- @param v any value
-- @string name
-- @treturn ?function
function options.method(v, name)
  local t = type(v)
  if t ~= "table" and t ~= "userdata" then return nil end
  local ok, m = pcall(index, v, name) -- no closure: this runs every frame
  if not ok then return nil end
  if type(m) == "function" then return m end
  local mt = type(m) == "table" and getmetatable(m)
  if mt and mt.__call then return m end
  return nil
end
local method = options.method

--- Whether v has the read half of the transform contract (`get_position` and
-- `get_rotation`).
-- @param v any value
-- @treturn boolean
function options.is_transform(v)
  return method(v, "get_position") ~= nil and method(v, "get_rotation") ~= nil
end
local is_transform = options.is_transform

--- v as an ik.vec3 when it is a vec3-like (not a transform), else nil.
-- @param v any value
-- @tparam[opt] ik.vec3 out written and returned instead of a new vector
-- @treturn ?ik.vec3
function options.to_vec3(v, out)
  if v == nil or type(v) == "number" or is_transform(v) then return nil end
  local ok, r
  if out then ok, r = pcall(out.set, out, v) else ok, r = pcall(ik.vec3, v) end
  if ok then return r end
  return nil
end
local to_vec3 = options.to_vec3

--- The kinds of option: each a test `(value, field)` returning true, or false and what
-- was expected (and, for some, what is wrong in place of "<expected> expected, got
-- <value>"). transform, bone (a transform with set_rotation), movable (and
-- set_position), point (transform or vec3), vec3 (non-zero), quat, unit ([0, 1]),
-- positive, non_negative, number (finite), boolean, table, budget (integer >= 1),
-- ground (has raycast), bones (a list of bones).
-- @table kinds
local kinds = {}
options.kinds = kinds

function kinds.transform(v)
  return is_transform(v), "transform"
end

-- A transform the rig turns: it must also take set_rotation.
function kinds.bone(v)
  return is_transform(v) and method(v, "set_rotation") ~= nil, "transform"
end

-- A transform the rig moves and turns.
function kinds.movable(v)
  return is_transform(v) and method(v, "set_rotation") ~= nil and method(v, "set_position") ~= nil,
    "transform with set_position and set_rotation"
end

function kinds.point(v)
  return is_transform(v) or to_vec3(v) ~= nil, "transform or vec3"
end

function kinds.vec3(v)
  local p = to_vec3(v)
  return p ~= nil and p:length() > 1e-9, "non-zero vec3"
end

function kinds.quat(v)
  if is_transform(v) or type(v) == "number" or v == nil then return false, "quat" end
  local ok, q = pcall(ik.quat, v)
  return ok and q ~= nil, "quat"
end

function kinds.unit(v) return finite(v) and v >= 0 and v <= 1, "number in [0, 1]" end
function kinds.positive(v) return finite(v) and v > 0, "positive number" end
function kinds.non_negative(v) return finite(v) and v >= 0, "non-negative number" end
function kinds.number(v) return finite(v), "number" end
function kinds.boolean(v) return type(v) == "boolean", "boolean" end
function kinds.table(v) return type(v) == "table", "table" end
function kinds.budget(v) return finite(v) and v >= 1 and v % 1 == 0, "integer >= 1" end

function kinds.ground(v)
  return method(v, "raycast") ~= nil, "ik.ground"
end

function kinds.bones(v)
  if type(v) ~= "table" or #v < 1 then return false, "list of transforms" end
  for i = 1, #v do
    if not kinds.bone(v[i]) then
      return false, "list of transforms", "item " .. i .. ": transform expected, got " .. describe(v[i])
    end
  end
  return true
end

--- Raises "<owner>: option '<name>' (<expected> expected, got <value>)", blaming the
-- caller of the function that called it (a rig's `new` checking its options).
-- @string owner e.g. "ik.rigs.arm"
-- @string name the option
-- @string expected what it should have been
-- @param value what it was
-- @usage local options = require("ik.rigs.options")
-- local function new(o) options.option_error("ik.rigs.demo", "speed", "positive number", o.speed) end
-- local ok, err = pcall(new, { speed = -1 })
-- assert(err:find("ik.rigs.demo: option 'speed' (positive number expected, got -1)", 1, true))
function options.option_error(owner, name, expected, value)
  error(string.format("%s: option '%s' (%s expected, got %s)", owner, name, expected, describe(value)), 3)
end

--- Checks a rig's options and returns them with defaults filled in.
--
-- `fields` is a list of `{ name, kind, default = , required = }`, kind one of `kinds`.
-- An unknown option, a missing required one or a value of the wrong kind raises,
-- naming the owner and the option, and blaming the caller of the function that called
-- it.
-- @string owner e.g. "ik.rigs.arm"
-- @tparam table spec the options given
-- @tparam table fields what the rig takes
-- @treturn table the options, defaults filled in
-- @usage local options = require("ik.rigs.options")
-- local ok, err = pcall(options.check, "ik.rigs.demo", {}, { { "upper", "transform", required = true } })
-- assert(not ok and err:find("ik.rigs.demo: option 'upper' (transform expected, got nil)", 1, true))
function options.check(owner, spec, fields)
  if type(spec) ~= "table" then
    error(string.format("%s: options table expected, got %s", owner, describe(spec)), 2)
  end
  local known, names = {}, {}
  for _, f in ipairs(fields) do
    known[f[1]] = f
    names[#names + 1] = f[1]
  end
  for key in pairs(spec) do
    if not known[key] then
      local list = table.concat(names, ", ")
      error(string.format("%s: no option '%s' (options: %s)", owner, tostring(key), list), 2)
    end
  end
  local out = {}
  for _, f in ipairs(fields) do
    local name, kind = f[1], f[2]
    local v = spec[name]
    if v == nil then
      if f.required then
        local _, expected = kinds[kind](nil, f)
        error(string.format("%s: option '%s' (%s expected, got nil)", owner, name, expected), 2)
      end
      v = f.default
    else
      local ok, expected, detail = kinds[kind](v, f)
      if not ok then
        detail = detail or string.format("%s expected, got %s", expected, describe(v))
        error(string.format("%s: option '%s' (%s)", owner, name, detail), 2)
      end
    end
    out[name] = v
  end
  return out
end

--- The options every rig takes: weight, enabled, blend_time, reset_pose, order and
-- budget.
-- @number order the rig's default place in a rig set
-- @treturn table fields for `options.check`
function options.rig_fields(order)
  return {
    { "weight", "unit", default = 1 },
    { "enabled", "boolean", default = true },
    { "blend_time", "non_negative", default = options.BLEND_TIME },
    { "reset_pose", "boolean", default = false },
    { "order", "number", default = order },
    { "budget", "budget" },
  }
end

--- Joins lists of option fields.
-- @tparam table ... lists of fields
-- @treturn table one list
function options.fields(...)
  local out = {}
  for i = 1, select("#", ...) do
    for _, f in ipairs((select(i, ...))) do out[#out + 1] = f end
  end
  return out
end

return options
