--- Arm rig: the hand reaches for a target, the elbow bends towards a pole.
--
-- A two-bone chain (upper arm, forearm, hand) solved exactly each update, on top of
-- whatever pose the bones have (the animation's): only rotations are written, and
-- bones never stretch. Parent the pole to the character (behind and below the elbow)
-- so it turns with the body; parent the target anywhere but inside the arm.
--
-- Fields, read and write: `target`, `pole`, `hand_weight`, `weight` (the goal; the
-- applied weight moves towards it over `blend_time`), `applied_weight` (read only),
-- `enabled` (false fades the rig out, then it does nothing), `blend_time`, `order`,
-- `budget` (read; `set_budget` sets it). After an update: `reached`, `distance` (the
-- hand's distance to the target) and `iterations` (its chain's).
-- @module ik.rigs.arm

local ik = require("ik")
local common = require("ik.rigs.common")
local limb = require("ik.rigs.limb")
local opt = require("ik.rigs.options")

local OWNER = "ik.rigs.arm"

local arm = {}

--- The arm's place in a rig set: after root (100), chest (200) and legs (300), before
-- look (500).
arm.order = 400

local FIELDS = opt.fields({
  { "upper", "bone", required = true },
  { "lower", "bone", required = true },
  { "hand", "bone", required = true },
  { "target", "point", required = true },
  { "pole", "point" },
  { "hand_weight", "unit", default = 1 },
  { "hand_offset", "quat" },
  { "tolerance", "positive", default = 1e-3 },
  { "bend_time", "non_negative", default = 0.1 },
}, opt.rig_fields(arm.order))

local Arm = {}
Arm.__index = Arm

--- Makes an arm rig.
-- @tparam table options
--
-- - `upper`, `lower`, `hand`: the three bones (transforms), shoulder first; required.
-- - `target`: a transform or vec3 the hand goes to; required.
-- - `pole`: a transform or vec3 the elbow bends towards, or nil (the elbow keeps the
--   side it bends to in the pose).
-- - `hand_weight`: in [0, 1], default 1: how far the hand takes the target's rotation
--   (a transform target only).
-- - `hand_offset`: quat, default identity: the hand turns to `target rotation *
--   hand_offset` (`ik.rigs.humanoid` captures it when made, so a hand keeps its bind
--   rotation relative to a target that had none).
-- - `tolerance`: distance counting as reached, default 1e-3.
-- - `bend_time`: seconds, default 0.1 (0: none): the smooth time of the critically
--   damped spring the elbow's side follows the pole's through, round the
--   shoulder-target line. When the target passes through the line from the shoulder
--   to the pole, the pole no longer says which side the elbow goes; the elbow then
--   comes over along the spring's path, the same at any frame rate, instead of
--   flipping in one frame. Inside the inner reach (a target nearer the shoulder than
--   the forearm's length less the upper arm's, or the other way round), the arm's aim
--   follows the target's direction through the same spring, so a target passing
--   through the shoulder does not turn the arm half round between two frames.
-- - `weight` (default 1), `enabled` (default true), `blend_time` (seconds, default
--   0.2), `order` (default 400), `reset_pose` (default false: true puts back the local
--   rotations the bones had when the rig was made at each update, for bones nothing
--   animates), `budget` (default none: see `set_budget`).
-- @treturn table the rig
-- @usage local sk = ik.skeleton{
--   { name = "chest", position = {0, 1.4, 0} },
--   { name = "upper", parent = "chest", position = {0.2, 0, 0} },
--   { name = "lower", parent = "upper", position = {0.3, 0, 0} },
--   { name = "hand", parent = "lower", position = {0.25, 0, 0} },
-- }
-- local target = ik.node{ position = {0.4, 1.1, 0.3} }
-- local rig = require("ik.rigs.arm").new{
--   upper = sk:bone("upper"), lower = sk:bone("lower"), hand = sk:bone("hand"),
--   target = target, pole = ik.node{ position = {0.3, 1.2, -1}, parent = sk:bone("chest") },
-- }
-- rig:update(1 / 60)
-- assert(rig.reached and (sk:bone("hand"):get_position() - target:get_position()):length() < 1e-3)
function arm.new(options)
  local o = opt.check(OWNER, options, FIELDS)
  local self = setmetatable({}, Arm)
  self.upper, self.lower, self.hand = o.upper, o.lower, o.hand
  self.target, self.pole = o.target, o.pole
  self.hand_weight = o.hand_weight
  self._hand_offset = o.hand_offset and ik.quat(o.hand_offset) or nil
  self._limb = limb.new({ o.upper, o.lower, o.hand }, o)
  common.init_rig(self, OWNER, o, { o.upper, o.lower, o.hand })
  common.own_chain(self, self._limb.chain)
  self.reached, self.distance = false, nil
  -- scratch, so that an update allocates nothing
  self._target, self._pole = ik.vec3(), ik.vec3()
  self._goal_rotation, self._hand_rotation = ik.quat(), ik.quat()
  return self
end

--- Sets the iteration budget of the arm's chain (see `ik.rigs.common.set_budget`):
-- for distant characters. Its two-bone chain is exact in one iteration whatever the
-- budget.
-- @tparam ?int n iterations at most, or nil for the full count
function Arm:set_budget(n)
  common.set_budget(self, n)
end

--- Runs the rig for one frame, after the animation has posed the arm.
-- @number dt seconds since the last update, >= 0
-- @treturn boolean whether the hand is within tolerance of the target (false when idle)
-- @treturn ?number its distance to the target (nil when idle)
function Arm:update(dt)
  local w = common.begin(self, dt)
  if not w then
    self.reached, self.distance, self.iterations = false, nil, 0
    return false, nil
  end
  local target = common.position(self.target, OWNER, "target", self._target)
  local pole = self.pole ~= nil and common.position(self.pole, OWNER, "pole", self._pole) or nil
  local reached, distance, iterations = self._limb:solve(target, pole, w, dt)
  self.iterations = iterations
  local goal_rotation = common.rotation(self.target, self._goal_rotation)
  local hw = self.hand_weight
  if not opt.kinds.unit(hw) then
    error(OWNER .. ": field 'hand_weight' (number in [0, 1] expected, got " .. opt.describe(hw) .. ")", 2)
  end
  if goal_rotation and hw > 0 then
    if self._hand_offset then goal_rotation:mul(self._hand_offset, goal_rotation) end
    local hand = self.hand
    local q = common.get_rotation(hand, self._hand_rotation)
    hand:set_rotation(q:slerp(goal_rotation, hw * w, q))
  end
  self.reached, self.distance = reached, distance
  return reached, distance
end

function Arm:_on_idle()
  self._limb:forget()
end

function Arm:__tostring()
  return string.format("ik.rigs.arm (weight %.3g)", self.applied_weight)
end

return arm
