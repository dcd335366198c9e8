-- Arm rig: a hand follows a target moving in a circle in front of the body, the elbow
-- bending down and back towards a pole parented to the chest.
--   scripts/env lua5.4 lua/examples/arm.lua
local ik = require("ik")
local arm = require("ik.rigs.arm")

local sk = ik.skeleton{
  { name = "chest", position = { 0, 1.4, 0 } },
  { name = "upper", parent = "chest", position = { 0.2, 0, 0 } },
  { name = "lower", parent = "upper", position = { 0.3, 0, 0 } },
  { name = "hand", parent = "lower", position = { 0.25, 0, 0 } },
}
local target = ik.node{}
local rig = arm.new{
  upper = sk:bone("upper"), lower = sk:bone("lower"), hand = sk:bone("hand"),
  target = target,
  pole = ik.node{ position = { 0.3, -0.4, -0.6 }, parent = sk:bone("chest") },
}

print("frame  target                  hand                    elbow                   reached")
local dt = 1 / 60
for frame = 0, 120, 15 do
  local a = 2 * math.pi * frame / 120
  target:set_position{ 0.35 + 0.1 * math.cos(a), 1.3 + 0.1 * math.sin(a), 0.3 }
  local reached = rig:update(dt)
  local t, h, e = target:get_position(), sk:bone("hand"):get_position(), sk:bone("lower"):get_position()
  print(string.format("%5d  (%5.2f, %5.2f, %5.2f)    (%5.2f, %5.2f, %5.2f)    (%5.2f, %5.2f, %5.2f)    %s",
    frame, t.x, t.y, t.z, h.x, h.y, h.z, e.x, e.y, e.z, tostring(reached)))
end
