-- Look rig: the head, neck and upper spine follow a target that walks round the
-- character. In front it is looked at exactly; behind, the head stays over the
-- shoulder it was looking over, at its limit, instead of flipping across.
--   scripts/env lua5.4 lua/examples/look.lua
local ik = require("ik")
local look = require("ik.rigs.look")

local sk = ik.skeleton{
  { name = "spine", position = { 0, 1.3, 0 } },
  { name = "neck", parent = "spine", position = { 0, 0.25, 0 } },
  { name = "head", parent = "neck", position = { 0, 0.1, 0 } },
}
local target = ik.node{}
local rig = look.new{
  spine = { sk:bone("spine") }, neck = sk:bone("neck"), head = sk:bone("head"),
  target = target, reset_pose = true, -- nothing animates these bones here
}

local atan2 = math.atan2 or math.atan
print("target at   head turned   on target   limited")
for degrees = 0, 360, 30 do
  local a = math.rad(degrees)
  -- walking round at 1 degree a frame
  for step = 1, 30 do
    local b = a - math.rad(30 - step)
    target:set_position{ 2 * math.sin(b), 1.7, 2 * math.cos(b) }
    rig:update(1 / 60)
  end
  local head = sk:bone("head")
  local f = head:get_rotation() * ik.vec3(0, 0, 1)
  local yaw = math.deg(atan2(f.x, f.z))
  local on = f:dot((target:get_position() - head:get_position()):normalized()) > math.cos(1e-3)
  print(string.format("%6d      %8.1f      %-9s   %s", degrees <= 180 and degrees or degrees - 360, yaw,
    tostring(on), tostring(rig.clamped)))
end
