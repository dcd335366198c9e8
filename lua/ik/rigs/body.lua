--- A whole body from a few targets: head and hands (and, when given, hips, chest, feet,
-- elbow and knee hints) pose a humanoid, as VR avatars are driven.
--
-- `require("ik.rigs").body{ skeleton = sk, map = m, targets = {...}, ... }` (or
-- `require("ik.rigs.body").new{...}`), on the humanoid map of `ik.rigs.humanoid`. Each
-- frame: the body turns towards where the head faces (a spring); the feet step
-- (`ik.rigs.gait`) when the body moves or turns away from them; the hips are placed
-- under the head, crouching as it comes down and leaning as it goes forward, where the
-- spine reaches the head and the planted legs their feet; the chest turns towards
-- reaching hands; the spine and neck bring the head bone onto its target; shoulders
-- turn towards hands beyond the arm, arms and legs are two-bone limbs. Every weight
-- change is smoothed; every spring and step is timed in seconds. See docs/body.md.
-- @module ik.rigs.body

local ik = require("ik")
local common = require("ik.rigs.common")
local opt = require("ik.rigs.options")
local humanoid = require("ik.rigs.humanoid")
local torso = require("ik.rigs.body.torso")
local arms = require("ik.rigs.body.arms")
local legs = require("ik.rigs.body.legs")

local exp, max, min, rad = math.exp, math.max, math.min, math.rad

local OWNER = "ik.rigs.body"

local body = {}

--- The body's place in a rig set: first (it moves the hips).
body.order = 100

--- The targets a body takes: the first three are required.
body.TARGETS = { "head", "left_hand", "right_hand", "hips", "chest", "left_foot", "right_foot",
                 "left_elbow", "right_elbow", "left_knee", "right_knee" }

local REQUIRED = { head = true, left_hand = true, right_hand = true }

local SIDES = { "left", "right" }
local NAMES = {}
for _, side in ipairs(SIDES) do
  NAMES[side] = { hand = side .. "_hand", elbow = side .. "_elbow", foot = side .. "_foot",
                  knee = side .. "_knee" }
end

local FIELDS = opt.fields({
  { "skeleton", "skeleton" },
  { "map", "table", required = true },
  { "model", "table" },
  { "targets", "table", required = true },
  { "ground", "ground" },
  { "foot_offset", "non_negative" },
  { "plant_feet", "boolean", default = true },
  { "step_distance", "positive" },
  { "step_angle", "positive", default = rad(40) },
  { "step_time", "positive", default = 0.3 },
  { "step_height", "non_negative" },
  { "settle_distance", "positive" },
  { "crouch", "unit", default = 1 },
  { "turn_time", "non_negative", default = 0.25 },
  { "weight_time", "non_negative", default = 0.15 },
  { "shoulder", "unit", default = 1 },
  { "shoulder_angle", "non_negative", default = rad(30) },
  { "chest_turn", "non_negative", default = rad(25) },
  { "skip_legs", "boolean", default = false },
}, opt.rig_fields(body.order))

local Body = {}
Body.__index = Body

local function pos(t) return ik.vec3(t:get_position()) end

-- One target entry: a transform, or { target =, position_weight =, rotation_weight = }.
local function check_target(name, v)
  local function fail(what)
    error(string.format("%s: option 'targets': %s (%s)", OWNER, name, what), 4)
  end
  if v == nil then
    if REQUIRED[name] then fail("transform expected, got nil") end
    return nil
  end
  if opt.is_transform(v) then return { target = v, position_weight = 1, rotation_weight = 1 } end
  if type(v) ~= "table" then
    fail("transform or { target = transform, ... } expected, got " .. opt.describe(v))
  end
  for k in pairs(v) do
    if k ~= "target" and k ~= "position_weight" and k ~= "rotation_weight" then
      fail(string.format("no field '%s' (fields: target, position_weight, rotation_weight)", tostring(k)))
    end
  end
  if not opt.is_transform(v.target) then
    fail("target: transform expected, got " .. opt.describe(v.target))
  end
  local e = { target = v.target, position_weight = 1, rotation_weight = 1 }
  for _, k in ipairs({ "position_weight", "rotation_weight" }) do
    if v[k] ~= nil then
      if not opt.kinds.unit(v[k]) then
        fail(k .. ": number in [0, 1] expected, got " .. opt.describe(v[k]))
      end
      e[k] = v[k]
    end
  end
  return e
end

local NEEDED = { "hips", "spine", "head", "leftUpperArm", "leftLowerArm", "leftHand", "rightUpperArm",
                 "rightLowerArm", "rightHand", "leftUpperLeg", "leftLowerLeg", "leftFoot", "rightUpperLeg",
                 "rightLowerLeg", "rightFoot" }

--- Makes a body rig.
-- @tparam table options
--
-- - `map` (required), `skeleton`, `model`: as `ik.rigs.humanoid`'s; the map needs
--   hips, spine, head, and both arms' and legs' three bones (shoulders, chest,
--   upperChest, neck and toes are used when mapped).
-- - `targets` (required): name -> transform, or `{ target = transform,
--   position_weight = , rotation_weight = }` (each in [0, 1], default 1): `head`,
--   `left_hand`, `right_hand` (required), `hips`, `chest`, `left_foot`, `right_foot`,
--   `left_elbow`, `right_elbow`, `left_knee`, `right_knee` (hints: position only). A
--   target's rotation is read as the character's frame (+X left, +Y up, +Z forward):
--   a target turned as the character stands at rest leaves its bone as at rest. The
--   entries are in `body.targets`, their weights writable.
-- - `ground`: an `ik.ground` the feet stand on (default: a plane through the rest
--   pose's soles); `foot_offset`: ankle above sole (default measured as
--   `ik.rigs.humanoid` does, else 0.08).
-- - `plant_feet` (true): planted feet stay put and the hips stay where the legs reach
--   them (the head may then miss a target too far up); false: the hips follow the head
--   and the feet may be pulled off their plants.
-- - stepping: `step_distance` (m, default a quarter of the leg), `step_angle` (radians
--   the body may turn from a foot before it steps, default 40°), `step_time` (s, 0.35),
--   `step_height` (m, default a tenth of the leg), `settle_distance` (m, default 4% of
--   the leg: standing still, a foot farther than this from its place steps back to it).
-- - `crouch` (0.75): the share of the head's drop below its standing height that the
--   hips take; `turn_time` (s, 0.25): the body's heading spring; `weight_time` (s,
--   0.15): how fast target weights follow their settings.
-- - `shoulder` (1): how far shoulders turn towards hands beyond reach, at most
--   `shoulder_angle` (30°); `chest_turn` (radians, 25°): the chest's turn when a hand
--   reaches fully forward (or back).
-- - `skip_legs` (false): leave the legs alone (distant characters; a field, blended).
-- - `weight`, `enabled`, `blend_time`, `order` (100), `reset_pose`, `budget`: as every
--   rig's; the budget caps the spine's iterations.
-- @treturn table the rig
function body.new(options)
  local o = opt.check(OWNER, options, FIELDS)
  local m = humanoid.measure(o.map, o.skeleton, o.model, OWNER, 3)
  for _, role in ipairs(NEEDED) do
    if not m.bones[role] then error(string.format("%s: option 'map' has no %s", OWNER, role), 2) end
  end
  if m.up.y < 0.999 then
    error(string.format("%s: the character's up (from the rest pose) is not the world's +Y (got %s)", OWNER,
      tostring(m.up)), 2)
  end
  local self = setmetatable({}, Body)
  self.bones, self.left, self.up, self.forward, self.frame = m.bones, m.left, m.up, m.forward, m.frame
  self.targets = {}
  for name in pairs(o.targets) do
    local known = false
    for _, n in ipairs(body.TARGETS) do known = known or n == name end
    if not known then
      error(string.format("%s: option 'targets': no target '%s' (targets: %s)", OWNER, tostring(name),
        table.concat(body.TARGETS, ", ")), 2)
    end
  end
  self._applied = {}
  for _, name in ipairs(body.TARGETS) do
    local e = check_target(name, o.targets[name])
    self.targets[name] = e
    if e then self._applied[name] = { e.position_weight, e.rotation_weight } end
  end
  local b = m.bones
  local la, ra = pos(b.leftFoot), pos(b.rightFoot)
  local fo = o.foot_offset
  self.foot_offsets = { left = fo or m.foot_offset.left or 0.08, right = fo or m.foot_offset.right or 0.08 }
  self.sole_height = min(la.y - self.foot_offsets.left, ra.y - self.foot_offsets.right)
  self.feet_mid = ik.vec3((la.x + ra.x) / 2, self.sole_height, (la.z + ra.z) / 2)
  self.height = pos(b.head).y - self.sole_height
  self.ground = o.ground or ik.ground.plane{ point = { 0, self.sole_height, 0 } }
  local knee = pos(b.leftLowerLeg)
  local leg_length = (knee - pos(b.leftUpperLeg)):length() + (la - knee):length()
  o.step_distance = o.step_distance or 0.25 * leg_length
  self.step_distance, self.step_angle, self.step_time = o.step_distance, o.step_angle, o.step_time
  self.step_height = o.step_height or 0.1 * leg_length
  self.settle_distance = min(o.settle_distance or 0.04 * leg_length, o.step_distance)
  self.plant_feet, self.crouch, self.shoulder = o.plant_feet, o.crouch, o.shoulder
  self.shoulder_angle, self.chest_turn, self.skip_legs = o.shoulder_angle, o.chest_turn, o.skip_legs
  self.weight_time, self.turn_time = o.weight_time, o.turn_time
  self._turn_omega = common.omega(o.turn_time)
  self._center_omega = common.omega(0.1)
  torso.init(self)
  self._frame_inv = self.frame:inverse()
  self._chest_rest_rot = ik.quat((b.upperChest or b.chest or b.spine):get_rotation())
  self.arms = { left = arms.new(self, "left"), right = arms.new(self, "right") }
  legs.init(self, o)
  self._legs_weight = o.skip_legs and 0 or 1
  local driven = {}
  for _, role in ipairs(ik.humanoid_bones) do
    if b[role] then driven[#driven + 1] = b[role] end
  end
  for _, bone in ipairs(self._spine_bones) do driven[#driven + 1] = bone end
  common.init_rig(self, OWNER, o, driven, { b.hips })
  common.own_chain(self, self.spine)
  -- scratch
  self._hd, self._hp, self._mid, self._tmp = ik.vec3(), ik.vec3(), ik.vec3(), ik.vec3()
  self._hq, self._q, self._q2 = ik.quat(), ik.quat(), ik.quat()
  self._lq, self._lv, self._lv2 = ik.quat(), ik.vec3(), ik.vec3()
  self._posed, self._posed_q = ik.vec3(), ik.quat()
  self._reads = {}
  for _, name in ipairs(body.TARGETS) do self._reads[name] = { p = ik.vec3(), q = ik.quat() } end
  self._feet, self._pull = { {}, {} }, {}
  self.reached = { head = false, left_hand = false, right_hand = false }
  return self
end

--- Sets the iteration budget (the spine's FABRIK iterations; the limbs are exact).
-- @tparam ?int n
function Body:set_budget(n)
  common.set_budget(self, n)
end

local WEIGHT_FIELDS = { "position_weight", "rotation_weight" }

-- Raises unless every target's weights are numbers in [0, 1].
local function check_weights(self)
  for _, name in ipairs(body.TARGETS) do
    local e = self.targets[name]
    if e then
      for _, field in ipairs(WEIGHT_FIELDS) do
        local v = e[field]
        if type(v) ~= "number" or not (v >= 0 and v <= 1) then
          error(string.format("%s: targets.%s.%s (number in [0, 1] expected, got %s)", OWNER, name, field,
            opt.describe(v)), 4)
        end
      end
    end
  end
end

-- x moved towards goal by the factor k = exp(-dt / time) (there when within 1e-9).
local function approach(x, goal, k)
  x = goal + (x - goal) * k
  if math.abs(x - goal) < 1e-9 then return goal end
  return x
end

-- Moves each target's applied weights towards their settings: exp(-dt / weight_time).
local function smooth_weights(self, dt)
  check_weights(self)
  local k = self.weight_time > 0 and exp(-dt / self.weight_time) or 0
  for _, name in ipairs(body.TARGETS) do
    local e, a = self.targets[name], self._applied[name]
    if e then
      a[1] = approach(a[1], e.position_weight, k)
      a[2] = approach(a[2], e.rotation_weight, k)
    end
  end
  self._legs_weight = approach(self._legs_weight, self.skip_legs and 0 or 1, k)
end

-- A target's position and rotation this frame (nil, nil when not given).
local function read(self, name)
  local e = self.targets[name]
  if not e then return nil end
  local r = self._reads[name]
  return common.position(e.target, OWNER, "targets." .. name, r.p), common.rotation(e.target, r.q)
end

local function weights(self, name, w)
  local a = self._applied[name]
  if not a then return 0, 0 end
  return a[1] * w, a[2] * w
end

--- Runs the body for one frame, after the animation (if any) posed it.
-- @number dt seconds since the last update, >= 0
function Body:update(dt)
  local w = common.begin(self, dt)
  if not w then return end
  smooth_weights(self, dt)
  local b = self.bones
  -- the heading, from where the head faces
  local hp, hq = read(self, "head")
  local hpw, hrw = weights(self, "head", w)
  torso.turn(self, (hq and hrw > 0) and torso.head_yaw(self, hq) or nil, dt)
  -- the head's goal: its target, blended with the head standing over the feet
  local mid = self._mid
  local ground_y = self._planted and legs.ground(self, mid) or self.sole_height
  if not self._planted then mid:set(self.feet_mid) end
  local hd = self._hd:set(hp)
  if hpw < 1 then hd = torso.standing_head(self, mid, hd):lerp(hp, hpw, hd) end
  -- feet: the gait about the centre under the head
  local lw = self._legs_weight * w
  local legs_on = lw > 0
  if legs_on then
    local c = torso.standing_head(self, self._tmp:set(0, 0, 0), self._tmp)
    legs.step(self, hd.x - c.x, hd.z - c.z, dt)
    ground_y = legs.ground(self, mid)
  else
    self._planted = false
  end
  -- hips
  local pull = self._pull
  pull.hips, pull.hips_rot = read(self, "hips")
  pull.hips_w, pull.hips_rw = weights(self, "hips", w)
  if pull.hips_rot then
    pull.hips_rot = pull.hips_rot:mul(self._frame_inv, self._q):mul(self._hips_rest_rot, self._q)
  end
  local cp, cq = read(self, "chest")
  local cpw, crw = weights(self, "chest", w)
  pull.chest, pull.chest_w = cp, cpw
  local p, hipq = torso.place_hips(self, hd, ground_y, legs.constraints(self, lw), pull)
  local hips = b.hips
  if w < 1 then
    p = hips:get_position(self._posed):lerp(p, w, p)
    hipq = hips:get_rotation(self._posed_q):slerp(hipq, w, hipq)
  end
  hips:set_position(p)
  hips:set_rotation(hipq)
  -- chest: turned towards reaching hands, and to its target's rotation
  local lp, lq = read(self, "left_hand")
  local rp, rq = read(self, "right_hand")
  local lpw, lrw = weights(self, "left_hand", w)
  local rpw, rrw = weights(self, "right_hand", w)
  local share = arms.chest_share(self, self.arms.left, lp, lpw)
      + arms.chest_share(self, self.arms.right, rp, rpw)
  torso.twist_chest(self, max(-1, min(1, share)) * self.chest_turn, 1)
  if cq and crw > 0 then
    local bone = b.upperChest or b.chest or b.spine
    local g = cq:mul(self._frame_inv, self._q):mul(self._chest_rest_rot, self._q)
    local now = bone:get_rotation(self._q2)
    bone:set_rotation(now:slerp(g, crw, now))
  end
  -- spine and neck to the head, then the head's rotation
  self.reached.head = torso.solve_spine(self, hd, hpw > 0 and 1 or 0, hq, hrw)
  -- arms
  for _, side in ipairs(SIDES) do
    local names = NAMES[side]
    local tpos, trot = lp, lq
    local pw, rw = lpw, lrw
    if side == "right" then tpos, trot, pw, rw = rp, rq, rpw, rrw end
    local hint = read(self, names.elbow)
    local hw = weights(self, names.elbow, w)
    local a = self.arms[side]
    arms.solve(self, a, tpos, trot, pw, rw, hint, hw, dt)
    self.reached[names.hand] = a.reached
  end
  -- legs
  if legs_on then
    local feet = self._feet
    for i, side in ipairs(SIDES) do
      local f, names = feet[i], NAMES[side]
      f.target, f.rot = read(self, names.foot)
      f.pw, f.rw = weights(self, names.foot, w)
      f.hint = read(self, names.knee)
      f.hint_w = weights(self, names.knee, w)
    end
    legs.solve(self, lw, feet, dt)
  end
end

--- Whether both feet stand on the ground (none is swinging).
-- @treturn boolean
function Body:standing()
  return self.legs[1].planted and self.legs[2].planted
end

--- Steps taken by both feet so far.
-- @treturn int
function Body:step_count()
  return self.legs[1].steps + self.legs[2].steps
end

function Body:_on_idle()
  self._planted = false
  self._yaw_goal = nil
  for _, a in pairs(self.arms) do a.limb:forget() end
  for _, leg in ipairs(self.legs) do leg.limb:forget() end
end

function Body:__tostring()
  return string.format("ik.rigs.body (weight %.3g)", self.applied_weight)
end

return setmetatable(body, { __call = function(_, options) return body.new(options) end })
