-- reach.lua, a rig script (the format is ik.runtime's): the hand follows a target going
-- round in a circle. Run it with lua/examples/host_loop.lua --realtime and edit it: each
-- save applies at once, and the target goes on from where it was (state.t survives).
-- luacheck: globals ik scene state update on_reload
local SPEED = 2     -- radians per second
local RADIUS = 0.1

state.t = state.t or 0
-- Made once: the chain (and what its solver learned) lives on across reloads.
state.arm = state.arm or ik.chain{ bones = scene.arm, target = scene.target, pole = { 0.2, 1.5, -1 } }

function update(dt)
  state.t = state.t + SPEED * dt
  scene.target:set_position{ 0.35 + RADIUS * math.cos(state.t), 1.3 + RADIUS * math.sin(state.t), 0.3 }
  scene.reached = state.arm:solve()
end

function on_reload(old_state)
  print(("reach.lua: reloaded at t = %.2f"):format(old_state.t))
end
