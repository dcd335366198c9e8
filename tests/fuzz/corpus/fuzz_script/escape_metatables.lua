local mt = getmetatable("")
if mt then mt.__index = function() return "hijacked" end; mt.__gc = print end
rawset(_G, "string", nil)
string = nil
local smt = getmetatable(ik.vec3(1, 2, 3))
if smt then smt.__index = nil; smt.__gc = function() end; smt.__add = nil end
setmetatable({}, { __gc = function() scene.skeletons = nil end })
collectgarbage()
function update() local s = ("x"):rep(3); state.s = s end
