-- Body rig: a whole humanoid from three trackers, as a VR headset and two controllers
-- drive an avatar. The head walks 1 m forward and comes down 40 cm, the hands held in
-- front; the feet step after the body, the hips crouch under the head.
--   scripts/env lua5.4 lua/examples/body.lua
local ik = require("ik")
local rigs = require("ik.rigs")

-- the built-in demo's humanoid, standing at the origin facing +X
local sk = require("ik.demo.body_scene").new().skeletons.humanoid
local map = {
  hips = "hips", spine = "spine", chest = "chest", neck = "neck", head = "head",
  leftShoulder = "l_shoulder", leftUpperArm = "l_upper_arm", leftLowerArm = "l_lower_arm",
  leftHand = "l_hand", rightShoulder = "r_shoulder", rightUpperArm = "r_upper_arm",
  rightLowerArm = "r_lower_arm", rightHand = "r_hand", leftUpperLeg = "l_upper_leg",
  leftLowerLeg = "l_lower_leg", leftFoot = "l_foot", rightUpperLeg = "r_upper_leg",
  rightLowerLeg = "r_lower_leg", rightFoot = "r_foot",
}
local head, left, right = ik.node{}, ik.node{}, ik.node{}
local body = rigs.body{ skeleton = sk, map = map, foot_offset = 0.08, reset_pose = true,
                        targets = { head = head, left_hand = left, right_hand = right } }
-- a tracker turned as the character stands (its frame) leaves its bone as at rest
for _, n in ipairs({ head, left, right }) do n:set_rotation(body.frame) end
local start = ik.vec3(sk:bone("head"):get_position()) - body.up * 0.08

print("  time  head target              head miss   hips height  steps  both feet down")
local dt = 1 / 60
for frame = 0, 360 do
  local t = frame * dt
  local walk = math.min(1, t / 2)
  local crouch = math.max(0, math.min(1, (t - 3.5) / 1.5))
  local h = start + body.forward * walk - body.up * (0.4 * crouch)
  head:set_position(h)
  left:set_position(h + body.forward * 0.3 + body.left * 0.2 - body.up * 0.35)
  right:set_position(h + body.forward * 0.3 - body.left * 0.2 - body.up * 0.35)
  body:update(frame == 0 and 0 or dt)
  if frame % 60 == 0 then
    local miss = (ik.vec3(sk:bone("head"):get_position()) - h):length()
    print(string.format("%6.2f  (%5.2f, %5.2f, %5.2f)    %9.2e   %11.3f  %5d  %s", t, h.x, h.y, h.z, miss,
      sk:bone("hips"):get_position().y, body:step_count(), tostring(body:standing())))
  end
end
