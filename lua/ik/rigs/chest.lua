--- Chest rig: bends the spine towards a target.
--
-- The chest's up axis (that of the last spine bone) is turned towards the target as
-- seen from the first spine bone, by at most `max_angle`; the bend is spread over the
-- spine bones, each turning its share (`weights`) about the same axis, so the spine
-- curves instead of kinking at one joint. The bend is measured from the animated pose,
-- so it works whichever way the body faces; it adds no twist about the spine.
--
-- Fields, read and write: `target`, `max_angle`, `weight`, `enabled`, `blend_time`,
-- `order`; read only: `applied_weight`, and after an update `angle` (the bend applied,
-- radians).
-- @module ik.rigs.chest

local ik = require("ik")
local common = require("ik.rigs.common")
local motion = require("ik.rigs.motion")
local opt = require("ik.rigs.options")

local OWNER = "ik.rigs.chest"

local chest = {}

--- The chest's place in a rig set: after root (100), before legs (300) and arms.
chest.order = 200

local FIELDS = opt.fields({
  { "spine", "bones", required = true },
  { "target", "point", required = true },
  { "up", "vec3", default = { 0, 1, 0 } },
  { "weights", "table" },
  { "max_angle", "non_negative", default = math.rad(45) },
}, opt.rig_fields(chest.order))

local Chest = {}
Chest.__index = Chest

--- Makes a chest rig.
-- @tparam table options
--
-- - `spine`: list of spine bones (transforms), root first, the chest last; required.
-- - `target`: a transform or vec3 to bend towards; required.
-- - `up`: the chest's axis along the spine, in the last bone's own space, default
--   {0, 1, 0}.
-- - `weights`: list of shares of the bend, one per spine bone (scaled to add up to 1),
--   default even.
-- - `max_angle`: radians, default 45 degrees: the largest bend, all bones together.
-- - `weight`, `enabled`, `blend_time` (0.2 s), `order` (200), `reset_pose` (false),
--   `budget` (none; the chest's bend is exact, with no chain or loop to cap).
-- @treturn table the rig
-- @usage local sk = ik.skeleton{
--   { name = "spine1", position = {0, 1, 0} },
--   { name = "spine2", parent = "spine1", position = {0, 0.15, 0} },
--   { name = "chest", parent = "spine2", position = {0, 0.15, 0} },
-- }
-- local spine = { sk:bone("spine1"), sk:bone("spine2"), sk:bone("chest") }
-- -- lean 30 degrees forward (+Z)
-- local target = ik.vec3(0, 1 + math.cos(math.rad(30)), math.sin(math.rad(30)))
-- local rig = require("ik.rigs.chest").new{ spine = spine, target = target }
-- rig:update(1 / 60)
-- assert(math.abs(rig.angle - math.rad(30)) < 1e-5)
-- local each = sk:bone("spine1"):get_local_rotation():angle_to(ik.quat())
-- assert(math.abs(each - math.rad(10)) < 1e-5)   -- a third of it each
function chest.new(options)
  local o = opt.check(OWNER, options, FIELDS)
  local spine = o.spine
  local weights = {}
  if o.weights then
    if #o.weights ~= #spine then
      error(string.format("%s: option 'weights' (%d numbers expected, got %d)", OWNER, #spine, #o.weights), 2)
    end
    local total = 0
    for i, v in ipairs(o.weights) do
      if not opt.kinds.non_negative(v) then
        error(string.format("%s: option 'weights' (item %d: non-negative number expected, got %s)", OWNER, i,
          opt.describe(v)), 2)
      end
      total = total + v
    end
    if total <= 0 then
      error(OWNER .. ": option 'weights' (at least one positive share expected, got none)", 2)
    end
    for i, v in ipairs(o.weights) do weights[i] = v / total end
  else
    for i = 1, #spine do weights[i] = 1 / #spine end
  end
  local self = setmetatable({}, Chest)
  self.spine, self.target, self.max_angle = spine, o.target, o.max_angle
  self._weights = weights
  self._up = opt.to_vec3(o.up):normalized()
  self.angle = 0
  common.init_rig(self, OWNER, o, spine)
  self._axis, self._has_axis = ik.vec3(), false
  -- scratch, so that an update allocates nothing
  self._base, self._want, self._chest_up, self._turn = ik.vec3(), ik.vec3(), ik.vec3(), ik.vec3()
  self._q, self._bone_q = ik.quat(), ik.quat()
  return self
end

--- Takes an iteration budget as every rig does (see `ik.rigs.common.set_budget`); the
-- chest's bend is exact, with nothing to cap.
-- @tparam ?int n
function Chest:set_budget(n)
  common.set_budget(self, n)
end

--- Runs the rig for one frame, after the animation posed the spine.
-- @number dt seconds since the last update, >= 0
function Chest:update(dt)
  local w = common.begin(self, dt)
  self.angle = 0
  if not w then return end
  if not opt.kinds.non_negative(self.max_angle) then
    error(OWNER .. ": field 'max_angle' (non-negative number expected, got "
      .. opt.describe(self.max_angle) .. ")", 2)
  end
  local spine = self.spine
  local base = common.get_position(spine[1], self._base)
  local want = common.position(self.target, OWNER, "target", self._want)
  local to_target = want:sub(base, want)
  if to_target:length() < 1e-9 then return end
  want = to_target:normalized(want)
  local up = common.get_rotation(spine[#spine], self._q):rotate(self._up, self._chest_up)
  local theta = motion.angle(up, want)
  if theta < 1e-12 then return end
  local axis = up:cross(want, self._turn)
  if axis:length() < 1e-9 then
    -- straight away from the target: any axis bends towards it; keep last frame's
    if self._has_axis then axis:set(self._axis) else motion.perpendicular(up, axis) end
  end
  axis = axis:normalized(axis)
  self._axis:set(axis)
  self._has_axis = true
  local bend = math.min(theta, self.max_angle) * w
  local q, bone_q = self._q, self._bone_q
  for i, bone in ipairs(spine) do
    local share = bend * self._weights[i]
    if share > 0 then
      ik.quat.axis_angle(axis, share, q)
      bone:set_rotation(q:mul(common.get_rotation(bone, bone_q), q))
    end
  end
  self.angle = bend
end

function Chest:_on_idle()
  self._has_axis = false
end

function Chest:__tostring()
  return string.format("ik.rigs.chest (weight %.3g)", self.applied_weight)
end

return chest
