--- bench_crowd: one frame of a walking crowd, from Lua: milliseconds per frame at 1 and
-- 2 threads.
--
-- 1,000 characters, each an ik.skeleton (hips; a spine of 5 bones; two arms hanging
-- from the top of the spine; two legs hanging from the hips) with 4 two-bone limbs
-- (bone chains, a pole each), a 5-joint FABRIK spine chain and 2 feet (ik.foot: a ray
-- down from the animated ankle onto an ik.ground heightfield of gentle hills, the
-- foot raised onto it, smoothed). They walk across the hills: each frame, Lua moves the
-- hips (forward, up and down with the ground under them and the stride's bob) and the
-- two animated ankles (a stride cycle, the feet in opposite phase); hand and spine
-- targets and the poles hang from the hips.
--
-- The solving is two ik.batch calls per frame: spine and legs (the legs' feet are
-- placed inside the batch, in its parallel phase: the rays are the costliest part of a
-- leg and need no Lua), then the arms, which hang from the spine and so must start from
-- its solved pose. Every target moves every frame, so every chain works (warm start
-- from the last frame's solution).
--
-- Printed: median ms per frame over the frames (wall clock, ik.clock), split into the
-- Lua animation and the two solves; reached share; KiB allocated per frame in steady
-- state (0 expected).
--
-- Then the same crowd on the crowd path (docs/crowd.md): one ik.crowd_template of the
-- same character and rig, one ik.crowd of all of them; each frame Lua writes the hips
-- and ankles into the crowd's buffers (through LuaJIT's FFI, or from tables in one call
-- a buffer elsewhere: lua/ik/crowd.lua), one c:solve, and the pose read back. Its rows
-- print the same split (animate includes moving the buffers), its ratio to the
-- per-object path, and the memory per character of both.
--
--   scripts/env --build build/release lua5.4 tests/bench/bench_crowd.lua
--   scripts/env --lua jit --build build/release luajit tests/bench/bench_crowd.lua
-- Options: --quick (50 characters, 10 frames: the test suite's smoke run),
-- --characters N, --frames N, --scaling (the crowd path alone at 100, 1,000 and 10,000
-- characters), --path objects|crowd (one path alone: callgrind it at two frame counts
-- and take the difference for a frame's instructions). Exits 1 when the feet are not
-- planted or the chains do not reach, 2 on bad options.

local ik = require("ik")

local ncharacters, nframes, scaling, only = 1000, 120, false, nil
do
  local i = 1
  while arg and arg[i] do
    local a = arg[i]
    if a == "--quick" then
      ncharacters, nframes = 50, 10
    elseif a == "--scaling" then
      scaling = true
    elseif a == "--path" and (arg[i + 1] == "objects" or arg[i + 1] == "crowd") then
      only = arg[i + 1]
      i = i + 1
    elseif (a == "--characters" or a == "--frames") and tonumber(arg[i + 1]) then
      local v = math.floor(tonumber(arg[i + 1]))
      if a == "--characters" then ncharacters = v else nframes = v end
      i = i + 1
    else
      io.stderr:write("usage: bench_crowd.lua [--quick] [--characters N] [--frames N] [--scaling]"
        .. " [--path objects|crowd]\n")
      os.exit(2)
    end
    i = i + 1
  end
  if ncharacters < 1 or nframes < 2 then
    io.stderr:write("bench_crowd.lua: at least 1 character and 2 frames\n")
    os.exit(2)
  end
end

local sin, cos, floor, sqrt = math.sin, math.cos, math.floor, math.sqrt
local DT = 1 / 60
local SPEED = 1.4 -- m/s
local STRIDE_HZ = 0.9 -- stride cycles per second

-- ---- the ground: hills as a heightfield ----

local SPACING = 2.5 -- between characters
local side = math.ceil(sqrt(scaling and 10000 or ncharacters))
local EXTENT = side * SPACING + 20 -- square, from the origin
local CELL = 0.5
local columns = floor(EXTENT / CELL) + 1

local function hill(x, z)
  return 0.4 * sin(x * 0.21) * cos(z * 0.17) + 0.15 * sin(x * 0.53 + z * 0.41)
end

local heights = {}
for r = 0, columns - 1 do
  for c = 0, columns - 1 do heights[r * columns + c + 1] = hill(c * CELL, r * CELL) end
end
local ground = ik.ground.heightfield{ origin = { 0, 0, 0 }, cell_size = CELL, columns = columns,
                                      rows = columns, heights = heights }

-- ---- the characters ----

local function skeleton()
  return ik.skeleton{
    { name = "hips", position = { 0, 1, 0 } },
    { name = "spine1", parent = "hips", position = { 0, 0.1, 0 } },
    { name = "spine2", parent = "spine1", position = { 0, 0.12, 0.01 } },
    { name = "spine3", parent = "spine2", position = { 0, 0.12, 0.01 } },
    { name = "spine4", parent = "spine3", position = { 0, 0.12, 0 } },
    { name = "spine5", parent = "spine4", position = { 0, 0.12, -0.01 } },
    { name = "l_shoulder", parent = "spine5", position = { 0.18, 0, 0 } },
    { name = "l_elbow", parent = "l_shoulder", position = { 0.05, -0.28, 0 } },
    { name = "l_hand", parent = "l_elbow", position = { 0, -0.25, 0.05 } },
    { name = "r_shoulder", parent = "spine5", position = { -0.18, 0, 0 } },
    { name = "r_elbow", parent = "r_shoulder", position = { -0.05, -0.28, 0 } },
    { name = "r_hand", parent = "r_elbow", position = { 0, -0.25, 0.05 } },
    { name = "l_thigh", parent = "hips", position = { 0.1, -0.05, 0 } },
    { name = "l_knee", parent = "l_thigh", position = { 0, -0.43, 0.03 } },
    { name = "l_ankle", parent = "l_knee", position = { 0, -0.43, -0.03 } },
    { name = "r_thigh", parent = "hips", position = { -0.1, -0.05, 0 } },
    { name = "r_knee", parent = "r_thigh", position = { 0, -0.43, 0.03 } },
    { name = "r_ankle", parent = "r_knee", position = { 0, -0.43, -0.03 } },
  }
end

local function limb(sk, names, target, pole)
  local bones = {}
  for i, name in ipairs(names) do bones[i] = sk:bone(name) end
  return ik.chain{ bones = bones, target = target, pole = pole, solver = "two_bone" }
end

local body_chains, arm_chains = {}, {}
local crowd = {}
collectgarbage("collect")
local objects_kib = collectgarbage("count")
for k = 1, (scaling or only == "crowd") and 0 or ncharacters do
  local sk = skeleton()
  local hips = sk:bone("hips")
  local row, col = floor((k - 1) / side), (k - 1) % side
  local ch = {
    sk = sk, hips = hips, x = 5 + col * SPACING, z = 5 + row * SPACING,
    phase = (k * 0.37) % 1, -- every one in its own step
    l_ankle = ik.node{ position = { 0, 0, 0 } }, r_ankle = ik.node{ position = { 0, 0, 0 } },
  }
  local function hung(p) return ik.node{ position = p, parent = hips } end
  local spine_bones = {}
  for i = 1, 5 do spine_bones[i] = sk:bone("spine" .. i) end
  local spine = ik.chain{ bones = spine_bones, target = hung({ 0, 0.5, 0.12 }), iterations = 10,
                          tolerance = 1e-3 }
  local l_leg = limb(sk, { "l_thigh", "l_knee", "l_ankle" }, ch.l_ankle, hung({ 0.1, -0.4, 1 }))
  local r_leg = limb(sk, { "r_thigh", "r_knee", "r_ankle" }, ch.r_ankle, hung({ -0.1, -0.4, 1 }))
  local l_arm = limb(sk, { "l_shoulder", "l_elbow", "l_hand" }, hung({ 0.25, 0.2, 0.2 }),
                     hung({ 0.5, 0.4, -1 }))
  local r_arm = limb(sk, { "r_shoulder", "r_elbow", "r_hand" }, hung({ -0.25, 0.2, 0.2 }),
                     hung({ -0.5, 0.4, -1 }))
  ch.feet = { ik.foot{ ground = ground, foot_offset = 0.08 }, ik.foot{ ground = ground, foot_offset = 0.08 } }
  ch.chains = { spine, l_leg, r_leg }
  body_chains[#body_chains + 1] = { spine }
  body_chains[#body_chains + 1] = { l_leg, ch.feet[1] }
  body_chains[#body_chains + 1] = { r_leg, ch.feet[2] }
  arm_chains[#arm_chains + 1] = l_arm
  arm_chains[#arm_chains + 1] = r_arm
  crowd[k] = ch
end
collectgarbage("collect")
objects_kib = collectgarbage("count") - objects_kib

-- ---- one frame ----

local p = { 0, 0, 0 } -- reused: moving a transform allocates nothing

-- The animation: hips forward along +Z (wrapping round the field), on the ground with
-- the stride's bob; ankles in a stride cycle (forward swing in the air, planted on the
-- way back), in world space.
local function animate(t)
  local span = side * SPACING
  for k = 1, ncharacters do
    local ch = crowd[k]
    local z = 5 + (ch.z - 5 + SPEED * t) % span
    local x = ch.x
    local s = (ch.phase + STRIDE_HZ * t) % 1 * 2 * math.pi
    local base = hill(x, z)
    p[1], p[2], p[3] = x, base + 0.88 + 0.03 * cos(2 * s), z
    ch.hips:set_position(p)
    for side_sign = -1, 1, 2 do
      local a = s + (side_sign > 0 and 0 or math.pi)
      local lift = sin(a)
      p[1] = x + 0.1 * side_sign
      p[3] = z + 0.25 * cos(a)
      p[2] = hill(p[1], p[3]) + 0.05 + (lift > 0 and 0.12 * lift or 0) -- planted ones sink 3 cm in
      if side_sign > 0 then ch.l_ankle:set_position(p) else ch.r_ankle:set_position(p) end
    end
  end
end

local function median(list)
  local sorted = {}
  for i = 1, #list do sorted[i] = list[i] end
  table.sort(sorted)
  return sorted[floor(#sorted / 2) + 1]
end

local function run(threads)
  local body = ik.batch{ threads = threads }
  for _, entry in ipairs(body_chains) do body:add(entry[1], entry[2]) end
  local arms = ik.batch{ chains = arm_chains, threads = threads }
  local frame_ms, animate_ms, body_ms, arms_ms = {}, {}, {}, {}
  local reached, solves, grounded, feet = 0, 0, 0, 0
  for frame = 0, nframes - 1 do
    local t = frame * DT
    local t0 = ik.clock()
    animate(t)
    local t1 = ik.clock()
    local r1 = body:solve(DT)
    local t2 = ik.clock()
    local r2 = arms:solve(DT)
    local t3 = ik.clock()
    frame_ms[#frame_ms + 1] = (t3 - t0) * 1e3
    animate_ms[#animate_ms + 1] = (t1 - t0) * 1e3
    body_ms[#body_ms + 1] = (t2 - t1) * 1e3
    arms_ms[#arms_ms + 1] = (t3 - t2) * 1e3
    if frame > 0 then -- the first frame starts from the rest pose
      reached = reached + r1 + r2
      solves = solves + #body + #arms
      for i = 2, #body, 3 do
        for j = i, i + 1 do
          local _, _, _, planted = body:result(j)
          feet = feet + 1
          if planted then grounded = grounded + 1 end
        end
      end
    end
  end
  -- Steady state allocation: a few more frames with the collector stopped.
  collectgarbage("collect")
  collectgarbage("stop")
  animate(nframes * DT) -- a full collection may shrink the interpreter's stack: regrow it
  body:solve(DT)
  arms:solve(DT)
  local before = collectgarbage("count")
  for frame = nframes + 1, nframes + 5 do
    animate(frame * DT)
    body:solve(DT)
    arms:solve(DT)
  end
  local kib = (collectgarbage("count") - before) / 5
  collectgarbage("restart")
  body:close()
  arms:close()
  return { frame = median(frame_ms), animate = median(animate_ms), body = median(body_ms),
           arms = median(arms_ms), reached = reached / solves, grounded = grounded / feet, kib = kib }
end

-- ---- the crowd path: one template, one crowd, flat buffers ----

local crowd_views = require("ik.crowd").views

local function crowd_template()
  local function hung(at) return { bone = "hips", offset = at } end
  local function limb_spec(names, target, pole, foot)
    return { bones = names, target = target, pole = hung(pole), foot = foot }
  end
  local foot = { foot_offset = 0.08 }
  return ik.crowd_template{ skeleton = skeleton(), chains = {
    { bones = { "spine1", "spine2", "spine3", "spine4", "spine5" }, target = hung({ 0, 0.5, 0.12 }),
      iterations = 10, tolerance = 1e-3 },
    limb_spec({ "l_thigh", "l_knee", "l_ankle" }, nil, { 0.1, -0.4, 1 }, foot),
    limb_spec({ "r_thigh", "r_knee", "r_ankle" }, nil, { -0.1, -0.4, 1 }, foot),
    limb_spec({ "l_shoulder", "l_elbow", "l_hand" }, hung({ 0.25, 0.2, 0.2 }), { 0.5, 0.4, -1 }),
    limb_spec({ "r_shoulder", "r_elbow", "r_hand" }, hung({ -0.25, 0.2, 0.2 }), { -0.5, 0.4, -1 }),
  } }
end
local template = crowd_template()

-- The same frames for n characters on `threads` threads: Lua writes hips and ankles
-- into the buffers (the FFI's arrays, or tables pushed in one call a buffer), one
-- solve, the pose read back (pulled into tables without the FFI).
local function crowd_run(n, threads, frames)
  collectgarbage("collect")
  local kib0 = collectgarbage("count")
  local c = ik.crowd{ template = template, count = n, threads = threads, ground = ground }
  local kib = collectgarbage("count") - kib0 -- the crowd's block is a userdata: Lua counts it
  local v = crowd_views(c)
  local roots, targets, sr, st = v.roots, v.targets, v.stride.roots, v.stride.targets
  local side_n = math.ceil(sqrt(n))
  local span = side_n * SPACING
  local xs, zs, phases = {}, {}, {}
  for k = 1, n do
    xs[k], zs[k] = 5 + (k - 1) % side_n * SPACING, 5 + floor((k - 1) / side_n) * SPACING
    phases[k] = (k * 0.37) % 1
  end
  local function animate_crowd(t)
    for k = 1, n do
      local z = 5 + (zs[k] - 5 + SPEED * t) % span
      local x = xs[k]
      local s = (phases[k] + STRIDE_HZ * t) % 1 * 2 * math.pi
      local r, o = (k - 1) * sr, (k - 1) * st
      roots[r + 1], roots[r + 2], roots[r + 3] = x, hill(x, z) + 0.88 + 0.03 * cos(2 * s), z
      for side_sign = -1, 1, 2 do
        local a = s + (side_sign > 0 and 0 or math.pi)
        local lift = sin(a)
        local px, pz = x + 0.1 * side_sign, z + 0.25 * cos(a)
        local at = o + (side_sign > 0 and 0 or 3)
        targets[at + 1], targets[at + 3] = px, pz
        targets[at + 2] = hill(px, pz) + 0.05 + (lift > 0 and 0.12 * lift or 0)
      end
    end
  end
  local frame_ms, animate_ms, solve_ms = {}, {}, {}
  local reached, grounded = 0, 0
  for frame = 0, frames - 1 do
    local t = frame * DT
    local t0 = ik.clock()
    animate_crowd(t)
    v.push()
    local t1 = ik.clock()
    local r = c:solve(DT)
    local t2 = ik.clock()
    v.pull()
    local t3 = ik.clock()
    frame_ms[#frame_ms + 1] = (t3 - t0) * 1e3
    animate_ms[#animate_ms + 1] = (t1 - t0 + t3 - t2) * 1e3
    solve_ms[#solve_ms + 1] = (t2 - t1) * 1e3
    if frame > 0 then
      reached = reached + r
      for k = 1, n do
        for chain = 2, 3 do
          local _, _, planted = c:result(k, chain)
          if planted then grounded = grounded + 1 end
        end
      end
    end
  end
  collectgarbage("collect")
  collectgarbage("stop")
  animate_crowd(frames * DT)
  v.push()
  c:solve(DT)
  v.pull()
  local before = collectgarbage("count")
  for frame = frames + 1, frames + 5 do
    animate_crowd(frame * DT)
    v.push()
    c:solve(DT)
    v.pull()
  end
  local alloc = (collectgarbage("count") - before) / 5
  collectgarbage("restart")
  c:close()
  return { frame = median(frame_ms), animate = median(animate_ms), solve = median(solve_ms),
           reached = reached / (5 * n * (frames - 1)), grounded = grounded / (2 * n * (frames - 1)),
           kib = alloc, memory = kib / n, ffi = v.ffi }
end

local function crowd_row(label, r, per_object)
  print(string.format("%-8s %10.3f %10.3f %10.3f %8.1f%% %8.1f%% %10.2f %9s %8.2f", label, r.frame,
    r.animate, r.solve, 100 * r.reached, 100 * r.grounded, r.kib,
    per_object and string.format("%.1fx", per_object) or "-", r.frame * 1e3 / r.n))
end

local header = string.format("%s, ik.core %s (%s); median ms per frame (ik.clock)",
  jit and jit.version or _VERSION, ik._VERSION, ik.real)
local ok = true
if scaling then
  print(header)
  print()
  print(string.format("%-12s %-8s %10s %10s %10s %12s %10s", "characters", "threads", "frame ms", "animate",
    "solve", "us/character", "KiB/char"))
  for _, n in ipairs({ 100, 1000, 10000 }) do
    for _, threads in ipairs({ 1, 2 }) do
      local r = crowd_run(n, threads, n >= 10000 and 30 or nframes)
      print(string.format("%-12d %-8d %10.3f %10.3f %10.3f %12.3f %10.2f", n, threads, r.frame, r.animate,
        r.solve, r.frame * 1e3 / n, r.memory))
    end
  end
  os.exit(0)
end

print(header .. string.format("; %d characters (%d chains, %d feet), %d frames", ncharacters, 5 * ncharacters,
  2 * ncharacters, nframes))
print()
print("per-object path (ik.skeleton, ik.chain, ik.node, ik.foot; two ik.batch calls)")
print(string.format("%-8s %10s %10s %10s %10s %9s %9s %10s", "threads", "frame ms", "animate", "spine+legs",
  "arms", "reached", "planted", "KiB/frame"))
local objects = {}
for _, threads in ipairs(only ~= "crowd" and { 1, 2 } or {}) do
  local r = run(threads)
  objects[threads] = r
  print(string.format("%-8d %10.3f %10.3f %10.3f %10.3f %8.1f%% %8.1f%% %10.2f", threads, r.frame, r.animate,
    r.body, r.arms, 100 * r.reached, 100 * r.grounded, r.kib))
  -- Every chain can reach; about half the feet are on the ground at any time.
  if r.reached < 0.9 or r.grounded < 0.3 then ok = false end
end
print()
local crowd_ffi
print("crowd path (ik.crowd_template, ik.crowd, its buffers; one solve)")
print(string.format("%-8s %10s %10s %10s %9s %9s %10s %9s %8s", "threads", "frame ms", "animate", "solve",
  "reached", "planted", "KiB/frame", "speed-up", "us/char"))
local memory = 0
for _, threads in ipairs(only ~= "objects" and { 1, 2 } or {}) do
  local r = crowd_run(ncharacters, threads, nframes)
  r.n = ncharacters
  crowd_ffi, memory = r.ffi, r.memory
  crowd_row(tostring(threads), r, objects[threads] and objects[threads].frame / r.frame)
  if r.reached < 0.9 or r.grounded < 0.3 then ok = false end
end
print()
print("frame ms = animate (Lua moves hips and ankles) + spine+legs (ik.batch with the feet's rays)")
print("+ arms (ik.batch); planted: feet on the ground after their foot update")
print(string.format("crowd: animate includes moving the buffers (%s); speed-up: per-object frame / "
  .. "crowd frame", crowd_ffi and "LuaJIT's FFI: no call" or "buf:set / buf:get, one call a buffer"))
print(string.format("memory per character: per-object %.1f KiB (Lua's count), crowd %.1f KiB (its block)",
  objects_kib / ncharacters, memory))
if not ok then
  print("FAIL: too few chains reached or feet planted")
  os.exit(1)
end
