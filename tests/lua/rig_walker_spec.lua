-- ik.rigs.walker: a hexapod and a quadruped walking the test course (tests/lua/terrain.lua:
-- flat ground, stairs, a 20 degree slope, a ledge) for 30 s, with the walker's promises
-- checked every frame: planted feet on the ground and still, never two neighbouring
-- legs in the air, hips within reach, no NaN; no spin at the ledge, no jitter on the
-- slope, and the same footholds at 30 and 60 Hz. Legs are built as an ik.skeleton and as
-- plain-Lua transforms.
local ik = require("ik")
local walker = require("ik.rigs.walker")
local terrain = require("terrain")
local mock = require("mock_transform")

local double = ik.real == "double"
local SLIDE_TOL = double and 1e-6 or 1e-4 -- per frame, planted feet
-- Exact results, rounded: positions and lengths (a course of ~10 m), and angles.
local EPS = double and 1e-9 or 2e-5
local ANGLE_EPS = double and 1e-9 or 1e-4
local GROUND_TOL = 1e-3 -- planted feet against the plain-Lua height function
local FOOT_OFFSET = 0.02
local BODY_HEIGHT = 0.49
local atan2 = math.atan2 or math.atan

local function xyz(v)
  if type(v) == "table" and v[1] ~= nil then return v[1], v[2], v[3] end
  return v.x, v.y, v.z
end

local function quat4(q)
  if type(q) == "table" and q[1] ~= nil then return q[1], q[2], q[3], q[4] end
  return q.x, q.y, q.z, q.w
end

local function finite(...)
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    if type(v) ~= "number" or v ~= v or v == math.huge or v == -math.huge then return false end
  end
  return true
end

local function wrap(a) return a - 2 * math.pi * math.floor((a + math.pi) / (2 * math.pi)) end

-- ---- robots ----

-- Hips in the body frame (+X left, +Z forward), knees out and up, feet out and down:
-- standing, each foot is FOOT_OFFSET above the ground under it.
local HEX = {
  { "l1", 1, 0.35 }, { "l2", 1, 0 }, { "l3", 1, -0.35 },
  { "r1", -1, 0.35 }, { "r2", -1, 0 }, { "r3", -1, -0.35 },
}
local QUAD = { { "l1", 1, 0.3 }, { "l2", 1, -0.3 }, { "r1", -1, 0.3 }, { "r2", -1, -0.3 } }
-- Different step distances, as the source suggests (the gait groups keep order anyway).
local STEP = { l1 = 0.24, l2 = 0.22, l3 = 0.25, r1 = 0.23, r2 = 0.25, r3 = 0.22 }

local function leg_parts(side, z)
  return { side * 0.25, 0, z }, { side * 0.25, 0.15, 0 }, { side * 0.1, FOOT_OFFSET - BODY_HEIGHT - 0.15, 0 }
end

-- An ik.skeleton robot standing at (x, ground + BODY_HEIGHT, z) facing yaw.
local function skeleton_robot(layout, x, z, yaw)
  local ground_y = terrain.height(x, z) or 0
  local bones = { { name = "body", position = { x, ground_y + BODY_HEIGHT, z },
                    rotation = ik.quat.axis_angle({ 0, 1, 0 }, yaw or 0) } }
  for _, l in ipairs(layout) do
    local hip, knee, foot = leg_parts(l[2], l[3])
    bones[#bones + 1] = { name = "hip_" .. l[1], parent = "body", position = hip }
    bones[#bones + 1] = { name = "knee_" .. l[1], parent = "hip_" .. l[1], position = knee }
    bones[#bones + 1] = { name = "foot_" .. l[1], parent = "knee_" .. l[1], position = foot }
  end
  local sk = ik.skeleton(bones)
  local robot = { body = sk:bone("body"), legs = {}, names = {}, skeleton = sk }
  for i, l in ipairs(layout) do
    robot.legs[i] = { name = l[1], hip = sk:bone("hip_" .. l[1]), knee = sk:bone("knee_" .. l[1]),
                      foot = sk:bone("foot_" .. l[1]), pole_offset = { l[2] * 0.2, 0.5, 0 },
                      step_distance = STEP[l[1]] }
  end
  return robot
end

-- The same robot from plain-Lua transforms (tests/lua/mock_transform.lua: local
-- positions and rotations under their parents, as an engine's scene graph keeps them).
local function mock_robot(layout, x, z, yaw)
  local ground_y = terrain.height(x, z) or 0
  local q = ik.quat.axis_angle({ 0, 1, 0 }, yaw or 0)
  local body = mock.new{ position = { x, ground_y + BODY_HEIGHT, z }, rotation = { q:unpack() } }
  local robot = { body = body, legs = {} }
  for i, l in ipairs(layout) do
    local hip_l, knee_l, foot_l = leg_parts(l[2], l[3])
    local hip = mock.new{ position = hip_l, parent = body }
    local knee = mock.new{ position = knee_l, parent = hip }
    local foot = mock.new{ position = foot_l, parent = knee }
    robot.legs[i] = { name = l[1], hip = hip, knee = knee, foot = foot, pole_offset = { l[2] * 0.2, 0.5, 0 },
                      step_distance = STEP[l[1]] }
  end
  return robot
end

local function make_walker(robot, ground, extra)
  local opts = { body = robot.body, legs = robot.legs, ground = ground, step_height = 0.15, step_time = 0.25,
                 body_height = BODY_HEIGHT, foot_offset = FOOT_OFFSET, gait = "tripod" }
  for k, v in pairs(extra or {}) do opts[k] = v end
  return walker.new(opts)
end

-- ---- the host: walks the course, then turns in place at the ledge ----

local START_Z, STOP_Z, SPEED = -2, 9.35, 0.5
local RAMP = 1 -- seconds to reach SPEED, and to stop
local CRUISE = (STOP_Z - START_Z - SPEED * RAMP) / SPEED
local STOP_T = 2 * RAMP + CRUISE

-- The course: accelerate, cruise, decelerate to a stop with the front hips over the
-- ledge, then turn left and right there. Returns x, z and the heading at time t.
local function course(t)
  local a, z = SPEED / RAMP
  if t <= RAMP then
    z = START_Z + 0.5 * a * t * t
  elseif t <= RAMP + CRUISE then
    z = START_Z + 0.5 * SPEED * RAMP + SPEED * (t - RAMP)
  elseif t <= STOP_T then
    local u = t - RAMP - CRUISE
    z = START_Z + 0.5 * SPEED * RAMP + SPEED * CRUISE + SPEED * u - 0.5 * a * u * u
  else
    z = STOP_Z
  end
  local yaw = t <= STOP_T + 0.5 and 0 or 0.7 * math.sin(2 * math.pi * (t - STOP_T - 0.5) / 5)
  return 0, z, yaw
end

-- Neighbour pairs, written out from the layouts (not taken from the walker).
local HEX_NEIGHBOURS = { { 1, 2 }, { 2, 3 }, { 4, 5 }, { 5, 6 }, { 1, 4 }, { 2, 5 }, { 3, 6 } }
local QUAD_NEIGHBOURS = { { 1, 2 }, { 3, 4 }, { 1, 3 }, { 2, 4 } }

-- Runs the walker at `hz` for `seconds`, the host putting the body where host(t) says
-- (x, z, heading) before each update (nil: the walker drives), and checks every frame. Returns the figures;
-- `failures` lists the first broken promises.
local function run(robot, w, hz, seconds, host)
  local dt = 1 / hz
  local frames = math.floor(seconds * hz + 0.5)
  local n = #w.legs
  local pairs_ = n == 6 and HEX_NEIGHBOURS or QUAD_NEIGHBOURS
  local stats = { max_slide = 0, min_clearance = math.huge, min_swing_clearance = math.huge,
                  max_ground_error = 0, max_target_error = 0, max_reach = 0, steps = 0, plants = {},
                  failures = {}, pitch = {}, pitch_goal = {}, roll = {}, height = {}, on_slope = {},
                  yaw_error = 0, max_tilt = 0, frames = frames }
  for i = 1, n do stats.plants[i] = {} end
  local function fail(msg)
    if #stats.failures < 10 then stats.failures[#stats.failures + 1] = msg end
  end
  local prev, prev_steps = {}, {}
  for i = 1, n do prev_steps[i] = w.legs[i].steps end
  for f = 1, frames do
    local t = f * dt
    local x, z, yaw
    if host then
      x, z, yaw = host(t)
      local _, by = xyz(robot.body:get_position())
      robot.body:set_position({ x, by, z })
      robot.body:set_rotation({ ik.quat.axis_angle({ 0, 1, 0 }, yaw):unpack() })
    end
    w:update(dt)
    if not host then -- the walker drives: check against where it says it went
      local px, _, pz = xyz(robot.body:get_position())
      x, z = px, pz
      yaw = w.yaw
    end

    local px, py, pz = xyz(robot.body:get_position())
    local qx, qy, qz, qw = quat4(robot.body:get_rotation())
    if not finite(px, py, pz, qx, qy, qz, qw) then fail("frame " .. f .. ": body not finite") end
    if math.abs(px - x) > EPS or math.abs(pz - z) > EPS then
      fail("frame " .. f .. ": the body left the host's path")
    end
    local forward = ik.quat(qx, qy, qz, qw) * ik.vec3(0, 0, 1)
    stats.yaw_error = math.max(stats.yaw_error, math.abs(wrap(atan2(forward.x, forward.z) - yaw)))
    stats.max_tilt = math.max(stats.max_tilt, math.abs(w.pitch), math.abs(w.roll))
    stats.pitch[f], stats.roll[f], stats.height[f], stats.pitch_goal[f] = w.pitch, w.roll, py, w.pitch_goal
    local on_slope = true

    local air = {}
    for i = 1, n do
      local leg, spec = w.legs[i], robot.legs[i]
      local fx, fy, fz = xyz(spec.foot:get_position())
      local kx, ky, kz = xyz(spec.hip:get_position())
      if not finite(fx, fy, fz, kx, ky, kz) then fail("frame " .. f .. ": leg " .. i .. " not finite") end
      local ground = terrain.height(fx, fz)
      local support = leg.planted and leg.plant or leg.dest
      on_slope = on_slope and support[3] > terrain.SLOPE_Z + 0.05 and support[3] < terrain.PLATEAU_Z - 0.05
      if leg.planted then
        if not ground then
          fail("frame " .. f .. ": leg " .. i .. " planted off the course")
        else
          local e = math.abs(fy - FOOT_OFFSET - ground)
          stats.max_ground_error = math.max(stats.max_ground_error, e)
          if e > GROUND_TOL then
            fail(string.format("frame %d: leg %d planted %.4f off the ground", f, i, e))
          end
        end
        local reach = math.sqrt((fx - kx) ^ 2 + (fy - ky) ^ 2 + (fz - kz) ^ 2)
        stats.max_reach = math.max(stats.max_reach, reach / (leg.upper + leg.lower))
        if reach > leg.upper + leg.lower + EPS then
          fail("frame " .. f .. ": leg " .. i .. " out of reach")
        end
        local te = math.sqrt((fx - leg.target[1]) ^ 2 + (fy - leg.target[2]) ^ 2 + (fz - leg.target[3]) ^ 2)
        stats.max_target_error = math.max(stats.max_target_error, te)
        if prev[i] and prev[i].planted and leg.steps == prev_steps[i] then
          local slide = math.sqrt((fx - prev[i][1]) ^ 2 + (fy - prev[i][2]) ^ 2 + (fz - prev[i][3]) ^ 2)
          stats.max_slide = math.max(stats.max_slide, slide)
          if slide > SLIDE_TOL then fail(string.format("frame %d: leg %d slid %.3g", f, i, slide)) end
        end
      else
        air[i] = true
        if ground then
          local c = fy - FOOT_OFFSET - ground
          stats.min_clearance = math.min(stats.min_clearance, c)
          -- while it moves across (the middle of the swing), the foot is well clear
          if leg.t > 0.2 and leg.t < 0.8 then
            stats.min_swing_clearance = math.min(stats.min_swing_clearance, c)
          end
        end
      end
      if leg.steps ~= prev_steps[i] then
        local p = stats.plants[i]
        p[#p + 1] = { leg.plant[1], leg.plant[2], leg.plant[3], t }
        stats.steps = stats.steps + (leg.steps - prev_steps[i])
        prev_steps[i] = leg.steps
      end
      prev[i] = { fx, fy, fz, planted = leg.planted }
    end
    stats.on_slope[f] = on_slope
    for _, pair in ipairs(pairs_) do
      if air[pair[1]] and air[pair[2]] then
        fail(string.format("frame %d: neighbours %d and %d both in the air", f, pair[1], pair[2]))
      end
    end
  end
  return stats
end

local function report(label, s)
  if os.getenv("IK_WALKER_REPORT") then
    io.stderr:write(string.format("\n%s: %d steps, max slide %.3g, min clearance %.3g (mid-swing %.3f), "
      .. "max ground error %.3g, max target error %.3g, max reach %.3f of the leg, max tilt %.3f, "
      .. "max yaw error %.3g\n", label, s.steps, s.max_slide, s.min_clearance, s.min_swing_clearance,
      s.max_ground_error, s.max_target_error, s.max_reach, s.max_tilt, s.yaw_error))
  end
end

-- What every run must show.
local function assert_clean(s)
  assert.are.same({}, s.failures)
  assert.is_true(s.steps > 0)
  assert.is_true(s.max_slide <= SLIDE_TOL)
  assert.is_true(s.max_reach <= 1)
  assert.is_true(s.min_clearance >= -EPS, "a swinging foot went into the ground: " .. s.min_clearance)
  assert.is_true(s.yaw_error <= ANGLE_EPS, "the body's heading differs from the host's by " .. s.yaw_error)
end

-- Whether a leg stepped back and forth: planted where it was two steps before, after
-- going somewhere else (landing before `until_t`, default any time: a host that turns
-- the body back and forth may bring a leg back where it was, rightly).
local function dithers(plants, tol, until_t)
  for _, list in ipairs(plants) do
    for k = 3, #list do
      local a, b, c = list[k - 2], list[k - 1], list[k]
      if until_t and c[4] > until_t then break end
      local back = math.sqrt((a[1] - c[1]) ^ 2 + (a[2] - c[2]) ^ 2 + (a[3] - c[3]) ^ 2)
      local moved = math.sqrt((a[1] - b[1]) ^ 2 + (a[2] - b[2]) ^ 2 + (a[3] - b[3]) ^ 2)
      if back < tol and moved > tol then return true end
    end
  end
  return false
end

-- The largest |second difference| of a series over the frames where `where` holds
-- (and its neighbours too).
local function max_second_difference(series, where, from, to)
  local m = 0
  for f = math.max(2, from or 2), math.min(#series - 1, to or #series - 1) do
    if not where or (where[f - 1] and where[f] and where[f + 1]) then
      m = math.max(m, math.abs(series[f + 1] - 2 * series[f] + series[f - 1]))
    end
  end
  return m
end

describe("ik.rigs.walker", function()
  local ground = terrain.ground()

  -- The hexapod (tripod gait, ik.skeleton) on the course, run once per rate and shared
  -- by the tests that look at it from different sides.
  local hexapod_runs = {}
  local function hexapod_course(hz)
    if not hexapod_runs[hz] then
      local robot = skeleton_robot(HEX, 0, START_Z)
      local w = make_walker(robot, ground)
      hexapod_runs[hz] = { stats = run(robot, w, hz, 30, course), walker = w }
    end
    return hexapod_runs[hz].stats, hexapod_runs[hz].walker
  end

  describe("the test terrain", function()
    it("answers rays as its height function says", function()
      local rng = 12345
      local function rand()
        rng = (rng * 1103515245 + 12345) % 2147483648
        return rng / 2147483648
      end
      for _ = 1, 300 do
        local x, z = -1.9 + 3.8 * rand(), -2.9 + 14.8 * rand()
        local h = terrain.height(x, z)
        local hit, point = ground:raycast(ik.vec3(x, 5, z), ik.vec3(0, -1, 0), 20)
        assert.is_true(hit)
        assert.is_true(math.abs(point.y - h) < EPS, string.format("at (%g, %g): %g vs %g", x, z, point.y, h))
      end
      assert.is_false((ground:raycast(ik.vec3(3, 5, 0), ik.vec3(0, -1, 0), 20)))
      assert.is_true(terrain.PLATEAU_Y - terrain.FLOOR_Y > 1.4)
    end)
  end)

  describe("construction", function()
    it("reads the layout: sides, neighbours and gait groups", function()
      local robot = skeleton_robot(HEX, 0, -2)
      local w = make_walker(robot, ground)
      assert.are.equal(300, w.order)
      assert.are.equal("left", w.legs[1].side)
      assert.are.equal(1, w.legs[1].rank)
      assert.are.equal("right", w.legs[6].side)
      assert.are.equal(3, w.legs[6].rank)
      local g1, g2 = w.legs[1].group, w.legs[4].group
      assert.are_not.equal(g1, g2)
      assert.are.equal(g1, w.legs[5].group) -- l1, r2, l3 together
      assert.are.equal(g1, w.legs[3].group)
      for i, leg in ipairs(w.legs) do
        assert.is_true(leg.planted)
        local fx, fy, fz = xyz(robot.legs[i].foot:get_position())
        assert.is_true(math.abs(fy - FOOT_OFFSET - terrain.height(fx, fz)) < EPS + 1e-6)
      end
      local ripple = make_walker(skeleton_robot(HEX, 0, -2), ground, { gait = "ripple" })
      assert.are.equal(3, #ripple.groups)
      local quad = make_walker(skeleton_robot(QUAD, 0, -2), ground, { gait = "alternate" })
      assert.are.equal(quad.legs[1].group, quad.legs[4].group) -- front left with back right
    end)

    it("refuses what cannot walk", function()
      local robot = skeleton_robot(HEX, 0, -2)
      local function bad(extra, fragment)
        local ok, err = pcall(make_walker, robot, ground, extra)
        assert.is_false(ok)
        assert.is_truthy(tostring(err):find(fragment, 1, true), tostring(err))
      end
      bad({ gait = "gallop" }, "option 'gait'")
      bad({ gait = { { 1, 2 }, { 3, 4, 5, 6 } } }, "neighbouring legs")
      bad({ legs = { robot.legs[1], robot.legs[2], robot.legs[3] } }, "4 or 6 legs")
      bad({ ground = 3 }, "option 'ground'")
      bad({ step_time = -1 }, "option 'step_time'")
      bad({ stride = 1 }, "no option 'stride'")
      local quad = skeleton_robot(QUAD, 0, -2)
      local ok, err = pcall(make_walker, quad, ground, { gait = "tripod" })
      assert.is_false(ok)
      assert.is_truthy(tostring(err):find("needs 6 legs", 1, true))
      local w = make_walker(robot, ground)
      assert.is_false(pcall(w.update, w, -1))
      assert.is_false(pcall(w.update, w, 0 / 0))
    end)
  end)

  describe("walking the course for 30 s at 60 Hz", function()
    it("hexapod, tripod gait, ik.skeleton: feet planted, still, within reach; no NaN", function()
      local s, w = hexapod_course(60)
      report("hexapod tripod skeleton 60 Hz", s)
      assert_clean(s)
      assert.is_false(dithers(s.plants, 0.02, STOP_T + 0.5))
      assert.is_true(s.min_swing_clearance > 0.05)
      -- It climbed the stairs and the slope: every foot ends on the plateau.
      for _, leg in ipairs(w.legs) do assert.is_true(math.abs(leg.plant[2] - terrain.PLATEAU_Y) < EPS) end
    end)

    it("hexapod, ripple gait, plain-Lua transforms", function()
      local robot = mock_robot(HEX, 0, START_Z)
      local w = make_walker(robot, ground, { gait = "ripple" })
      local s = run(robot, w, 60, 30, course)
      report("hexapod ripple mock 60 Hz", s)
      assert_clean(s)
      assert.is_false(dithers(s.plants, 0.02, STOP_T + 0.5))
      for _, leg in ipairs(w.legs) do assert.is_true(math.abs(leg.plant[2] - terrain.PLATEAU_Y) < EPS) end
    end)

    it("quadruped, alternate gait, ik.skeleton", function()
      local robot = skeleton_robot(QUAD, 0, START_Z)
      local w = make_walker(robot, ground, { gait = "alternate" })
      local s = run(robot, w, 60, 30, course)
      report("quadruped alternate skeleton 60 Hz", s)
      assert_clean(s)
      assert.is_false(dithers(s.plants, 0.02, STOP_T + 0.5))
    end)

    it("quadruped, ripple gait, plain-Lua transforms", function()
      local robot = mock_robot(QUAD, 0, START_Z)
      local w = make_walker(robot, ground, { gait = "ripple" })
      local s = run(robot, w, 60, 30, course)
      report("quadruped ripple mock 60 Hz", s)
      assert_clean(s)
      assert.is_false(dithers(s.plants, 0.02, STOP_T + 0.5))
    end)
  end)

  describe("at the ledge", function()
    -- Walks up to the edge of the plateau until the front hips are over the drop, turns
    -- a full circle there, then backs off.
    local EDGE = terrain.LEDGE_Z
    local function ledge_host(t)
      local z, yaw
      if t < 3 then
        yaw = 0
        z = 8.2 + (EDGE - 0.1 - 8.2) * (1 - math.cos(math.pi * t / 3)) / 2
      elseif t < 13 then
        z = EDGE - 0.1
        yaw = 2 * math.pi * (1 - math.cos(math.pi * (t - 3) / 10)) / 2
      else
        z = EDGE - 0.1 - 0.5 * math.min(1, (t - 13) / 2)
        yaw = 2 * math.pi
      end
      return 0, z, yaw
    end

    it("keeps the feet on the plateau, and the body's heading exactly the host's", function()
      for _, build in ipairs({ skeleton_robot, mock_robot }) do
        local robot = build(HEX, 0, 8.2)
        local w = make_walker(robot, ground)
        local s = run(robot, w, 60, 16, ledge_host)
        report("hexapod at the ledge", s)
        assert_clean(s)
        assert.is_false(dithers(s.plants, 0.02, 13)) -- turning one way, no leg comes back
        for _, list in ipairs(s.plants) do
          for _, p in ipairs(list) do
            assert.is_true(math.abs(p[2] - terrain.PLATEAU_Y) < EPS, "a foot stepped down the ledge")
            assert.is_true(p[3] <= EDGE)
          end
        end
        -- Level plateau: no tilt, and the height of the plateau plus body_height.
        assert.is_true(s.max_tilt < ANGLE_EPS, "tilted by " .. s.max_tilt)
        for f = 1, s.frames do
          assert.is_true(math.abs(s.height[f] - (terrain.PLATEAU_Y + BODY_HEIGHT)) < EPS)
        end
      end
    end)

    it("does not step off when the host pushes the body to the edge, with a floor below or none", function()
      -- The same course with nothing at all beyond the ledge: no ground under a ray.
      local mesh = terrain.ground()
      local void = ik.ground.custom(function(origin, direction, max_distance)
        local hit, point, normal = mesh:raycast(origin, direction, max_distance)
        if hit and point.z > EDGE then return false end
        return hit, point, normal
      end)
      local cases = { { QUAD, "alternate", ground }, { HEX, "tripod", void }, { QUAD, "ripple", void } }
      for _, case in ipairs(cases) do
        local robot = skeleton_robot(case[1], 0, 8.2)
        local w = make_walker(robot, case[3], { gait = case[2] })
        local s = run(robot, w, 60, 8, function(t)
          return 0, 8.2 + (EDGE + 1e-3 - 8.2) * math.min(1, t / 5), 0.3 * math.sin(t)
        end)
        report("pushed to the edge (" .. case[2] .. ")", s)
        assert_clean(s)
        for _, list in ipairs(s.plants) do
          for _, p in ipairs(list) do
            assert.is_true(math.abs(p[2] - terrain.PLATEAU_Y) < EPS, "a foot stepped down the ledge")
            assert.is_true(p[3] <= EDGE)
          end
        end
        assert.is_true(s.max_tilt < ANGLE_EPS)
      end
    end)
  end)

  describe("on the slope", function()
    it("has no jitter: the pitch is steady, and no leg steps back and forth", function()
      local s = hexapod_course(60)
      assert_clean(s)
      -- With every foot on the slope the goal is the slope, exactly, whatever the legs
      -- do; settled (every foot on it for the last 2 s), the body is there too.
      local settled, on = {}, 0
      for f = 1, s.frames do
        if s.on_slope[f] then
          local goal = s.pitch_goal[f]
          assert.is_true(math.abs(goal + terrain.SLOPE_ANGLE) < ANGLE_EPS, "goal " .. goal)
        end
        local all = f > 120
        for g = f - 120, f do all = all and s.on_slope[g] end
        settled[f] = all
        if all then on = on + 1 end
      end
      assert.is_true(on > 30, "the walk never had every foot on the slope for long")
      for f = 1, s.frames do
        if settled[f] then
          assert.is_true(math.abs(s.pitch[f] + terrain.SLOPE_ANGLE) < 1e-4, "pitch " .. s.pitch[f])
        end
      end
      local still = max_second_difference(s.pitch, settled)
      local whole = max_second_difference(s.pitch)
      -- Over the whole walk the pitch turns round (its velocity changes sign) only where
      -- the ground changes: a jittering body would turn round every few frames.
      local reversals, last = 0, 0
      for f = 2, s.frames do
        local v = s.pitch[f] - s.pitch[f - 1]
        if math.abs(v) > 1e-6 then
          if last ~= 0 and (v > 0) ~= (last > 0) then reversals = reversals + 1 end
          last = v
        end
      end
      if os.getenv("IK_WALKER_REPORT") then
        io.stderr:write(string.format("\nslope: %d frames settled on it, pitch 2nd difference %.3g there, "
          .. "%.3g over the whole walk, %d turnarounds of the pitch\n", on, still, whole, reversals))
      end
      assert.is_true(still < 1e-7, "pitch second difference on the slope " .. still)
      assert.is_true(whole < 2e-3, "pitch second difference " .. whole)
      assert.is_true(reversals <= 12, reversals .. " turnarounds of the pitch")
      assert.is_false(dithers(s.plants, 0.02, STOP_T + 0.5))
    end)

    it("standing or creeping on it, does not fidget", function()
      local robot = skeleton_robot(HEX, 0, 6)
      local w = make_walker(robot, ground)
      local s = run(robot, w, 60, 5, function() return 0, 6, 0 end)
      assert.are.same({}, s.failures)
      assert.are.equal(0, s.steps)
      assert.is_true(max_second_difference(s.pitch) < 1e-12)
      -- 2 cm/s uphill: every step is a full step forward, none back.
      s = run(robot, w, 60, 20, function(t) return 0, 6 + 0.02 * t, 0 end)
      assert.are.same({}, s.failures)
      assert.is_false(dithers(s.plants, 0.02))
      for _, list in ipairs(s.plants) do
        for k = 2, #list do assert.is_true(list[k][3] > list[k - 1][3]) end
      end
    end)
  end)

  describe("as a rig", function()
    it("fades out and back in with enabled, leaving the bones alone while off", function()
      local robot = skeleton_robot(HEX, 0, -2.5)
      local w = make_walker(robot, ground, { blend_time = 0.2 })
      local function host(t) return 0, -2.5 + 0.3 * t, 0 end
      local s = run(robot, w, 60, 2, host)
      assert_clean(s)
      w.enabled = false
      local weights = {}
      for f = 1, 15 do
        w:update(1 / 60)
        weights[f] = w.applied_weight
      end
      for f = 2, 12 do assert.is_true(weights[f] < weights[f - 1]) end -- no snap: a ramp
      assert.are.equal(0, weights[15])
      -- Off: whatever the host does to the body and legs stays.
      robot.body:set_position({ 0, 0.7, -1.5 })
      local hip = robot.legs[1].hip
      hip:set_rotation(ik.quat.axis_angle({ 1, 0, 0 }, 0.3))
      local q, y = ik.quat(hip:get_rotation()), robot.body:get_position().y
      w:update(1 / 60)
      assert.are.equal(q, ik.quat(hip:get_rotation()))
      assert.are.equal(y, robot.body:get_position().y)
      -- Back on: it stands afresh where the body now is, blends in, and walks on.
      w.enabled = true
      for _ = 1, 12 do w:update(1 / 60) end
      assert.are.equal(1, w.applied_weight)
      s = run(robot, w, 60, 3, function(t) return 0, -1.5 + 0.3 * t, 0 end)
      assert_clean(s)
      for i, leg in ipairs(w.legs) do
        assert.is_true(leg.planted)
        local _, fy = xyz(robot.legs[i].foot:get_position())
        assert.is_true(math.abs(fy - FOOT_OFFSET) < EPS)
      end
      assert.is_true(math.abs(robot.body:get_position().y - BODY_HEIGHT) < EPS + 1e-6)
    end)

    it("at half weight, goes half way from the host's height", function()
      local robot = skeleton_robot(QUAD, 0, 5)
      local w = make_walker(robot, ground, { gait = "alternate", weight = 0.5 })
      for _ = 1, 120 do
        robot.body:set_position({ 0, 1, 5 })
        robot.body:set_rotation(ik.quat())
        w:update(1 / 60)
      end
      local y = robot.body:get_position().y
      assert.is_true(math.abs(y - (1 + 0.5 * (w.height - 1))) < EPS)
    end)

    it("moves the body itself: velocity, turn rate, path", function()
      local robot = skeleton_robot(HEX, 0, -2)
      local w = make_walker(robot, ground, { velocity = { 0, 0, 0.4 } })
      local s = run(robot, w, 60, 5, nil)
      assert_clean(s)
      assert.is_true(math.abs(robot.body:get_position().z - 0) < EPS)
      assert.is_true(s.steps >= 12)

      robot = skeleton_robot(QUAD, 0, -1)
      w = make_walker(robot, ground, { gait = "alternate", turn_rate = 0.5 })
      s = run(robot, w, 60, 4, nil)
      assert_clean(s)
      assert.is_true(math.abs(wrap(w.yaw - 2)) < ANGLE_EPS)

      robot = skeleton_robot(HEX, 0, -2)
      w = make_walker(robot, ground, { path = { { 0, 0, -1 }, { 1, 0, 0 }, { 1, 0, 1 } }, speed = 0.4 })
      s = run(robot, w, 60, 10, nil)
      assert_clean(s)
      assert.is_true(w.path_done)
      local p = robot.body:get_position()
      assert.is_true(math.abs(p.x - 1) < EPS and math.abs(p.z - 1) < EPS)
      assert.is_true(math.abs(w.yaw) < 0.2) -- facing along the last leg of the path (+Z)
    end)
  end)

  describe("frame rate", function()
    -- The walk (to the stop at the ledge; turning there, the legs find the edge by
    -- turns and their order may come out otherwise).
    it("plants the feet in the same places at 30 and 60 Hz", function()
      local plants = {}
      for _, hz in ipairs({ 30, 60 }) do
        local s = hexapod_course(hz)
        assert_clean(s)
        plants[hz] = {}
        for i, list in ipairs(s.plants) do
          plants[hz][i] = {}
          for _, p in ipairs(list) do
            if p[4] < STOP_T then plants[hz][i][#plants[hz][i] + 1] = p end
          end
        end
      end
      local worst, count_diff, steps = 0, 0, 0
      for i = 1, #plants[30] do
        local a, b = plants[30][i], plants[60][i]
        count_diff = math.max(count_diff, math.abs(#a - #b))
        steps = steps + #b
        for k = 1, math.min(#a, #b) do
          local d = math.sqrt((a[k][1] - b[k][1]) ^ 2 + (a[k][2] - b[k][2]) ^ 2 + (a[k][3] - b[k][3]) ^ 2)
          worst = math.max(worst, d)
        end
      end
      if os.getenv("IK_WALKER_REPORT") then
        io.stderr:write(string.format("\n30 vs 60 Hz: %d steps, step counts differ by %d at most, "
          .. "footholds by %.4g\n", steps, count_diff, worst))
      end
      assert.is_true(steps > 100)
      assert.are.equal(0, count_diff)
      assert.is_true(worst < 0.01, "footholds differ by " .. worst)
    end)

    -- Walking and turning for 1 s on flat ground (the walker driving: velocity, turn
    -- rate), at 30, 60 and 144 Hz: the feet at the end. Gait groups that came to want a
    -- step within one frame stepped in turn order, not in the order they came to want
    -- it (the quadruped's diagonal pairs 4 ms apart), and the landing was predicted from
    -- the frame's state, not the moment's: the feet ended 0.29 (quadruped, alternate)
    -- to 0.63 (ripple) leg lengths apart.
    local function feet_after_turning(layout, gait, velocity, turn_rate, hz)
      local robot = skeleton_robot(layout, 0, 0)
      local w = make_walker(robot, ik.ground.plane{},
        { gait = gait, velocity = velocity, turn_rate = turn_rate })
      for f = 0, hz do w:update(f == 0 and 0 or 1 / hz) end
      local feet = {}
      for i, leg in ipairs(robot.legs) do feet[i] = ik.vec3(leg.foot:get_position()) end
      return feet, w.legs[1].length
    end

    for _, case in ipairs{ { "quadruped", QUAD, "alternate", { 0, 0, 0.3 }, 1 },
                           { "hexapod", HEX, "tripod", { 0.2, 0, 0 }, 2 },
                           { "hexapod", HEX, "ripple", { 0, 0, 0.6 }, 1 },
                           { "quadruped", QUAD, "ripple", { 0, 0, 0.3 }, 2 } } do
      it("puts the feet in the same places at 30, 60 and 144 Hz when turning (" .. case[1] .. ", "
         .. case[3] .. ")", function()
        local at60, length = feet_after_turning(case[2], case[3], case[4], case[5], 60)
        for _, hz in ipairs{ 30, 144 } do
          local feet, worst = feet_after_turning(case[2], case[3], case[4], case[5], hz), 0
          for i, p in ipairs(feet) do worst = math.max(worst, (p - at60[i]):length() / length) end
          assert.is_true(worst <= 1e-3, hz .. " Hz: a foot " .. worst .. " leg lengths from 60 Hz's")
        end
      end)
    end
  end)
end)
