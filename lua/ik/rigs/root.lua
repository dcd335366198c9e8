--- Root rig: the hips follow a target's position and rotation, smoothed.
--
-- The hips are moved and turned (set_position, set_rotation) towards the target (plus
-- an offset in the target's own space) by a critically damped spring integrated
-- exactly: no overshoot, and the same motion at any frame rate. Between updates the
-- goal's position is taken to follow the cubic through its last four updates' places
-- (`motion.cubic_goal`: along a curve, the path the host samples, not its chords; a
-- line where it stopped or turned back without slowing), its rotation to turn steadily.
-- The spring starts from where the hips are at the first update (and again after the
-- rig was idle), the goal taken to have set out from there; `snap()` jumps to the
-- target.
--
-- Fields, read and write: `target`, `weight`, `enabled`, `blend_time`, `order`; read
-- only: `applied_weight`.
-- @module ik.rigs.root

local ik = require("ik")
local common = require("ik.rigs.common")
local motion = require("ik.rigs.motion")
local opt = require("ik.rigs.options")

local OWNER = "ik.rigs.root"

local root = {}

--- The root's place in a rig set: first.
root.order = 100

local FIELDS = opt.fields({
  { "hips", "movable", required = true },
  { "target", "transform", required = true },
  { "offset", "vec3" },
  { "rotation_offset", "quat" },
  { "smooth_time", "non_negative", default = 0.1 },
  { "rotation_smooth_time", "non_negative" },
  { "position", "boolean", default = true },
  { "rotation", "boolean", default = true },
}, opt.rig_fields(root.order))

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
--   puts the hips back where they were when the rig was made before each update),
--   `budget` (none; the springs are exact, with no chain or loop to cap).
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
  local o = opt.check(OWNER, options, FIELDS)
  local self = setmetatable({}, Root)
  self.hips, self.target = o.hips, o.target
  self._offset = o.offset and opt.to_vec3(o.offset) or nil
  self._rotation_offset = o.rotation_offset and ik.quat(o.rotation_offset) or nil
  self._omega = motion.omega(o.smooth_time)
  self._rotation_omega = motion.omega(o.rotation_smooth_time or o.smooth_time)
  self._follow_position, self._follow_rotation = o.position, o.rotation
  common.init_rig(self, OWNER, o, { o.hips }, { o.hips })
  -- the springs' state, and scratch: an update allocates nothing
  self._x, self._v, self._g = { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 }
  -- the two goals before _g, and the times between them (nil: not yet)
  self._gm1, self._gm2, self._h1, self._h2 = { 0, 0, 0 }, { 0, 0, 0 }, nil, nil
  self._q, self._av, self._gq = ik.quat(), { 0, 0, 0 }, ik.quat()
  self._started = false
  self._p, self._pq, self._at, self._x_at = ik.vec3(), ik.quat(), ik.vec3(), ik.vec3()
  self._moved, self._delta, self._hips_q = ik.vec3(), ik.quat(), ik.quat()
  return self
end

--- Takes an iteration budget as every rig does (see `ik.rigs.common.set_budget`); the
-- root's springs are exact, with nothing to cap.
-- @tparam ?int n
function Root:set_budget(n)
  common.set_budget(self, n)
end

-- Where the target says the hips go (the rig's scratch vector and quaternion).
function Root:_goal()
  local target = self.target
  if not opt.is_transform(target) then
    error(OWNER .. ": field 'target' (transform expected, got " .. opt.describe(target) .. ")", 3)
  end
  local p = common.get_position(target, self._p)
  local q = common.get_rotation(target, self._pq)
  if self._offset then p:add(q:rotate(self._offset, self._moved), p) end
  if self._rotation_offset then q:mul(self._rotation_offset, q) end
  return p, q
end

-- Starts the springs still at position p and rotation q, the goal there too.
function Root:_start(p, q)
  local x, v, g, av = self._x, self._v, self._g, self._av
  x[1], x[2], x[3] = p:unpack()
  g[1], g[2], g[3] = x[1], x[2], x[3]
  v[1], v[2], v[3] = 0, 0, 0
  self._h1, self._h2 = nil, nil
  av[1], av[2], av[3] = 0, 0, 0
  self._q:set(q)
  self._gq:set(q)
  self._started = true
end

--- Jumps the hips to the target, with no motion left in the springs (after a
-- teleport, say). Applied at the current applied weight.
function Root:snap()
  self:_start(self:_goal())
  self:_apply(self.applied_weight)
end

function Root:_apply(w)
  local hips = self.hips
  if w <= 0 then return end
  if self._follow_position then
    local x = self._x_at:set(self._x[1], self._x[2], self._x[3])
    if w < 1 then
      local at = common.get_position(hips, self._at)
      x = at:lerp(x, w, at)
    end
    hips:set_position(x)
  end
  if self._follow_rotation then
    local q = self._q
    if w < 1 then
      local at = common.get_rotation(hips, self._hips_q)
      q = at:slerp(q, w, at)
    end
    hips:set_rotation(q)
  end
end

--- Runs the rig for one frame.
-- @number dt seconds since the last update, >= 0
function Root:update(dt)
  local w = common.begin(self, dt)
  if not w then return end
  local p, q = self:_goal()
  if not self._started then
    -- start from where the hips are, still, the goal taken to have set out from there
    local hips = self.hips
    self:_start(common.get_position(hips, self._at), common.get_rotation(hips, self._hips_q))
  end
  -- position: a spring per axis, the goal following the cubic through this update's
  -- goal and the last three (fewer at first)
  local x, v, g, gm1, gm2 = self._x, self._v, self._g, self._gm1, self._gm2
  local h1, h2 = self._h1, self._h2
  local spring_cubic, cubic, omega = motion.spring_cubic, motion.cubic_goal, self._omega
  local gx, gy, gz = p:unpack()
  if dt > 0 then
    local m1, m2 = h1 and gm1, h2 and gm2
    for i = 1, 3 do
      local gi = i == 1 and gx or (i == 2 and gy or gz)
      local c0, c1, c2, c3 = cubic(gi, g[i], m1 and m1[i], m2 and m2[i], dt, h1, h2)
      x[i], v[i] = spring_cubic(x[i], v[i], c0, c1, c2, c3, omega, dt)
      gm2[i], gm1[i] = gm1[i], g[i]
    end
    self._h1, self._h2 = dt, h1
  end
  g[1], g[2], g[3] = gx, gy, gz

  -- rotation: the same spring on the rotation vector from the goal, the goal turning
  -- steadily (at angular velocity u) from last update's
  if dt > 0 then
    local rotation_omega, spring = self._rotation_omega, motion.spring
    local delta = self._delta
    local ux, uy, uz = motion.quat_log(q:mul(self._gq:inverse(delta), delta))
    ux, uy, uz = ux / dt, uy / dt, uz / dt
    local av = self._av
    if not rotation_omega then
      self._q:set(q)
      av[1], av[2], av[3] = ux, uy, uz
    else
      -- in rotation vectors from last update's goal: the hips at e, the goal going
      -- from 0 to u * dt
      local ex, ey, ez = motion.quat_log(self._q:mul(self._gq:inverse(delta), delta))
      ex, av[1] = spring(ex, av[1], 0, ux * dt, rotation_omega, dt)
      ey, av[2] = spring(ey, av[2], 0, uy * dt, rotation_omega, dt)
      ez, av[3] = spring(ez, av[3], 0, uz * dt, rotation_omega, dt)
      local turn = motion.quat_exp(ex, ey, ez, delta)
      turn:mul(self._gq, self._q)
    end
    self._gq:set(q)
  end
  self:_apply(w)
end

function Root:_on_idle()
  self._started = false
end

function Root:__tostring()
  return string.format("ik.rigs.root (weight %.3g)", self.applied_weight)
end

return root
