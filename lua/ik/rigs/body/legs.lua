--- The body rig's legs: feet planted on the ground, stepping (`ik.rigs.gait`: arcs,
-- timing, never both feet in the air) when the body moves or turns away from them,
-- landing where the body will be, and each leg a two-bone limb whose knee goes towards
-- a hint or forward. Part of `ik.rigs.body`; see docs/body.md.
-- @module ik.rigs.body.legs

local ik = require("ik")
local gait = require("ik.rigs.gait")
local limb = require("ik.rigs.limb")
local motion = require("ik.rigs.motion")

local abs, max, min, sqrt = math.abs, math.max, math.min, math.sqrt
local smoothstep, wrap_angle = motion.smoothstep, motion.wrap_angle

local legs = {}

-- How far ahead a foot lands: this share of a step's time at the body's speed.
local LEAD = 1.0
-- Below this speed (m/s) the body counts as standing still, and its feet settle.
local SETTLE_SPEED = 0.1

local function pos(t) return ik.vec3(t:get_position()) end

--- Makes the two legs and their gait from the rest pose, into the body `self`.
-- @tparam table self the body rig under construction
-- @tparam table o its checked options
function legs.init(self, o)
  local b = self.bones
  local hips = pos(b.hips)
  self.legs = {}
  local anchors = {}
  for i, side in ipairs({ "left", "right" }) do
    local upper, lower, foot = b[side .. "UpperLeg"], b[side .. "LowerLeg"], b[side .. "Foot"]
    local u, l, f = pos(upper), pos(lower), pos(foot)
    -- feet side by side under the body (a rest pose's stride is not how it stands)
    local off = self.left * (f - self.feet_mid):dot(self.left)
    local leg = {
      side = side, upper = upper, lower = lower, foot_bone = foot,
      reach = (l - u):length() + (f - l):length(),
      hip_offset = u - hips,
      knee_offset = (l - hips) + self.forward * 0.5,
      ankle_offset = ik.vec3(off.x, 0, off.z),
      foot_offset = self.foot_offsets[side],
      foot_rest = ik.quat(foot:get_rotation()),
      foot_target_offset = self.frame:inverse() * ik.quat(foot:get_rotation()),
      limb = limb.new({ upper, lower, foot }, { tolerance = 1e-4, bend_time = 0.1 }),
      -- what the gait reads
      rest = { 0, 0 }, prev_rest = { 0, 0 },
      step_distance = o.step_distance, min_step = o.step_distance * 0.1,
      yaw = 0, normal = ik.vec3(0, 1, 0), from_normal = ik.vec3(0, 1, 0), to_normal = ik.vec3(0, 1, 0),
      ankle = ik.vec3(), rel_offset = ik.vec3(), reached = false, distance = 0,
      _v = ik.vec3(), _q = ik.quat(), _q2 = ik.quat(), _pole = ik.vec3(),
    }
    self.legs[i] = leg
    anchors[i] = { off:dot(self.left), 0, off:dot(self.forward) }
  end
  self.gait = gait.new{ owner = "ik.rigs.body", feet = self.legs, anchors = anchors, pattern = "alternate",
                        step_time = o.step_time, step_height = o.step_height, hysteresis = 0.2 }
  self._planted = false
  self._cx, self._cz, self._cvx, self._cvz, self._cgx, self._cgz = 0, 0, 0, 0, nil, nil
  self._ray_origin, self._ray_dir = ik.vec3(), ik.vec3(0, -1, 0)
  self._hit, self._normal = ik.vec3(), ik.vec3()
  self._ankles = {}
end

-- The ground under (x, z): y and the normal (into self._normal), or nil.
local function ground_at(self, x, z, y_hint)
  local h = self.height
  local origin = self._ray_origin:set(x, y_hint + h, z)
  local hit, point, normal = self.ground:raycast(origin, self._ray_dir, 3 * h, self._hit, self._normal)
  if not hit then return nil end
  if normal and normal ~= self._normal then self._normal:set(normal) end
  return point.y
end

-- Where a foot's rest point is with the body centred at (cx, cz): its rest offset turned
-- by the body's heading.
local function rest_point(self, leg, cx, cz)
  local q = ik.quat.axis_angle(self.up, self.yaw, leg._q)
  local r = q:rotate(leg.ankle_offset, leg._v)
  return cx + r.x, cz + r.z
end

-- gait's landing: the rest point where the step began, led by the body's speed.
-- The lead: how far ahead of its rest point a foot lands at the body's speed (capped).
local function lead(self)
  local lx, lz = self._cvx * self.step_time * LEAD, self._cvz * self.step_time * LEAD
  local ll = sqrt(lx * lx + lz * lz)
  local cap = self.step_distance
  if ll > cap then return lx * cap / ll, lz * cap / ll end
  return lx, lz
end

local function landing(self, leg, late, back)
  local rx = leg.rest[1] - (leg.rest[1] - leg.prev_rest[1]) * back
  local rz = leg.rest[2] - (leg.rest[2] - leg.prev_rest[2]) * back
  local lx, lz = lead(self)
  local y = ground_at(self, rx + lx, rz + lz, leg.plant[2])
  if not y then return nil end
  leg.yaw_from, leg.yaw_to = leg.yaw, self.yaw - self._yaw_rate * late
  leg.from_normal:set(leg.normal)
  leg.to_normal:set(self._normal)
  return rx + lx, y, rz + lz
end

--- Plants both feet under their rest points (at the start, and after the legs were
-- skipped).
function legs.plant(self, cx, cz)
  for _, leg in ipairs(self.legs) do
    local x, z = rest_point(self, leg, cx, cz)
    local y = ground_at(self, x, z, self.sole_height) or self.sole_height
    gait.plant(leg, x, y, z)
    leg.normal:set(self._normal)
    leg.yaw, leg.yaw_to = self.yaw, nil
    leg.rest[1], leg.rest[2], leg.prev_rest[1], leg.prev_rest[2] = x, z, x, z
  end
  self._cgx, self._cgz, self._cx, self._cz, self._cvx, self._cvz = cx, cz, cx, cz, 0, 0
  self._planted = true
end

--- Runs the gait for a frame with the body centred at (cx, cz) (over the ground): feet
-- land, want steps and start them. Then each foot's ankle goal is in `leg.ankle`.
function legs.step(self, cx, cz, dt)
  if not self._planted then legs.plant(self, cx, cz) end
  -- the centre's speed, through a spring (the same at any frame rate)
  self._cx, self._cvx = motion.spring(self._cx, self._cvx, self._cgx, cx, self._center_omega, dt)
  self._cz, self._cvz = motion.spring(self._cz, self._cvz, self._cgz, cz, self._center_omega, dt)
  self._cgx, self._cgz = cx, cz
  local g = self.gait
  g.step_time, g.step_height = self.step_time, self.step_height
  g:tick(dt)
  g:swing(dt)
  local lx, lz = lead(self)
  for _, leg in ipairs(self.legs) do
    if leg.planted and leg.yaw_to then
      leg.yaw, leg.yaw_to = leg.yaw_to, nil
      leg.normal:set(leg.to_normal)
    end
    leg.prev_rest[1], leg.prev_rest[2] = leg.rest[1], leg.rest[2]
    leg.rest[1], leg.rest[2] = rest_point(self, leg, cx, cz)
    leg.step_distance, leg.min_step = self.step_distance, self.step_distance * 0.1
    -- how far the plant is from where the foot would land now: a moving body's feet step sooner
    local d = sqrt((leg.plant[1] - leg.rest[1] - lx) ^ 2 + (leg.plant[3] - leg.rest[2] - lz) ^ 2)
    local turn = abs(wrap_angle(self.yaw - leg.yaw))
    -- standing still, a foot off its rest point by more than the settle distance steps back
    local speed = sqrt(self._cvx ^ 2 + self._cvz ^ 2)
    local still = 1 - smoothstep(speed / SETTLE_SPEED)
    local scale = 1 + (self.step_distance / (self.settle_distance) - 1) * still
    g:measure(leg, max(d * scale, self.step_distance * turn / self.step_angle), dt)
  end
  g:start_steps(dt, landing, self)
  for _, leg in ipairs(self.legs) do
    local x, y, z = g:foot_point(leg)
    leg.ankle:set(x, y + leg.foot_offset, z)
  end
end

--- The ground height under the feet (each foot's plant, or its swing's ends blended):
-- what the hips crouch from. Also the feet's midpoint on the ground into `mid`.
function legs.ground(self, mid)
  local sum, sx, sz = 0, 0, 0
  for _, leg in ipairs(self.legs) do
    local y
    if leg.planted then
      y = leg.plant[2]
    else
      y = leg.from[2] + (leg.dest[2] - leg.from[2]) * smoothstep(leg.t)
    end
    sum = sum + y
    sx, sz = sx + leg.ankle.x, sz + leg.ankle.z
  end
  local n = #self.legs
  mid:set(sx / n, sum / n, sz / n)
  return sum / n
end

--- The planted feet as the hips' reach constraints: {ankle goal, hip joint offset at
-- rest, reach, scratch}.
function legs.constraints(self, weight)
  local list = self._ankles
  for i = #list, 1, -1 do list[i] = nil end
  if weight <= 0 or not self.plant_feet then return list end
  for _, leg in ipairs(self.legs) do
    if leg.planted then
      leg._c = leg._c or {}
      local c = leg._c
      c[1], c[2], c[3], c[4] = leg.ankle, leg.hip_offset, leg.reach, leg.rel_offset
      list[#list + 1] = c
    end
  end
  return list
end

--- Solves both legs: each ankle to its goal (or its target's, by weight), the knee
-- towards its hint or forward, the foot turned to the body's heading on the ground.
-- @tparam table self the body rig
-- @number w the legs' applied weight
-- @tparam table feet per side: { target = ik.vec3 or nil, rot, pw, rw, hint, hint_w }
-- @number dt
function legs.solve(self, w, feet, dt)
  local hips = self.bones.hips
  local rel = hips:get_rotation(self._lq):mul(self._hips_rest_inv, self._lq)
  local at = hips:get_position(self._lv)
  for i, leg in ipairs(self.legs) do
    local f = feet[i]
    local goal = leg.ankle
    if f.target and f.pw > 0 then goal = leg._v:set(goal):lerp(f.target, f.pw, leg._v) end
    local pole = rel:rotate(leg.knee_offset, leg._pole):add(at, leg._pole)
    if f.hint and f.hint_w > 0 then pole = pole:lerp(f.hint, f.hint_w, pole) end
    leg.reached, leg.distance = leg.limb:solve(goal, pole, max(0, min(1, w)), dt)
    -- the foot: the body's heading (blended through a swing), on the ground's slope
    local yaw = leg.yaw
    local n = leg.normal
    if not leg.planted and leg.yaw_to then
      local s = smoothstep(leg.t)
      yaw = leg.yaw_from + wrap_angle(leg.yaw_to - leg.yaw_from) * s
      n = leg.from_normal:lerp(leg.to_normal, s, self._lv2):normalized(self._lv2)
    end
    local q = ik.quat.from_to(self.up, n, leg._q2)
    q = q:mul(ik.quat.axis_angle(self.up, yaw, leg._q), q):mul(leg.foot_rest, q)
    if f.rot and f.rw > 0 then q = q:slerp(f.rot:mul(leg.foot_target_offset, leg._q), f.rw, q) end
    local now = leg.foot_bone:get_rotation(leg._q)
    leg.foot_bone:set_rotation(now:slerp(q, w, now))
  end
end

return legs
