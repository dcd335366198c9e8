-- Root rig: the hips follow a target that slides one metre and turns a quarter in half
-- a second, then stops: they ease after it and settle, the same way whatever the frame
-- rate.
--   scripts/env lua5.4 lua/examples/root.lua
local ik = require("ik")
local root = require("ik.rigs.root")

local function target_at(t)
  local s = math.min(t / 0.5, 1)
  return { s, 1, 0 }, ik.quat.axis_angle({ 0, 1, 0 }, s * math.pi / 2)
end

local function run(hz)
  local hips = ik.node{ position = { 0, 1, 0 } }
  local target = ik.node{ position = { 0, 1, 0 } }
  local rig = root.new{ hips = hips, target = target, smooth_time = 0.1 }
  local rows = {}
  for frame = 1, hz do
    local position, rotation = target_at(frame / hz)
    target:set_position(position)
    target:set_rotation(rotation)
    rig:update(1 / hz)
    if frame % (hz / 10) == 0 then
      rows[#rows + 1] = string.format("x %.4f turned %5.2f deg", hips:get_position().x,
        math.deg(hips:get_rotation():angle_to(ik.quat())))
    end
  end
  return rows
end

local at30, at60 = run(30), run(60)
print("time    target x   at 30 Hz                      at 60 Hz")
for i = 1, #at60 do
  print(string.format("%.1f s   %.2f       %s    %s", i / 10, target_at(i / 10)[1], at30[i], at60[i]))
end
