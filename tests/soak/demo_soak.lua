-- The long run of the built-in demo (scripts/soak runs it): the demo scene and its rig
-- scripts (the humanoid and the walking robot) through ik.runtime, headless, at 60 Hz,
-- for many frames, checking as it goes that nothing wears out:
--
--   - every bone's length (its distance to its parent in world space) stays its rest
--     length, within a relative drift of 1e-9 (1e-5 with ik_real = float);
--   - no position or rotation of a bone or node, world or local, is ever NaN or infinite;
--   - the scripts stay running: no error or pause event at all;
--   - after the warm-up, the Lua heap left after a full collection and the process's
--     resident memory stay flat (each allowed a small slack: the heap for what the
--     allocator's size classes round, the RSS for malloc's arenas).
--
-- Prints one progress line per memory check and a summary: frames per second, peak
-- heap, peak RSS, worst drift. Exits 1 on the first violation (saying what and where),
-- 2 on bad usage.
--
--   lua5.4 tests/soak/demo_soak.lua [frames] [--every N] [--memory-every N] [--quiet]
local ik = require("ik")
local runtime = require("ik.runtime")
local demo = require("ik.demo.scene")

local USAGE = "usage: demo_soak.lua [frames] [--every N] [--memory-every N] [--quiet]"
local DT = 1 / 60
-- Relative: a few thousand roundings of double; float rounds at 6e-8 a step.
local MAX_DRIFT = ik.real == "float" and 1e-5 or 1e-9
local HEAP_SLACK = 64 * 1024 -- bytes of live Lua heap the run may gain after the warm-up
local RSS_SLACK = 2 * 1024 * 1024 -- bytes of resident memory likewise

local function fail(fmt, ...)
  io.stderr:write("soak: ", fmt:format(...), "\n")
  os.exit(1)
end

local function usage(fmt, ...)
  io.stderr:write("soak: ", fmt:format(...), "\n", USAGE, "\n")
  os.exit(2)
end

local function whole(s, what)
  local n = tonumber(s)
  if not n or n < 1 or n % 1 ~= 0 then
    usage("%s: a whole number >= 1 expected, got '%s'", what, tostring(s))
  end
  return n
end

local options = { frames = 1000000, every = 60, memory_every = 6000, quiet = false }
do
  local i = 1
  while arg[i] do
    local a = arg[i]
    if a == "--every" then
      options.every, i = whole(arg[i + 1], a), i + 1
    elseif a == "--memory-every" then
      options.memory_every, i = whole(arg[i + 1], a), i + 1
    elseif a == "--quiet" or a == "-q" then
      options.quiet = true
    elseif a:sub(1, 1) ~= "-" then
      options.frames = whole(a, "frames")
    else
      usage("unknown option '%s'", a)
    end
    i = i + 1
  end
end
-- The warm-up: the rigs' springs settle, the feet plant, caches and tables reach their
-- size; a tenth of the run, at most ten simulated minutes.
local WARM_UP = math.min(math.floor(options.frames / 10), 36000)

-- /proc/self/status: resident and high-water resident memory, in bytes (nil elsewhere).
local function rss()
  local f = io.open("/proc/self/status", "r")
  if not f then return nil end
  local text = f:read("*a")
  f:close()
  local now, peak = text:match("VmRSS:%s*(%d+) kB"), text:match("VmHWM:%s*(%d+) kB")
  if not now then return nil end
  return tonumber(now) * 1024, tonumber(peak) * 1024
end

-- ---- the scene and its scripts, as ikrig runs them ----

local scene = demo.new()
local reports = 0
function scene.report() reports = reports + 1 end

local paths = {}
for i, name in ipairs(demo.scripts) do
  paths[i] = package.searchpath and package.searchpath(name, package.path)
  if not paths[i] then -- Lua 5.1 has no searchpath
    local file = name:gsub("%.", "/")
    for template in package.path:gmatch("[^;]+") do
      local candidate = template:gsub("%?", file)
      local f = io.open(candidate, "r")
      if f then
        f:close()
        paths[i] = candidate
        break
      end
    end
  end
  if not paths[i] then fail("cannot find the demo script %s on package.path", name) end
end

local trouble = {}
local rt = runtime.new{ scene = scene, scripts = paths, watch = false,
                        on_event = function(ev)
                          if ev.kind ~= "load" then trouble[#trouble + 1] = ev end
                        end }

-- ---- what is checked ----

-- Every bone with a parent: the bone, the parent, the rest length.
local links = {}
local skeleton_names = {}
for name in pairs(scene.skeletons) do skeleton_names[#skeleton_names + 1] = name end
table.sort(skeleton_names)
for _, sk_name in ipairs(skeleton_names) do
  local sk = scene.skeletons[sk_name]
  for _, bone in ipairs(sk:bones()) do
    local parent = bone.parent
    if parent then
      local rest = (ik.vec3(bone:get_position()) - ik.vec3(parent:get_position())):length()
      links[#links + 1] = { bone = bone, parent = parent, rest = rest, label = sk_name .. "." .. bone.name }
    end
  end
end
local node_names = {}
for name in pairs(scene.nodes) do node_names[#node_names + 1] = name end
table.sort(node_names)

local function finite(x) return x == x and x ~= math.huge and x ~= -math.huge end

local function check_finite(label, what, v, frame)
  if not (finite(v.x) and finite(v.y) and finite(v.z) and (v.w == nil or finite(v.w))) then
    fail("frame %d: %s %s is not finite: %s", frame, label, what, tostring(v))
  end
end

local function check_transform(label, t, frame)
  check_finite(label, "position", t:get_position(), frame)
  check_finite(label, "rotation", t:get_rotation(), frame)
  if t.get_local_position then
    check_finite(label, "local position", t:get_local_position(), frame)
    check_finite(label, "local rotation", t:get_local_rotation(), frame)
  end
end

local worst = { drift = 0, label = "-", frame = 0 }

local function check_pose(frame)
  for _, sk_name in ipairs(skeleton_names) do
    for _, bone in ipairs(scene.skeletons[sk_name]:bones()) do
      check_transform(sk_name .. "." .. bone.name, bone, frame)
    end
  end
  for _, name in ipairs(node_names) do check_transform("node " .. name, scene.nodes[name], frame) end
  for _, l in ipairs(links) do
    local length = (ik.vec3(l.bone:get_position()) - ik.vec3(l.parent:get_position())):length()
    local drift = math.abs(length - l.rest) / l.rest
    if drift > worst.drift then worst.drift, worst.label, worst.frame = drift, l.label, frame end
    if drift ~= drift or drift > MAX_DRIFT then
      fail("frame %d: %s is %.17g long, its rest length %.17g (relative drift %.3g > %g)", frame, l.label,
        length, l.rest, drift, MAX_DRIFT)
    end
  end
  if #trouble > 0 then
    local ev = trouble[1]
    fail("frame %d: %s event for %s: %s", frame, ev.kind, tostring(ev.script), tostring(ev.message))
  end
end

-- ---- the run ----

local KB = 1024
local peak_heap = collectgarbage("count") * KB
local base = nil -- { heap =, rss = } at the end of the warm-up
local last = { heap = 0, rss = 0, rss_peak = 0 }

local function check_memory(frame)
  collectgarbage("collect")
  local heap = collectgarbage("count") * KB
  local now, hwm = rss()
  last.heap, last.rss, last.rss_peak = heap, now or 0, hwm or 0
  if frame >= WARM_UP and not base then base = { heap = heap, rss = now } end
  if base then
    if heap > base.heap + HEAP_SLACK then
      fail("frame %d: the live Lua heap grew from %.0f to %.0f bytes after the warm-up (slack %d)", frame,
        base.heap, heap, HEAP_SLACK)
    end
    if now and base.rss and now > base.rss + RSS_SLACK then
      fail("frame %d: resident memory grew from %.0f to %.0f bytes after the warm-up (slack %d)", frame,
        base.rss, now, RSS_SLACK)
    end
  end
end

local clock = os.clock
local started = clock()
check_pose(0)
check_memory(0)
for frame = 1, options.frames do
  scene:advance(DT)
  rt:update(DT)
  local heap = collectgarbage("count")
  if heap * KB > peak_heap then peak_heap = heap * KB end
  if frame % options.every == 0 or frame == options.frames then check_pose(frame) end
  if frame % options.memory_every == 0 or frame == options.frames then
    check_memory(frame)
    if not options.quiet then
      print(("soak: frame %d (%.0f s simulated), live heap %.0f KiB, RSS %.1f MiB, worst drift %.3g")
        :format(frame, frame * DT, last.heap / KB, last.rss / (KB * KB), worst.drift))
      io.stdout:flush()
    end
  end
end
local seconds = clock() - started

for _, s in ipairs(rt:scripts()) do
  if s.status ~= "running" then fail("%s is %s: %s", s.path, s.status, tostring(s.error)) end
end
if reports ~= options.frames * 9 then
  fail("%d chain reports in %d frames, %d expected (9 a frame)", reports, options.frames, options.frames * 9)
end
rt:close()

print(("soak: %d frames (%.0f s simulated) of %s"):format(options.frames, options.frames * DT, scene.name))
print(("soak: %.0f frames/s (%.1f us a frame, processor time, checks included)")
  :format(options.frames / seconds, seconds / options.frames * 1e6))
print(("soak: peak Lua heap %.0f KiB; live heap after warm-up %.0f KiB, at the end %.0f KiB")
  :format(peak_heap / KB, base and base.heap / KB or 0, last.heap / KB))
print(("soak: peak RSS %.1f MiB; RSS after warm-up %.1f MiB, at the end %.1f MiB")
  :format(last.rss_peak / (KB * KB), base and (base.rss or 0) / (KB * KB) or 0, last.rss / (KB * KB)))
print(("soak: worst bone length drift %.3g (relative; %s at frame %d), limit %g; %d bones checked every %d "
  .. "frames")
  :format(worst.drift, worst.label, worst.frame, MAX_DRIFT, #links, options.every))
print("soak: ok")
