-- fuzz_script.lua: the Lua half of fuzz_script.c. Called with (dir, fail, frames): the
-- fuzzer wrote the input as dir/rig.lua, a rig script, next to dir/canary.lua, a script
-- known to be good. Both run in one ik.runtime, in the built-in demo's scene, under a
-- small instruction budget and memory limit, for a few frames with a reload between.
--
-- Invariants (fail() aborts the process, which the fuzzer reports):
--   - rt:update never raises, whatever the script does;
--   - the canary, which runs after it, runs every frame: one script's failure, pause,
--     budget or memory never stops another;
--   - the host's own globals and the string, table and math libraries are as they were,
--     and the string metatable too: the sandbox keeps a script's changes to itself;
--   - events are well-formed (kind and script strings; errors with a message string).
local dir, fail, frames = ...

local ik = require("ik")
local runtime = require("ik.runtime")

-- The host's globals and libraries, by value, before any script runs.
local function snapshot()
  local s = {}
  for _, lib in ipairs({ "_G", "string", "table", "math", "coroutine", "os", "io", "debug" }) do
    local t = lib == "_G" and _G or _G[lib]
    local keys = {}
    for k, v in pairs(t) do
      if type(k) == "string" then keys[#keys + 1] = k .. "=" .. tostring(v) end
    end
    table.sort(keys)
    s[#s + 1] = lib .. ":" .. table.concat(keys, ",")
  end
  local smt = debug.getmetatable("")
  s[#s + 1] = "string metatable: " .. tostring(smt) .. " " .. tostring(smt and smt.__index)
  return table.concat(s, "\n")
end

local scene = require("ik.demo.scene").new()
local reports = 0
scene.report = function() reports = reports + 1 end -- what ikrig adds to a scene
local before = snapshot()

local rig, canary = dir .. "/rig.lua", dir .. "/canary.lua"
local rt = runtime.new{ scene = scene, scripts = { rig, canary }, watch = false, budget = 2e5,
                        memory_limit = 8 * 1024 * 1024 }

local verbose = os.getenv("FUZZ_VERBOSE")

local function check_events()
  for _, e in ipairs(rt:events()) do
    if verbose then
      io.stderr:write(tostring(e.kind), " ", tostring(e.script), " ", tostring(e.message), "\n")
    end
    if type(e) ~= "table" or type(e.kind) ~= "string" then fail("an event is not { kind = string, ... }") end
    if e.script ~= nil and type(e.script) ~= "string" then fail("an event's script is not a string") end
    if (e.kind == "error" or e.kind == "paused") and type(e.message) ~= "string" then
      fail("a " .. e.kind .. " event without a message string")
    end
  end
end

for frame = 1, frames do
  local ok, err = pcall(rt.update, rt, 1 / 60)
  if not ok then fail("rt:update raised: " .. tostring(err)) end
  if frame == 2 then
    -- As a save would: the script's second load, with state kept and on_reload called.
    ok, err = pcall(rt.reload, rt, rig)
    if not ok then fail("rt:reload raised: " .. tostring(err)) end
  end
  check_events()
  local info = rt:scripts()[2]
  if not (info and info.path == canary and info.status == "running" and info.state.frames == frame) then
    fail(("the canary stopped at frame %d: %s"):format(frame, info and tostring(info.error or info.status)))
  end
end

local info = rt:scripts()[1]
if type(info.status) ~= "string" or (info.error ~= nil and type(info.error) ~= "string") then
  fail("the fuzzed script's status or error is not a string")
end
rt:close()
if snapshot() ~= before then fail("a script changed the host's globals or libraries") end
-- The host's own use of ik still works.
local v = ik.vec3(1, 2, 3) + ik.vec3(1, 1, 1)
if v.x ~= 2 or v.z ~= 4 then fail("ik.vec3 arithmetic broke") end
