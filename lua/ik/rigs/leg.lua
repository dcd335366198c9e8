--- Leg rig: a two-bone leg whose foot reaches a target, or stands on the ground.
--
-- Without `ground` the foot goes to `target` (a transform or vec3), the knee bending
-- towards the pole. With `ground` the leg places its foot: each update reads the
-- animated foot (after the animation, and after the pelvis has been lowered), lets an
-- `ik.foot` find the ground under it, raise it onto the ground when it has sunk in and
-- turn it to the ground's slope (a swinging foot above the ground is left alone), and
-- then solves the leg to that place, the foot taking that rotation. The correction is
-- smoothed, so a foot stepping onto a stair edge does not snap.
--
-- `require("ik.rigs.leg").pelvis{...}` lowers the hips before the legs run, so a foot
-- on a lower step can reach it.
--
-- Fields, read and write: `target`, `pole`, `foot_weight`, `weight`, `enabled`,
-- `blend_time`, `order`; read only: `applied_weight`, `budget` (`set_budget` sets it),
-- and after an update `reached`, `distance`, `iterations` (its chain's) and (with
-- ground) `grounded`.
-- @module ik.rigs.leg

local ik = require("ik")
local common = require("ik.rigs.common")
local limb = require("ik.rigs.limb")
local opt = require("ik.rigs.options")

local OWNER = "ik.rigs.leg"
local PELVIS_OWNER = "ik.rigs.leg.pelvis"

local leg = {}

--- The leg's place in a rig set: after root (100) and chest (200), before arms (400).
leg.order = 300

--- The pelvis's place: before the legs.
leg.pelvis_order = 250

local FIELDS = opt.fields({
  { "upper", "bone", required = true },
  { "lower", "bone", required = true },
  { "foot", "bone", required = true },
  { "target", "point" },
  { "pole", "point" },
  { "ground", "ground" },
  { "ray_height", "non_negative", default = 0.5 },
  { "ray_length", "non_negative", default = 1.0 },
  { "foot_offset", "non_negative", default = 0.08 },
  { "smooth_time", "non_negative", default = 0.05 },
  { "up", "vec3" },
  { "foot_weight", "unit", default = 1 },
  { "tolerance", "positive", default = 1e-3 },
  { "bend_time", "non_negative", default = 0.1 },
}, opt.rig_fields(leg.order))

local Leg = {}
Leg.__index = Leg

--- Makes a leg rig.
-- @tparam table options
--
-- - `upper`, `lower`, `foot`: the three bones (transforms), hip first; required.
-- - `target`: without ground, the transform or vec3 the foot goes to (required). With
--   ground, optional: a transform the rig moves to where it puts the foot (a target
--   for other code to read; not one parented inside the leg).
-- - `pole`: a transform or vec3 the knee bends towards (in front of the knee, parented
--   to the character), or nil.
-- - `ground`: an `ik.ground` to stand on, or nil; a host's object with the same
--   `raycast(origin, direction, max_distance)` returning `hit, point, normal` is asked
--   through `ik.ground.custom`. With ground: `ray_height` (0.5),
--   `ray_length` (1.0), `foot_offset` (0.08, ankle to sole), `smooth_time` (0.05 s)
--   and `up` ({0, 1, 0}), as for `ik.foot`.
-- - `foot_weight`: in [0, 1], default 1: how far the foot takes the target's (or the
--   ground's) rotation.
-- - `tolerance` (1e-3), `bend_time` (0.1 s, see `ik.rigs.arm`).
-- - `weight`, `enabled`, `blend_time` (0.2 s), `order` (300), `reset_pose` (false),
--   `budget` (none: see `set_budget`).
-- @treturn table the rig
-- @usage local sk = ik.skeleton{
--   { name = "hips", position = {0, 1, 0} },
--   { name = "thigh", parent = "hips", position = {0.1, -0.05, 0} },
--   { name = "shin", parent = "thigh", position = {0, -0.45, 0.02} },
--   { name = "foot", parent = "shin", position = {0, -0.45, 0} },
-- }
-- -- the animated ankle is at y = 0.05, 5 cm into a floor at y = 0.02 (soles 8 cm thick)
-- local rig = require("ik.rigs.leg").new{
--   upper = sk:bone("thigh"), lower = sk:bone("shin"), foot = sk:bone("foot"),
--   ground = ik.ground.plane{ point = {0, 0.02, 0} }, foot_offset = 0.08,
--   pole = ik.node{ position = {0.1, 0.5, 1}, parent = sk:bone("hips") },
-- }
-- rig:update(1 / 60)
-- assert(rig.grounded and math.abs(sk:bone("foot"):get_position().y - 0.1) < 1e-3)   -- raised
function leg.new(options)
  local o = opt.check(OWNER, options, FIELDS)
  if not o.ground and o.target == nil then
    error(OWNER .. ": option 'target' (transform or vec3 expected, got nil)", 2)
  end
  if o.ground and o.target ~= nil and not opt.kinds.movable(o.target) then
    error(OWNER .. ": option 'target' (with ground: transform with set_position and set_rotation "
      .. "expected, got " .. opt.describe(o.target) .. ")", 2)
  end
  local self = setmetatable({}, Leg)
  self.upper, self.lower, self.foot = o.upper, o.lower, o.foot
  self.target, self.pole = o.target, o.pole
  self.foot_weight = o.foot_weight
  self._limb = limb.new({ o.upper, o.lower, o.foot }, o)
  local ground = o.ground
  if ground and opt.describe(ground) ~= "ik.ground" then
    local host = ground -- a host's own ray cast: asked through ik.ground.custom
    ground = ik.ground.custom(function(origin, direction, max_distance)
      return host:raycast(origin, direction, max_distance)
    end)
  end
  if ground then
    self._foot = ik.foot{
      ground = ground, ray_height = o.ray_height, ray_length = o.ray_length,
      foot_offset = o.foot_offset, smooth_time = o.smooth_time, up = o.up,
    }
  end
  common.init_rig(self, OWNER, o, { o.upper, o.lower, o.foot })
  common.own_chain(self, self._limb.chain)
  self.reached, self.distance, self.grounded = false, nil, false
  -- scratch, so that an update allocates nothing
  self._animated, self._goal, self._pole_at = ik.vec3(), ik.vec3(), ik.vec3()
  self._animated_rotation, self._goal_rotation, self._foot_rotation = ik.quat(), ik.quat(), ik.quat()
  return self
end

--- Sets the iteration budget of the leg's chain (see `ik.rigs.common.set_budget`): for
-- distant characters. Its two-bone chain is exact in one iteration whatever the budget.
-- @tparam ?int n iterations at most, or nil for the full count
function Leg:set_budget(n)
  common.set_budget(self, n)
end

--- The `ik.foot` placing this leg's foot, or nil without ground (its fields, such as
-- `foot_offset`, may be changed).
-- @treturn ?ik.foot
function Leg:foot_placement()
  return self._foot
end

--- How far below the animated foot its ground is, along up (< 0; 0 when the foot has
-- sunk in, when no ground is found, without ground, or when the rig is idle), scaled
-- by the applied weight: what the pelvis drops by. Read before the pelvis moves.
-- @treturn number
function Leg:deficit()
  if not self._foot or self.applied_weight <= 0 then return 0 end
  if self._pose then common.restore_pose(self._pose) end
  local d = self._foot:deficit(common.get_position(self.foot, self._animated))
  if d > 0 then d = 0 end
  return d * self.applied_weight
end

--- Runs the rig for one frame, after the animation (and the pelvis) posed the leg.
-- @number dt seconds since the last update, >= 0
-- @treturn boolean whether the foot is within tolerance of its target (false when idle)
-- @treturn ?number its distance to it (nil when idle)
function Leg:update(dt)
  local w = common.begin(self, dt)
  if not w then
    self.reached, self.distance, self.grounded, self.iterations = false, nil, false, 0
    return false, nil
  end
  local goal, goal_rotation
  if self._foot then
    local foot = self.foot
    local grounded
    local animated = common.get_position(foot, self._animated)
    local animated_rotation = common.get_rotation(foot, self._animated_rotation)
    goal, goal_rotation, grounded = self._foot:update(animated, animated_rotation, dt, self._goal,
      self._goal_rotation)
    self.grounded = grounded
    if self.target ~= nil then
      self.target:set_position(goal)
      self.target:set_rotation(goal_rotation)
    end
  else
    goal = common.position(self.target, OWNER, "target", self._goal)
    goal_rotation = common.rotation(self.target, self._goal_rotation)
  end
  local pole = self.pole ~= nil and common.position(self.pole, OWNER, "pole", self._pole_at) or nil
  local reached, distance, iterations = self._limb:solve(goal, pole, w, dt)
  self.iterations = iterations
  local fw = self.foot_weight
  if not opt.kinds.unit(fw) then
    error(OWNER .. ": field 'foot_weight' (number in [0, 1] expected, got " .. opt.describe(fw) .. ")", 2)
  end
  if goal_rotation and fw > 0 then
    local foot = self.foot
    local q = common.get_rotation(foot, self._foot_rotation)
    foot:set_rotation(q:slerp(goal_rotation, fw * w, q))
  end
  self.reached, self.distance = reached, distance
  return reached, distance
end

function Leg:_on_idle()
  self._limb:forget()
  if self._foot then self._foot:reset() end
end

function Leg:__tostring()
  return string.format("ik.rigs.leg (weight %.3g)", self.applied_weight)
end

-- ---- the pelvis ----

local PELVIS_FIELDS = opt.fields({
  { "hips", "movable", required = true },
  { "legs", "table", required = true },
  { "smooth_time", "non_negative", default = 0.05 },
  { "up", "vec3" },
}, opt.rig_fields(leg.pelvis_order))

local Pelvis = {}
Pelvis.__index = Pelvis

--- Makes a pelvis rig: lowers the hips by the lowest foot's deficit (how far its
-- ground is below its animated place), smoothed, before the legs run, so that a foot
-- on a lower step can reach its ground. Add it to the same rig set as the legs (its
-- order, 250, runs it before them).
-- @tparam table options
--
-- - `hips`: the transform to lower (it is moved with set_position); required.
-- - `legs`: list of leg rigs made with ground; required.
-- - `smooth_time`: seconds, default 0.05.
-- - `up`: the world's up, default {0, 1, 0}.
-- - `weight`, `enabled`, `blend_time`, `order` (250), `reset_pose` (false: true takes
--   back the rig's own last move at each update, when the hips are still where it left
--   them; hips that something else placed since, the root rig or an animation, are
--   left where they were put).
-- @treturn table the rig; after an update its `offset` is how far it moved the hips
-- along up (<= 0)
-- @usage local specs = { { name = "hips", position = {0, 1, 0} } }
-- for _, side in ipairs{ "l", "r" } do
--   local x = side == "l" and 0.1 or -0.1
--   specs[#specs + 1] = { name = side .. "_thigh", parent = "hips", position = {x, -0.05, 0} }
--   specs[#specs + 1] = { name = side .. "_shin", parent = side .. "_thigh", position = {0, -0.45, 0.02} }
--   specs[#specs + 1] = { name = side .. "_foot", parent = side .. "_shin", position = {0, -0.42, 0} }
-- end
-- local sk = ik.skeleton(specs)
-- local legs = require("ik.rigs.leg")
-- local function leg_rig(side, ground)
--   return legs.new{ upper = sk:bone(side .. "_thigh"), lower = sk:bone(side .. "_shin"),
--                    foot = sk:bone(side .. "_foot"), ground = ground, foot_offset = 0.08 }
-- end
-- -- the animated soles touch y = 0; the right foot is over a step 10 cm lower
-- local left = leg_rig("l", ik.ground.plane{ point = {0, 0, 0} })
-- local right = leg_rig("r", ik.ground.plane{ point = {0, -0.1, 0} })
-- local pelvis = legs.pelvis{ hips = sk:bone("hips"), legs = { left, right } }
-- require("ik.rigs").set{ left, right, pelvis }:update(1 / 60)   -- pelvis first
-- assert(math.abs(pelvis.offset + 0.1) < 1e-6)   -- the hips went 10 cm down
-- assert(math.abs(sk:bone("r_foot"):get_position().y + 0.02) < 1e-3)   -- on its step
function leg.pelvis(options)
  local o = opt.check(PELVIS_OWNER, options, PELVIS_FIELDS)
  for i, l in ipairs(o.legs) do
    if getmetatable(l) ~= Leg then
      error(string.format("%s: option 'legs' (list of leg rigs expected, item %d is %s)", PELVIS_OWNER, i,
        opt.describe(l)), 2)
    end
  end
  local self = setmetatable({}, Pelvis)
  self.hips = o.hips
  self.legs = o.legs
  self.up = o.up and opt.to_vec3(o.up):normalized() or ik.vec3(0, 1, 0)
  self._pelvis = ik.pelvis{ smooth_time = o.smooth_time }
  self._deficits = {}
  self.offset = 0
  -- Its own move is taken back, not the hips' captured place: that would undo the root rig.
  self._undo = o.reset_pose
  o.reset_pose = false
  common.init_rig(self, PELVIS_OWNER, o)
  self._hips_at, self._moved = ik.vec3(), ik.vec3() -- scratch
  self._left_at, self._before_at = ik.vec3(), ik.vec3()
  self._local = common.method(o.hips, "get_local_position") ~= nil
      and common.method(o.hips, "set_local_position") ~= nil
  return self
end

--- Takes an iteration budget as every rig does (see `ik.rigs.common.set_budget`); the
-- pelvis has no chain or loop to cap.
-- @tparam ?int n
function Pelvis:set_budget(n)
  common.set_budget(self, n)
end

--- Lowers the hips for this frame: measures each leg's deficit from the animated pose
-- and moves the hips down by the lowest one, smoothed and weighted. Run it after the
-- animation and before the legs.
-- @number dt seconds since the last update, >= 0
-- @treturn number how far the hips moved along up (<= 0)
-- Puts the hips back by the last move when they are still where it left them: in their
-- parent's space where they have one (the parent may have moved meanwhile), else in the
-- world's.
local UNDO_SLACK = ik.real == "float" and 1e-5 or 1e-9
local function hips_place(self, out)
  local hips = self.hips
  if self._local then return out:set(hips:get_local_position(out)) end
  return common.get_position(hips, out)
end

local function undo_last(self)
  if self.offset == 0 then return end
  local at = hips_place(self, self._hips_at)
  if at:distance(self._left_at) > UNDO_SLACK * (1 + at:length()) then return end
  if self._local then
    self.hips:set_local_position(self._before_at)
  else
    self.hips:set_position(self._before_at)
  end
end

function Pelvis:update(dt)
  if self._undo then undo_last(self) end
  local w = common.begin(self, dt)
  if not w then
    self.offset = 0
    return 0
  end
  local deficits = self._deficits
  for i, l in ipairs(self.legs) do deficits[i] = l:deficit() end
  for i = #self.legs + 1, #deficits do deficits[i] = nil end
  local offset = self._pelvis:update(dt, deficits) * w
  local hips = self.hips
  if self._undo then hips_place(self, self._before_at) end
  local at = common.get_position(hips, self._hips_at)
  hips:set_position(at:add(self.up:scale(offset, self._moved), at))
  self.offset = offset
  if self._undo then hips_place(self, self._left_at) end
  return offset
end

function Pelvis:_on_idle()
  self._pelvis:reset()
end

function Pelvis:__tostring()
  return string.format("ik.rigs.leg.pelvis (weight %.3g)", self.applied_weight)
end

return leg
