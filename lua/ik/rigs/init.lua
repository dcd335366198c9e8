--- Rig scripts: small behaviours that drive a character's bones, and the set that runs
-- them in order each frame.
--
-- The rigs: `ik.rigs.root` (hips follow a target, order 100), `ik.rigs.chest` (bend
-- the spine towards a target, 200), `ik.rigs.leg` (legs and foot placement, 300; its
-- pelvis helper 250), `ik.rigs.arm` (hands reach, 400) and `ik.rigs.look` (head looks
-- at a target, 500); `ik.rigs.walker` walks many-legged robots; `ik.rigs.humanoid`
-- makes a whole humanoid's rigs from its bone map (`require("ik.rigs").humanoid{...}`), and
-- `ik.rigs.body` poses a whole body from head and hand targets (`require("ik.rigs").body{...}`).
-- Each is made with `new{...}` from named transforms and options, and has
-- `update(dt)`, a `weight` that
-- is blended in and out over `blend_time` (never snapping), and `enabled`. They use only
-- the transform contract, so they drive `ik.bone`, `ik.node` and a host's own objects
-- alike.
--
-- Run the rigs after the animation has posed the character, every frame, in their
-- order: a set does that. The rig modules are also reachable as fields of this one:
-- `require("ik.rigs").arm` is `require("ik.rigs.arm")`.
--
-- What the rigs are built from, for rigs of your own: `ik.rigs.common` (the fields,
-- budget and pose every rig has), `ik.rigs.options` (option checking), `ik.rigs.motion`
-- (springs and the shared maths), `ik.rigs.limb` (the two-bone limb) and `ik.rigs.gait`
-- (procedural stepping).
-- @module ik.rigs

local opt = require("ik.rigs.options")

local rigs = {}

local Set = {}
Set.__index = Set

local function check_rig(rig, what)
  if type(rig) ~= "table" and type(rig) ~= "userdata" then
    error(string.format("ik.rigs.set: %s (rig expected, got %s)", what, opt.describe(rig)), 3)
  end
  if not opt.method(rig, "update") then
    error(string.format("ik.rigs.set: %s (rig expected, got %s without update)", what,
      opt.describe(rig)), 3)
  end
  local order = rig.order
  if type(order) ~= "number" or order ~= order then
    error(string.format("ik.rigs.set: %s has no order (number expected, got %s)", what,
      opt.describe(order)), 3)
  end
end

-- Stable sort by order: rigs of equal order run in the order they were added.
local function sort(self)
  local list, seq = self._rigs, self._seq
  for i = 2, #list do
    local rig = list[i]
    local j = i - 1
    while j >= 1 and (list[j].order > rig.order
        or (list[j].order == rig.order and seq[list[j]] > seq[rig])) do
      list[j + 1] = list[j]
      j = j - 1
    end
    list[j + 1] = rig
  end
end

--- Makes a rig set: the rigs given, run by `update` in order (lowest `order` first;
-- rigs of equal order in the order they were added).
-- @tparam[opt] {table,...} list rigs
-- @treturn table the set
-- @usage local ran = {}
-- local function rig(name, order)
--   return { order = order, update = function() ran[#ran + 1] = name end }
-- end
-- local set = require("ik.rigs").set{ rig("look", 500), rig("root", 100), rig("arm", 400) }
-- set:update(1 / 60)
-- assert(table.concat(ran, " ") == "root arm look")
function rigs.set(list)
  if list ~= nil and type(list) ~= "table" then
    error("ik.rigs.set: list of rigs expected, got " .. opt.describe(list), 2)
  end
  local self = setmetatable({ _rigs = {}, _seq = setmetatable({}, { __mode = "k" }), _next = 0 }, Set)
  for i, rig in ipairs(list or {}) do
    check_rig(rig, "rig #" .. i)
    if self._seq[rig] then error("ik.rigs.set: rig #" .. i .. " is given twice", 2) end
    self._next = self._next + 1
    self._seq[rig] = self._next
    self._rigs[#self._rigs + 1] = rig
  end
  sort(self)
  return self
end

--- Runs every rig's update(dt), in order. A rig's order may change between frames.
-- @number dt seconds since the last update, >= 0
function Set:update(dt)
  if type(dt) ~= "number" or dt ~= dt or dt < 0 or dt == math.huge then
    error("ik.rigs.set: update: dt (non-negative number expected, got " .. opt.describe(dt) .. ")", 2)
  end
  sort(self)
  local list = self._rigs
  for i = 1, #list do list[i]:update(dt) end
end

--- Sets the iteration budget of every rig in the set that takes one (`set_budget`):
-- lower it for a distant character, nil gives each rig its full count back.
-- @tparam ?int n
-- @usage local sk = ik.skeleton{
--   { name = "neck", position = {0, 1.5, 0} },
--   { name = "head", parent = "neck", position = {0, 0.1, 0} },
-- }
-- local look = require("ik.rigs.look").new{ neck = sk:bone("neck"), head = sk:bone("head"),
--                                           target = ik.vec3(1, 1.6, 1) }
-- local set = require("ik.rigs").set{ look }
-- set:set_budget(2)
-- assert(look.budget == 2)
function Set:set_budget(n)
  for _, rig in ipairs(self._rigs) do
    if opt.method(rig, "set_budget") then rig:set_budget(n) end
  end
end

--- Adds a rig (to run after those of its order already there).
-- @tparam table rig
-- @treturn table the rig
function Set:add(rig)
  check_rig(rig, "add: the rig")
  if self._seq[rig] then error("ik.rigs.set: add: the rig is in the set already", 2) end
  self._next = self._next + 1
  self._seq[rig] = self._next
  self._rigs[#self._rigs + 1] = rig
  sort(self)
  return rig
end

--- Removes a rig.
-- @tparam table rig
-- @treturn boolean whether it was in the set
function Set:remove(rig)
  if not self._seq[rig] then return false end
  self._seq[rig] = nil
  local list = self._rigs
  for i = 1, #list do
    if rawequal(list[i], rig) then
      table.remove(list, i)
      break
    end
  end
  return true
end

--- The rigs in the order they run, in a new list.
-- @treturn {table,...}
function Set:rigs()
  sort(self)
  local out = {}
  for i, rig in ipairs(self._rigs) do out[i] = rig end
  return out
end

function Set:__tostring()
  return string.format("ik.rigs.set(%d rigs)", #self._rigs)
end

local MODULES = {
  arm = true, leg = true, look = true, root = true, chest = true, walker = true, humanoid = true, body = true,
  common = true, options = true, motion = true, limb = true, gait = true,
}

return setmetatable(rigs, {
  __index = function(t, name)
    if MODULES[name] then
      local m = require("ik.rigs." .. name)
      rawset(t, name, m)
      return m
    end
    return nil
  end,
})
