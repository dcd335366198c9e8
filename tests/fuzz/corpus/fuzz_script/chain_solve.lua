state.c = state.c or ik.chain{ positions = { {0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0} }, solver = "dls",
                               iterations = 10, tolerance = 1e-3 }
state.c:set_constraint(2, ik.cone{ angle = math.rad(60) })
function update(dt)
  state.t = (state.t or 0) + dt
  local ok, d, it = state.c:solve(ik.vec3(1.5, math.sin(state.t), 0))
  scene.report("c", ok, d, it, state.c)
  local g = scene.ground
  if g then g:raycast({0, 5, 0}, {0, -1, 0}, 10) end
end
