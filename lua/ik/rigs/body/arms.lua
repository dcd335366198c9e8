--- The body rig's arms: the shoulder turning towards a hand that reaches beyond the
-- arm, the arm as a two-bone limb whose elbow goes towards a hint or, without one,
-- where the hand's rotation and the body put it, and the hand taking its target's
-- rotation. Part of `ik.rigs.body`; see docs/body.md.
-- @module ik.rigs.body.arms

local ik = require("ik")
local limb = require("ik.rigs.limb")
local motion = require("ik.rigs.motion")

local atan2, max, min = math.atan2 or math.atan, math.max, math.min
local clamp, smoothstep = motion.clamp, motion.smoothstep

local arms = {}

-- The shoulder starts to turn when the hand is this share of the arm's reach away from
-- the upper arm, and turns fully this much further out.
local SHOULDER_FROM, SHOULDER_SPAN = 0.85, 0.3

local function pos(t) return ik.vec3(t:get_position()) end

--- Makes one side's arm from the rest pose.
-- @tparam table self the body rig under construction
-- @string side "left" or "right"
-- @treturn table the arm
function arms.new(self, side)
  local b = self.bones
  local upper, lower, hand = b[side .. "UpperArm"], b[side .. "LowerArm"], b[side .. "Hand"]
  local u, l, h = pos(upper), pos(lower), pos(hand)
  local carrier = b.upperChest or b.chest or b.spine
  local a = {
    side = side, sign = side == "right" and 1 or -1,
    shoulder = b[side .. "Shoulder"], upper = upper, lower = lower, hand = hand, carrier = carrier,
    reach = (l - u):length() + (h - l):length(), forearm = (h - l):length(),
    limb = limb.new({ upper, lower, hand }, { tolerance = 1e-4, bend_time = 0 }),
    hand_offset = self.frame:inverse() * ik.quat(hand:get_rotation()),
    -- the forearm's direction, hand to elbow, in the hand's own space
    forearm_dir = ik.quat(hand:get_rotation()):inverse() * (l - h):normalized(),
    -- the elbow's default pole: behind and below the rest elbow, carried by the chest
    pole_offset = (l - u) - self.forward * 0.5 - self.up * 0.3,
    carrier_rest = ik.quat(carrier:get_rotation()):inverse(),
    outward = self.left * -(side == "right" and 1 or -1),
    _q = ik.quat(), _q2 = ik.quat(), _goal = ik.quat(), _v = ik.vec3(), _v2 = ik.vec3(), _v3 = ik.vec3(),
    _pole = ik.vec3(), _s = ik.vec3(), _soft = ik.vec3(), _u = ik.vec3(), reached = false, distance = 0,
  }
  return a
end

--- The arm's share of the chest's turn: how far its hand reaches forward (right hand:
-- the chest turns left) or back, by how far it reaches out.
-- @treturn number in [-1, 1]
function arms.chest_share(self, a, target, weight)
  local u = a.upper:get_position(a._u)
  local d = target:sub(u, a._v)
  local out = smoothstep((d:length() / a.reach - 0.5) / 0.5)
  local f = ik.quat.axis_angle(self.up, self.yaw, a._q):rotate(self.forward, a._v2)
  return a.sign * clamp(d:dot(f) / a.reach, -1, 1) * out * weight
end

-- Turns the shoulder towards a target beyond the arm's reach.
local function turn_shoulder(self, a, target, weight)
  local sh = a.shoulder
  if not sh or weight <= 0 then return end
  local s = sh:get_position(a._s)
  local u = a.upper:get_position(a._u)
  local f = smoothstep(((target:distance(u) / a.reach) - SHOULDER_FROM) / SHOULDER_SPAN) * weight
  if f <= 0 then return end
  local from, to = u:sub(s, a._v), target:sub(s, a._v2)
  local axis = from:cross(to, a._v3)
  local len = axis:length()
  if len < 1e-9 then return end
  local angle = min(motion.angle(from, to), self.shoulder_angle) * f
  local q = ik.quat.axis_angle(axis:scale(1 / len, axis), angle, a._q)
  sh:set_rotation(q:mul(sh:get_rotation(a._q2), q))
end

-- A hint counts fully once this share of the reach off the shoulder-hand line.
local ACROSS_FULL = 0.3
-- The sideways fallback's weight against the default pole's, and the hand's rotation's
-- share of the two together (at most half, so that it never cancels them).
local FALLBACK_SHARE, HAND_SHARE = 0.5, 0.5

-- Adds to `sum` unit `v`'s part across unit `axis`, normalised and weighted by `w` times
-- the square of its length: the weight fades out where the part's direction turns fast
-- (near the axis), and the sum stays a smooth function of v and axis.
local function add_across(sum, v, axis, w, tmp)
  local across = v:sub(axis:scale(v:dot(axis), tmp), tmp)
  local len = across:length()
  if len < 1e-12 then return sum end
  return sum:add(across:scale(w * len, tmp), sum)
end

-- Where the elbow bends to: a point across the shoulder-hand line in the direction
-- blended, by weights that vary continuously with the inputs, from the default pole
-- (behind and below the elbow, carried by the chest), straight out sideways (half as
-- much: it holds the bend where the default comes onto the line), and where the hand's
-- rotation puts the elbow (at most half of the others' weight); the hint's direction
-- then wins by its weight. Blending directions, not points, keeps the bend from swinging
-- where a blended point would pass near the line.
local function pole_point(a, target, rot, rw, hint, hint_w)
  local u = a.upper:get_position(a._u)
  local axis = target:sub(u, a._s)
  local d = axis:length()
  if d < 1e-9 then return nil end
  axis = axis:scale(1 / d, axis)
  local rel = a.carrier:get_rotation(a._q):mul(a.carrier_rest, a._q)
  local sum = a._pole:set(0, 0, 0)
  local v = rel:rotate(a.pole_offset, a._v):normalized(a._v)
  add_across(sum, v, axis, 1, a._v2)
  v = rel:rotate(a.outward, a._v)
  sum = add_across(sum, v, axis, FALLBACK_SHARE, a._v2)
  if rot and rw > 0 then
    local q = rot:mul(a.hand_offset, a._goal)
    local elbow = q:rotate(a.forearm_dir, a._v):scale(a.forearm, a._v):add(target, a._v):sub(u, a._v)
    if elbow:length() > 1e-9 then
      sum = add_across(sum, elbow:normalized(elbow), axis, HAND_SHARE * rw * sum:length(), a._v2)
    end
  end
  local len = sum:length()
  if len < 1e-9 then return nil end
  local dir = sum:scale(1 / len, sum)
  if hint and hint_w > 0 then
    local h = hint:sub(u, a._v)
    h = h:sub(axis:scale(h:dot(axis), a._v2), h)
    local hl = h:length()
    if hl > 1e-9 then
      -- turned about the line towards the hint's side by the hint's weight
      h = h:scale(1 / hl, h)
      local angle = atan2(dir:cross(h, a._v2):dot(axis), dir:dot(h))
      dir = motion.turn(dir, axis, angle * hint_w * smoothstep(hl / (ACROSS_FULL * a.reach)), dir)
    end
  end
  return dir:scale(a.reach, dir):add(u, dir)
end

-- The share of the arm's reach over which the hand's goal eases into the reach.
local SOFT = 0.005

-- The target, or nearer the shoulder where it is within SOFT of the arm's reach or beyond:
-- d -> reach - s^2 / (s + d - (reach - s)), so that the elbow straightens over a stretch
-- of the target's motion, not at the one point where the arm comes straight.
local function soft_reach(a, target)
  local u = a.upper:get_position(a._u)
  local off = target:sub(u, a._soft)
  local d, s = off:length(), SOFT * a.reach
  local from = a.reach - s
  if d <= from then return target end
  return off:scale((a.reach - s * s / (s + d - from)) / d, off):add(u, off)
end

--- Solves one arm: shoulder, limb, hand rotation.
-- @tparam table self the body rig
-- @tparam table a the arm
-- @tparam ik.vec3 target
-- @tparam ?ik.quat rot the target's rotation
-- @number w position weight (applied)
-- @number rw rotation weight (applied)
-- @tparam ?ik.vec3 hint the elbow hint
-- @number hint_w its weight
-- @number dt
function arms.solve(self, a, target, rot, w, rw, hint, hint_w, dt)
  if w <= 0 and rw <= 0 then
    a.reached, a.distance = false, 0
    return
  end
  turn_shoulder(self, a, target, w * self.shoulder)
  local pole = pole_point(a, target, rot, rw, hint, hint_w)
  local goal = soft_reach(a, target)
  local reached, distance = a.limb:solve(goal, pole, max(0, min(1, w)), dt)
  if not rawequal(goal, target) then
    distance = a.hand:get_position(a._v):sub(target, a._v):length()
    reached = distance <= 1e-4
  end
  if rot and rw > 0 then
    local g = rot:mul(a.hand_offset, a._goal)
    local q = a.hand:get_rotation(a._q)
    a.hand:set_rotation(q:slerp(g, rw, q))
  end
  a.reached, a.distance = reached, distance
end

return arms
