--- Look rig: the head (helped by the neck and spine, when given) turns to look at a
-- target, within limits.
--
-- The turn is spread over the bones, root first: by default the spine takes 0.2 of
-- it, the neck 0.3 and the head the rest, each bone turning by at most its own limit
-- (radians, measured from the rotation the animation gave it); a bone at its limit
-- passes what it could not take to the bones after it. Inside the limits the head's
-- forward axis ends pointing exactly at the target.
--
-- A target beyond the limits is looked towards as far as they allow. The look
-- direction is measured as yaw (about the head's up axis) and pitch; a target behind
-- the head turns it to the limit on the nearer side, and the side is kept while the
-- target crosses the line straight behind (until it is `hysteresis` radians past
-- that line), so the head does not flip over from one frame to the next.
--
-- Turning the spine moves what hangs from it: give the look rig spine bones only when
-- no arm rig hangs from them, or leave the spine to the chest rig (it runs first).
--
-- The bones are turned in passes, root first, until the head points at the target (or
-- at most `look.PASSES` passes); the iteration budget (`budget`, `set_budget`) caps the
-- passes for distant characters, whose heads then look a little off.
--
-- Fields, read and write: `target`, `weight`, `enabled`, `blend_time`, `order`; read
-- only: `applied_weight`, `budget`, and after an update `angle` (how far the head's
-- forward axis turned from the animated one), `clamped` (whether the limits stopped it)
-- and `iterations` (the passes it took).
-- @module ik.rigs.look

local ik = require("ik")
local common = require("ik.rigs.common")
local motion = require("ik.rigs.motion")
local opt = require("ik.rigs.options")

local OWNER = "ik.rigs.look"
local pi, abs, min, max = math.pi, math.abs, math.min, math.max
local cos, sin, asin, acos = math.cos, math.sin, math.asin, math.acos
local atan2 = math.atan2 or math.atan

-- A turn left to make smaller than this is done (float builds round to about 1e-7).
local DONE = ik.real == "float" and 1e-6 or 1e-9

local look = {}

--- The look's place in a rig set: last (after arms, 400).
look.order = 500

--- Default shares of the turn: spine (all its bones together), neck, head.
look.WEIGHTS = { spine = 0.2, neck = 0.3, head = 0.5 }

--- Default limits in radians: each spine bone, the neck, the head.
look.LIMITS = { spine = math.rad(20), neck = math.rad(40), head = math.rad(60) }

--- The most passes over the bones an update makes (the budget may allow fewer).
look.PASSES = 8

local FIELDS = opt.fields({
  { "head", "bone", required = true },
  { "neck", "bone" },
  { "spine", "bones" },
  { "target", "point", required = true },
  { "forward", "vec3", default = { 0, 0, 1 } },
  { "up", "vec3", default = { 0, 1, 0 } },
  { "weights", "table" },
  { "limits", "table" },
  { "hysteresis", "non_negative", default = math.rad(30) },
  { "smooth_time", "non_negative", default = 0 },
  { "eye", "vec3" },
  { "roll_limit", "non_negative" },
}, opt.rig_fields(look.order))

local Look = {}
Look.__index = Look

-- Reads entry `part` of the weights or limits table into out[] for the part's bones
-- (first..last), defaulting to defaults[part] (`split`: a number is shared evenly among
-- a part's bones, as weights are; else each bone gets it, as limits do).
local function per_bone(option, given, part, first, last, default, split, kind, out)
  local v = given and given[part]
  if v == nil then v = default end
  local count = last - first + 1
  if type(v) == "table" then
    if #v ~= count then
      error(string.format("%s: option '%s' (entry '%s': %d numbers expected, got %d)", OWNER, option, part,
        count, #v), 4)
    end
    for i = 1, count do
      if not opt.kinds[kind](v[i]) then
        error(string.format("%s: option '%s' (entry '%s' item %d: %s expected, got %s)", OWNER, option, part,
          i, select(2, opt.kinds[kind](nil)), opt.describe(v[i])), 4)
      end
      out[first + i - 1] = v[i]
    end
  else
    if not opt.kinds[kind](v) then
      error(string.format("%s: option '%s' (entry '%s': %s expected, got %s)", OWNER, option, part,
        select(2, opt.kinds[kind](nil)), opt.describe(v)), 4)
    end
    for i = first, last do out[i] = split and v / count or v end
  end
end

local function check_entries(option, t)
  if t == nil then return end
  for key in pairs(t) do
    if key ~= "spine" and key ~= "neck" and key ~= "head" then
      error(string.format("%s: option '%s' (no entry '%s': entries are spine, neck, head)", OWNER, option,
        tostring(key)), 3)
    end
  end
end

--- Makes a look rig.
-- @tparam table options
--
-- - `head`: the head bone (a transform); required.
-- - `neck`: the neck bone, or nil.
-- - `spine`: list of spine bones, root first, or nil.
-- - `target`: a transform or vec3 to look at; required.
-- - `forward`: the head's forward axis in its own space, default {0, 0, 1}.
-- - `up`: its up axis in its own space, default {0, 1, 0} (yaw is measured about it).
-- - `weights`: `{ spine = , neck = , head = }`, the shares of the turn (spine: one
--   number for all its bones, or a list, one per bone); default 0.2, 0.3, 0.5. Shares
--   of the bones present are scaled to add up to 1.
-- - `limits`: `{ spine = , neck = , head = }` in radians, each bone's largest turn
--   from its animated rotation (spine: one for each bone, or a list); default 20, 40
--   and 60 degrees. The whole turn stays below pi - `hysteresis`.
-- - `hysteresis`: radians, default 30 degrees: how far past straight behind a target
--   may go before the head changes the side it looks over.
-- - `eye`: the point it looks from, in the head's own space, default the head's origin
--   (`ik.rigs.humanoid` puts it between the eyes).
-- - `roll_limit`: radians, or nil (none): the most the rig may roll the head about its
--   forward, against the animated head's up (keep-upright).
-- - `smooth_time`: seconds, default 0 (none): smooths the look direction (a critically
--   damped spring on its yaw and pitch), so the head also swings rather than snaps
--   when it changes side.
-- - `weight`, `enabled`, `blend_time` (0.2 s), `order` (500), `reset_pose` (false),
--   `budget` (none: `look.PASSES` passes at most; see `set_budget`).
-- @treturn table the rig
-- @usage local sk = ik.skeleton{
--   { name = "neck", position = {0, 1.5, 0} },
--   { name = "head", parent = "neck", position = {0, 0.1, 0} },
-- }
-- local target = ik.node{ position = {1, 1.6, 1} }   -- 45 degrees to the left
-- local rig = require("ik.rigs.look").new{ neck = sk:bone("neck"), head = sk:bone("head"),
--                                          target = target }
-- rig:update(1 / 60)
-- local head = sk:bone("head")
-- local forward = head:get_rotation() * ik.vec3(0, 0, 1)
-- local to_target = (target:get_position() - head:get_position()):normalized()
-- assert(forward:dot(to_target) > math.cos(1e-3))
function look.new(options)
  local o = opt.check(OWNER, options, FIELDS)
  if o.hysteresis >= pi then
    error(OWNER .. ": option 'hysteresis' (number in [0, pi) expected, got " .. opt.describe(o.hysteresis)
      .. ")", 2)
  end
  check_entries("weights", o.weights)
  check_entries("limits", o.limits)
  local self = setmetatable({}, Look)
  local bones, weights, limits = {}, {}, {}
  local parts = {}
  if o.spine then
    for _, b in ipairs(o.spine) do bones[#bones + 1] = b end
    parts[#parts + 1] = { "spine", 1, #bones }
  end
  if o.neck then
    bones[#bones + 1] = o.neck
    parts[#parts + 1] = { "neck", #bones, #bones }
  end
  bones[#bones + 1] = o.head
  parts[#parts + 1] = { "head", #bones, #bones }
  for _, p in ipairs(parts) do
    per_bone("weights", o.weights, p[1], p[2], p[3], look.WEIGHTS[p[1]], true, "non_negative", weights)
    per_bone("limits", o.limits, p[1], p[2], p[3], look.LIMITS[p[1]], false, "non_negative", limits)
  end
  local total, capacity = 0, 0
  for i = 1, #bones do
    total = total + weights[i]
    if weights[i] > 0 then capacity = capacity + limits[i] end
  end
  if total <= 0 then
    error(OWNER .. ": option 'weights' (at least one positive share expected, got none)", 2)
  end
  for i = 1, #bones do weights[i] = weights[i] / total end
  self._last = 0
  for i = 1, #bones do if weights[i] > 0 and limits[i] > 0 then self._last = i end end
  local forward = opt.to_vec3(o.forward):normalized()
  local up = opt.to_vec3(o.up):normalized()
  if forward:cross(up):length() < 1e-6 then
    error(OWNER .. ": options 'forward' and 'up' (two axes that are not parallel expected, got parallel "
      .. "ones)", 2)
  end
  self.head, self.neck, self.spine, self.target = o.head, o.neck, o.spine, o.target
  self._bones, self._weights, self._limits = bones, weights, limits
  self._capacity = min(capacity, pi - o.hysteresis, pi - 1e-3)
  self._forward, self._up = forward, up
  self._hysteresis = o.hysteresis
  self._eye = o.eye and common.to_vec3(o.eye) or nil
  self._roll_limit = o.roll_limit
  self._eye_at, self._up0, self._roll_axis = ik.vec3(), ik.vec3(), ik.vec3()
  self._omega = motion.omega(o.smooth_time)
  self._room, self._out, self._used = {}, {}, {}
  self.angle, self.clamped = 0, false
  common.init_rig(self, OWNER, o, bones)
  -- scratch, so that an update allocates nothing
  self._position, self._rotation, self._bone_rotation = ik.vec3(), ik.quat(), ik.quat()
  self._f, self._r, self._u, self._target = ik.vec3(), ik.vec3(), ik.vec3(), ik.vec3()
  self._d, self._goal, self._tmp = ik.vec3(), ik.vec3(), ik.vec3()
  self._facing, self._want, self._axis = ik.vec3(), ik.vec3(), ik.vec3()
  return self
end

--- Sets the iteration budget: at most `n` passes over the bones per update (nil:
-- `look.PASSES`). See `ik.rigs.common.set_budget`.
-- @tparam ?int n
-- @usage local sk = ik.skeleton{
--   { name = "neck", position = {0, 1.5, 0} },
--   { name = "head", parent = "neck", position = {0, 0.1, 0} },
-- }
-- local rig = require("ik.rigs.look").new{ neck = sk:bone("neck"), head = sk:bone("head"),
--                                          target = ik.vec3(1, 1.6, 1) }
-- rig:set_budget(1)
-- rig:update(1 / 60)
-- assert(rig.iterations == 1)
function Look:set_budget(n)
  common.set_budget(self, n)
end

-- The forward-axis angle of the direction at yaw y, pitch p (|y| <= pi).
local function angle_of(y, p)
  return acos(max(-1, min(1, cos(p) * cos(y))))
end

-- Scales (y, p) down until the direction is `limit` from forward: turned as far as
-- allowed along the path from straight ahead. |y| may exceed pi by the hysteresis.
local function clamp(y, p, limit)
  if abs(y) <= pi and angle_of(y, p) <= limit then return y, p, false end
  local hi = min(1, pi / max(abs(y), 1e-300))
  if angle_of(hi * y, hi * p) < limit then return hi * y, hi * p, true end
  local lo = 0
  for _ = 1, 60 do
    local mid = 0.5 * (lo + hi)
    if angle_of(mid * y, mid * p) < limit then lo = mid else hi = mid end
  end
  local s = 0.5 * (lo + hi)
  return s * y, s * p, true
end

-- Bone `first`'s share of a turn of `theta` over bones first..n: by weight, but none
-- beyond what it has left (`room`); what a bone cannot take goes to the others.
local function share(theta, first, weights, room, out)
  local n = #weights
  local free, remaining = 0, theta
  for i = first, n do
    out[i] = false
    if weights[i] > 0 and room[i] > 0 then free = free + weights[i] else out[i] = 0 end
  end
  local capped = true
  while capped and free > 0 do
    capped = false
    for i = first, n do
      if out[i] == false and remaining * weights[i] / free > room[i] then
        out[i] = room[i]
        remaining = remaining - room[i]
        free = free - weights[i]
        capped = true
      end
    end
  end
  if out[first] == false then return remaining * weights[first] / free end
  return out[first]
end

local function wrap(a)
  return a - 2 * pi * math.floor((a + pi) / (2 * pi))
end

-- Where the head looks from, into out: its origin, or the eye point carried by it.
local function eye_point(self, out)
  local head = self.head
  local p = common.get_position(head, out)
  if not self._eye then return p end
  local q = common.get_rotation(head, self._bone_rotation)
  return p:add(q:rotate(self._eye, self._roll_axis), p)
end

-- Rolls the head back about its forward to within roll_limit of up0 (the animated
-- head's up, seen square to where the head now faces); whether it rolled.
local function keep_upright(self)
  local limit = self._roll_limit
  local head = self.head
  local q = common.get_rotation(head, self._rotation)
  local f = q:rotate(self._forward, self._facing)
  local up_now = q:rotate(self._up, self._want)
  local up0 = self._up0
  local along = up0:dot(f)
  local ref = up0:sub(f:scale(along, self._axis), self._tmp)
  if ref:length() < 1e-9 then return false end
  up_now = up_now:sub(f:scale(up_now:dot(f), self._axis), up_now)
  if up_now:length() < 1e-9 then return false end
  local roll = atan2(ref:cross(up_now, self._axis):dot(f), ref:dot(up_now))
  if abs(roll) <= limit then return false end
  local back = roll > 0 and limit - roll or -limit - roll
  local turn = ik.quat.axis_angle(f, back, self._bone_rotation)
  head:set_rotation(turn:mul(q, turn))
  return true
end

--- Runs the rig for one frame, after the animation posed the head (and everything
-- else that moves it).
-- @number dt seconds since the last update, >= 0
function Look:update(dt)
  local w = common.begin(self, dt)
  self.iterations = 0
  if not w then
    self.angle, self.clamped = 0, false
    return
  end
  local head = self.head
  local head_position = eye_point(self, self._position)
  local head_rotation = common.get_rotation(head, self._rotation)
  if self._roll_limit then head_rotation:rotate(self._up, self._up0) end
  local f = head_rotation:rotate(self._forward, self._f)
  local r = head_rotation:rotate(self._up, self._r)
  r = r:cross(f, r)
  r = r:normalized(r)
  local u = f:cross(r, self._u)
  local target = common.position(self.target, OWNER, "target", self._target)
  local to_target = target:sub(head_position, self._d)
  if to_target:length() < 1e-9 then return end
  local d = to_target:normalized(to_target)

  -- yaw about up (positive towards r = up x forward), pitch towards up
  local yaw = atan2(d:dot(r), d:dot(f))
  local pitch = asin(max(-1, min(1, d:dot(u))))
  if self._yaw then
    yaw = self._yaw + wrap(yaw - self._yaw)   -- continuous with last frame
    local band = pi + self._hysteresis
    if yaw > band then yaw = yaw - 2 * pi elseif yaw < -band then yaw = yaw + 2 * pi end
  end
  self._yaw = yaw

  local ys, ps, clamped = clamp(yaw, pitch, self._capacity)
  local exact = not clamped
  if self._omega then
    if not self._sy then
      self._sy, self._svy, self._gy, self._sp, self._svp, self._gp = ys, 0, ys, ps, 0, ps
    end
    self._sy, self._svy = motion.spring(self._sy, self._svy, self._gy, ys, self._omega, dt)
    self._sp, self._svp = motion.spring(self._sp, self._svp, self._gp, ps, self._omega, dt)
    self._gy, self._gp = ys, ps
    ys, ps = self._sy, self._sp
    exact = false
  end

  -- the goal direction, and the part of the way the weight allows
  local goal, tmp = self._goal, self._tmp
  f:scale(cos(ps) * cos(ys), goal)
  goal:add(r:scale(cos(ps) * sin(ys), tmp), goal)
  goal:add(u:scale(sin(ps), tmp), goal)
  local theta = motion.angle(f, goal)
  if w < 1 and theta > 1e-12 then
    local axis = f:cross(goal, tmp)
    goal = motion.turn(f, axis:normalized(axis), w * theta, goal)
    exact = false
  end

  self:_turn(goal, exact and target or nil)
  -- Rolling about the face moves an eye point off its axis: aim again, a few rounds.
  for _ = 1, self._roll_limit and 3 or 0 do
    if not keep_upright(self) then break end
    self:_turn(goal, exact and target or nil)
  end
  self.angle = motion.angle(f, common.get_rotation(head, self._rotation):rotate(self._forward, tmp))
  self.clamped = clamped
end

-- Turns the bones, root first, so the head's forward goes to `goal` (a direction), or
-- to `target` (a point) when given: each bone takes its share of what is left to turn,
-- within what its limit leaves it. A bone turning moves the head, which changes the
-- direction to a target; a few passes make up for that.
function Look:_turn(goal, target)
  local head, bones, weights, limits = self.head, self._bones, self._weights, self._limits
  local forward, room, out, used = self._forward, self._room, self._out, self._used
  local rotation, bone_rotation = self._rotation, self._bone_rotation
  local n = #bones
  for i = 1, n do
    used[i] = 0
    room[i] = limits[i]
  end
  for pass = 1, common.passes(self, look.PASSES) do
    local moved = false
    self.iterations = pass
    for i = 1, n do
      if weights[i] > 0 and room[i] > 0 then
        local facing = common.get_rotation(head, rotation):rotate(forward, self._facing)
        local want = goal
        if target then
          want = target:sub(eye_point(self, self._position), self._want)
          want = want:normalized(want)
        end
        local phi = motion.angle(facing, want)
        if phi <= DONE then break end
        local turn = min(i == self._last and phi or share(phi, i, weights, room, out), phi, room[i])
        if turn > 1e-12 then
          local axis = facing:cross(want, self._axis)
          if axis:length() < 1e-12 then axis = motion.perpendicular(facing, axis) end
          local q = ik.quat.axis_angle(axis, turn, rotation)
          local bone = bones[i]
          bone:set_rotation(q:mul(common.get_rotation(bone, bone_rotation), q))
          -- what the limit leaves: turns add up to at most their sum, so this never
          -- lets the bone past it
          used[i] = used[i] + turn
          room[i] = max(0, limits[i] - used[i])
          moved = true
        end
      end
    end
    if not moved then break end
  end
end

function Look:_on_idle()
  self._yaw = nil
  self._sy = nil
end

function Look:__tostring()
  return string.format("ik.rigs.look (weight %.3g)", self.applied_weight)
end

return look
