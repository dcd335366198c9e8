-- A six-legged robot walks across flat ground, up a 20 degree ramp and onto a plateau,
-- then turns on the spot: ik.rigs.walker on an ik.skeleton over an ik.ground.heightfield.
--
--   scripts/env lua5.4 lua/examples/walker.lua
--
-- Prints what the walker did: steps per leg, the body's height and pitch on the way,
-- and how far any planted foot slid (it should not).
local ik = require("ik")
local walker = require("ik.rigs.walker")

-- The ground: a heightfield 4 m wide (x in [-2, 2]) and 12 m long (z in [-2, 10]),
-- flat up to z = 3, a 20 degree ramp to z = 5, a plateau after.
local CELL, COLUMNS, ROWS = 0.1, 41, 121
local RAMP_START, RAMP_END, SLOPE = 3, 5, math.tan(math.rad(20))
local function ground_height(z)
  if z < RAMP_START then return 0 end
  if z < RAMP_END then return (z - RAMP_START) * SLOPE end
  return (RAMP_END - RAMP_START) * SLOPE
end
local heights = {}
for r = 0, ROWS - 1 do
  for c = 0, COLUMNS - 1 do heights[r * COLUMNS + c + 1] = ground_height(-2 + r * CELL) end
end
local ground = ik.ground.heightfield{ origin = { -2, 0, -2 }, cell_size = CELL, columns = COLUMNS,
                                      rows = ROWS, heights = heights }

-- The robot: a body 0.49 m up, three legs a side. Each leg: hip on the body, knee out
-- and up, foot out and down to 2 cm above the ground (the ankle above the sole).
local BODY_HEIGHT, FOOT_OFFSET = 0.49, 0.02
local bones = { { name = "body", position = { 0, BODY_HEIGHT, 0 } } }
local legs = {}
for _, l in ipairs({ { "l1", 1, 0.35 }, { "l2", 1, 0 }, { "l3", 1, -0.35 },
                     { "r1", -1, 0.35 }, { "r2", -1, 0 }, { "r3", -1, -0.35 } }) do
  local name, side, z = l[1], l[2], l[3]
  bones[#bones + 1] = { name = "hip_" .. name, parent = "body", position = { side * 0.25, 0, z } }
  bones[#bones + 1] = { name = "knee_" .. name, parent = "hip_" .. name, position = { side * 0.25, 0.15, 0 } }
  bones[#bones + 1] = { name = "foot_" .. name, parent = "knee_" .. name,
                        position = { side * 0.1, FOOT_OFFSET - BODY_HEIGHT - 0.15, 0 } }
  legs[#legs + 1] = { name = name, pole_offset = { side * 0.2, 0.5, 0 } }
end
local sk = ik.skeleton(bones)
for _, leg in ipairs(legs) do
  leg.hip, leg.knee = sk:bone("hip_" .. leg.name), sk:bone("knee_" .. leg.name)
  leg.foot = sk:bone("foot_" .. leg.name)
end
-- Different step distances per leg, as the idea's source suggests; the tripod gait keeps
-- the groups in turn anyway.
for i, d in ipairs({ 0.24, 0.22, 0.25, 0.23, 0.25, 0.22 }) do legs[i].step_distance = d end

local body = sk:bone("body")
local rig = walker.new{ body = body, legs = legs, ground = ground, gait = "tripod", body_height = BODY_HEIGHT,
                        foot_offset = FOOT_OFFSET, step_height = 0.15, step_time = 0.25 }

-- The host walks the body forward at 0.5 m/s for 14 s, then turns it on the spot; the
-- walker does the rest.
local dt, seconds = 1 / 60, 18
local max_slide, last = 0, {}
local lowest_pitch, top_height = 0, 0
for frame = 1, math.floor(seconds / dt + 0.5) do
  local t = frame * dt
  local p = body:get_position()
  body:set_position({ 0, p.y, 0.5 * math.min(t, 14) })
  body:set_rotation(ik.quat.axis_angle({ 0, 1, 0 }, t > 14 and (t - 14) * 0.6 or 0))
  rig:update(dt)
  lowest_pitch = math.min(lowest_pitch, rig.pitch)
  top_height = math.max(top_height, body:get_position().y)
  for i, leg in ipairs(rig.legs) do
    local f = legs[i].foot:get_position()
    if leg.planted and last[i] and last[i].planted and last[i].steps == leg.steps then
      max_slide = math.max(max_slide, (f - last[i].position):length())
    end
    last[i] = { position = f, planted = leg.planted, steps = leg.steps }
  end
end

local counts = {}
for _, leg in ipairs(rig.legs) do counts[#counts + 1] = leg.name .. " " .. leg.steps end
local p = body:get_position()
print(string.format("walked %.1f m up a %d degree ramp in %d s, then turned %.0f degrees on the spot",
  p.z, 20, seconds, math.deg((seconds - 14) * 0.6)))
print(string.format("steps: %d (%s)", rig:step_count(), table.concat(counts, ", ")))
print(string.format("body: height %.3f m at the end (plateau %.3f + %.2f), steepest pitch %.1f degrees",
  p.y, ground_height(p.z), BODY_HEIGHT, math.deg(-lowest_pitch)))
print(string.format("largest slide of a planted foot in one frame: %.2g m", max_slide))
