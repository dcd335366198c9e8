--- The body rig's torso: the body's heading, the hips placed under the head (crouching
-- as it comes down, leaning as it goes forward, kept where the planted legs and the
-- spine reach), the chest turned towards reaching hands, and the spine and neck solved
-- so that the head bone lands on its target. Part of `ik.rigs.body`; see docs/body.md.
-- @module ik.rigs.body.torso

local ik = require("ik")
local motion = require("ik.rigs.motion")

local abs, atan2, max, min, sqrt = math.abs, math.atan2 or math.atan, math.max, math.min,
    math.sqrt
local wrap_angle = motion.wrap_angle

local torso = {}

-- Share of the spine's lean the hips take (the rest bends the spine).
local HIP_TILT = 0.4
-- How far back the hips go for each metre the spine must shorten.
local LEAN = 1.0
-- The passes that keep the hips where the spine and the planted legs reach.
local REACH_PASSES = 8
-- Slack kept off full stretch: the spine a hair short, so the head is reached.
local SPINE_REACH = 1 - 1e-4
local LEG_REACH = 1 - 1e-7

local Y, Z = ik.vec3(0, 1, 0), ik.vec3(0, 0, 1)

local function pos(t) return ik.vec3(t:get_position()) end

--- Measures what the torso needs from the rest pose, into the body `self`.
-- @tparam table self the body rig under construction
function torso.init(self)
  local b = self.bones
  local list, at = {}, b.head.parent
  while at and at ~= b.hips do
    table.insert(list, 1, at)
    at = at.parent
  end
  if at ~= b.hips then error("ik.rigs.body: the head does not hang from the hips", 4) end
  list[#list + 1] = b.head
  self._spine_bones = list
  local length = 0
  for i = 2, #list do length = length + (pos(list[i]) - pos(list[i - 1])):length() end
  self._spine_length = length
  local hips, head = pos(b.hips), pos(b.head)
  self._hips_rest, self._hips_rest_rot = hips, ik.quat(b.hips:get_rotation())
  self._hips_rest_inv = self._hips_rest_rot:inverse()
  self._head_rot_offset = self.frame:inverse() * ik.quat(b.head:get_rotation())
  self._spine_root_offset = pos(list[1]) - hips
  self._chest_offset = pos(b.upperChest or b.chest or b.spine) - hips
  local o = head - hips
  self._lean_f, self._lean_u, self._lean_l = o:dot(self.forward), o:dot(self.up), o:dot(self.left)
  self._lean_r = sqrt(self._lean_f ^ 2 + self._lean_u ^ 2)
  self._lean_b0 = atan2(self._lean_f, self._lean_u)
  self._hips_height = hips:dot(self.up) - self.sole_height
  self._head_height = head:dot(self.up) - self.sole_height
  self._head_from_feet = head - self.feet_mid -- the standing head from the feet's midpoint
  -- the spine bends forward, like a back rounding, towards a point ahead of the chest
  self._spine_pole = ik.pole{ position = { 0, 0, 0 } }
  self.spine = ik.chain{ bones = list, solver = "fabrik", iterations = 20, tolerance = 1e-4,
                         mode = "plain", deterministic = true }
  self._pole_offset = (pos(b.chest or list[math.max(1, #list - 2)]) - hips) + self.forward * 0.5
  -- scratch
  self._tv, self._tq, self._tq2 = ik.vec3(), ik.quat(), ik.quat()
  self._p, self._j, self._d = ik.vec3(), ik.vec3(), ik.vec3()
  self._hips_rot, self._yaw_q, self._tilt_q = ik.quat(), ik.quat(), ik.quat()
  self._head_goal, self._head_q = ik.vec3(), ik.quat()
  self.yaw, self._yaw_rate, self._yaw_goal = 0, 0, nil
end

--- The heading the head target asks for (radians about up from the rest forward), or
-- nil when it says none: its forward, helped by its up when it looks down or up.
-- @tparam table self
-- @tparam ik.quat q the head target's rotation (read as the frame: +Z forward)
-- @treturn ?number
function torso.head_yaw(self, q)
  local fx, fy, fz = q:rotate(Z, self._tv):unpack()
  local u = q:rotate(Y, self._tv)
  local ux, uz = u.x, u.z
  local up, fwd, left = self.up, self.forward, self.left
  -- forward over the ground; looking down the up vector leans forward, looking up back
  local uy = up.y
  local dx, dz = fx - ux * fy * uy, fz - uz * fy * uy
  local df, dl = dx * fwd.x + dz * fwd.z, dx * left.x + dz * left.z
  if df * df + dl * dl < 1e-8 then return nil end
  return atan2(dl, df)
end

--- Moves the body's heading towards `goal` (nil: keeps the last) through a critically
-- damped spring, unwrapped so that a full turn stays a turn.
function torso.turn(self, goal, dt)
  if goal == nil then goal = self._yaw_goal or self.yaw end
  if self._yaw_goal == nil then
    self._yaw_goal, self.yaw, self._yaw_rate = goal, goal, 0
    return
  end
  goal = self._yaw_goal + wrap_angle(goal - self._yaw_goal)
  self.yaw, self._yaw_rate =
    motion.spring(self.yaw, self._yaw_rate, self._yaw_goal, goal, self._turn_omega, dt)
  self._yaw_goal = goal
end

-- World rotation about up by the body's yaw, into out.
local function yaw_rotation(self, out)
  return ik.quat.axis_angle(self.up, self.yaw, out)
end

--- Where the head stands when nothing moves it: over the feet's midpoint.
-- @tparam table self
-- @tparam ik.vec3 mid the planted feet's midpoint (ground)
-- @tparam ik.vec3 out
function torso.standing_head(self, mid, out)
  local q = yaw_rotation(self, self._yaw_q)
  return q:rotate(self._head_from_feet, out):add(mid, out)
end

-- Moves p so that point p + off lies within `reach` of `goal`: by the excess, along the line.
local function within(p, off, goal, reach, scratch)
  local j = p:add(off, scratch)
  local d = goal:sub(j, j)
  local len = d:length()
  if len > reach then p:add(d:scale((len - reach) / len, d), p) end
end

--- Places the hips for this frame and returns their position (self._p) and rotation
-- (self._hips_rot): under the head goal `hd` at the crouch its height asks for, leaning
-- forward as it comes down, then kept where the spine reaches the head and the planted
-- legs reach their feet (`ankles`: list of {ik.vec3 ankle goal, ik.vec3 hip joint
-- offset from the hips at rest, reach}, or empty). `pull` moves them first: towards the
-- hips target (`hips`, `hips_w`; `hips_rot`, `hips_rw`: a rotation already in the
-- hips' own terms) and so that the chest goes towards the chest target (`chest`,
-- `chest_w`).
function torso.place_hips(self, hd, ground_y, ankles, pull)
  local up = self.up
  local drop = max(0, ground_y + self._head_height - hd:dot(up))
  local hy = ground_y + max(self._hips_height * 0.35, self._hips_height - self.crouch * drop)
  local v = hd:dot(up) - hy
  -- the hips go back by what the spine must shorten, the head coming down further than
  -- they did: a lean, the spine rounding for the rest
  local back = max(0, self._lean_u - v) * LEAN
  local lean = atan2(back, max(v, 1e-6))
  local yq = yaw_rotation(self, self._yaw_q)
  local f = yq:rotate(self.forward, self._d)
  local fx, fz = f.x, f.z
  local fwd = self._lean_f + back
  local l = yq:rotate(self.left, self._d)
  local p = self._p
  p:set(hd.x - fx * fwd - l.x * self._lean_l, hy, hd.z - fz * fwd - l.z * self._lean_l)
  -- hips: the body's heading, tilted forward by a share of the lean
  local tilt = ik.quat.axis_angle(self.left, lean * HIP_TILT, self._tilt_q)
  local hq = yq:mul(tilt, self._hips_rot):mul(self._hips_rest_rot, self._hips_rot)
  if pull.hips_rot and pull.hips_rw > 0 then hq = hq:slerp(pull.hips_rot, pull.hips_rw, hq) end
  if pull.hips and pull.hips_w > 0 then p = p:lerp(pull.hips, pull.hips_w, p) end
  if pull.chest and pull.chest_w > 0 then
    local c = hq:mul(self._hips_rest_inv, self._tq):rotate(self._chest_offset, self._j):add(p, self._j)
    p:add(pull.chest:sub(c, self._j):scale(pull.chest_w, self._j), p)
  end
  local root_off = hq:mul(self._hips_rest_inv, self._tq):rotate(self._spine_root_offset, self._j)
  local spine_reach = self._spine_length * SPINE_REACH
  local rel = self._tq
  for _ = 1, REACH_PASSES do
    within(p, root_off, hd, spine_reach, self._tv)
    for _, a in ipairs(ankles) do
      local off = rel:rotate(a[2], a[4])
      within(p, off, a[1], a[3] * LEG_REACH, self._tv)
    end
  end
  return p, hq
end

--- Turns the chest about up by `angle` (radians), before the spine is solved.
function torso.twist_chest(self, angle, weight)
  local bone = self.bones.chest or self.bones.spine
  if not bone or abs(angle) < 1e-12 then return end
  local q = ik.quat.axis_angle(self.up, angle * weight, self._tq2)
  bone:set_rotation(q:mul(bone:get_rotation(self._tq), q))
end

--- Solves the spine and neck so that the head bone reaches `goal` (weight w), the spine
-- bending towards the front, then turns the head towards `rot` (weight rw).
-- @treturn boolean reached
-- @treturn number distance
function torso.solve_spine(self, goal, w, rot, rw)
  local chain = self.spine
  local hips = self.bones.hips
  local hq = hips:get_rotation(self._tq)
  local at = hips:get_position(self._tv)
  local rel = hq:mul(self._hips_rest_inv, hq)
  self._spine_pole.position = rel:rotate(self._pole_offset, self._j):add(at, self._j)
  chain.pole = self._spine_pole
  chain.weight = min(1, max(0, w))
  local reached, distance = false, 0
  if w > 0 then
    -- plain sweeps are a continuous function of the goal; refined mode's hand-over to its
    -- polish is not (the spine turned 14 degrees in a frame), so it only finishes what
    -- the sweeps leave short, as near full stretch, where the spine has little freedom
    reached, distance = chain:solve(goal)
    if not reached then
      chain.mode = "refined"
      reached, distance = chain:solve(goal)
      chain.mode = "plain"
    end
  end
  if rot and rw > 0 then
    local head = self.bones.head
    local g = rot:mul(self._head_rot_offset, self._head_q)
    local q = head:get_rotation(self._tq)
    head:set_rotation(q:slerp(g, rw, q))
  end
  return reached, distance
end

return torso
