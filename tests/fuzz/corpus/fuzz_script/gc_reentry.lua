local node = ik.node{ position = {0, 1, 0} }
local c = ik.chain{ positions = { {0, 0, 0}, {0, 1, 0}, {0, 2, 0} }, target = node }
setmetatable(state, { __gc = function() c:close() end })
function update()
  collectgarbage("count")
  local g = ik.ground.custom(function() node:close(); return 1, {0, 1, 0} end)
  pcall(g.raycast, g, {0, 1, 0}, {0, -1, 0}, 5)
  pcall(c.solve, c)
end
