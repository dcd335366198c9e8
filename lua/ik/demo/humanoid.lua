-- The built-in demo's humanoid, standing on the stairs: a rig script (see ik.runtime:
-- its top level runs on every (re)load with `ik`, `scene` and `state`; it defines
-- update(dt)). Nothing animates the skeleton, so every rig starts each frame from the
-- rest pose (`reset_pose`), which stands as on flat ground, left foot forward:
--
--   chest  (200)  the spine bends a little towards the reach target;
--   pelvis (250)  the hips come down until the right foot, over the lower step, reaches it;
--   legs   (300)  each foot stands on its step, level with it, the knees bending forward
--                 (towards poles in front of them);
--   arm    (400)  the right hand reaches for the moving target, the elbow out and down;
--   look   (500)  the neck and head turn to the second target.
--
-- The rigs live in `state`, so a reload keeps them and what their springs were doing;
-- edit the numbers below and save to see them change (`ikrig watch`).
-- luacheck: globals ik scene state update

local rigs = require("ik.rigs")

local CHEST_BEND = math.rad(12) -- how far the spine leans towards the reach target, at most
local sk = scene.skeletons.humanoid
local nodes = scene.nodes
local foot_offset = scene.params.humanoid.foot_offset

local function bone(name) return sk:bone(name) end

local function make_rigs()
  local r = {}
  r.chest = rigs.chest.new{ spine = { bone("spine"), bone("chest") }, target = nodes.reach_target,
                            max_angle = CHEST_BEND, reset_pose = true }
  r.left_leg = rigs.leg.new{ upper = bone("l_upper_leg"), lower = bone("l_lower_leg"), foot = bone("l_foot"),
                             ground = scene.ground, foot_offset = foot_offset, pole = nodes.knee_pole,
                             reset_pose = true }
  r.right_leg = rigs.leg.new{ upper = bone("r_upper_leg"), lower = bone("r_lower_leg"), foot = bone("r_foot"),
                              ground = scene.ground, foot_offset = foot_offset, pole = nodes.knee_pole,
                              reset_pose = true }
  r.pelvis = rigs.leg.pelvis{ hips = bone("hips"), legs = { r.left_leg, r.right_leg }, reset_pose = true }
  r.arm = rigs.arm.new{ upper = bone("r_upper_arm"), lower = bone("r_lower_arm"), hand = bone("r_hand"),
                        target = nodes.reach_target, pole = nodes.elbow_pole, reset_pose = true }
  r.look = rigs.look.new{ neck = bone("neck"), head = bone("head"), target = nodes.look_target,
                          reset_pose = true }
  r.set = rigs.set{ r.chest, r.pelvis, r.left_leg, r.right_leg, r.arm, r.look }
  return r
end

state.rigs = state.rigs or make_rigs()
state.rigs.chest.max_angle = CHEST_BEND -- a reload with a new number takes it at once

-- How far the head's gaze passes from the look target (m): its forward axis against the
-- line to the target. Into vectors made once, so a frame allocates nothing.
local FORWARD = ik.vec3(0, 0, 1)
local to_target, head_at, forward, head_rotation = ik.vec3(), ik.vec3(), ik.vec3(), ik.quat()
local function gaze_miss(head, target)
  target:get_position(to_target):sub(head:get_position(head_at), to_target)
  head:get_rotation(head_rotation):rotate(FORWARD, forward)
  return forward:cross(to_target, forward):length()
end
local head = bone("head")

function update(dt)
  local r = state.rigs
  r.set:update(dt)
  scene.report("right_arm", r.arm.reached, r.arm.distance or 0)
  scene.report("left_leg", r.left_leg.reached, r.left_leg.distance or 0)
  scene.report("right_leg", r.right_leg.reached, r.right_leg.distance or 0)
  local miss = gaze_miss(head, nodes.look_target)
  scene.report("look", not r.look.clamped and miss < 1e-3, miss)
end
