-- ik.rigs.motion: the critically damped spring against its closed form and at any
-- step, the blended weight, easing, angles, rotation vectors and direction turns.
local ik = require("ik")
local motion = require("ik.rigs.motion")
local common = require("ik.rigs.common")

local double = ik.real == "double"
local EPS = double and 1e-12 or 1e-5

local function near(a, b, eps) return math.abs(a - b) <= (eps or EPS) end

describe("ik.rigs.motion", function()
  describe("the spring", function()
    it("has the frequency of its smooth time, none for 0", function()
      assert.are.equal(20, motion.omega(0.1))
      assert.is_nil(motion.omega(0))
      assert.is_nil(motion.omega(-1))
    end)

    it("is the exact solution for a still goal", function()
      local w, x0, v0, g = 8, 0.3, -2, 1
      for _, t in ipairs({ 0.01, 0.1, 0.5, 3 }) do
        local x, v = motion.spring(x0, v0, g, g, w, t)
        local a, b = x0 - g, v0 + w * (x0 - g)
        local e = math.exp(-w * t)
        assert.is_true(near(g + (a + b * t) * e, x), "x at " .. t)
        assert.is_true(near((b - w * (a + b * t)) * e, v), "v at " .. t)
      end
    end)

    it("gives the same path in one step as in many, for a goal moving steadily", function()
      local w = motion.omega(0.2)
      local x1, v1 = motion.spring(0, 0, 0, 1, w, 0.6)
      local x, v = 0, 0
      for k = 1, 60 do x, v = motion.spring(x, v, (k - 1) / 60, k / 60, w, 0.01) end
      assert.is_true(near(x1, x, 1e-9), x1 .. " vs " .. x)
      assert.is_true(near(v1, v, 1e-9), v1 .. " vs " .. v)
    end)

    it("along a cubic: the same path in one step as in many, and the line's for a line", function()
      local w = motion.omega(0.2)
      local function g(t) return 0.3 + t * (1 - t * (2 - 1.5 * t)) end
      local x1, v1 = motion.spring_cubic(0, 0, 0.3, 1, -2, 1.5, w, 0.6)
      local x, v = 0, 0
      for k = 1, 60 do
        -- the cubic through four samples 0.01 apart is the goal itself
        local t = k / 100
        local c0, c1, c2, c3 =
          motion.cubic_goal(g(t), g(t - 0.01), g(t - 0.02), g(t - 0.03), 0.01, 0.01, 0.01)
        x, v = motion.spring_cubic(x, v, c0, c1, c2, c3, w, 0.01)
      end
      assert.is_true(near(x1, x, 1e-9), x1 .. " vs " .. x)
      assert.is_true(near(v1, v, 1e-9), v1 .. " vs " .. v)
      local xl, vl = motion.spring(0.2, 1, 0.5, 0.9, w, 0.05)
      local xc, vc = motion.spring_cubic(0.2, 1, 0.5, 8, 0, 0, w, 0.05)
      assert.is_true(near(xl, xc) and near(vl, vc))
      -- samples of a line, or of a goal that stopped dead: the line between the last two
      local c0, c1, c2, c3 = motion.cubic_goal(4, 3, 2, 1, 1, 1, 1)
      assert.are.same({ 3, 1, 0, 0 }, { c0, c1, c2, c3 })
      c0, c1, c2, c3 = motion.cubic_goal(3, 3, 2, 1, 1, 1, 1)
      assert.are.same({ 3, 0, 0, 0 }, { c0, c1, c2, c3 })
    end)

    it("never overshoots a still goal, whatever the step", function()
      for _, dt in ipairs({ 1 / 60, 0.5, 10, 1e6 }) do
        local x = 0
        for _ = 1, 20 do
          x = motion.spring(x, 0, 1, 1, 20, dt)
          assert.is_true(x <= 1 and x >= 0)
        end
      end
    end)

    it("holds still for no time, and jumps without smoothing", function()
      assert.are.same({ 0.3, 2 }, { motion.spring(0.3, 2, 0, 1, 10, 0) })
      assert.are.same({ 1, 5 }, { motion.spring(0, 0, 0.5, 1, nil, 0.1) })
    end)
  end)

  it("blends a weight by at most dt / blend_time, never past its goal", function()
    assert.are.equal(0.25, motion.blend(0, 1, 0.05, 0.2))
    assert.are.equal(1, motion.blend(0.9, 1, 0.05, 0.2))
    assert.are.equal(0.75, motion.blend(1, 0, 0.05, 0.2))
    assert.are.equal(0, motion.blend(0.1, 0, 0.05, 0.2))
    assert.are.equal(0.7, motion.blend(0.2, 0.7, 0.05, 0))
    assert.are.equal(0.4, motion.blend(0.4, 0.4, 1, 0.2))
  end)

  it("clamps, eases and wraps", function()
    assert.are.same({ 0, 1, 0.5 }, { motion.clamp(-1, 0, 1), motion.clamp(2, 0, 1), motion.clamp(0.5, 0, 1) })
    assert.are.same({ 0, 1, 0.5 }, { motion.smoothstep(-3), motion.smoothstep(4), motion.smoothstep(0.5) })
    assert.are.equal(1, motion.smoothstep(0.25) + motion.smoothstep(0.75))
    assert.is_true(motion.smoothstep(0.01) < 0.01) -- flat at its ends
    assert.are.equal(-math.pi, motion.wrap_angle(math.pi))
    assert.are.equal(0, motion.wrap_angle(0))
    assert.is_true(near(motion.wrap_angle(1.5 * math.pi), -0.5 * math.pi))
    assert.is_true(near(motion.wrap_angle(-7 * math.pi + 0.1), -math.pi + 0.1, 1e-9))
    assert.are.equal(5, motion.distance({ 1, 2, 3 }, 4, 6, 3))
  end)

  it("turns rotations into rotation vectors and back, the shorter way round", function()
    local axes = { { 1, 0, 0 }, { 0, 1, 0 }, { 1, 2, -2 }, { -0.3, 0.1, 0.9 } }
    for _, a in ipairs(axes) do
      for _, angle in ipairs({ 1e-9, 0.3, 2, 3.1 }) do
        local q = ik.quat.axis_angle(a, angle)
        local x, y, z = motion.quat_log(q)
        assert.is_true(near(math.sqrt(x * x + y * y + z * z), angle, double and 1e-9 or 1e-5))
        local back = motion.quat_exp(x, y, z, ik.quat())
        assert.is_true(back:angle_to(q) < (double and 1e-9 or 1e-3))
        -- -q is the same rotation: the same vector
        local nx, ny, nz = motion.quat_log(ik.quat(-q.x, -q.y, -q.z, -q.w))
        assert.is_true(near(nx, x, 1e-9) and near(ny, y, 1e-9) and near(nz, z, 1e-9))
      end
    end
    assert.are.same({ 0, 0, 0 }, { motion.quat_log(ik.quat()) })
    assert.are.equal(ik.quat(), motion.quat_exp(0, 0, 0))
  end)

  it("measures and turns directions", function()
    local X, Y = ik.vec3(1, 0, 0), ik.vec3(0, 1, 0)
    assert.is_true(near(motion.angle(X, Y), math.pi / 2))
    assert.is_true(near(motion.angle(X, -X), math.pi))
    local tiny = ik.real == "double" and 1e-18 or 1e-15 -- precise near 0
    assert.is_true(near(motion.angle(X, ik.vec3(1, 1e-9, 0)), 1e-9, tiny))
    local v = ik.vec3(1, 0, 0)
    assert.are.equal(v, motion.turn(v, ik.vec3(0, 0, 1), math.pi / 2, v)) -- in place
    assert.is_true(near(v.x, 0) and near(v.y, 1) and v.z == 0)
    for _, a in ipairs({ { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 }, { 0.6, 0.8, 0 }, { -0.48, 0.6, 0.64 } }) do
      local u = ik.vec3(a)
      local p = motion.perpendicular(u, ik.vec3())
      assert.is_true(near(p:length(), 1) and math.abs(p:dot(u)) < 1e-9)
    end
  end)

  it("is what ik.rigs.common hands on under the old names", function()
    for _, name in ipairs({ "omega", "spring", "blend", "quat_log", "quat_exp", "angle", "turn",
                            "perpendicular" }) do
      assert.are.equal(motion[name], common[name], name)
    end
  end)
end)
