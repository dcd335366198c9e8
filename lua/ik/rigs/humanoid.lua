--- A whole humanoid's rigs from a role -> bone map: root, chest, legs with feet and
-- pelvis, arms and look, every axis they need read from the rest pose.
--
-- `require("ik.rigs").humanoid{ skeleton = sk, map = m, ... }` (or
-- `require("ik.rigs.humanoid").new{...}`). The map is an `ik.import` model's
-- `humanoid` (role -> bone) or a host's own role -> bone name map, with the roles of
-- `ik.humanoid_bones` (hips, spine, chest, upperChest, neck, head, leftEye, ...,
-- rightToes). The character's frame is measured, not assumed: its left from the right
-- to the left upper leg (else arm), its up from the hips to the head, its forward their
-- cross product; so T-pose and A-pose characters of any tool's bone axes need no
-- `forward` or `up`. Each part is made only when what it follows is given. See
-- docs/humanoid.md.
-- @module ik.rigs.humanoid

local ik = require("ik")
local common = require("ik.rigs.common")
local arm = require("ik.rigs.arm")
local chest = require("ik.rigs.chest")
local leg = require("ik.rigs.leg")
local look = require("ik.rigs.look")
local root = require("ik.rigs.root")

local OWNER = "ik.rigs.humanoid"

local humanoid = {}

-- An ik.skeleton, or a host's object with bone(name).
common.kinds.skeleton = common.kinds.skeleton or function(v)
  return (type(v) == "table" or type(v) == "userdata") and common.method(v, "bone") ~= nil,
      "skeleton (an object with bone(name))"
end

local FIELDS = common.fields({
  { "skeleton", "skeleton" },
  { "model", "table" },
  { "map", "table", required = true },
  { "targets", "table" },
  { "ground", "ground" },
  { "foot_offset", "non_negative" },
  { "hand_rotation", "boolean", default = false },
  { "look_limits", "table" },
  { "roll_limit", "non_negative" },
  { "reset_pose", "boolean", default = false },
})

local Humanoid = {}
Humanoid.__index = Humanoid

-- The bone a map entry names: a transform as given, or a name looked up in sk.
local function resolve(map, sk, role, owner, level)
  local v = map[role]
  if v == nil then return nil end
  if type(v) == "string" then
    if not sk then
      error(string.format("%s: map.%s is a name (%q) but no skeleton was given", owner, role, v), level)
    end
    local ok, bone = pcall(sk.bone, sk, v)
    if not ok or bone == nil then
      error(string.format("%s: map.%s names no bone of the skeleton (%q)", owner, role, v), level)
    end
    return bone
  end
  if not common.is_transform(v) then
    error(string.format("%s: map.%s (bone name or transform expected, got %s)", owner, role,
      common.describe(v)), level)
  end
  return v
end

local function pos(t) return common.get_position(t, ik.vec3()) end
local function rot(t) return common.get_rotation(t, ik.quat()) end

-- A world direction in bone t's own space.
local function in_bone(t, v) return rot(t):inverse() * v end

-- The character's frame at rest: unit left, up and forward (world), orthonormal.
local function measure_frame(b)
  local l, r = b.leftUpperLeg, b.rightUpperLeg
  if not (l and r) then l, r = b.leftUpperArm, b.rightUpperArm end
  if not (l and r) then
    error(OWNER .. ": map needs leftUpperLeg and rightUpperLeg (or the upper arms)", 3)
  end
  local top = b.head or b.neck or b.chest
  if not (top and b.hips) then error(OWNER .. ": map needs hips and head (or neck or chest)", 3) end
  local left = (pos(l) - pos(r)):normalized()
  local up = pos(top) - pos(b.hips)
  up = (up - left * up:dot(left)):normalized()
  local forward = left:cross(up):normalized()
  return left, up, forward
end

-- The world rotation whose axes are (left, up, forward): the character's frame.
local function frame_rotation(left, up, forward)
  -- from the basis: a rotation taking +X, +Y, +Z to left, up, forward
  local m00, m11, m22 = left.x, up.y, forward.z
  local t = m00 + m11 + m22
  local x, y, z, w
  if t > 0 then
    local s = math.sqrt(t + 1) * 2
    w, x, y, z = s / 4, (up.z - forward.y) / s, (forward.x - left.z) / s, (left.y - up.x) / s
  elseif m00 > m11 and m00 > m22 then
    local s = math.sqrt(1 + m00 - m11 - m22) * 2
    w, x, y, z = (up.z - forward.y) / s, s / 4, (up.x + left.y) / s, (forward.x + left.z) / s
  elseif m11 > m22 then
    local s = math.sqrt(1 + m11 - m00 - m22) * 2
    w, x, y, z = (forward.x - left.z) / s, (up.x + left.y) / s, s / 4, (forward.y + up.z) / s
  else
    local s = math.sqrt(1 + m22 - m00 - m11) * 2
    w, x, y, z = (left.y - up.x) / s, (forward.x + left.z) / s, (forward.y + up.z) / s, s / 4
  end
  return ik.quat(x, y, z, w):normalized()
end

-- Ankle above the sole: the foot joint's height above the lowest rest-pose vertex of the
-- foot and toes (the model's vertex_bounds, where it has them), else nil.
local function measure_foot_offset(model, foot, toes, up)
  local bounds = model and model.vertex_bounds
  if not bounds then return nil end
  local lowest
  for _, bone in ipairs({ foot, toes }) do
    local b = bone and bounds[bone.name]
    if b then
      for _, x in ipairs({ b.min.x, b.max.x }) do
        for _, y in ipairs({ b.min.y, b.max.y }) do
          for _, z in ipairs({ b.min.z, b.max.z }) do
            local h = ik.vec3(x, y, z):dot(up)
            if not lowest or h < lowest then lowest = h end
          end
        end
      end
    end
  end
  -- A box no lower than the ankle says nothing of the sole: the leg's default then.
  local offset = lowest and pos(foot):dot(up) - lowest
  if not offset or offset < 1e-3 then return nil end
  return offset
end

-- The bones from `from` (inclusive) up to the head (exclusive), root first, by parents.
local function chain_between(from, head)
  local list, b = {}, head.parent
  while b and b ~= from do
    table.insert(list, 1, b)
    b = b.parent
  end
  if b ~= from then return { from } end
  table.insert(list, 1, from)
  return list
end

-- A node hanging from `parent` at world point p (the character carries it).
local function carried_point(parent, p)
  local n = ik.node{ parent = common.is_transform(parent) and parent.set_local_position and parent or nil }
  n:set_position(p)
  return n
end

local function make_arm(self, b, side, target, o)
  local upper, lower, hand = b[side .. "UpperArm"], b[side .. "LowerArm"], b[side .. "Hand"]
  if not (upper and lower and hand) then return nil end
  -- Elbows bend back and down from the rest pose's elbow, whatever the arm's angle.
  local elbow = pos(lower)
  local carrier = b.chest or b.spine or b.hips
  local pole = carried_point(carrier, elbow - self.forward * 0.5 - self.up * 0.3)
  local hand_offset
  if o.hand_rotation then
    hand_offset = rot(target):inverse() * rot(hand)
  end
  return arm.new{ upper = upper, lower = lower, hand = hand, target = target, pole = pole,
                  hand_weight = o.hand_rotation and 1 or 0, hand_offset = hand_offset,
                  reset_pose = o.reset_pose }
end

local function make_leg(self, b, side, o, model)
  local upper, lower, foot = b[side .. "UpperLeg"], b[side .. "LowerLeg"], b[side .. "Foot"]
  if not (upper and lower and foot) then return nil end
  local knee = pos(lower)
  local pole = carried_point(b.hips, knee + self.forward * 0.5)
  local offset = o.foot_offset or measure_foot_offset(model, foot, b[side .. "Toes"], self.up)
  local rig = leg.new{ upper = upper, lower = lower, foot = foot, ground = o.ground, pole = pole,
                       foot_offset = offset, up = self.up, reset_pose = o.reset_pose }
  self.foot_offset[side] = rig:foot_placement().foot_offset
  return rig
end

local function make_look(self, b, target, o, model, sk)
  local head = b.head
  if not head then return nil end
  local bones = b.neck and chain_between(b.neck, head) or {}
  local neck = bones[#bones]
  local spine
  if #bones > 1 then
    spine = {}
    for i = 1, #bones - 1 do spine[i] = bones[i] end
  end
  local eye
  local offset = model and model.look_offset
  if b.leftEye and b.rightEye then
    eye = (pos(b.leftEye) + pos(b.rightEye)) * 0.5
  elseif offset then -- the VRM's eye point, in its bone's space (the head's, mostly)
    local from = head
    if offset.bone ~= nil and offset.bone ~= head.name then
      local ok, bone = pcall(function() return sk and sk:bone(offset.bone) end)
      from = ok and bone or nil
    end
    if from then eye = pos(from) + rot(from) * ik.vec3(offset.offset) end
  end
  return look.new{ head = head, neck = neck, spine = spine, target = target,
                   forward = in_bone(head, self.forward), up = in_bone(head, self.up),
                   limits = o.look_limits, eye = eye and in_bone(head, eye - pos(head)) or nil,
                   roll_limit = o.roll_limit, reset_pose = o.reset_pose }
end

--- Makes a humanoid's rigs.
-- @tparam table options
--
-- - `map`: role -> bone (an `ik.import` model's `humanoid`) or role -> bone name (then
--   `skeleton` is required); required. Needs hips, the upper legs (or arms) and head
--   (or neck or chest); each part needs its own bones.
-- - `skeleton`: the skeleton names are looked up in.
-- - `model`: the `ik.import` model, whose `vertex_bounds` give `foot_offset` and whose
--   `look_offset` (a VRM's eye point) is the look's eye when the map has no eyes.
-- - `targets`: `{ root =, chest =, left_hand =, right_hand =, look = }`, transforms
--   (or vec3 for chest, hands and look): each part is made when its target is given.
-- - `ground`: an `ik.ground`: legs with feet and the pelvis are made.
-- - `foot_offset`: ankle above the sole (m), default measured from the model's foot and
--   toes vertex bounds, else the leg's default.
-- - `hand_rotation`: false (default): hands follow target positions only; true: each
--   hand takes its target's rotation times the offset between the two when made.
-- - `look_limits`, `roll_limit`: as `ik.rigs.look`'s `limits` and `roll_limit`.
-- - `reset_pose`: as every rig's (for a skeleton nothing animates).
-- @treturn table with the parts made (`root`, `chest`, `left_arm`, `right_arm`,
--   `left_leg`, `right_leg`, `pelvis`, `look`), their `set`, and the measured `left`,
--   `up`, `forward` (world, at rest), `frame` (quat: +X, +Y, +Z to them) and
--   `foot_offset` (`{ left =, right = }`)
function humanoid.new(options)
  local o = common.options(OWNER, options, FIELDS)
  local model = o.model
  local sk = o.skeleton
  local b = {}
  for _, role in ipairs(ik.humanoid_bones) do b[role] = resolve(o.map, sk, role, OWNER, 4) end
  local self = setmetatable({ foot_offset = {} }, Humanoid)
  self.left, self.up, self.forward = measure_frame(b)
  self.frame = frame_rotation(self.left, self.up, self.forward)
  local targets = o.targets or {}
  local rigs = {}
  if targets.root then
    -- The target's rotation is the character's frame: the hips keep their tilt in it.
    self.root = root.new{ hips = b.hips, target = targets.root, offset = nil,
                          rotation_offset = self.frame:inverse() * rot(b.hips),
                          reset_pose = o.reset_pose }
    rigs[#rigs + 1] = self.root
  end
  if targets.chest and b.spine then
    local spine = { b.spine, b.chest, b.upperChest }
    local last = spine[#spine]
    self.chest = chest.new{ spine = spine, target = targets.chest, up = in_bone(last, self.up),
                            reset_pose = o.reset_pose }
    rigs[#rigs + 1] = self.chest
  end
  if o.ground then
    self.left_leg = make_leg(self, b, "left", o, model)
    self.right_leg = make_leg(self, b, "right", o, model)
    if self.left_leg and self.right_leg then
      rigs[#rigs + 1], rigs[#rigs + 2] = self.left_leg, self.right_leg
      self.pelvis = leg.pelvis{ hips = b.hips, legs = { self.left_leg, self.right_leg }, up = self.up,
                                reset_pose = o.reset_pose }
      rigs[#rigs + 1] = self.pelvis
    end
  end
  if targets.left_hand then
    self.left_arm = make_arm(self, b, "left", targets.left_hand, o)
    rigs[#rigs + 1] = self.left_arm
  end
  if targets.right_hand then
    self.right_arm = make_arm(self, b, "right", targets.right_hand, o)
    rigs[#rigs + 1] = self.right_arm
  end
  if targets.look then
    self.look = make_look(self, b, targets.look, o, model, sk)
    rigs[#rigs + 1] = self.look
  end
  self.bones = b
  self.set = require("ik.rigs").set(rigs)
  return self
end

--- Runs every part for one frame, in their order.
-- @number dt seconds since the last update
function Humanoid:update(dt)
  self.set:update(dt)
end

--- What `new` reads from the rest pose, for rigs built on the same map (`ik.rigs.body`):
-- the bones by role, the character's frame and each foot's ankle above its sole (nil
-- where the model does not tell). Errors name `owner` and blame the caller `level`
-- frames up from here.
-- @tparam table map role -> bone or name
-- @param[opt] sk the skeleton names are looked up in
-- @tparam[opt] table model an `ik.import` model
-- @string owner for messages
-- @int level as for `error`, counted from this function
-- @treturn table `bones`, `left`, `up`, `forward`, `frame`, `foot_offset` ({ left =, right = })
function humanoid.measure(map, sk, model, owner, level)
  local b = {}
  for _, role in ipairs(ik.humanoid_bones) do b[role] = resolve(map, sk, role, owner, level + 1) end
  local left, up, forward = measure_frame(b)
  local feet = {}
  for _, side in ipairs({ "left", "right" }) do
    local foot = b[side .. "Foot"]
    feet[side] = foot and measure_foot_offset(model, foot, b[side .. "Toes"], up) or nil
  end
  return { bones = b, left = left, up = up, forward = forward,
           frame = frame_rotation(left, up, forward), foot_offset = feet }
end

function Humanoid:__tostring()
  return string.format("ik.rigs.humanoid(%d rigs)", #self.set:rigs())
end

return setmetatable(humanoid, { __call = function(_, options) return humanoid.new(options) end })
