-- A LÖVE-style host running rig scripts through ik.runtime: the host owns the frame loop
-- and calls rt:update(dt) from its love.update; the runtime calls the scripts and
-- reloads them when they are saved. Run headless for a fixed number of frames:
--   scripts/env lua5.4 lua/examples/host_loop.lua [--frames N] [--dt S] [--realtime] [SCRIPT...]
-- With no SCRIPT it runs lua/examples/scripts/reach.lua. --realtime paces the frames at
-- dt (by busy-waiting: plain Lua cannot sleep), so that editing and saving the script
-- while it runs shows the reload; try --frames 3600 --realtime.
-- The love.* callbacks below are those a LÖVE main.lua would define.
local ik = require("ik")
local runtime = require("ik.runtime")

local here = (debug.getinfo(1, "S").source:match("^@(.*)[/\\]") or ".")

-- Options.
local frames, dt, realtime, scripts = 180, 1 / 60, false, {}
local args = rawget(_G, "arg") or {}
if not (args[0] and args[0]:match("host_loop%.lua$")) then args = {} end -- loaded by another program
local i = 1
while i <= #args do
  local a = args[i]
  if a == "--frames" then
    frames = tonumber(args[i + 1]) or error("host_loop: --frames needs a number")
    i = i + 1
  elseif a == "--dt" then
    dt = tonumber(args[i + 1]) or error("host_loop: --dt needs a number")
    i = i + 1
  elseif a == "--realtime" then
    realtime = true
  elseif a:sub(1, 2) == "--" then
    error("host_loop: unknown option " .. a)
  else
    scripts[#scripts + 1] = a
  end
  i = i + 1
end
if #scripts == 0 then scripts[1] = here .. "/scripts/reach.lua" end

-- The scene the scripts see: an arm and a target.
local sk = ik.skeleton{
  { name = "shoulder", position = { 0, 1.5, 0 } },
  { name = "elbow", parent = "shoulder", position = { 0.3, 0, 0 } },
  { name = "hand", parent = "elbow", position = { 0.25, 0, 0 } },
}
local scene = {
  skeleton = sk,
  arm = { sk:bone("shoulder"), sk:bone("elbow"), sk:bone("hand") },
  target = ik.node{ position = { 0.35, 1.3, 0.3 } },
}

local love = rawget(_G, "love") or {}
local rt
local frame = 0

function love.load()
  rt = runtime.new{
    scene = scene,
    scripts = scripts,
    on_event = function(ev)
      print(("[frame %d] %s %s%s"):format(frame, ev.kind, ev.script or "",
        ev.message and (": " .. ev.message) or ""))
    end,
  }
end

function love.update(step)
  frame = frame + 1
  rt:update(step) -- never raises: a broken script is reported and the others run on
end

function love.draw()
  local g = love.graphics
  if g then -- under LÖVE: the arm seen from the front, 200 pixels a metre
    local function xy(v) return 400 + 200 * v.x, 500 - 200 * v.y end
    for b = 1, #scene.arm - 1 do
      local x1, y1 = xy(scene.arm[b]:get_position())
      local x2, y2 = xy(scene.arm[b + 1]:get_position())
      g.line(x1, y1, x2, y2)
    end
    local tx, ty = xy(scene.target:get_position())
    g.circle("line", tx, ty, 5)
  elseif frame % 30 == 0 then -- headless: a line now and then
    local t, h = scene.target:get_position(), sk:bone("hand"):get_position()
    print(("frame %4d  target (%5.2f, %5.2f, %5.2f)  hand (%5.2f, %5.2f, %5.2f)  reached %s"):format(
      frame, t.x, t.y, t.z, h.x, h.y, h.z, tostring(scene.reached)))
  end
end

-- Headless: this file drives the callbacks itself, as love.run would.
if not rawget(_G, "love") then
  love.load()
  for _ = 1, frames do
    local start = os.clock()
    love.update(dt)
    love.draw()
    if realtime then
      while os.clock() - start < dt do end
    end
  end
  for _, s in ipairs(rt:scripts()) do
    print(("%s: %s%s"):format(s.path, s.status, s.error and (" (" .. s.error .. ")") or ""))
  end
  rt:close()
end
