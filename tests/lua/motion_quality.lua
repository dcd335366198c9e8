-- The motion-quality suite (docs/motion.md): every rig and solver on scripted target
-- paths, each run for one second at 30, 60 and 144 Hz, measuring
--
--   flips      frames in which a bone turned more than FLIP_ANGLE while the target
--              moved less than FLIP_MOVE of the limb (the most at any rate);
--   jerk       the result's jerk against the target's: the largest RMS third
--              difference of a joint's position over the run, divided by the
--              target's, at 60 Hz ("-" when the target's path has none);
--   agreement  after the second, the farthest any joint is from where it is at
--              60 Hz (30 and 144 Hz), in limb lengths.
--
-- `require("motion_quality").run()` returns the rows; `.table(rows)` formats them;
-- `.failures(rows)` lists the rows over the thresholds (0 flips, agreement within
-- AGREEMENT). Used by tests/lua/motion_quality_spec.lua and tests/bench/bench_motion.lua.
local ik = require("ik")

local M = {}

M.RATES = { 30, 60, 144 }
M.FLIP_ANGLE = math.rad(30)
M.FLIP_MOVE = 0.01
M.AGREEMENT = 1e-3

local atan2 = math.atan2 or math.atan
local pi, sin, cos = math.pi, math.sin, math.cos

local function angle(a, b) return atan2(a:cross(b):length(), a:dot(b)) end
local function pos(t) return ik.vec3(t:get_position()) end
-- A point `len` along a transform's local axis from it (its rotation made visible).
local function along(t, axis, len) return pos(t) + ik.quat(t:get_rotation()) * axis * len end

-- ---- the paths: target positions at time t in [0, 1] ----

-- A circle of radius r about `centre` in the plane of unit e1, e2, starting at phase
-- phi0 and turning `laps` times a second.
local function circle(centre, e1, e2, r, laps, phi0)
  return function(t)
    local phi = phi0 + 2 * pi * laps * t
    return centre + e1 * (r * cos(phi)) + e2 * (r * sin(phi))
  end
end

-- Two unit vectors across unit `axis`.
local function across(axis)
  local other = math.abs(axis.y) < 0.9 and ik.vec3(0, 1, 0) or ik.vec3(1, 0, 0)
  local e1 = axis:cross(other):normalized()
  return e1, axis:cross(e1)
end

-- Through the pole's axis (root to pole), passing it `miss` from it at t = 0.5: a circle
-- of radius r across the axis, `depth` along it from the root.
local function through_pole_axis(root, pole, depth, r, miss)
  local axis = (pole - root):normalized()
  local e1, e2 = across(axis)
  local laps = 0.25 -- a quarter lap in the second: the pass is slow and steady
  return circle(root + axis * depth + e1 * (r + miss), e1, e2, r, laps, pi - 2 * pi * laps * 0.5)
end

-- On a line through `point` along unit dir, from `half` before it to `half` after.
local function line_through(point, dir, half)
  return function(t) return point + dir * (half * (2 * t - 1)) end
end

-- ---- the subjects ----

-- A point chain: 4 joints (3 unit bones, the README's chain) or 3 for two-bone.
local function chain_subject(solver, options)
  options = options or {}
  local n = solver == "two_bone" and 3 or 4
  local positions = {}
  for i = 1, n do positions[i] = { i - 1, 0, 0 } end
  local chain = ik.chain{ positions = positions, solver = solver, mode = options.mode,
                          iterations = options.iterations or 20, tolerance = 1e-3 }
  chain.pole = ik.pole{ position = options.pole or { 1, 2, 0 } }
  if options.cone then chain:set_constraint(2, ik.cone{ angle = options.cone }) end
  return {
    limb = n - 1,
    root = ik.vec3(0, 0, 0),
    step = function(target) chain:solve(target) end,
    points = function()
      local list = {}
      for i = 1, n do list[i] = ik.vec3(chain:joint(i)) end
      return { list }
    end,
  }
end

-- A character's arm (as tests/lua/rig_helper's ARM: upper arm 0.3, forearm 0.25), its
-- pole behind and below the elbow.
local function arm_subject()
  local sk = ik.skeleton{
    { name = "chest", position = { 0, 1.4, 0 } },
    { name = "upper", parent = "chest", position = { 0.2, 0, 0 } },
    { name = "lower", parent = "upper", position = { 0.3, 0, -0.02 } },
    { name = "hand", parent = "lower", position = { 0.25, 0, 0.02 } },
  }
  local upper, lower, hand = sk:bone("upper"), sk:bone("lower"), sk:bone("hand")
  local shoulder = pos(upper)
  local target = ik.node{ position = shoulder + ik.vec3(0.3, -0.2, 0.2) }
  local pole = shoulder + ik.vec3(0.1, -0.3, -0.5)
  local rig = require("ik.rigs.arm").new{ upper = upper, lower = lower, hand = hand, target = target,
                                           pole = ik.node{ position = pole } }
  return {
    limb = 0.55, root = shoulder, pole = pole,
    step = function(p, dt)
      target:set_position(p)
      rig:update(dt)
    end,
    points = function() return { { pos(upper), pos(lower), pos(hand) } } end,
  }
end

-- A leg (thigh 0.44, shin 0.43) on the test course, its hip carried along +Z at the
-- target's z; the animated pose is the rest pose (reset_pose), its foot level with the
-- flat ground. The target is the hip's path.
local function leg_subject(x0, z0)
  local terrain = require("terrain")
  local sk = ik.skeleton{
    { name = "hips", position = { x0, 1, z0 } },
    { name = "thigh", parent = "hips", position = { 0.1, -0.05, 0 } },
    { name = "shin", parent = "thigh", position = { 0, -0.44, 0.03 } },
    { name = "foot", parent = "shin", position = { 0, -0.43, -0.03 } },
  }
  local hips, thigh, shin, foot = sk:bone("hips"), sk:bone("thigh"), sk:bone("shin"), sk:bone("foot")
  local pole = ik.node{ parent = hips }
  pole:set_position(pos(thigh) + ik.vec3(0, -0.4, 1))
  local rig = require("ik.rigs.leg").new{ upper = thigh, lower = shin, foot = foot, ground = terrain.ground(),
                                           foot_offset = 0.08, pole = pole, reset_pose = true }
  return {
    limb = 0.87,
    step = function(p, dt)
      hips:set_position(p)
      rig:update(dt)
    end,
    points = function()
      return { { pos(thigh), pos(shin), pos(foot), along(foot, ik.vec3(0, 0, 1), 0.1) } }
    end,
  }
end

-- The walker's robots (as tests/lua/rig_walker_spec's), on flat ground, the walker
-- driving the body (velocity, turn_rate). The target is the body's path.
local QUAD = { { "l1", 1, 0.3 }, { "l2", 1, -0.3 }, { "r1", -1, 0.3 }, { "r2", -1, -0.3 } }
local HEX = { { "l1", 1, 0.35 }, { "l2", 1, 0 }, { "l3", 1, -0.35 }, { "r1", -1, 0.35 }, { "r2", -1, 0 },
              { "r3", -1, -0.35 } }
local STEP = { l1 = 0.24, l2 = 0.22, l3 = 0.25, r1 = 0.23, r2 = 0.25, r3 = 0.22 }
local function walker_subject(layout, gait, velocity, turn_rate)
  local bones = { { name = "body", position = { 0, 0.49, 0 } } }
  for _, l in ipairs(layout) do
    local hip, knee = "hip_" .. l[1], "knee_" .. l[1]
    bones[#bones + 1] = { name = hip, parent = "body", position = { l[2] * 0.25, 0, l[3] } }
    bones[#bones + 1] = { name = knee, parent = hip, position = { l[2] * 0.25, 0.15, 0 } }
    bones[#bones + 1] = { name = "foot_" .. l[1], parent = knee, position = { l[2] * 0.1, -0.62, 0 } }
  end
  local sk = ik.skeleton(bones)
  local legs = {}
  for i, l in ipairs(layout) do
    legs[i] = { name = l[1], hip = sk:bone("hip_" .. l[1]), knee = sk:bone("knee_" .. l[1]),
                foot = sk:bone("foot_" .. l[1]), pole_offset = { l[2] * 0.2, 0.5, 0 },
                step_distance = STEP[l[1]] }
  end
  local body = sk:bone("body")
  local w = require("ik.rigs.walker").new{
    body = body, legs = legs, ground = ik.ground.plane{}, step_height = 0.15, step_time = 0.25,
    body_height = 0.49, foot_offset = 0.02, gait = gait, velocity = velocity, turn_rate = turn_rate,
  }
  return {
    limb = w.legs[1].length, driven = true,
    step = function(_, dt) w:update(dt) end,
    target = function() return pos(body) end,
    -- a leg's own target is its ankle's: a swinging leg moves fast on purpose
    leg_targets = function()
      local list = {}
      for i, leg in ipairs(w.legs) do list[i] = ik.vec3(leg.target[1], leg.target[2], leg.target[3]) end
      return list
    end,
    points = function()
      local list = {}
      for i, leg in ipairs(legs) do list[i] = { pos(leg.hip), pos(leg.knee), pos(leg.foot) } end
      return list
    end,
  }
end

-- The look rig (neck, head), the head's forward axis shown as a point 0.2 ahead of it.
local function look_subject()
  local sk = ik.skeleton{ { name = "neck", position = { 0, 1.5, 0 } },
                          { name = "head", parent = "neck", position = { 0, 0.1, 0 } } }
  local neck, head = sk:bone("neck"), sk:bone("head")
  local target = ik.node{ position = { 0, 1.6, 1 } }
  local rig = require("ik.rigs.look").new{ neck = neck, head = head, target = target }
  return {
    limb = 0.3, root = pos(head),
    step = function(p, dt)
      target:set_position(p)
      rig:update(dt)
    end,
    points = function() return { { pos(neck), pos(head), along(head, ik.vec3(0, 0, 1), 0.2) } } end,
  }
end

-- The chest rig on a three-bone spine.
local function chest_subject()
  local sk = ik.skeleton{ { name = "spine1", position = { 0, 1, 0 } },
                          { name = "spine2", parent = "spine1", position = { 0, 0.15, 0 } },
                          { name = "chest", parent = "spine2", position = { 0, 0.15, 0 } } }
  local spine = { sk:bone("spine1"), sk:bone("spine2"), sk:bone("chest") }
  local target = ik.node{ position = { 0, 1.3, 0 } }
  local rig = require("ik.rigs.chest").new{ spine = spine, target = target }
  return {
    limb = 0.3, root = pos(spine[1]),
    step = function(p, dt)
      target:set_position(p)
      rig:update(dt)
    end,
    points = function()
      return { { pos(spine[1]), pos(spine[2]), pos(spine[3]), along(spine[3], ik.vec3(0, 1, 0), 0.2) } }
    end,
  }
end

-- The root rig: hips following a target through its spring.
local function root_subject()
  local hips = ik.node{ position = { 0, 1, 0 } }
  local target = ik.node{ position = { 0, 1, 0 } }
  local rig = require("ik.rigs.root").new{ hips = hips, target = target, smooth_time = 0.1 }
  return {
    limb = 1,
    step = function(p, dt)
      target:set_position(p)
      rig:update(dt)
    end,
    points = function() return { { pos(hips), along(hips, ik.vec3(0, 0, 1), 0.2) } } end,
  }
end

-- ---- the cases ----

local function chain_cases(cases, solver, label, options)
  local function add(name, path, extra)
    local o = {}
    for k, v in pairs(options or {}) do o[k] = v end
    for k, v in pairs(extra or {}) do o[k] = v end
    cases[#cases + 1] = { subject = label, path = name, make = function() return chain_subject(solver, o) end,
                          target = path }
  end
  local L = solver == "two_bone" and 2 or 3
  local root, pole = ik.vec3(0, 0, 0), ik.vec3(1, 2, 0)
  add("through the pole axis", through_pole_axis(root, pole, 0.6 * L, 0.2 * L, 0.01 * L))
  add("through the root", line_through(root, ik.vec3(0.6, 0.3, 0.74):normalized(), 0.3 * L))
  local x, yz = ik.vec3(1, 0, 0), ik.vec3(0, 0.6, 0.8)
  add("near the root", circle(x * (0.12 * L), x, yz, 0.1 * L, 0.5, 0))
  add("fast", circle(ik.vec3(0.5, 0.3, 0.2) * L, ik.vec3(0, 1, 0), ik.vec3(0, 0, 1), 0.3 * L, 2, 0))
  if solver ~= "two_bone" then
    add("crossing a limit", function(t)
      local a = -pi / 2 + pi * t
      return ik.vec3(cos(a), sin(a), 0.1) * (0.7 * L)
    end, { cone = math.rad(45) })
  end
end

function M.cases()
  local cases = {}
  chain_cases(cases, "fabrik", "chain fabrik")
  chain_cases(cases, "fabrik", "chain fabrik plain", { mode = "plain" })
  chain_cases(cases, "ccd", "chain ccd", { iterations = 40 })
  chain_cases(cases, "dls", "chain dls")
  chain_cases(cases, "two_bone", "chain two_bone")

  local arm = arm_subject() -- for its geometry only
  local s, p = arm.root, arm.pole
  local function arm_case(name, path)
    cases[#cases + 1] = { subject = "rig arm", path = name, make = arm_subject, target = path }
  end
  arm_case("through the pole axis", through_pole_axis(s, p, 0.35, 0.09, 0.01))
  arm_case("through the root", line_through(s, ik.vec3(0.3, -0.8, 0.5):normalized(), 0.3))
  arm_case("near the root",
    circle(s + ik.vec3(0.03, 0, 0), ik.vec3(1, 0, 0), ik.vec3(0, 0.6, 0.8), 0.04, 0.5, 0))
  arm_case("fast", circle(s + ik.vec3(0.3, -0.1, 0.1), ik.vec3(0, 1, 0), ik.vec3(0, 0, 1), 0.15, 2, 0))

  local terrain = require("terrain")
  local function leg_case(name, z0, z1, x)
    cases[#cases + 1] = {
      subject = "rig leg", path = name,
      make = function() return leg_subject(x, z0) end,
      target = function(t)
        local h0, h1 = terrain.height(x, z0), terrain.height(x, z1)
        return ik.vec3(x + 0.05 * sin(2 * pi * t), 1 + h0 + (h1 - h0) * t, z0 + (z1 - z0) * t)
      end,
    }
  end
  leg_case("steps up", 1.8, 3.0, 0)
  leg_case("steps down", 3.0, 1.8, 0)
  leg_case("slope", 4.8, 5.6, 0)

  local function walker_case(name, layout, gait, velocity, turn_rate)
    cases[#cases + 1] = { subject = "rig walker " .. gait, path = name,
                          make = function() return walker_subject(layout, gait, velocity, turn_rate) end }
  end
  walker_case("turning walk", QUAD, "alternate", { 0, 0, 0.3 }, 1)
  walker_case("turning walk", HEX, "tripod", { 0.2, 0, 0 }, 2)
  walker_case("turning walk", HEX, "ripple", { 0, 0, 0.6 }, 1)
  walker_case("straight walk", HEX, "tripod", { 0, 0, 0.5 }, nil)

  local head = ik.vec3(0, 1.6, 0)
  cases[#cases + 1] = { subject = "rig look", path = "circling, behind", make = look_subject,
                        target = circle(head, ik.vec3(0, 0, 1), ik.vec3(1, 0, 0), 1, 0.5, 0) }
  cases[#cases + 1] = { subject = "rig look", path = "through the head", make = look_subject,
                        target = line_through(head, ik.vec3(0.2, 0.1, 1):normalized(), 0.3) }
  cases[#cases + 1] = { subject = "rig chest", path = "circling overhead", make = chest_subject,
                        target = circle(ik.vec3(0, 1.5, 0), ik.vec3(1, 0, 0), ik.vec3(0, 0, 1), 0.2, 0.5, 0) }
  cases[#cases + 1] = { subject = "rig root", path = "fast", make = root_subject,
                        target = circle(ik.vec3(0, 1, 0), ik.vec3(1, 0, 0), ik.vec3(0, 0, 1), 0.5, 2, 0) }
  return cases
end

-- ---- measuring ----

-- One run of a case at hz for a second: flips, the points every frame (for the jerk),
-- the target every frame, and the last frame's points.
local function run_case(case, hz)
  local subject = case.make()
  local frames = hz
  local flips, prev_dirs, prev_owners = 0, nil, nil
  local series, targets = {}, {}
  for f = 0, frames do
    local t = f / hz
    local goal = case.target and case.target(t) or nil
    subject.step(goal, f == 0 and 0 or 1 / hz)
    local target = goal or subject.target()
    local chains = subject.points()
    local own = subject.leg_targets and subject.leg_targets() or nil
    local dirs, owners, flat = {}, {}, {}
    for c, list in ipairs(chains) do
      for i = 1, #list - 1 do
        dirs[#dirs + 1] = (list[i + 1] - list[i]):normalized()
        owners[#dirs] = own and own[c] or target
      end
      for i = 2, #list do flat[#flat + 1] = list[i] end
    end
    if prev_dirs then
      for i, d in ipairs(dirs) do
        local moved = (owners[i] - prev_owners[i]):length()
        if moved < M.FLIP_MOVE * subject.limb and angle(prev_dirs[i], d) > M.FLIP_ANGLE then
          flips = flips + 1
          break
        end
      end
    end
    prev_dirs, prev_owners = dirs, owners
    series[#series + 1], targets[#targets + 1] = flat, target
  end
  return { flips = flips, series = series, targets = targets, last = series[#series], limb = subject.limb }
end

-- RMS of the third difference of a list of positions, per second cubed.
local function rms_jerk(list, dt)
  local sum, n = 0, 0
  for k = 4, #list do
    local j = (list[k] - list[k - 1] * 3 + list[k - 2] * 3 - list[k - 3]) * (1 / dt ^ 3)
    sum, n = sum + j:dot(j), n + 1
  end
  return n > 0 and math.sqrt(sum / n) or 0
end

-- The figures of one case.
function M.measure(case)
  local runs = {}
  for _, hz in ipairs(M.RATES) do runs[hz] = run_case(case, hz) end
  local flips, apart = 0, 0
  for _, hz in ipairs(M.RATES) do flips = math.max(flips, runs[hz].flips) end
  for _, hz in ipairs(M.RATES) do
    for i, p in ipairs(runs[hz].last) do apart = math.max(apart, (p - runs[60].last[i]):length()) end
  end
  local r60, dt = runs[60], 1 / 60
  local worst = 0
  for i = 1, #r60.last do
    local list = {}
    for k, frame in ipairs(r60.series) do list[k] = frame[i] end
    worst = math.max(worst, rms_jerk(list, dt))
  end
  local target_jerk = rms_jerk(r60.targets, dt)
  return { subject = case.subject, path = case.path, flips = flips,
           jerk = target_jerk > 1e-9 and worst / target_jerk or nil, agreement = apart / r60.limb }
end

-- How far each rate's last frame is from a run at ref_hz (default 2,880 Hz: nearly the
-- continuous path), in limb lengths: what sampling the target costs a subject that
-- remembers its path (docs/motion.md). Returns { [hz] = distance }.
function M.against_continuous(case, ref_hz)
  ref_hz = ref_hz or 2880
  local ref = run_case(case, ref_hz)
  local out = {}
  for _, hz in ipairs(M.RATES) do
    local r, apart = run_case(case, hz), 0
    for i, p in ipairs(r.last) do apart = math.max(apart, (p - ref.last[i]):length()) end
    out[hz] = apart / ref.limb
  end
  return out
end

function M.run(filter)
  local rows = {}
  for _, case in ipairs(M.cases()) do
    if not filter or (case.subject .. " " .. case.path):find(filter, 1, true) then
      rows[#rows + 1] = M.measure(case)
    end
  end
  return rows
end

function M.failures(rows)
  local bad = {}
  for _, r in ipairs(rows) do
    if r.flips > 0 or r.agreement > M.AGREEMENT or r.agreement ~= r.agreement then bad[#bad + 1] = r end
  end
  return bad
end

function M.table(rows)
  local head = string.format("| %-20s | %-22s | %5s | %8s | %9s |", "subject", "path", "flips", "jerk",
    "agreement")
  local out = { head,
                "|----------------------|------------------------|------:|---------:|----------:|" }
  for _, r in ipairs(rows) do
    out[#out + 1] = string.format("| %-20s | %-22s | %5d | %8s | %9.2e |", r.subject, r.path, r.flips,
      r.jerk and string.format("%.3g", r.jerk) or "-", r.agreement)
  end
  return table.concat(out, "\n")
end

return M
