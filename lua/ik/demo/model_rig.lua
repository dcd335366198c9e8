-- The rig script of `ikrig view --model FILE` (the scene ik.demo.model): the model's
-- humanoid rig from its bone map, built once (in `state`, so a reload keeps it), run
-- every frame from the rest pose (nothing animates the model).
-- luacheck: globals ik scene state update

local rigs = require("ik.rigs")

local p = scene.params.model
local nodes = scene.nodes

local function make()
  return rigs.humanoid{
    skeleton = scene.skeletons.model, map = p.map,
    model = { vertex_bounds = p.vertex_bounds, look_offset = p.look_offset },
    targets = { right_hand = nodes.right_hand_target, left_hand = nodes.left_hand_target,
                look = nodes.look_target },
    ground = scene.ground, reset_pose = true,
  }
end

state.body = state.body or make()

function update(dt)
  local body = state.body
  body:update(dt)
  for _, part in ipairs({ "right_arm", "left_arm", "left_leg", "right_leg" }) do
    local r = body[part]
    if r then scene.report(part, r.reached, r.distance or 0) end
  end
end
