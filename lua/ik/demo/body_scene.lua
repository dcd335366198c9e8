--- A scene for `ik.rigs.body`: the built-in humanoid on flat ground, driven by three
-- targets, head and hands, as a VR user's headset and controllers drive an avatar.
--
--   ikrig view --scene ik.demo.body_scene     (drag the targets)
--   ikrig run --scene ik.demo.body_scene --frames 300
--
-- Left alone, the targets play a session over a 24 s loop: standing, walking 1.5 m
-- ahead (+X) and back, reaching overhead, crouching to the floor, turning round,
-- looking about. Dragged in the live view, a target stays where it was put (the view
-- pins it after `advance`); the head's session carries on from where it was dragged,
-- and the hands keep their place about the head, so dragging the head away walks the
-- body after it, and lowering it crouches. The rig script is
-- `ik.demo.body`. It keeps the scene contract of `ik.demo.scene` (see its top).
-- @module ik.demo.body_scene

local ik = require("ik")

local M = {}

--- The rig scripts that drive the scene when no script is given.
M.scripts = { "ik.demo.body" }

local sin, pi, max, min = math.sin, math.pi, math.max, math.min

local function ease(x)
  x = max(0, min(1, x))
  return x * x * (3 - 2 * x)
end

-- 0 -> 1 over [a, b], back to 0 over [c, d]
local function bump(t, a, b, c, d)
  return ease((t - a) / (b - a)) * (1 - ease((t - c) / (d - c)))
end

local LOOP = 24 -- seconds
local HEAD_DROP = 0.08 -- the head target below the character's rest head (a user a little shorter)

-- The scripted session at t (seconds into the loop): the head's offset from its rest
-- place (forward, up, left; metres in the character's frame), the heading (radians,
-- turning left), the head's pitch (down > 0) and the hands' offsets from where they are
-- held (forward, up, out).
local function session(t)
  t = t % LOOP
  local walk = 1.5 * (ease((t - 1) / 3) - ease((t - 14) / 3))
  local crouch = bump(t, 8, 9.5, 10.5, 12)
  local overhead = bump(t, 5, 6, 6.8, 7.8)
  local yaw = pi * (ease((t - 12.5) / 2.5) - ease((t - 17) / 2.5))
  local look = bump(t, 19, 19.5, 23, 23.5) * 0.9 * sin(2 * pi * (t - 19) / 4)
  return {
    forward = walk + 0.12 * crouch, up = -0.5 * crouch, yaw = yaw + look,
    pitch = 0.8 * crouch - 0.3 * overhead,
    hand_forward = 0.05 * overhead, hand_up = 0.62 * overhead - 0.15 * crouch,
    hand_out = 0.05 * overhead, body_yaw = yaw,
  }
end

--- A new scene (the scene contract of `ik.demo.scene`).
-- @treturn table
function M.new()
  local demo = require("ik.demo.scene").new()
  local sk = demo.skeletons.humanoid
  -- stand it at the origin on the floor (soles at y = 0), facing +X as in the demo
  local hips = sk:bone("hips")
  local ankle = ik.vec3(sk:bone("l_foot"):get_position())
  local foot_offset = demo.params.humanoid.foot_offset
  local at = ik.vec3(hips:get_position())
  hips:set_position({ 0, at.y - ankle.y + foot_offset, 0 })
  local head_rest = ik.vec3(sk:bone("head"):get_position())
  local forward, left, up = ik.vec3(1, 0, 0), ik.vec3(0, 0, -1), ik.vec3(0, 1, 0)
  local frame = ik.quat.axis_angle(up, pi / 2) -- the character's frame: +Z to forward (+X)
  local hold = {}
  for _, side in ipairs({ "l", "r" }) do
    local s = ik.vec3(sk:bone(side .. "_upper_arm"):get_position())
    local sign = side == "l" and 1 or -1
    hold[side] = s + forward * 0.32 - up * 0.25 - left * (sign * 0.08) - head_rest
    hold[side .. "_sign"] = sign
  end
  local S = 6
  local scene = {
    name = "a body following head and hands",
    skeletons = { humanoid = sk },
    nodes = {
      head_target = ik.node{ position = head_rest - up * HEAD_DROP, rotation = frame },
      left_hand_target = ik.node{ position = head_rest + hold.l, rotation = frame },
      right_hand_target = ik.node{ position = head_rest + hold.r, rotation = frame },
    },
    ground = ik.ground.plane(),
    ground_mesh = { vertices = { { -S, 0, -S }, { S, 0, -S }, { S, 0, S }, { -S, 0, S } },
                    triangles = { { 1, 3, 2 }, { 1, 4, 3 } } },
    targets = { "head_target", "left_hand_target", "right_hand_target" },
    poles = {},
    trails = { "humanoid.l_foot", "humanoid.r_foot" },
    time = 0,
    params = { humanoid = { foot_offset = foot_offset, map = demo.params.humanoid.map } },
  }

  -- The head goes along the session (unless dragged: the view puts it back); the hands
  -- are held about where the head is now, turned with the body, reaching as the session
  -- says. Allocates nothing: it writes into these.
  local p, h, q, q2 = ik.vec3(), ik.vec3(), ik.quat(), ik.quat()
  local fw, lw, tmp = ik.vec3(), ik.vec3(), ik.vec3()
  local head_home = head_rest - up * HEAD_DROP
  -- where advance last put the head, and how far it has been moved from there since
  -- (dragged: the view pins a dragged target after advance), so that the hands are held
  -- about the head where it is, not where the session would have it
  local head_set, head_moved = ik.vec3(head_home), ik.vec3()
  function scene:advance(dt)
    self.time = self.time + dt
    local s = session(self.time)
    local n = self.nodes
    head_moved:add(n.head_target:get_position(h):sub(head_set, h), head_moved)
    p:set(head_home):add(forward:scale(s.forward, fw), p):add(up:scale(s.up, lw), p):add(head_moved, p)
    n.head_target:set_position(p)
    n.head_target:get_position(head_set)
    ik.quat.axis_angle(up, s.yaw, q)
    n.head_target:set_rotation(q:mul(ik.quat.axis_angle(left, -s.pitch, q2), q2):mul(frame, q2))
    n.head_target:get_position(h) -- where it is now: dragged or on its path
    local yq = ik.quat.axis_angle(up, s.body_yaw, q)
    yq:rotate(forward, fw)
    yq:rotate(left, lw)
    for _, side in ipairs({ "l", "r" }) do
      local o = hold[side]
      local sign = hold[side .. "_sign"]
      -- the hold offset (forward, up, left parts) turned by the body's heading
      local of, ou = o:dot(forward) + s.hand_forward, o:dot(up) + s.hand_up
      local ol = o:dot(left) + sign * s.hand_out
      p:set(h):add(fw:scale(of, tmp), p):add(up:scale(ou, tmp), p):add(lw:scale(ol, tmp), p)
      local node = side == "l" and n.left_hand_target or n.right_hand_target
      node:set_position(p)
      node:set_rotation(yq:mul(frame, q2))
    end
  end

  return scene
end

return M
