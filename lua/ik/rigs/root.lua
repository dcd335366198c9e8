--- Root rig: the hips follow a target's position and rotation, smoothed.
--
-- The hips are moved and turned (set_position, set_rotation) towards the target (plus
-- an offset in the target's own space) by a critically damped spring integrated
-- exactly: no overshoot, and the same motion at any frame rate, the goal being taken
-- to move steadily between updates. The spring starts from where the hips are at the
-- first update (and again after the rig was idle), the goal taken to have set out from
-- there; `snap()` jumps to the target.
--
-- Fields, read and write: `target`, `weight`, `enabled`, `blend_time`, `order`; read
-- only: `applied_weight`.
-- @module ik.rigs.root

local ik = require("ik")
local common = require("ik.rigs.common")

local OWNER = "ik.rigs.root"

local root = {}

--- The root's place in a rig set: first.
root.order = 100

local FIELDS = common.fields({
  { "hips", "movable", required = true },
  { "target", "transform", required = true },
  { "offset", "vec3" },
  { "rotation_offset", "quat" },
  { "smooth_time", "non_negative", default = 0.1 },
  { "rotation_smooth_time", "non_negative" },
  { "position", "boolean", default = true },
  { "rotation", "boolean", default = true },
}, common.rig_fields(root.order))

local Root = {}
Root.__index = Root

--- Makes a root rig.
-- @tparam table options
--
-- - `hips`: the transform to move (set_position and set_rotation); required.
-- - `target`: the transform it follows; required.
-- - `offset`: vec3 in the target's space, default zero: the hips go to
--   `target position + target rotation * offset`.
-- - `rotation_offset`: quat, default identity: the hips turn to
--   `target rotation * rotation_offset`.
-- - `smooth_time`: seconds, default 0.1 (0: no smoothing): the position spring's time
--   scale (a jump is about 90% made up after 2 * smooth_time).
-- - `rotation_smooth_time`: the same for the rotation, default `smooth_time`.
-- - `position`, `rotation`: booleans, default true: which of the two to follow.
-- - `weight`, `enabled`, `blend_time` (0.2 s), `order` (100), `reset_pose` (false: true
--   puts the hips back where they were when the rig was made before each update).
-- @treturn table the rig
-- @usage local hips = ik.node{ position = {0, 1, 0} }
-- local target = ik.node{ position = {1, 1, 0} }
-- local rig = require("ik.rigs.root").new{ hips = hips, target = target, smooth_time = 0.1 }
-- rig:update(1 / 60)
-- local x = hips:get_position().x
-- assert(x > 0 and x < 0.1)          -- on its way, not there at once
-- for _ = 1, 120 do rig:update(1 / 60) end
-- assert(math.abs(hips:get_position().x - 1) < 1e-4)
function root.new(options)
  local o = common.options(OWNER, options, FIELDS)
  local self = setmetatable({}, Root)
  self.hips, self.target = o.hips, o.target
  self._offset = o.offset and common.to_vec3(o.offset) or nil
  self._rotation_offset = o.rotation_offset and ik.quat(o.rotation_offset) or nil
  self._omega = common.omega(o.smooth_time)
  self._rotation_omega = common.omega(o.rotation_smooth_time or o.smooth_time)
  self._follow_position, self._follow_rotation = o.position, o.rotation
  common.init_rig(self, OWNER, o, { o.hips }, { o.hips })
  return self
end

-- Where the target says the hips go.
function Root:_goal()
  local target = self.target
  if not common.is_transform(target) then
    error(OWNER .. ": field 'target' (transform expected, got " .. common.describe(target) .. ")", 3)
  end
  local p = ik.vec3(target:get_position())
  local q = ik.quat(target:get_rotation())
  if self._offset then p = p + q * self._offset end
  if self._rotation_offset then q = q * self._rotation_offset end
  return p, q
end

--- Jumps the hips to the target, with no motion left in the springs (after a
-- teleport, say). Applied at the current applied weight.
function Root:snap()
  local p, q = self:_goal()
  self._x, self._v, self._g = { p:unpack() }, { 0, 0, 0 }, { p:unpack() }
  self._q, self._av, self._gq = q, { 0, 0, 0 }, q
  self:_apply(self.applied_weight)
end

function Root:_apply(w)
  local hips = self.hips
  if w <= 0 then return end
  if self._follow_position then
    local x = ik.vec3(self._x[1], self._x[2], self._x[3])
    hips:set_position(w >= 1 and x or ik.vec3(hips:get_position()):lerp(x, w))
  end
  if self._follow_rotation then
    hips:set_rotation(w >= 1 and self._q or ik.quat(hips:get_rotation()):slerp(self._q, w))
  end
end

--- Runs the rig for one frame.
-- @number dt seconds since the last update, >= 0
function Root:update(dt)
  local w = common.begin(self, dt)
  if not w then return end
  local p, q = self:_goal()
  if not self._x then
    -- start from where the hips are, still, the goal taken to have set out from there
    local hips = self.hips
    local x, r = ik.vec3(hips:get_position()), ik.quat(hips:get_rotation())
    self._x, self._v, self._g = { x:unpack() }, { 0, 0, 0 }, { x:unpack() }
    self._q, self._av, self._gq = r, { 0, 0, 0 }, r
  end
  -- position: a spring per axis, the goal moving steadily from last update's
  local x, v, g = self._x, self._v, self._g
  local gx, gy, gz = p:unpack()
  local goal = { gx, gy, gz }
  for i = 1, 3 do
    x[i], v[i] = common.spring(x[i], v[i], g[i], goal[i], self._omega, dt)
    g[i] = goal[i]
  end
  -- rotation: the same spring on the rotation vector from the goal, the goal turning
  -- steadily (at angular velocity u) from last update's
  if dt > 0 then
    local omega = self._rotation_omega
    local ux, uy, uz = common.quat_log(q * self._gq:inverse())
    ux, uy, uz = ux / dt, uy / dt, uz / dt
    if not omega then
      self._q = q
      self._av[1], self._av[2], self._av[3] = ux, uy, uz
    else
      -- in rotation vectors from last update's goal: the hips at e, the goal going
      -- from 0 to u * dt
      local e = { common.quat_log(self._q * self._gq:inverse()) }
      local u = { ux, uy, uz }
      local av = self._av
      for i = 1, 3 do
        e[i], av[i] = common.spring(e[i], av[i], 0, u[i] * dt, omega, dt)
      end
      self._q = common.quat_exp(e[1], e[2], e[3]) * self._gq
    end
    self._gq = q
  end
  self:_apply(w)
end

function Root:_on_idle()
  self._x = nil
end

function Root:__tostring()
  return string.format("ik.rigs.root (weight %.3g)", self.applied_weight)
end

return root
