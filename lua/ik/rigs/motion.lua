--- The rigs' shared maths: the critically damped spring (solved exactly), the blended
-- weight, easing and angles, rotation vectors and the few vector turns the rigs need.
--
-- Plain functions on numbers, `ik.vec3` and `ik.quat`; those returning a vector or a
-- quaternion take an `out` to write into, so a rig's frame allocates nothing.
-- `ik.rigs.common` hands all of them on under the same names.
-- @module ik.rigs.motion

local ik = require("ik")

local abs, atan2, exp, floor = math.abs, math.atan2 or math.atan, math.exp, math.floor
local cos, sin, min, max, pi, sqrt = math.cos, math.sin, math.min, math.max, math.pi, math.sqrt

local motion = {}

-- ---- springs and smoothing ----

--- The angular frequency of a critically damped spring with this smooth time
-- (2 / smooth_time: a step is about 90% done after 2 * smooth_time), or nil for 0 (no
-- smoothing).
-- @number smooth_time seconds
-- @treturn ?number
function motion.omega(smooth_time)
  if smooth_time <= 0 then return nil end
  return 2 / smooth_time
end

--- One step of a critically damped spring, integrated exactly: x (with velocity v)
-- follows a goal that moves linearly from g0 to g1 over dt seconds. Being exact it
-- gives the same path at any frame rate for a goal moving steadily, and never
-- overshoots or explodes for a long step. omega nil: no smoothing (x jumps to g1).
-- @number x position
-- @number v velocity per second
-- @number g0 the goal at the start of the step
-- @number g1 the goal at its end
-- @tparam ?number omega from `motion.omega`
-- @number dt seconds, >= 0
-- @treturn number x
-- @treturn number v
-- @usage local motion = require("ik.rigs.motion")
-- local x, v = 0, 0
-- for _ = 1, 60 do x, v = motion.spring(x, v, 1, 1, motion.omega(0.1), 1 / 60) end
-- assert(math.abs(x - 1) < 1e-6)   -- there in a second, never past it
function motion.spring(x, v, g0, g1, omega, dt)
  if dt <= 0 then return x, v end
  local u = (g1 - g0) / dt
  if not omega then return g1, u end
  -- f = x - g + 2u/omega obeys the free critically damped equation
  local f = x - g0 + 2 * u / omega
  local fd = v - u
  local c = fd + omega * f
  local e = exp(-omega * dt)
  local f1 = (f + c * dt) * e
  local fd1 = (fd - omega * c * dt) * e
  return g1 + f1 - 2 * u / omega, u + fd1
end

--- The cubic a goal is taken to follow over a step, from its samples: g1 now, g0 dt
-- earlier (the step's start), and, when given, gm1 h1 before that and gm2 h2 before
-- gm1 (nil: fewer samples, a lower degree; the line from g0 to g1 without them).
-- Returns its coefficients in the time s since the step's start, c0 + c1 s + c2 s^2 +
-- c3 s^3, for `spring_cubic`. Samples much closer than the step (h below dt / 8) are
-- left out: their differences would be noise.
-- @number g1
-- @number g0
-- @tparam ?number gm1
-- @tparam ?number gm2
-- @number dt > 0
-- @tparam ?number h1
-- @tparam ?number h2
-- @treturn number c0
-- @treturn number c1
-- @treturn number c2
-- @treturn number c3
function motion.cubic_goal(g1, g0, gm1, gm2, dt, h1, h2)
  local a1 = (g1 - g0) / dt
  if not gm1 or h1 < dt / 8 then return g0, a1, 0, 0 end
  -- a goal that stopped, turned back or set out at g0 without slowing down first has a
  -- kink there, not a curve: bent through it, the cubic would carry the goal past
  -- where it stopped
  if (g1 - g0) * (g0 - gm1) <= 0 then
    local slowed = g1 ~= g0 and gm2 and h2 >= dt / 8 and abs(g0 - gm1) / h1 < abs(gm1 - gm2) / h2
    if not slowed then return g0, a1, 0, 0 end
  end
  -- Newton's divided differences on the times dt, 0, -h1, -h1 - h2
  local d1m1 = (gm1 - g1) / (-h1 - dt)
  local a2 = (d1m1 - a1) / -h1
  local a3 = 0
  if gm2 and h2 >= dt / 8 then
    local dm1m2 = (gm2 - gm1) / -h2
    local d1m1m2 = (dm1m2 - d1m1) / (-h1 - h2 - dt)
    a3 = (d1m1m2 - a2) / (-h1 - h2)
  end
  -- a0 + a1 s + a2 s (s - dt) + a3 s (s - dt) (s + h1), expanded
  return g0, a1 - a2 * dt - a3 * dt * h1, a2 + a3 * (h1 - dt), a3
end

--- One step of the critically damped spring, integrated exactly, for a goal that follows
-- the cubic c0 + c1 s + c2 s^2 + c3 s^3 over the step (s the time since its start; see
-- `cubic_goal`). With c2 = c3 = 0 it is `spring`. omega nil: x jumps to the goal.
-- @number x
-- @number v
-- @number c0
-- @number c1
-- @number c2
-- @number c3
-- @tparam ?number omega
-- @number dt seconds, >= 0
-- @treturn number x
-- @treturn number v
function motion.spring_cubic(x, v, c0, c1, c2, c3, omega, dt)
  if dt <= 0 then return x, v end
  local g1 = c0 + dt * (c1 + dt * (c2 + dt * c3))
  local u1 = c1 + dt * (2 * c2 + dt * 3 * c3)
  if not omega then return g1, u1 end
  -- the spring's steady response to the goal g, g - 2 g' / omega + 3 g'' / omega^2 -
  -- 4 g''' / omega^3, leaves f = x - it obeying the free critically damped equation
  local w1, w2 = 1 / omega, 1 / (omega * omega)
  local k = 24 * c3 * w1 * w2
  local p0, dp0 = c0 - 2 * c1 * w1 + 6 * c2 * w2 - k, c1 - 4 * c2 * w1 + 18 * c3 * w2
  local acc1 = 2 * c2 + 6 * c3 * dt
  local p1, dp1 = g1 - 2 * u1 * w1 + 3 * acc1 * w2 - k, u1 - 2 * acc1 * w1 + 18 * c3 * w2
  local f, fd = x - p0, v - dp0
  local c = fd + omega * f
  local e = exp(-omega * dt)
  return p1 + (f + c * dt) * e, dp1 + (fd - omega * c * dt) * e
end

--- Moves `applied` towards `goal` by at most dt / blend_time (all the way when
-- blend_time is 0): the weight never snaps.
-- @number applied
-- @number goal
-- @number dt seconds
-- @number blend_time seconds
-- @treturn number
-- @usage local motion = require("ik.rigs.motion")
-- assert(motion.blend(0, 1, 0.05, 0.2) == 0.25)
function motion.blend(applied, goal, dt, blend_time)
  if blend_time <= 0 then return goal end
  local step = dt / blend_time
  if goal > applied then return min(goal, applied + step) end
  if goal < applied then return max(goal, applied - step) end
  return applied
end

--- x held within [lo, hi].
-- @number x
-- @number lo
-- @number hi
-- @treturn number
function motion.clamp(x, lo, hi)
  if x < lo then return lo end
  if x > hi then return hi end
  return x
end
local clamp = motion.clamp

--- 0 below 0, 1 above 1, and the cubic 3x^2 - 2x^3 between: an ease with no jump in
-- its slope at either end.
-- @number x
-- @treturn number
-- @usage local motion = require("ik.rigs.motion")
-- assert(motion.smoothstep(-1) == 0 and motion.smoothstep(0.5) == 0.5 and motion.smoothstep(2) == 1)
function motion.smoothstep(x)
  x = clamp(x, 0, 1)
  return x * x * (3 - 2 * x)
end

--- An angle brought into [-pi, pi).
-- @number a radians
-- @treturn number
function motion.wrap_angle(a)
  return a - 2 * pi * floor((a + pi) / (2 * pi))
end

--- The distance from the point `p` (`{x, y, z}`) to (x, y, z).
-- @tparam table p
-- @number x
-- @number y
-- @number z
-- @treturn number
function motion.distance(p, x, y, z)
  return sqrt((p[1] - x) ^ 2 + (p[2] - y) ^ 2 + (p[3] - z) ^ 2)
end

-- ---- rotation vectors ----

--- The rotation vector (axis times angle, the shorter way round) of an ik.quat.
-- @tparam ik.quat q
-- @treturn number x
-- @treturn number y
-- @treturn number z
function motion.quat_log(q)
  local x, y, z, w = q:unpack()
  if w < 0 then x, y, z, w = -x, -y, -z, -w end
  local s = sqrt(x * x + y * y + z * z)
  if s < 1e-12 then return 2 * x, 2 * y, 2 * z end
  local a = 2 * atan2(s, w) / s
  return x * a, y * a, z * a
end

-- Scratch for the helpers below, which never call each other while using it.
local scratch_v = ik.vec3()
local X, Y, Z = ik.vec3(1, 0, 0), ik.vec3(0, 1, 0), ik.vec3(0, 0, 1)

--- The rotation of a rotation vector (inverse of `quat_log`).
-- @number x
-- @number y
-- @number z
-- @tparam[opt] ik.quat out written and returned instead of a new quaternion
-- @treturn ik.quat
-- @usage local motion = require("ik.rigs.motion")
-- local q = motion.quat_exp(0, math.pi / 2, 0)
-- local x, y, z = motion.quat_log(q)
-- assert(math.abs(x) < 1e-9 and math.abs(y - math.pi / 2) < 1e-6 and math.abs(z) < 1e-9)
function motion.quat_exp(x, y, z, out)
  local a = sqrt(x * x + y * y + z * z)
  if a < 1e-300 then return out and out:set() or ik.quat() end
  return ik.quat.axis_angle(scratch_v:set(x, y, z), a, out)
end

-- ---- directions ----

--- Unsigned angle between two directions, in [0, pi] (precise near 0 and pi).
-- @tparam ik.vec3 a
-- @tparam ik.vec3 b
-- @treturn number
function motion.angle(a, b)
  return atan2(a:cross(b, scratch_v):length(), a:dot(b))
end

--- v turned by `angle` about the unit `axis` (v perpendicular to it).
-- @tparam ik.vec3 v
-- @tparam ik.vec3 axis
-- @number angle
-- @tparam[opt] ik.vec3 out written and returned instead of a new vector (may be v)
-- @treturn ik.vec3
function motion.turn(v, axis, angle, out)
  local c, s = cos(angle), sin(angle)
  local ax, ay, az = axis:unpack()
  local vx, vy, vz = v:unpack()
  out = out or ik.vec3()
  return out:set(vx * c + (ay * vz - az * vy) * s, vy * c + (az * vx - ax * vz) * s,
    vz * c + (ax * vy - ay * vx) * s)
end

--- Some unit vector perpendicular to the unit vector a.
-- @tparam ik.vec3 a
-- @tparam[opt] ik.vec3 out written and returned instead of a new vector
-- @treturn ik.vec3
function motion.perpendicular(a, out)
  local other = abs(a.x) < 0.57735 and X or (abs(a.y) < 0.57735 and Y) or Z
  out = a:cross(other, out)
  return out:normalized(out)
end

return motion
