-- Scripted tracker paths standing for a VR session, for the body rig's specs and bench:
-- head and two hands (positions and rotations) as functions of time, in a character's
-- own frame (measured by ik.rigs.body), scaled to its size. The head tracker stands 5% of
-- the body's height below the character's rest head (a user a little shorter than the
-- avatar, as VR set-ups advise): at the rest head's height the legs would need to be
-- straight under the hips.
local ik = require("ik")

local P = {}

local pi, sin, cos, min, max = math.pi, math.sin, math.cos, math.min, math.max

local function ease(x)
  x = max(0, min(1, x))
  return x * x * (3 - 2 * x)
end

-- 0 -> 1 over [a, b], 1 -> 0 over [c, d]
local function there_and_back(t, a, b, c, d)
  return ease((t - a) / (b - a)) * (1 - ease((t - c) / (d - c)))
end

--- The paths, each { name, duration (s), at(t) -> pose } where pose has, in the body
-- frame (x left, y up, z forward, metres, from the rest feet's midpoint), head, left,
-- right ({x, y, z}) and head_yaw, head_pitch, yaw (radians: the hands turn with yaw).
P.names = { "stand", "reach overhead", "reach to the floor", "reach behind", "turn 360", "walk 2 m",
            "crouch", "look around" }

--- Makes the paths for a rig (its rest measurements).
-- @tparam table body an ik.rigs.body
-- @treturn table name -> { duration, at = function(t) }
function P.for_body(body)
  local b = body.bones
  local frame_inv = body.frame:inverse()
  local mid = body.feet_mid
  local function local_of(bone)
    local p = ik.vec3(bone:get_position()) - mid
    return { p:dot(body.left), p:dot(body.up), p:dot(body.forward) }
  end
  local H = body.height
  local head0 = local_of(b.head)
  head0[2] = head0[2] - 0.05 * H
  local ls, rs = local_of(b.leftUpperArm), local_of(b.rightUpperArm)
  local reach = body.arms.left.reach
  -- hands held in front of the chest
  local function hold(s, side)
    local sign = side == "left" and 1 or -1
    return { s[1] - sign * 0.15 * reach, s[2] - 0.45 * reach, s[3] + 0.55 * reach }
  end
  local lh0, rh0 = hold(ls, "left"), hold(rs, "right")
  local function pose(head, left, right, yaw, head_yaw, head_pitch)
    return { head = head, left = left, right = right, yaw = yaw or 0, head_yaw = head_yaw or 0,
             head_pitch = head_pitch or 0 }
  end
  local function mix(a, b2, k)
    return { a[1] + (b2[1] - a[1]) * k, a[2] + (b2[2] - a[2]) * k, a[3] + (b2[3] - a[3]) * k }
  end
  local paths = {}
  paths["stand"] = { duration = 2, at = function() return pose(head0, lh0, rh0) end }
  paths["reach overhead"] = { duration = 4, at = function(t)
    local k = there_and_back(t, 0.5, 1.5, 2.5, 3.5)
    local lu = { ls[1] + 0.1 * reach, ls[2] + 0.85 * reach, ls[3] + 0.25 * reach }
    local ru = { rs[1] - 0.1 * reach, rs[2] + 0.85 * reach, rs[3] + 0.25 * reach }
    return pose(head0, mix(lh0, lu, k), mix(rh0, ru, k), 0, 0, 0.4 * k)
  end }
  paths["reach to the floor"] = { duration = 5, at = function(t)
    local k = there_and_back(t, 0.5, 2, 3, 4.5)
    local low = { head0[1], head0[2] - 0.42 * H, head0[3] + 0.12 * H }
    local lf = { 0.12 * H, 0.08 * H, 0.3 * H }
    local rf = { -0.12 * H, 0.08 * H, 0.3 * H }
    return pose(mix(head0, low, k), mix(lh0, lf, k), mix(rh0, rf, k), 0, 0, -0.9 * k)
  end }
  paths["reach behind"] = { duration = 4, at = function(t)
    local k = there_and_back(t, 0.5, 1.5, 2.5, 3.5)
    local back = { rs[1] - 0.45 * reach, rs[2] - 0.2 * reach, rs[3] - 0.55 * reach }
    return pose(head0, lh0, mix(rh0, back, k), 0, -0.6 * k, 0)
  end }
  paths["turn 360"] = { duration = 8, at = function(t)
    local yaw = 2 * pi * ease((t - 0.5) / 6.5)
    return pose(head0, lh0, rh0, yaw, yaw, 0)
  end }
  paths["walk 2 m"] = { duration = 6, at = function(t)
    -- 2 m forward at up to 0.8 m/s, easing in and out, bobbing a little
    local s = 2 * ease((t - 0.5) / 4)
    local bob = 0.01 * sin(2 * pi * 1.8 * t) * there_and_back(t, 0.5, 1, 4, 4.5)
    local function ahead(p) return { p[1], p[2] + bob, p[3] + s } end
    return pose(ahead(head0), ahead(lh0), ahead(rh0))
  end }
  paths["crouch"] = { duration = 5, at = function(t)
    local k = there_and_back(t, 0.5, 2, 3, 4.5)
    local low = { head0[1], head0[2] - 0.35 * H, head0[3] + 0.05 * H }
    local function lower(p) return { p[1], p[2] - 0.3 * H * k, p[3] + 0.05 * H * k } end
    return pose(mix(head0, low, k), lower(lh0), lower(rh0))
  end }
  paths["look around"] = { duration = 6, at = function(t)
    local k = there_and_back(t, 0.3, 1, 5, 5.7)
    return pose(head0, lh0, rh0, 0, 1.0 * sin(2 * pi * t / 5) * k, 0.4 * sin(2 * pi * t / 2.5) * k)
  end }
  -- pose -> world: writes the three tracker nodes
  local function world(p, out)
    return out:set(mid):add(body.left * p[1], out):add(body.up * p[2], out):add(body.forward * p[3], out)
  end
  local function turn_about_head(p, yaw)
    local hx, hz = head0[1], head0[3]
    local x, z = p[1] - hx, p[3] - hz
    local c, s = cos(yaw), sin(yaw)
    -- positive yaw turns forward (+z) towards left (+x)
    return { hx + x * c + z * s, p[2], hz - x * s + z * c }
  end
  local tmp = ik.vec3()
  --- Sets the trackers (nodes head, left, right) to the pose at t of `name`.
  function paths.apply(name, t, nodes)
    local p = paths[name].at(t)
    nodes.head:set_position(world(p.head, tmp))
    nodes.left:set_position(world(turn_about_head(p.left, p.yaw), tmp))
    nodes.right:set_position(world(turn_about_head(p.right, p.yaw), tmp))
    local up = body.up
    local yq = ik.quat.axis_angle(up, p.yaw)
    local hq = ik.quat.axis_angle(up, p.head_yaw) * ik.quat.axis_angle(body.left, -p.head_pitch) * body.frame
    nodes.head:set_rotation(hq)
    nodes.left:set_rotation(yq * body.frame)
    nodes.right:set_rotation(yq * body.frame)
  end
  paths._frame_inv = frame_inv
  return paths
end

return P
