-- The body scene's rig script (ik.demo.body_scene; see ik.runtime: its top level runs on
-- every (re)load with `ik`, `scene` and `state`; it defines update(dt)): one
-- `ik.rigs.body` on the humanoid, following the head and hand targets. The skeleton is
-- not animated, so the rig starts each frame from the rest pose (`reset_pose`).
--
-- The rig lives in `state`, so a reload keeps where its feet stand; edit the numbers
-- below and save to see them change (`ikrig watch --scene ik.demo.body_scene`).
-- luacheck: globals ik scene state update

local rigs = require("ik.rigs")

local STEP_TIME = 0.35 -- s a step takes
local CROUCH = 0.75 -- share of the head's drop the hips take


local nodes = scene.nodes

state.body = state.body or rigs.body{
  skeleton = scene.skeletons.humanoid, map = scene.params.humanoid.map, ground = scene.ground,
  foot_offset = scene.params.humanoid.foot_offset, reset_pose = true,
  targets = { head = nodes.head_target, left_hand = nodes.left_hand_target,
              right_hand = nodes.right_hand_target },
}
state.body.step_time, state.body.crouch = STEP_TIME, CROUCH -- a reload takes new numbers at once

local body = state.body
local bones = body.bones
local at, goal = ik.vec3(), ik.vec3()
local function miss(bone, node)
  return bone:get_position(at):sub(node:get_position(goal), at):length()
end

function update(dt)
  body:update(dt)
  local d = miss(bones.head, nodes.head_target)
  scene.report("head", d <= 1e-3, d)
  d = miss(bones.leftHand, nodes.left_hand_target)
  scene.report("left_hand", body.reached.left_hand, d)
  d = miss(bones.rightHand, nodes.right_hand_target)
  scene.report("right_hand", body.reached.right_hand, d)
  scene.report("left_leg", body.legs[1].reached, body.legs[1].distance or 0)
  scene.report("right_leg", body.legs[2].reached, body.legs[2].distance or 0)
end
