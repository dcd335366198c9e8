-- Leg rig: two legs and a pelvis over a step. The animation stands the character on
-- flat ground; the right foot is over a step about 10 cm lower (tilted 10 degrees) and
-- the left one over a 5 cm bump. The pelvis drops so the right foot reaches down, the
-- left knee bends to stand on the bump, and the right foot takes the tilt.
--   scripts/env lua5.4 lua/examples/leg.lua
local ik = require("ik")
local rigs = require("ik.rigs")
local leg = require("ik.rigs.leg")

local specs = { { name = "hips", position = { 0, 1, 0 } } }
for _, side in ipairs{ "l", "r" } do
  local x = side == "l" and 0.1 or -0.1
  specs[#specs + 1] = { name = side .. "_thigh", parent = "hips", position = { x, -0.05, 0 } }
  specs[#specs + 1] = { name = side .. "_shin", parent = side .. "_thigh", position = { 0, -0.44, 0.03 } }
  specs[#specs + 1] = { name = side .. "_foot", parent = side .. "_shin", position = { 0, -0.43, -0.03 } }
end
local sk = ik.skeleton(specs)

-- the ground: y = 0.05 where x > 0 (under the left foot), a step down to y = -0.12 where
-- x < 0, with the lower part tilted 10 degrees
local tilt = math.rad(10)
local ground = ik.ground.custom(function(origin, direction, max_distance)
  if direction.y >= 0 then return false end
  local point, normal
  if origin.x > 0 then
    point, normal = { 0, 0.05, 0 }, ik.vec3(0, 1, 0)
  else
    point, normal = { 0, -0.12, 0 }, ik.vec3(math.sin(tilt), math.cos(tilt), 0)
  end
  local t = (ik.vec3(point) - origin):dot(normal) / direction:dot(normal)
  if t < 0 or t > max_distance then return false end
  return true, origin + direction * t, normal
end)

local function leg_rig(side)
  return leg.new{
    upper = sk:bone(side .. "_thigh"), lower = sk:bone(side .. "_shin"), foot = sk:bone(side .. "_foot"),
    ground = ground, foot_offset = 0.08, reset_pose = true, -- nothing animates these bones here
    pole = ik.node{ position = { side == "l" and 0.1 or -0.1, -0.5, 1 }, parent = sk:bone("hips") },
  }
end
local left, right = leg_rig("l"), leg_rig("r")
local pelvis = leg.pelvis{ hips = sk:bone("hips"), legs = { left, right }, reset_pose = true }
local set = rigs.set{ left, right, pelvis } -- the set runs the pelvis first

local function show(frame)
  local l, r = sk:bone("l_foot"):get_position(), sk:bone("r_foot"):get_position()
  local up = sk:bone("r_foot"):get_rotation() * ik.vec3(0, 1, 0)
  print(string.format("%5d  pelvis %6.3f   left foot y %6.3f   right foot y %6.3f (up %5.2f, %5.2f, %5.2f)",
    frame, pelvis.offset, l.y, r.y, up.x, up.y, up.z))
end

-- the ankles end 0.08 from the ground along its normal: the left one at y = 0.13, the
-- right one, over the tilted part at y = -0.102, at y = -0.102 + 0.08 / cos(10 deg) = -0.021
print("frame")
for frame = 1, 30 do
  set:update(1 / 60)
  if frame == 1 or frame % 10 == 0 then show(frame) end
end
