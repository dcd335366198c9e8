local arm = require("ik.rigs.arm")
local sk = scene.skeletons.humanoid
state.rig = state.rig or arm.new{
  upper = sk:bone("r_upper_arm"), lower = sk:bone("r_lower_arm"), hand = sk:bone("r_hand"),
  target = scene.nodes.reach_target, pole = scene.nodes.elbow_pole,
}
function update(dt)
  local reached, distance = state.rig:update(dt)
  scene.report("right_arm", reached, distance)
end
function on_reload(old) state.reloads = (old.reloads or 0) + 1 end
