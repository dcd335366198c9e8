-- Shared comparators for the specs: `local h = require("spec_helper")`.
--
-- Each returns true, or false and a message saying what differed, so that
-- `assert(h.vec_near(v, {1, 2, 3}))` fails with that message. The default tolerance
-- follows the module's scalar type: ik.real is "double" or "float".
local ik = require("ik")
local luassert = require("luassert")

local h = {}

--- Default absolute tolerance: a few hundred ulps of 1 for double, about a hundred for float.
h.TOL = ik.real == "float" and 2e-5 or 1e-10

local function fmt(n)
  if type(n) ~= "number" then return tostring(n) end
  return string.format("%.17g", n)
end

-- The components of an ik.vec3, an ik.quat, an array {x, y, z[, w]} or a {x =, ...} table.
local function components(v, n)
  local c = {}
  if type(v) ~= "table" and type(v) ~= "userdata" then return c end
  local names = { "x", "y", "z", "w" }
  for i = 1, n do
    local value = v[names[i]]
    if value == nil and type(v) == "table" then value = v[i] end
    c[i] = value
  end
  return c
end

local function show(c, n)
  local parts = {}
  for i = 1, n do parts[i] = fmt(c[i]) end
  return "(" .. table.concat(parts, ", ") .. ")"
end

--- |a - b| <= tol (default h.TOL). NaN is never near anything.
function h.near(a, b, tol)
  tol = tol or h.TOL
  if type(a) ~= "number" or type(b) ~= "number" then
    return false, "numbers expected, got " .. type(a) .. " and " .. type(b)
  end
  if math.abs(a - b) <= tol then return true end
  return false, "expected " .. fmt(b) .. ", got " .. fmt(a) .. " (tolerance " .. fmt(tol) .. ")"
end

local function all_near(a, b, tol, n)
  for i = 1, n do
    if type(a[i]) ~= "number" or type(b[i]) ~= "number" then return false end
    local d = math.abs(a[i] - b[i])
    if d ~= d or d > tol then return false end -- NaN is never near
  end
  return true
end

--- Component by component within tol (default h.TOL); a and b may be ik.vec3 or tables.
function h.vec_near(a, b, tol)
  tol = tol or h.TOL
  local ca, cb = components(a, 3), components(b, 3)
  if all_near(ca, cb, tol, 3) then return true end
  return false, "expected vec3" .. show(cb, 3) .. ", got vec3" .. show(ca, 3)
    .. " (tolerance " .. fmt(tol) .. ")"
end

--- The same rotation within tol (default h.TOL) per component: q and -q are equal.
function h.quat_near(a, b, tol)
  tol = tol or h.TOL
  local ca, cb = components(a, 4), components(b, 4)
  local neg = {}
  for i = 1, 4 do neg[i] = type(cb[i]) == "number" and -cb[i] or cb[i] end
  if all_near(ca, cb, tol, 4) or all_near(ca, neg, tol, 4) then return true end
  return false, "expected quat" .. show(cb, 4) .. " (or its negation), got quat" .. show(ca, 4)
    .. " (tolerance " .. fmt(tol) .. ")"
end

--- Whether fn() raises an error whose text contains every one of the fragments (found
-- plainly, not as patterns), wherever the location prefix puts them.
function h.raises(fn, ...)
  local ok, err = pcall(fn)
  if ok then return false, "expected an error, none was raised" end
  err = tostring(err)
  for i = 1, select("#", ...) do
    local fragment = select(i, ...)
    if not string.find(err, fragment, 1, true) then
      return false, "error " .. string.format("%q", err) .. " lacks " .. string.format("%q", fragment)
    end
  end
  return true
end

--- The components of an ik.vec3 as an array {x, y, z}, for exact comparisons.
function h.xyz(v) return { v.x, v.y, v.z } end

--- The components of an ik.quat as an array {x, y, z, w}, for exact comparisons.
function h.xyzw(q) return { q.x, q.y, q.z, q.w } end

--- A seeded generator of uniform numbers in [a, b): Park-Miller, the same draws on every
-- Lua (5.1's math.random is the C library's).
function h.rng(seed)
  local s = seed
  return function(a, b)
    s = (s * 16807) % 2147483647
    return a + (b - a) * s / 2147483647
  end
end

--- Raises unless the lists of numbers a and b are equal element for element, bit for bit,
-- naming `what` and the first value that differs.
function h.assert_identical(a, b, what)
  luassert.are.equal(#a, #b)
  for i = 1, #a do
    if a[i] ~= b[i] then error(string.format("%s: value %d differs: %.17g vs %.17g", what, i, a[i], b[i])) end
  end
end

--- Asserts a transform's world position and (when given) rotation, within h.TOL.
function h.assert_world(t, position, rotation)
  assert(h.vec_near(t:get_position(), position))
  if rotation then assert(h.quat_near(t:get_rotation(), rotation)) end
end

--- Asserts a transform's local position and (when given) rotation, within h.TOL.
function h.assert_local(t, position, rotation)
  assert(h.vec_near(t:get_local_position(), position))
  if rotation then assert(h.quat_near(t:get_local_rotation(), rotation)) end
end

--- For a transform's four setters (set_position, set_local_position, set_rotation,
-- set_local_rotation): returns refuses(method, value, ...), which asserts that
-- t:method(value) raises "bad argument #1 to 'method'" with every fragment, and that
-- snapshot() is the same as it was when setter_refuser was called.
function h.setter_refuser(t, snapshot)
  local before = snapshot()
  local call = { -- method calls, so that every Lua names the method in the message
    set_position = function(value) t:set_position(value) end,
    set_local_position = function(value) t:set_local_position(value) end,
    set_rotation = function(value) t:set_rotation(value) end,
    set_local_rotation = function(value) t:set_local_rotation(value) end,
  }
  return function(method, value, ...)
    assert(h.raises(function() call[method](value) end, "bad argument #1 to '" .. method .. "'", ...))
    luassert.are.same(before, snapshot())
  end
end

--- KiB the heap grew by over run(), with the collector stopped, after run() has warmed up
-- (LuaJIT: with the JIT off and its traces flushed, so the interpreter alone shows the
-- binding's own allocation exactly. Traces are GC objects compiled now and then, and a
-- trace compiled before jit.off() would still run: an exit from it may materialise
-- what it had sunk.)
function h.jit_off()
  local jit = rawget(_G, "jit") -- luacheck: ignore 143
  if jit then
    jit.off()
    jit.flush()
  end
end

function h.allocated(run)
  local jit = rawget(_G, "jit") -- luacheck: ignore 143
  h.jit_off()
  run()
  collectgarbage("collect")
  collectgarbage("stop")
  run() -- a full collection may shrink the interpreter's stack: grow it back first
  local before = collectgarbage("count")
  run()
  local grown = collectgarbage("count") - before
  collectgarbage("restart")
  if jit then jit.on() end
  return grown
end

--- Twist (about the bone's own axis, in its frame) and direction turn (in the parent's
-- frame), both >= 0 radians, between two local rotations of a bone whose child sits
-- along axis_ls: a bone spins when the first exceeds the second.
function h.twist_and_turn(prev, now, axis_ls)
  local d = (prev:inverse() * now):normalized()
  local x, y, z, w = d:unpack()
  local p = x * axis_ls.x + y * axis_ls.y + z * axis_ls.z
  local atan2 = math.atan2 or math.atan
  local twist = 2 * atan2(p, w)
  if twist > math.pi then twist = twist - 2 * math.pi end
  if twist < -math.pi then twist = twist + 2 * math.pi end
  local a, b = prev * axis_ls, now * axis_ls
  return math.abs(twist), atan2(a:cross(b):length(), a:dot(b))
end

--- A body for bone trees: hips, spine, chest (the branch point), and two arms of a rigid
-- shoulder, an upper and a lower bone.
function h.tree_body()
  return ik.skeleton{
    { name = "hips" }, { name = "spine", parent = "hips", position = { 0, 1, 0 } },
    { name = "chest", parent = "spine", position = { 0, 1, 0 } },
    { name = "l_sh", parent = "chest", position = { 0.3, 0.2, 0 } },
    { name = "l_el", parent = "l_sh", position = { 0.5, 0, 0 } },
    { name = "l_hand", parent = "l_el", position = { 0.5, 0, 0 } },
    { name = "r_sh", parent = "chest", position = { -0.3, 0.2, 0 } },
    { name = "r_el", parent = "r_sh", position = { -0.5, 0, 0 } },
    { name = "r_hand", parent = "r_el", position = { -0.5, 0, 0 } },
  }
end

return h
