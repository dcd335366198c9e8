--- The two-bone limb of the arm and leg rigs: an `ik.chain` over three bones (root,
-- middle, tip) solved by the analytic two-bone solver, its middle joint bending
-- towards a pole, through springs that keep the bend's side and the aim steady where
-- the geometry leaves them undefined. `ik.rigs.common.limb` is `limb.new`.
-- @module ik.rigs.limb

local ik = require("ik")
local common = require("ik.rigs.common")
local motion = require("ik.rigs.motion")

local abs, atan2, max, min, pi = math.abs, math.atan2 or math.atan, math.max, math.min, math.pi

local limb = {}

local Limb = {}
Limb.__index = Limb

--- The two-bone limb of the arm and leg rigs: an `ik.chain` over three bones whose
-- middle joint bends towards a pole.
--
-- The side the middle joint goes to is the pole's side of the line from the root to
-- the target. When the target passes through the line from the root to the pole that
-- side is undefined, and following it would swing the elbow half a turn in one frame;
-- the side instead follows the pole's through a critically damped spring in its angle
-- round the root-target line (`bend_time`, solved exactly as `spring` is, so the path
-- is the same at any frame rate). Inside the inner reach (nearer the root than the
-- bones' difference), where no pose reaches the target and its direction turns half
-- round as it passes the root, the limb aims along a direction that follows the
-- target's through the same spring, blended into the target's own by the distance.
-- @tparam table bones three transforms, root first
-- @tparam table opts `tolerance`, `bend_time`
-- @treturn table the limb: `solve(self, target, pole, weight, dt)` and `forget(self)`
function limb.new(bones, opts)
  local self = setmetatable({}, Limb)
  self.bones = bones
  self.omega = motion.omega(opts.bend_time)
  self.chain = ik.chain{ bones = bones, solver = "two_bone", tolerance = opts.tolerance }
  self.pole = ik.pole{ position = { 0, 0, 0 } }
  -- the spring of the bend side (_bend, its rate, last frame's goal) and of the aim
  self._bend, self._bend_rate, self._bend_goal, self._has_bend = ik.vec3(), 0, ik.vec3(), false
  self._aim_dir, self._aim_rate, self._aim_goal, self._has_aim = ik.vec3(), 0, ik.vec3(), false
  -- scratch, so that a frame allocates nothing
  self._root, self._aim, self._mid, self._tip = ik.vec3(), ik.vec3(), ik.vec3(), ik.vec3()
  self._raw, self._across, self._prev, self._normal = ik.vec3(), ik.vec3(), ik.vec3(), ik.vec3()
  self._axis, self._goal, self._last_raw, self._last_to_target = ik.vec3(), ik.vec3(), ik.vec3(), ik.vec3()
  self._dir, self._aim_used, self._last_aim_offset = ik.vec3(), ik.vec3(), ik.vec3()
  return self
end

-- The signed angle from unit `from` to `to` about unit `axis` (from across it). A `to`
-- opposite `from` to rounding is half a turn the positive way: the sign of rounding
-- would pick the side, differently at each frame rate.
-- (A float build's vectors carry a target a hair from the root with a direction good to
-- about 1e-3.)
local OPPOSITE_SIN = ik.real == "float" and 1e-3 or 1e-9
local function angle_about(from, to, axis, scratch)
  local s, c = from:cross(to, scratch):dot(axis), from:dot(to)
  if c < 0 and abs(s) <= OPPOSITE_SIN then return pi end
  return atan2(s, c)
end

-- Unit `from` (across unit `axis`) turned about `axis` by a critically damped spring
-- whose goal moved from direction goal0 (nil: none) to goal1 over dt; a goal that
-- jumped by more than a quarter turn is a step, not a sweep. Returns the direction (in
-- out) and the spring's rate.
function Limb:_spring_turn(from, axis, goal0, goal1, rate, dt, out)
  local a1 = angle_about(from, goal1, axis, self._normal)
  local a0 = goal0 and angle_about(from, goal0, axis, self._normal) or a1
  if abs(a1 - a0) > pi / 2 then a0 = a1 end
  local x
  x, rate = motion.spring(0, rate, a0, a1, self.omega, dt)
  out = motion.turn(from, axis, x, out)
  return out:normalized(out), rate
end

-- Across unit `aim`, towards `raw` (the pole from the root), normalised into out; nil
-- when the pole is on the aim's line.
local function across_towards(raw, aim, out)
  local t, raw_len = raw:dot(aim), raw:length()
  local rx, ry, rz = raw:unpack()
  out = out:set(rx - aim.x * t, ry - aim.y * t, rz - aim.z * t) -- out may be raw
  local len = out:length()
  return len > 1e-9 * math.max(raw_len, 1e-300) and out:scale(1 / len, out) or nil
end

-- The spring's sub-steps: near the pole's axis the pole's side turns fast and not
-- linearly in time, so the step is cut where the side turns by more than this (the
-- root's offsets to the target and to the pole interpolated linearly across the frame).
local SUBSTEP_ANGLE, SUBSTEPS_MAX = 0.05, 32
-- An aim and goal crossed to less than this are opposite (or alike): no axis of their own.
local OPPOSITE_AXIS = ik.real == "float" and 1e-3 or 1e-6

-- The bend direction for this frame: across the root-target line, following the pole's
-- side through the spring. `to_target` is the target from the root, `aim` the unit
-- direction the limb aims along. Returns one of the limb's scratch vectors, or nil.
function Limb:_bend_direction(root, to_target, aim, pole, dt)
  local raw = pole:sub(root, self._raw)
  local goal = across_towards(raw, aim, self._across)
  local prev = nil
  if self._has_bend then
    prev = across_towards(self._bend, aim, self._prev)
  end
  if not goal then return prev end
  if not prev then
    self._bend_rate = 0
    self._bend_goal:set(goal)
    self._last_raw:set(raw)
    self._last_to_target:set(to_target)
    return goal
  end
  local turn = motion.angle(self._bend_goal, goal)
  local n = min(SUBSTEPS_MAX, math.floor(turn / SUBSTEP_ANGLE) + 1)
  local bend = prev
  for k = 1, n do
    local f = k / n
    local sub_aim = self._last_to_target:lerp(to_target, f, self._axis)
    sub_aim = sub_aim:length() > 1e-12 and sub_aim:normalized(sub_aim) or sub_aim:set(aim)
    local sub_raw = self._last_raw:lerp(raw, f, self._goal)
    local sub_goal = k == n and goal or across_towards(sub_raw, sub_aim, self._goal)
    if sub_goal then
      bend = across_towards(bend, sub_aim, bend) or bend
      bend, self._bend_rate =
        self:_spring_turn(bend, sub_aim, self._bend_goal, sub_goal, self._bend_rate, dt / n, bend)
      self._bend_goal:set(sub_goal)
    end
  end
  self._last_raw:set(raw)
  self._last_to_target:set(to_target)
  return across_towards(bend, aim, bend) or prev
end

-- The direction the limb aims along this frame, given the target from the root
-- (`to_target`, `d` long, `dir` its direction) and the inner reach. The spring's step is
-- cut as the bend's is, the target's offset interpolated across the frame, so a target
-- passing through the root turns the goal half round at the moment it passed. Returns
-- one of the limb's vectors.
function Limb:_aim_direction(to_target, dir, d, inner, dt)
  local aim = self._aim_dir
  if not self._has_aim then
    self._has_aim, self._aim_rate = true, 0
    self._aim_goal:set(dir)
    self._last_aim_offset:set(to_target)
    return aim:set(dir)
  end
  local n = min(SUBSTEPS_MAX, math.floor(motion.angle(self._aim_goal, dir) / SUBSTEP_ANGLE) + 1)
  local axis = self._axis
  for k = 1, n do
    local goal = self._last_aim_offset:lerp(to_target, k / n, self._goal)
    goal = goal:length() > 1e-9 and goal:normalized(goal) or goal:set(self._aim_goal)
    do
      -- the spring's axis: across its direction and the goal's; a goal opposite it turns
      -- it about the bend direction, which it then sweeps across without crossing (turned
      -- in the bend's plane, it came round through the bend, whose side rounding chose)
      axis = aim:cross(goal, axis)
      if axis:length() < OPPOSITE_AXIS then axis = across_towards(self._bend, aim, axis) or axis end
      if axis:length() < 1e-6 then axis = motion.perpendicular(aim, axis) end
      axis = axis:normalized(axis)
      aim, self._aim_rate = self:_spring_turn(aim, axis, self._aim_goal, goal, self._aim_rate, dt / n, aim)
      self._aim_goal:set(goal)
    end
  end
  self._aim_goal:set(dir)
  self._last_aim_offset:set(to_target)
  if d >= inner then return dir end
  -- blended: the spring's at the root, the target's at the inner reach (by the square of
  -- the distance: the spring has then turned further before the target's pull grows)
  local k = (d / inner) ^ 2
  local a = angle_about(aim, dir, axis, self._normal)
  local out = motion.turn(aim, axis, k * a, self._aim_used)
  return out:normalized(out)
end

--- Solves the limb towards `target` (an ik.vec3) with the middle joint towards `pole`
-- (an ik.vec3, or nil for the side it bends to now), at `weight`.
-- @treturn boolean reached
-- @treturn number distance
-- @treturn int the chain's iterations
function Limb:solve(target, pole, weight, dt)
  local chain, bones = self.chain, self.bones
  local root = common.get_position(bones[1], self._root)
  local to_target = target:sub(root, self._aim)
  local d = to_target:length()
  local goal = target
  if d > 1e-9 or self._has_aim then
    local mid = common.get_position(bones[2], self._mid)
    local tip = common.get_position(bones[3], self._tip)
    local l1, l2 = mid:sub(root, self._raw):length(), tip:sub(mid, self._across):length()
    -- on the root the target has no direction: the aim holds its goal (and a hair of
    -- distance, for the solver to have one)
    local dir = d > 1e-9 and to_target:scale(1 / d, self._dir) or self._dir:set(self._aim_goal)
    local aim = self:_aim_direction(to_target, dir, d, abs(l1 - l2), dt)
    if not rawequal(aim, dir) or d <= 1e-9 then
      goal = aim:scale(max(d, 1e-6 * (l1 + l2)), self._tip):add(root, self._tip)
    end
    local bend = pole and self:_bend_direction(root, to_target, aim, pole, dt)
    if bend then
      self._bend:set(bend)
      self._has_bend = true
      self.pole.position = self._bend:scale(l1 + l2, self._prev):add(root, self._prev)
      chain.pole = self.pole
    end
  end
  if not pole then
    chain.pole = nil
    self._has_bend = false
  end
  chain.weight = weight
  local reached, distance, iterations = chain:solve(goal)
  if not rawequal(goal, target) then
    distance = common.get_position(bones[3], self._mid):sub(target, self._mid):length()
    reached = distance <= chain.tolerance
  end
  return reached, distance, iterations
end

--- Forgets the bend side kept between frames (the rig went idle).
function Limb:forget()
  self._has_bend, self._has_aim = false, false
end

return limb
