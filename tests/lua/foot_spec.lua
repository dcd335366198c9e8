-- ik.foot and ik.pelvis: planting on flat ground, stairs and a 20 degree slope, leaving
-- a swinging foot alone, the smoothing agreeing across frame rates, the pelvis drop, a
-- custom ground's error leaving the foot as it was, fields, closing, what a foot keeps
-- alive, and the error messages (their stable part, found plain, so the same checks
-- hold on Lua 5.4, 5.1 and LuaJIT).
local ik = require("ik")
local h = require("spec_helper")

local double = ik.real == "double"
local EPS = double and 1e-9 or 2e-5 -- exact answers, as the scalar type allows
local PLANT = 1e-3                  -- the placement tolerance asked of a planted foot
local OFFSET = 0.08
-- Each within the largest coordinate ikrig takes (IK_REAL_MAX_COORD), but not twice it.
local BIG = double and 1e140 or 6e14
local UP = ik.vec3(0, 1, 0)
local ID = ik.quat()

local function v3(t) return ik.vec3(t[1], t[2], t[3]) end

-- Angle in radians between two vectors (atan2 keeps small angles exact).
local atan2 = math.atan2 or math.atan
local function angle(a, b)
  a, b = v3({ a.x, a.y, a.z }), v3({ b.x, b.y, b.z })
  return atan2(a:cross(b):length(), a:dot(b))
end

-- Signed distance of p above the plane through `point` with unit normal n.
local function above_plane(p, point, n) return (p - v3(point)):dot(n) end

-- Runs a foot for `seconds` at `rate` Hz along path(t) (a function of time returning the
-- animated position, and optionally rotation), the first update at t = 0. Returns the last
-- position, rotation and grounded flag.
local function run(foot, rate, seconds, path)
  local steps = math.floor(rate * seconds + 0.5)
  local p, q, grounded
  for i = 0, steps do
    local t = i / rate
    local position, rotation = path(t)
    p, q, grounded = foot:update(position, rotation or ID, 1 / rate)
  end
  return p, q, grounded
end

-- Stairs as a mesh: treads 1 m deep along +X, each `rise` higher, from x = 0, over
-- z in [-1, 1], with vertical risers between them.
local function stairs(steps, rise)
  local vertices, triangles = {}, {}
  local function quad(a, b, c, d)
    local n = #vertices
    vertices[n + 1], vertices[n + 2], vertices[n + 3], vertices[n + 4] = a, b, c, d
    triangles[#triangles + 1] = { n + 1, n + 2, n + 3 }
    triangles[#triangles + 1] = { n + 1, n + 3, n + 4 }
  end
  for s = 0, steps - 1 do
    local y = s * rise
    quad({ s, y, -1 }, { s + 1, y, -1 }, { s + 1, y, 1 }, { s, y, 1 })
    if s > 0 then quad({ s, y - rise, -1 }, { s, y, -1 }, { s, y, 1 }, { s, y - rise, 1 }) end
  end
  return ik.ground.mesh({ vertices = vertices, triangles = triangles })
end

local A20 = math.rad(20)
local SLOPE_N = ik.vec3(-math.sin(A20), math.cos(A20), 0) -- rising along +X

-- Every ground kind as a floor at y = 0.
local function floors()
  return {
    plane = ik.ground.plane(),
    heightfield = ik.ground.heightfield({ origin = { -5, 0, -5 }, cell_size = 1, columns = 11, rows = 11,
                                          heights = (function()
                                            local t = {}
                                            for i = 1, 121 do t[i] = 0 end
                                            return t
                                          end)() }),
    mesh = ik.ground.mesh({ vertices = { { -5, 0, -5 }, { 5, 0, -5 }, { 5, 0, 5 }, { -5, 0, 5 } },
                            triangles = { 1, 2, 3, 1, 3, 4 } }),
    custom = ik.ground.custom(function(o, d)
      if d.y >= 0 or o.y < 0 then return false end
      return true, o + d * (-o.y / d.y), UP
    end),
  }
end

describe("ik.foot", function()
  describe("on flat ground", function()
    it("plants a sunk foot at foot_offset, of every ground kind", function()
      for kind, g in pairs(floors()) do
        local foot = ik.foot({ ground = g, foot_offset = OFFSET })
        local p, q, grounded = foot:update({ 0.3, 0.02, -0.4 }, ID, 1 / 60)
        assert.is_true(grounded, kind)
        assert(h.vec_near(p, { 0.3, OFFSET, -0.4 }, EPS))
        assert(h.quat_near(q, ID, EPS))
      end
    end)

    it("keeps the animated rotation of a planted foot on level ground", function()
      local foot = ik.foot({ ground = ik.ground.plane() })
      local yaw = ik.quat.axis_angle({ 0, 1, 0 }, 1.1)
      local _, q = foot:update({ 0, 0, 0 }, yaw, 1 / 60)
      assert(h.quat_near(q, yaw, EPS))
    end)

    it("counts a foot exactly at foot_offset as planted, and leaves it there", function()
      local foot = ik.foot({ ground = ik.ground.plane(), foot_offset = 0.125 })
      local p, _, grounded = foot:update({ 1, 0.125, 2 }, ID, 1 / 60)
      assert.is_true(grounded)
      assert(h.vec_near(p, { 1, 0.125, 2 }, EPS))
    end)

    it("leaves a swinging foot untouched", function()
      local foot = ik.foot({ ground = ik.ground.plane() })
      local rotation = ik.quat.axis_angle({ 1, 0, 0 }, 0.4)
      local p, q, grounded = foot:update({ 0.5, 0.3, 0 }, rotation, 1 / 60)
      assert.is_false(grounded)
      assert.is_true(p == ik.vec3(0.5, 0.3, 0))
      assert(h.quat_near(q, rotation, EPS))
      -- and while it keeps swinging
      for i = 1, 30 do
        p, q, grounded = foot:update({ 0.5 + i * 0.01, 0.3, 0 }, rotation, 1 / 60)
        assert.is_false(grounded)
        assert.is_true(p == ik.vec3(0.5 + i * 0.01, 0.3, 0))
        assert(h.quat_near(q, rotation, EPS))
      end
    end)

    it("releases a foot smoothly when it lifts off", function()
      local foot = ik.foot({ ground = ik.ground.plane(), smooth_time = 0.05 })
      foot:update({ 0, 0, 0 }, ID, 1 / 60) -- planted: raised by 0.08
      local p, _, grounded = foot:update({ 0, 0.5, 0 }, ID, 1 / 60)
      assert.is_false(grounded)
      assert.is_true(p.y > 0.5 and p.y < 0.58, tostring(p)) -- still easing out
      p = run(foot, 60, 1, function() return { 0, 0.5, 0 } end)
      assert(h.vec_near(p, { 0, 0.5, 0 }, 1e-6))
    end)

    it("misses ground out of the ray's reach: no correction", function()
      local g = ik.ground.plane()
      local foot = ik.foot({ ground = g, ray_height = 0.5, ray_length = 1 })
      local p, _, grounded = foot:update({ 0, 1.5, 0 }, ID, 1 / 60) -- ground 1.5 below
      assert.is_false(grounded)
      assert.is_true(p == ik.vec3(0, 1.5, 0))
      -- sunk deeper than ray_height: the ray starts below the ground and misses it
      p, _, grounded = foot:update({ 0, -0.6, 0 }, ID, 0)
      assert.is_false(grounded)
      assert.is_true(p == ik.vec3(0, -0.6, 0))
      assert.are.equal(0, foot:deficit({ 0, -0.6, 0 }))
      foot.ray_height = 1
      assert(h.near(foot:deficit({ 0, -0.6, 0 }), 0.68, EPS))
    end)
  end)

  describe("on stairs", function()
    it("plants the foot on each tread (mesh steps)", function()
      local g = stairs(4, 0.2)
      for s = 0, 3 do
        local foot = ik.foot({ ground = g })
        local p, q, grounded = foot:update({ s + 0.5, s * 0.2 - 0.05, 0.3 }, ID, 1 / 60)
        assert.is_true(grounded)
        assert(h.near(p.y - s * 0.2, OFFSET, PLANT))
        assert(h.near(p.x, s + 0.5, EPS))
        assert.is_true(angle(q * UP, UP) < PLANT)
      end
    end)

    it("plants the foot on each tread (heightfield steps)", function()
      -- 0.1 m cells; each 1 m tread flat, a 0.1 m ramp up to the next
      local columns, rows, heights = 41, 2, {}
      for r = 0, rows - 1 do
        for c = 0, columns - 1 do heights[r * columns + c + 1] = math.floor((c - 1) / 10 + 1e-9) * 0.2 end
      end
      heights[1], heights[columns + 1] = 0, 0
      local g = ik.ground.heightfield({ origin = { 0, 0, 0 }, cell_size = 0.1, columns = columns, rows = rows,
                                        heights = heights })
      for s = 0, 2 do
        local x = s + 0.6 -- well inside the flat part of the tread
        local foot = ik.foot({ ground = g })
        local p, q, grounded = foot:update({ x, s * 0.2, 0.05 }, ID, 1 / 60)
        assert.is_true(grounded)
        assert(h.near(p.y - s * 0.2, OFFSET, PLANT))
        assert.is_true(angle(q * UP, UP) < PLANT)
      end
    end)

    -- Smoothing may slow a foot coming down, never leave its sole under the ground: the
    -- foot stepping up used to ease up through the tread (its sole 15 cm under it a
    -- frame later).
    it("stands on a higher step at once, eases down off it, and settles there", function()
      local g = stairs(2, 0.2)
      local foot = ik.foot({ ground = g, smooth_time = 0.05 })
      foot:update({ 0.8, 0, 0 }, ID, 1 / 60)
      local p = foot:update({ 1.2, 0, 0 }, ID, 1 / 60) -- onto the step: goal 0.28
      assert(h.near(p.y, 0.2 + OFFSET, PLANT), tostring(p))
      p = run(foot, 60, 1, function() return { 1.2, 0, 0 } end)
      assert(h.near(p.y, 0.2 + OFFSET, 1e-6))
      p = foot:update({ 0.8, 0, 0 }, ID, 1 / 60) -- off it: goal 0.08
      assert.is_true(p.y > OFFSET + 0.05 and p.y < 0.2 + OFFSET, tostring(p))
      p = run(foot, 60, 1, function() return { 0.8, 0, 0 } end)
      assert(h.near(p.y, OFFSET, 1e-6))
    end)

    -- A foot held on the tread it has just stepped onto is not launched off it: raising
    -- its speed to the goal's sent it up at rise / dt (the most over the tread: 5 cm at
    -- 30 Hz, 26 cm at 144 Hz, 5.3 m at 2,880 Hz). What is left is the spring's taking
    -- the goal to rise over the frame (2 cm at 30 Hz, 0.5 mm at 2,880 Hz).
    it("is not launched off a step it climbs, at any rate", function()
      for _, rate in ipairs({ 30, 60, 144, 2880 }) do
        local foot = ik.foot({ ground = stairs(2, 0.2), smooth_time = 0.05 })
        local highest = -math.huge
        for i = 0, math.floor(rate / 2) do
          highest = math.max(highest, foot:update({ 0.9 + i / rate, 0, 0 }, ID, 1 / rate).y)
        end
        assert.is_true(highest - (0.2 + OFFSET) < 0.025, rate .. " Hz: " .. highest)
      end
    end)

    it("snaps again after reset", function()
      local g = stairs(2, 0.2)
      local foot = ik.foot({ ground = g, smooth_time = 0.05 })
      foot:update({ 0.8, 0, 0 }, ID, 1 / 60)
      foot:reset()
      local p = foot:update({ 1.2, 0, 0 }, ID, 1 / 60)
      assert(h.near(p.y, 0.2 + OFFSET, EPS))
    end)
  end)

  describe("on a 20 degree slope", function()
    local grounds = {
      plane = function() return ik.ground.plane({ point = { 0, 0, 0 }, normal = SLOPE_N }) end,
      mesh = function()
        local t = math.tan(A20)
        return ik.ground.mesh({ vertices = { { -3, -3 * t, -3 }, { 3, 3 * t, -3 },
                                             { 3, 3 * t, 3 }, { -3, -3 * t, 3 } },
                                triangles = { { 1, 2, 3 }, { 1, 3, 4 } } })
      end,
    }
    for kind, make in pairs(grounds) do
      it("plants the foot at foot_offset along the normal, sole along the slope (" .. kind .. ")", function()
        local g = make()
        for _, yaw in ipairs({ 0, 0.7, -2 }) do
          local foot = ik.foot({ ground = g, foot_offset = OFFSET })
          local rotation = ik.quat.axis_angle({ 0, 1, 0 }, yaw)
          local x = 1.3
          local surface_y = x * math.tan(A20)
          local p, q, grounded = foot:update({ x, surface_y - 0.1, 0.4 }, rotation, 1 / 60)
          assert.is_true(grounded)
          assert(h.near(above_plane(p, { 0, 0, 0 }, SLOPE_N), OFFSET, PLANT))
          assert(h.near(p.x, x, EPS)) -- raised along up only
          assert(h.near(p.z, 0.4, EPS))
          assert.is_true(angle(q * UP, SLOPE_N) < PLANT,
            "up axis off the normal by " .. angle(q * UP, SLOPE_N))
          -- the correction is the minimal turn: the animated heading survives it
          local forward = q * ik.vec3(0, 0, 1)
          local animated_forward = rotation * ik.vec3(0, 0, 1)
          assert.is_true(angle(forward, animated_forward) <= A20 + 1e-6)
        end
      end)
    end

    it("leaves a foot above the slope alone", function()
      local g = grounds.plane()
      local foot = ik.foot({ ground = g })
      local p, q, grounded = foot:update({ 1, 1, 0 }, ID, 1 / 60)
      assert.is_false(grounded)
      assert.is_true(p == ik.vec3(1, 1, 0))
      assert(h.quat_near(q, ID, EPS))
    end)
  end)

  describe("smoothing", function()
    -- A gentle analytic hill y = 0.1 sin(2x), answered by a custom ground for straight
    -- down rays: its normal turns continuously.
    local function hill()
      return ik.ground.custom(function(o, d, max)
        assert(math.abs(d.y + 1) < 1e-6, "vertical rays only")
        local y = 0.1 * math.sin(2 * o.x)
        local t = o.y - y
        if t < 0 or t > max then return false end
        return true, { o.x, y, o.z }, { -0.2 * math.cos(2 * o.x), 1, 0 }
      end)
    end
    local scenes = {
      slope = { ground = function() return ik.ground.plane({ normal = SLOPE_N }) end,
                path = function(t) return { -0.5 + 0.8 * t, -0.3, 0.1 * t } end },
      stairs = { ground = function() return stairs(3, 0.15) end, -- edge crossed at t = 0.4
                 path = function(t) return { 0.6 + t, -0.1, 0 } end },
      hill = { ground = hill,
               path = function(t)
                 return { 0.3 * t, -0.15 + 0.05 * t, 0 }, ik.quat.axis_angle({ 0, 1, 0 }, t)
               end },
    }
    for name, scene in pairs(scenes) do
      it("agrees at 30, 60 and 144 Hz after 1 s for a moving foot (" .. name .. ")", function()
        local g = scene.ground()
        local results = {}
        for _, rate in ipairs({ 30, 60, 144 }) do
          local foot = ik.foot({ ground = g, smooth_time = 0.05 })
          local p, q, grounded = run(foot, rate, 1, scene.path)
          assert.is_true(grounded)
          results[#results + 1] = { p = p, q = q, rate = rate }
        end
        for i = 2, #results do
          local a, b = results[1], results[i]
          assert(h.vec_near(b.p, a.p, 1e-3))
          assert(h.quat_near(b.q, a.q, 1e-3))
        end
      end)
    end

    it("steps down off an edge at the same moment at every rate", function()
      -- the edge (x = 1) crossed at t = 0.537, between frames at every rate; compared
      -- 0.13 s later, the spring halfway down. Each rate used to spring as if the goal
      -- dropped across the frame the crossing fell in: 3.2 mm off a 2,880 Hz run at 30 Hz
      local g = stairs(3, 0.15)
      local function at(rate)
        local foot = ik.foot({ ground = g, smooth_time = 0.05 })
        return run(foot, rate, 2 / 3, function(t) return { 1.537 - t, -0.1, 0 } end)
      end
      local fine = at(2880)
      for _, rate in ipairs({ 30, 60, 144 }) do
        local p = at(rate)
        assert.is_true((p - fine):length() < (double and 2e-5 or 1e-4),
          rate .. " Hz: " .. tostring(p) .. ", 2880 Hz: " .. tostring(fine))
      end
    end)

    it("does lag behind a goal that drops (the test above is not trivial)", function()
      local g = stairs(3, 0.15)
      local a = ik.foot({ ground = g, smooth_time = 0.05 })
      local b = ik.foot({ ground = g, smooth_time = 0 })
      local path = function(t) return { 1.05 - t, -0.1, 0 } end
      local pa = run(a, 60, 0.1, path)
      local pb = run(b, 60, 0.1, path)
      assert.is_true(pa.y - pb.y > 0.01, "smoothed " .. tostring(pa) .. ", unsmoothed " .. tostring(pb))
    end)

    it("survives a step too short for the spring to measure (foot and pelvis)", function()
      local slow = double and 1e100 or 1e14
      local tiny = double and 1e-250 or 1e-45
      local foot = ik.foot({ ground = ik.ground.plane(), smooth_time = slow })
      local p0 = foot:update({ 0, 0.01, 0 }, ID, 0)
      local p1 = foot:update({ 0, -0.5, 0 }, ID, tiny)
      assert(h.vec_near(p1, { 0, -0.5 + (p0.y - 0.01), 0 }, EPS)) -- the correction, unmoved
      local p2 = foot:update({ 0, 0.01, 0 }, ID, 1 / 60)              -- and still accepted
      assert(h.vec_near(p2, p0, EPS))
      local pelvis = ik.pelvis({ smooth_time = slow })
      assert(h.near(pelvis:update(0, -1), -1, EPS))
      assert(h.near(pelvis:update(tiny, -1), -1, EPS))
      assert(h.near(pelvis:update(1 / 60, -1), -1, EPS))
    end)

    it("changes nothing for dt = 0", function()
      local g = stairs(2, 0.2)
      local foot = ik.foot({ ground = g })
      foot:update({ 0.8, 0, 0 }, ID, 1 / 60)
      local p1 = foot:update({ 1.2, 0, 0 }, ID, 0)
      local p2 = foot:update({ 1.2, 0, 0 }, ID, 0)
      assert.is_true(p1 == p2)
      assert(h.near(p1.y, OFFSET, EPS)) -- the correction so far, on the new position
    end)
  end)

  describe("deficit", function()
    it("is as ik_foot_deficit: sunk > 0, ground below < 0, none 0", function()
      local foot = ik.foot({ ground = ik.ground.plane(), foot_offset = 0.1 })
      assert(h.near(foot:deficit({ 0, 0.04, 0 }), 0.06, EPS))
      assert(h.near(foot:deficit({ 0, 0.4, 0 }), -0.3, EPS))
      assert.are.equal(0, foot:deficit({ 0, 5, 0 })) -- beyond the ray
      local slope = ik.foot({ ground = ik.ground.plane({ normal = SLOPE_N }), foot_offset = 0.1 })
      assert(h.near(slope:deficit({ 0, 0, 0 }), 0.1 / math.cos(A20), EPS))
    end)

    it("keeps no state", function()
      local foot = ik.foot({ ground = ik.ground.plane() })
      foot:deficit({ 0, -0.3, 0 })
      local p = foot:update({ 0, 0.5, 0 }, ID, 1 / 60)
      assert.is_true(p == ik.vec3(0, 0.5, 0)) -- still the first update: snapped, nothing to ease out
    end)
  end)

  describe("a custom ground's error", function()
    local function failing_floor()
      local control = { fail = false }
      local g = ik.ground.custom(function(o, d)
        if control.fail then error("physics exploded") end
        if d.y >= 0 or o.y < 0 then return false end
        return true, o + d * (-o.y / d.y), UP
      end)
      return g, control
    end

    it("comes out of update with its message, and leaves the foot as it was", function()
      local g, control = failing_floor()
      local a = ik.foot({ ground = g })
      local b = ik.foot({ ground = g })
      local path = { { 0, 0.02, 0 }, { 0.1, 0.5, 0 }, { 0.2, 0.01, 0 }, { 0.3, -0.04, 0 }, { 0.4, 0.3, 0 } }
      for i, p in ipairs(path) do
        a:update(p, ID, 1 / 60)
        b:update(p, ID, 1 / 60)
        if i == 3 then -- mid-spring: a's state is worth keeping
          control.fail = true
          assert(h.raises(function() local _ = a:update({ 5, -1, 5 }, ID, 1 / 10) end, "physics exploded"))
          assert(h.raises(function() local _ = a:deficit({ 5, -1, 5 }) end, "physics exploded"))
          control.fail = false
        end
      end
      for i = 1, 10 do
        local pa, qa, ga = a:update({ 0.5, 0.05 - i * 0.01, 0 }, ID, 1 / 60)
        local pb, qb, gb = b:update({ 0.5, 0.05 - i * 0.01, 0 }, ID, 1 / 60)
        assert.is_true(pa == pb, "after the error " .. tostring(pa) .. " vs " .. tostring(pb))
        assert.is_true(qa == qb)
        assert.are.equal(gb, ga)
      end
    end)

    it("keeps its value when it is not a string", function()
      local token = setmetatable({}, { __tostring = function() return "token" end })
      local foot = ik.foot({ ground = ik.ground.custom(function() error(token) end) })
      local ok, err = pcall(function() local _ = foot:update({ 0, 0, 0 }, ID, 1 / 60) end)
      assert.is_false(ok)
      assert.is_true(rawequal(token, err))
    end)

    it("leaves the first update to come still snapping", function()
      local g, control = failing_floor()
      local foot = ik.foot({ ground = g })
      control.fail = true
      assert(h.raises(function() local _ = foot:update({ 0, 0, 0 }, ID, 1 / 60) end, "physics exploded"))
      control.fail = false
      local p = foot:update({ 0, 0, 0 }, ID, 1 / 60)
      assert(h.vec_near(p, { 0, OFFSET, 0 }, EPS))
    end)
  end)

  describe("fields", function()
    it("have the documented defaults", function()
      local g = ik.ground.plane()
      local foot = ik.foot({ ground = g })
      assert.is_true(rawequal(g, foot.ground))
      assert(h.near(foot.ray_height, 0.5, EPS))
      assert(h.near(foot.ray_length, 1, EPS))
      assert(h.near(foot.foot_offset, 0.08, EPS))
      assert(h.near(foot.smooth_time, 0.05, EPS))
      assert.is_true(foot.up == ik.vec3(0, 1, 0))
    end)

    it("are taken from the spec and may be set", function()
      local g1, g2 = ik.ground.plane(), ik.ground.plane({ point = { 0, -1, 0 } })
      local foot = ik.foot({ ground = g1, ray_height = 2, ray_length = 3, foot_offset = 0.25, smooth_time = 0,
                             up = { 0, 0, 2 } })
      assert.are.same({ 2, 3, 0.25, 0 },
        { foot.ray_height, foot.ray_length, foot.foot_offset, foot.smooth_time })
      assert.is_true(foot.up == ik.vec3(0, 0, 2))
      foot.up = { 0, 1, 0 }
      foot.ground = g2
      assert.is_true(rawequal(g2, foot.ground))
      local p = foot:update({ 0, -1, 0 }, ID, 1 / 60)
      assert(h.vec_near(p, { 0, -0.75, 0 }, EPS))
    end)

    it("another up: the foot is raised along it", function()
      -- a wall x = 0 as the ground, up = +X
      local foot = ik.foot({ ground = ik.ground.plane({ normal = { 1, 0, 0 } }), up = { 1, 0, 0 } })
      local p, q, grounded = foot:update({ -0.02, 1, 2 }, ID, 1 / 60)
      assert.is_true(grounded)
      assert(h.vec_near(p, { OFFSET, 1, 2 }, EPS))
      assert(h.quat_near(q, ID, EPS))
    end)

    it("refuse bad values, changing nothing", function()
      local foot = ik.foot({ ground = ik.ground.plane() })
      assert(h.raises(function() foot.ray_height = -1 end,
        "ik.foot: bad field 'ray_height' (non-negative number expected, got -1)"))
      assert(h.raises(function() foot.foot_offset = 0 / 0 end,
        "ik.foot: bad field 'foot_offset' (non-negative number expected, got nan)"))
      assert(h.raises(function() foot.smooth_time = "slow" end,
        "ik.foot: bad field 'smooth_time' (non-negative number expected, got string)"))
      assert(h.raises(function() foot.up = { 0, 0, 0 } end,
        "ik.foot: bad field 'up' (non-zero vec3 expected, got a zero vector)"))
      assert(h.raises(function() foot.up = "sky" end,
        "ik.foot: bad field 'up' (non-zero vec3 expected, got string)"))
      assert(h.raises(function() foot.ground = {} end,
        "ik.foot: bad field 'ground' (ik.ground expected, got table)"))
      assert(h.raises(function() foot.ground = nil end, "ik.foot: field 'ground' cannot be nil"))
      assert(h.raises(function() foot.height = 1 end,
        "ik.foot: no field 'height' (fields: ground, ray_height, ray_length, foot_offset, smooth_time, up)"))
      assert(h.near(foot.ray_height, 0.5, EPS))
      assert(h.near(foot.foot_offset, 0.08, EPS))
      assert.is_true(foot.up == ik.vec3(0, 1, 0))
    end)
  end)

  describe("objects", function()
    it("have __name and __tostring", function()
      local foot = ik.foot({ ground = ik.ground.plane(), foot_offset = 0.125, smooth_time = 0.25 })
      assert.are.equal("ik.foot", getmetatable(foot).__name)
      assert.are.equal("ik.foot(foot_offset = 0.125, smooth_time = 0.25)", tostring(foot))
    end)

    it("close: later use raises", function()
      local foot = ik.foot({ ground = ik.ground.plane() })
      foot:close()
      assert.are.equal("ik.foot (closed)", tostring(foot))
      for _, use in ipairs({
        function() local _ = foot:update({ 0, 0, 0 }, ID, 0) end,
        function() local _ = foot:deficit({ 0, 0, 0 }) end,
        function() foot:reset() end,
        function() local _ = foot.foot_offset end,
        function() foot.foot_offset = 1 end,
      }) do
        assert(h.raises(use, "attempt to use a closed ik.foot"))
      end
    end)

    it("a closed ground raises through the foot", function()
      local g = ik.ground.plane()
      local foot = ik.foot({ ground = g })
      g:close()
      assert(h.raises(function() local _ = foot:update({ 0, 0, 0 }, ID, 0) end,
        "attempt to use a closed ik.ground"))
      assert(h.raises(function() local _ = foot:deficit({ 0, 0, 0 }) end,
        "attempt to use a closed ik.ground"))
      assert(h.raises(function() local _ = ik.foot({ ground = g }) end, "attempt to use a closed ik.ground"))
    end)

    it("keeps its ground alive, and lets it go when collected", function()
      local weak = setmetatable({}, { __mode = "v" })
      local function make() -- nothing but the foot refers to the ground once this returns
        local g = ik.ground.custom(function(o, d)
          if d.y >= 0 or o.y < 0 then return false end
          return true, o + d * (-o.y / d.y), { 0, 1, 0 }
        end)
        weak.ground = g
        return ik.foot({ ground = g })
      end
      local foot = make()
      collectgarbage()
      collectgarbage()
      assert.is_not_nil(weak.ground)
      local p, _, grounded = foot:update({ 0, 0, 0 }, ID, 1 / 60)
      assert.is_true(grounded)
      assert(h.vec_near(p, { 0, OFFSET, 0 }, EPS))
      foot = nil -- luacheck: ignore 311
      collectgarbage()
      collectgarbage()
      assert.is_nil(weak.ground)
    end)

    it("lets go of a ground it no longer stands on", function()
      local weak = setmetatable({}, { __mode = "v" })
      local foot = ik.foot({ ground = ik.ground.plane() })
      weak.ground = foot.ground
      foot.ground = ik.ground.plane()
      collectgarbage()
      collectgarbage()
      assert.is_nil(weak.ground)
    end)

    it("close with <close> (Lua 5.4)", function()
      if _VERSION ~= "Lua 5.4" then return end
      local foot = ik.foot({ ground = ik.ground.plane() })
      assert(load("local f = ...; do local x <close> = f end"))(foot)
      assert.are.equal("ik.foot (closed)", tostring(foot))
    end)
  end)

  describe("errors", function()
    local function new(spec) return function() local _ = ik.foot(spec) end end

    it("in the spec", function()
      assert(h.raises(new({}), "ik.foot: bad field 'ground' (ik.ground expected, got nil)"))
      assert(h.raises(new({ ground = ik.vec3() }),
        "ik.foot: bad field 'ground' (ik.ground expected, got ik.vec3)"))
      assert(h.raises(new({ ground = ik.ground.plane(), ray_length = -0.5 }),
        "ik.foot: bad field 'ray_length' (non-negative number expected, got -0.5)"))
      assert(h.raises(new({ ground = ik.ground.plane(), up = { 0, 0 / 0, 0 } }),
        "ik.foot: bad field 'up' (finite vec3 expected"))
      assert(h.raises(new({ ground = ik.ground.plane(), ray_height = BIG, ray_length = BIG }),
        "ik.foot: bad field 'ray_length'"))
      assert(h.raises(new({ ground = ik.ground.plane(), offset = 0.1 }),
        "ik.foot: no field 'offset' (fields: ground, ray_height, ray_length, foot_offset, smooth_time, up)"))
      assert(h.raises(function() local _ = ik.foot() end,
        "bad argument #1", "(table expected, got no value)"))
    end)

    it("in update's and deficit's arguments, counted as Lua counts them for a method", function()
      local foot = ik.foot({ ground = ik.ground.plane() })
      assert(h.raises(function() local _ = foot:update("here", ID, 0) end,
        "bad argument #1 to 'update' (vec3 expected, got string)"))
      assert(h.raises(function() local _ = foot:update({ 0, 0 / 0, 0 }, ID, 0) end,
        "bad argument #1 to 'update' (finite vec3 expected"))
      assert(h.raises(function() local _ = foot:update({ 0, 0, 0 }, nil, 0) end,
        "bad argument #2 to 'update' (quat expected, got nil)"))
      assert(h.raises(function() local _ = foot:update({ 0, 0, 0 }, ID, -1 / 60) end,
        "bad argument #3 to 'update' (non-negative number expected, got -0.016666666666667)"))
      assert(h.raises(function() local _ = foot:update({ 0, 0, 0 }, ID) end,
        "bad argument #3 to 'update' (number expected, got no value)"))
      assert(h.raises(function() local _ = foot:update({ 0, 0, 0 }, ID, 0 / 0) end,
        "bad argument #3 to 'update' (finite number expected, got nan)"))
      assert(h.raises(function() local _ = foot:deficit(ID) end,
        "bad argument #1 to 'deficit' (vec3 expected, got ik.quat)"))
      -- the ray would start out of range
      local tall = ik.foot({ ground = ik.ground.plane(), ray_height = BIG, ray_length = 0 })
      assert(h.raises(function() local _ = tall:update({ 0, BIG, 0 }, ID, 0) end,
        "bad argument #1 to 'update'"))
      assert(h.raises(function() local _ = tall:deficit({ 0, BIG, 0 }) end, "bad argument #1 to 'deficit'"))
    end)
  end)
end)

describe("ik.pelvis", function()
  it("settles at the lowest deficit", function()
    local pelvis = ik.pelvis({ smooth_time = 0.05 })
    local offset = pelvis:update(1 / 60, 0, 0)
    assert.are.equal(0, offset)
    for _ = 1, 60 do offset = pelvis:update(1 / 60, -0.1, 0.05, -0.25, 0) end
    assert(h.near(offset, -0.25, 1e-6))
    assert(h.near(pelvis.offset, -0.25, 1e-6))
  end)

  it("is 0 when no foot's ground is below it (feet standing on or sunk into theirs)", function()
    local pelvis = ik.pelvis()
    local offset = pelvis:update(1 / 60, -0.3)
    assert(h.near(offset, -0.3, EPS))
    for _ = 1, 60 do offset = pelvis:update(1 / 60, 0, 0.1, 0.2) end
    assert(h.near(offset, 0, 1e-6))
    offset = pelvis:update(1 / 60) -- no feet at all
    assert(h.near(offset, 0, 1e-6))
  end)

  it("springs instead of snapping, after the first update", function()
    local pelvis = ik.pelvis({ smooth_time = 0.05 })
    assert.are.equal(0, pelvis:update(1 / 60, 0))
    local offset = pelvis:update(1 / 60, -0.2)
    assert.is_true(offset < 0 and offset > -0.2, tostring(offset))
    pelvis:reset()
    assert(h.near(pelvis:update(1 / 60, -0.2), -0.2, EPS))
    pelvis.smooth_time = 0
    assert(h.near(pelvis:update(1 / 60, -0.4), -0.4, EPS))
  end)

  it("takes the deficits as one list as well", function()
    local a, b = ik.pelvis(), ik.pelvis()
    local many = {}
    for i = 1, 40 do many[i] = -i / 100 end -- more than fit on the C stack
    for _ = 1, 10 do
      assert.are.equal(a:update(1 / 60, (table.unpack or unpack)(many)), b:update(1 / 60, many))
    end
    assert(h.near(b.offset, -0.4, 1e-3))
  end)

  it("with feet on stairs: lowers the hips to the lower step, and both feet plant", function()
    -- left foot over the tread at y = 0, right over one 0.25 lower
    local g = ik.ground.mesh({ vertices = { { -1, 0, -1 }, { 0, 0, -1 }, { 0, 0, 1 }, { -1, 0, 1 },
                                            { 0, -0.25, -1 }, { 1, -0.25, -1 },
                                            { 1, -0.25, 1 }, { 0, -0.25, 1 } },
                               triangles = { 1, 2, 3, 1, 3, 4, 5, 6, 7, 5, 7, 8 } })
    local left, right = ik.foot({ ground = g }), ik.foot({ ground = g })
    local pelvis = ik.pelvis()
    local animated_left, animated_right = ik.vec3(-0.5, OFFSET, 0), ik.vec3(0.5, OFFSET, 0)
    local pl, pr, gl, gr, offset
    for _ = 1, 60 do
      offset = pelvis:update(1 / 60, left:deficit(animated_left), right:deficit(animated_right))
      pl, _, gl = left:update(animated_left + UP * offset, ID, 1 / 60)
      pr, _, gr = right:update(animated_right + UP * offset, ID, 1 / 60)
    end
    assert(h.near(offset, -0.25, 1e-6))
    assert.is_true(gl and gr)
    assert(h.near(pl.y, OFFSET, PLANT))
    assert(h.near(pr.y, OFFSET - 0.25, PLANT))
  end)

  it("has __name, __tostring, fields and close", function()
    local pelvis = ik.pelvis({ smooth_time = 0.25 })
    assert.are.equal("ik.pelvis", getmetatable(pelvis).__name)
    assert.are.equal("ik.pelvis(offset = 0, smooth_time = 0.25)", tostring(pelvis))
    assert(h.raises(function() pelvis.offset = 1 end, "ik.pelvis: field 'offset' is read only"))
    assert(h.raises(function() pelvis.smooth_time = -1 end,
      "ik.pelvis: bad field 'smooth_time' (non-negative number expected, got -1)"))
    assert(h.raises(function() pelvis.speed = 1 end, "ik.pelvis: no field 'speed'"))
    pelvis:close()
    assert.are.equal("ik.pelvis (closed)", tostring(pelvis))
    assert(h.raises(function() local _ = pelvis:update(0, 0) end, "attempt to use a closed ik.pelvis"))
  end)

  it("errors", function()
    local pelvis = ik.pelvis()
    assert(h.raises(function() local _ = ik.pelvis({ smooth_time = "x" }) end,
      "ik.pelvis: bad field 'smooth_time' (non-negative number expected, got string)"))
    assert(h.raises(function() local _ = ik.pelvis({ smoothing = 1 }) end, "ik.pelvis: no field 'smoothing'"))
    assert(h.raises(function() local _ = pelvis:update(-1, 0) end,
      "bad argument #1 to 'update' (non-negative number expected, got -1)"))
    assert(h.raises(function() local _ = pelvis:update(0, 0, "low") end,
      "bad argument #3 to 'update' (number expected, got string)"))
    assert(h.raises(function() local _ = pelvis:update(0, 0 / 0) end,
      "bad argument #2 to 'update' (finite number expected, got nan)"))
    assert(h.raises(function() local _ = pelvis:update(0, { 0, -0.1, "low" }) end,
      "bad argument #2 to 'update' (number expected at index 3, got string)"))
    assert(h.raises(function() local _ = pelvis:update(0, { 0, math.huge }) end,
      "bad argument #2 to 'update' (finite number expected at index 2, got inf)"))
  end)
end)
