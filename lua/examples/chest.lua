-- Chest rig: the spine leans towards a target, the bend shared by its three bones and
-- never more than 40 degrees in all.
--   scripts/env lua5.4 lua/examples/chest.lua
local ik = require("ik")
local chest = require("ik.rigs.chest")

local sk = ik.skeleton{
  { name = "spine1", position = { 0, 1, 0 } },
  { name = "spine2", parent = "spine1", position = { 0, 0.15, 0 } },
  { name = "spine3", parent = "spine2", position = { 0, 0.15, 0 } },
}
local spine = { sk:bone("spine1"), sk:bone("spine2"), sk:bone("spine3") }
local target = ik.node{}
local rig = chest.new{ spine = spine, target = target, max_angle = math.rad(40), reset_pose = true }

print("target leans   bend   per bone")
for degrees = 0, 90, 15 do
  local a = math.rad(degrees)
  target:set_position{ 0, 1 + math.cos(a), math.sin(a) } -- forward, 1 m from the spine's root
  rig:update(1 / 60)
  local shares = {}
  for i, bone in ipairs(spine) do
    shares[i] = string.format("%4.1f", math.deg(bone:get_local_rotation():angle_to(ik.quat())))
  end
  print(string.format("%8d      %5.1f   %s", degrees, math.deg(rig.angle), table.concat(shares, " ")))
end
