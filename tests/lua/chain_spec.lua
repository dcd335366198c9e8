-- ik.chain: solving properties over seeded random chains, every solver, the fields and
-- methods, what a chain keeps alive, closing, and every error message (the stable part,
-- found plain, so the same checks hold on Lua 5.4, 5.1 and LuaJIT).
local ik = require("ik")

local double = ik.real == "double"
-- Relative error allowed on lengths and distances, and absolute on angles (radians).
local EPS = double and 1e-9 or 1e-4
local ANGLE_EPS = double and 1e-6 or 1e-3
local ITERATIVE = { "fabrik", "ccd", "dls" }
local SOLVERS = { "fabrik", "ccd", "dls", "two_bone" }

local function approx(a, b, eps)
  return math.abs(a - b) <= eps * math.max(1, math.abs(a), math.abs(b))
end

-- Plain arrays {x, y, z} for the checks, so they lean on nothing but joint_xyz.
local function sub(a, b) return { a[1] - b[1], a[2] - b[2], a[3] - b[3] } end
local function dot(a, b) return a[1] * b[1] + a[2] * b[2] + a[3] * b[3] end
local function len(a) return math.sqrt(dot(a, a)) end
local function dist(a, b) return len(sub(a, b)) end
local atan2 = math.atan2 or math.atan -- 5.1 has atan2; 5.4's atan takes two arguments
local function angle(a, b) -- atan2 keeps small angles exact, where acos would not
  local cx, cy, cz = a[2] * b[3] - a[3] * b[2], a[3] * b[1] - a[1] * b[3], a[1] * b[2] - a[2] * b[1]
  return atan2(len({ cx, cy, cz }), dot(a, b))
end

local function joints(c)
  local t = {}
  for i = 1, #c do t[i] = { c:joint_xyz(i) } end
  return t
end

local function bone_lengths(p)
  local t = {}
  for i = 1, #p - 1 do t[i] = dist(p[i], p[i + 1]) end
  return t
end

local function same_pose(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do
    if a[i][1] ~= b[i][1] or a[i][2] ~= b[i][2] or a[i][3] ~= b[i][3] then return false end
  end
  return true
end

local function rand(a, b) return a + (b - a) * math.random() end

local function random_dir()
  while true do
    local x, y, z = rand(-1, 1), rand(-1, 1), rand(-1, 1)
    local l = math.sqrt(x * x + y * y + z * z)
    if l > 0.1 and l <= 1 then return { x / l, y / l, z / l } end
  end
end

-- n joints from a random root, each bone a random direction and length in [0.1, 2], as
-- a chain stores them (rounded to float when ik.real is "float"), so that the checks
-- compare with what the chain holds, not with digits it never had.
local function random_positions(n)
  local p = { { rand(-5, 5), rand(-5, 5), rand(-5, 5) } }
  for i = 2, n do
    local d, l = random_dir(), rand(0.1, 2)
    p[i] = { p[i - 1][1] + d[1] * l, p[i - 1][2] + d[2] * l, p[i - 1][3] + d[3] * l }
  end
  return joints(ik.chain{ positions = p })
end

local function total_length(p)
  local s = 0
  for _, l in ipairs(bone_lengths(p)) do s = s + l end
  return s
end

-- A point at `fraction` of the chain's reach from its root, in a random direction.
local function random_target(p, fraction)
  local d, r = random_dir(), fraction * total_length(p)
  return { p[1][1] + d[1] * r, p[1][2] + d[2] * r, p[1][3] + d[3] * r }
end

-- The error raised by f, which must raise.
local function error_of(f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return tostring(err)
end

local function assert_error_has(text, f, ...)
  local err = error_of(f, ...)
  assert.is_truthy(err:find(text, 1, true), ("expected %q in %q"):format(text, err))
end

local STRAIGHT5 = { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 }, { 0, 3, 0 }, { 0, 4, 0 } }

describe("ik.chain", function()
  describe("solve on random chains", function()
    for _, solver in ipairs(SOLVERS) do
      it("keeps bone lengths and the root, and reports reach honestly (" .. solver .. ")", function()
        math.randomseed(20240611)
        local reached_count, trials = 0, 150
        for _ = 1, trials do
          local n = solver == "two_bone" and 3 or math.random(2, 30)
          local p = random_positions(n)
          local c = ik.chain{ positions = p, solver = solver, iterations = 50 }
          local target = random_target(p, rand(0.05, 0.95))
          local reached, distance, iterations = c:solve(target)
          local q = joints(c)
          assert.are.equal(p[1][1], q[1][1])
          assert.are.equal(p[1][2], q[1][2])
          assert.are.equal(p[1][3], q[1][3])
          local before, after = bone_lengths(p), bone_lengths(q)
          for i = 1, n - 1 do
            assert.is_true(approx(before[i], after[i], EPS),
              ("bone %d: %.17g -> %.17g"):format(i, before[i], after[i]))
          end
          assert.is_true(approx(distance, dist(q[n], target), EPS))
          assert.are.equal(distance <= c.tolerance, reached)
          assert.is_true(math.type == nil or math.type(iterations) == "integer")
          assert.is_true(iterations >= 0 and iterations <= 50)
          if reached then
            reached_count = reached_count + 1
            assert.is_true(dist(q[n], target) <= c.tolerance * (1 + EPS))
          end
        end
        -- Not vacuous: most of these targets are reachable and get reached.
        assert.is_true(reached_count >= trials / 3, "reached only " .. reached_count)
      end)
    end

    it("solves two_bone exactly", function()
      math.randomseed(99)
      for _ = 1, 200 do
        local p = random_positions(3)
        local l = bone_lengths(p)
        -- Strictly between the folded and the straight reach: every such target is exact.
        local lo, hi = math.abs(l[1] - l[2]), l[1] + l[2]
        local d, r = random_dir(), rand(lo + 0.01 * (hi - lo), hi - 0.01 * (hi - lo))
        local target = { p[1][1] + d[1] * r, p[1][2] + d[2] * r, p[1][3] + d[3] * r }
        local c = ik.chain{ positions = p, solver = "two_bone" }
        local reached, distance, iterations = c:solve(target)
        assert.is_true(reached)
        assert.is_true(distance < (double and 1e-9 or 1e-4 * hi), "distance " .. distance)
        assert.are.equal(1, iterations)
      end
    end)
  end)

  describe("unreachable target", function()
    for _, solver in ipairs(SOLVERS) do
      it("lays the chain straight towards it (" .. solver .. ")", function()
        math.randomseed(5)
        for _ = 1, 50 do
          local n = solver == "two_bone" and 3 or math.random(2, 30)
          local p = random_positions(n)
          local length = total_length(p)
          local d = random_dir()
          local far = 1.5 * length + 1
          local target = { p[1][1] + d[1] * far, p[1][2] + d[2] * far, p[1][3] + d[3] * far }
          local c = ik.chain{ positions = p, solver = solver }
          local reached, distance, iterations = c:solve(target)
          assert.is_false(reached)
          assert.is_true(approx(distance, far - length, EPS), distance .. " vs " .. (far - length))
          -- Two-bone runs in one step whatever the target; the iterative ones do no sweep.
          assert.are.equal(solver == "two_bone" and 1 or 0, iterations)
          local q, along = joints(c), 0
          for i = 2, n do
            along = along + dist(p[i - 1], p[i])
            local want = { p[1][1] + d[1] * along, p[1][2] + d[2] * along, p[1][3] + d[3] * along }
            assert.is_true(dist(q[i], want) <= EPS * math.max(1, far), "joint " .. i .. " off the line")
          end
        end
      end)
    end
  end)

  describe("warm start (deterministic = false)", function()
    for _, solver in ipairs(ITERATIVE) do
      it("does no sweep when the tip is already there (" .. solver .. ")", function()
        local c = ik.chain{ positions = STRAIGHT5, solver = solver, iterations = 100, deterministic = false }
        local target = ik.vec3(1, 2, 0.5)
        local reached, _, iterations = c:solve(target)
        assert.is_true(reached)
        assert.is_true(iterations >= 1)
        local before = joints(c)
        reached, _, iterations = c:solve(target)
        assert.is_true(reached)
        assert.are.equal(0, iterations)
        assert.is_true(same_pose(before, joints(c)))
      end)
    end
  end)

  describe("constraints", function()
    for _, solver in ipairs(ITERATIVE) do
      it("keeps every bone within its cone (" .. solver .. ")", function()
        math.randomseed(11)
        local cone = 0.4
        for _ = 1, 40 do
          local n = math.random(3, 12)
          local p = random_positions(n)
          local base = { 0, 1, 0 }
          local c = ik.chain{ positions = p, solver = solver, base_direction = base }
          for i = 1, n - 1 do c:set_constraint(i, ik.cone{ angle = cone }) end
          c:solve(random_target(p, rand(0.2, 0.9)))
          local q = joints(c)
          local parent = base
          for i = 1, n - 1 do
            local bone = sub(q[i + 1], q[i])
            local a = angle(parent, bone)
            assert.is_true(a <= cone + ANGLE_EPS, ("bone %d at %.9f from its parent"):format(i, a))
            parent = bone
          end
        end
      end)

      it("keeps a planar chain planar with hinges (" .. solver .. ")", function()
        local p = { { 0, 0, 0 }, { 0.5, 1, 0 }, { 0, 2, 0 }, { 0.5, 3, 0 }, { 0, 4, 0 }, { 0.5, 5, 0 } }
        local free = ik.chain{ positions = p, solver = solver }
        local hinged = ik.chain{ positions = p, solver = solver, base_direction = { 0, 1, 0 } }
        for i = 1, #p - 1 do hinged:set_constraint(i, ik.hinge{ axis = { 0, 0, 1 } }) end
        local target = { 1.5, 3, 2 } -- off the plane: only the hinges keep the chain in it
        free:solve(target)
        hinged:solve(target)
        local left = 0
        for _, q in ipairs(joints(free)) do left = math.max(left, math.abs(q[3])) end
        assert.is_true(left > 0.1, "the free chain should leave the plane")
        for i, q in ipairs(joints(hinged)) do
          assert.is_true(math.abs(q[3]) <= EPS * 10, "joint " .. i .. " left the plane: z = " .. q[3])
        end
      end)
    end

    it("gives back the very object set, and nil once removed", function()
      local c = ik.chain{ positions = STRAIGHT5 }
      local cone, hinge = ik.cone{ angle = 0.5 }, ik.hinge{ axis = { 1, 0, 0 } }
      assert.is_nil(c:constraint(1))
      c:set_constraint(1, cone)
      c:set_constraint(4, hinge)
      assert.is_true(rawequal(cone, c:constraint(1)))
      assert.is_true(rawequal(hinge, c:constraint(4)))
      c:set_constraint(1, nil)
      c:set_constraint(4)
      assert.is_nil(c:constraint(1))
      assert.is_nil(c:constraint(4))
    end)

    it("stops limiting a bone once removed", function()
      local p = { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 } }
      local c = ik.chain{ positions = p, iterations = 50 }
      c:set_constraint(2, ik.cone{ angle = 0.05 })
      c:set_constraint(2, nil)
      local reached = c:solve({ 1, 1, 0 }) -- needs a right angle at joint 2
      assert.is_true(reached)
    end)
  end)

  describe("a stalled CCD solve", function()
    it("stops within a few sweeps of the 10000 allowed, on its best pose", function()
      -- Each bone within 0.3 rad of its parent, bone 1 of +Y: the target behind the root
      -- is out of its reach, and the sweeps soon change nothing.
      local c = ik.chain{ positions = STRAIGHT5, solver = "ccd", iterations = 10000,
        base_direction = { 0, 1, 0 } }
      for i = 1, 4 do c:set_constraint(i, ik.cone{ angle = 0.3 }) end
      local reached, distance, iterations = c:solve(ik.vec3(0.5, -1, 0))
      assert.is_false(reached)
      assert.is_true(iterations < 100, iterations)
      c.iterations = 1000
      local _, again = c:solve(ik.vec3(0.5, -1, 0))
      assert.is_true(again >= distance * (1 - 1e-6), again)
    end)
  end)

  describe("pole", function()
    -- Bent towards -z; the pole is on the +z side of the root-target line.
    local bent = { { 0, 0, 0 }, { 0, 1, -0.3 }, { 0, 2, 0 } }
    local target = { 0, 1.5, 0 }
    for _, solver in ipairs(SOLVERS) do
      it("bends a 3-joint chain towards it (" .. solver .. ")", function()
        local without = ik.chain{ positions = bent, solver = solver }
        local with = ik.chain{ positions = bent, solver = solver, pole = ik.pole{ position = { 0, 1, 5 } } }
        without:solve(target)
        with:solve(target)
        assert.is_true(select(3, without:joint_xyz(2)) < -0.1, "without a pole the knee stays where it bends")
        local x, _, z = with:joint_xyz(2)
        assert.is_true(z > 0.1, "the knee should turn to the pole, z = " .. z)
        assert.is_true(math.abs(x) <= EPS * 10)
      end)
    end

    it("is made from a bare vec3, read back as an ik.pole, cleared by nil", function()
      local c = ik.chain{ positions = bent }
      assert.is_nil(c.pole)
      c.pole = { 0, 1, 5 }
      assert.are.equal("ik.pole", getmetatable(c.pole).__name)
      assert.are.equal(5, c.pole.position.z)
      assert.are.equal(1, c.pole.weight)
      assert.is_true(rawequal(c.pole, c.pole)) -- the same object each read
      local pole = ik.pole{ position = { 1, 2, 3 }, weight = 0.25 }
      c.pole = pole
      assert.is_true(rawequal(pole, c.pole))
      c.pole = nil
      assert.is_nil(c.pole)
    end)

    it("is read at each solve, so moving it moves the knee", function()
      local pole = ik.pole{ position = { 0, 1, 5 } }
      local c = ik.chain{ positions = bent, solver = "two_bone", pole = pole }
      c:solve(target)
      assert.is_true(select(3, c:joint_xyz(2)) > 0.1)
      pole.position = { 0, 1, -5 }
      c:solve(target)
      assert.is_true(select(3, c:joint_xyz(2)) < -0.1)
    end)

    for _, solver in ipairs(SOLVERS) do
      it("at part weight keeps the bones of a planar limb bent away from it (" .. solver .. ")", function()
        -- limb, target and pole in one plane, the knee on the far side: half a half turn
        -- takes the knee out of the plane, and must not shorten a bone
        local c = ik.chain{ positions = { { 0, 0, 0 }, { 1, 1, 0 }, { 2, 0, 0 } }, solver = solver,
                            pole = ik.pole{ position = { 1, -5, 0 }, weight = 0.5 } }
        c:solve({ 2, 0, 0 })
        local p = joints(c)
        assert.is_true(approx(dist(p[1], p[2]), math.sqrt(2), EPS), "bone 1: " .. dist(p[1], p[2]))
        assert.is_true(approx(dist(p[2], p[3]), math.sqrt(2), EPS), "bone 2: " .. dist(p[2], p[3]))
        assert.is_true(math.abs(p[2][3]) > 0.5, "the knee left the plane half way")
      end)
    end

    it("raises at solve once the pole is closed", function()
      local pole = ik.pole{ position = { 0, 1, 5 } }
      local c = ik.chain{ positions = bent, pole = pole }
      pole:close()
      assert_error_has("attempt to use a closed ik.pole", function() c:solve(target) end)
      assert_error_has("attempt to use a closed ik.pole", function() c.pole = pole end)
    end)
  end)

  describe("weight", function()
    for _, solver in ipairs(SOLVERS) do
      it("0 leaves the pose as it is, 0.5 turns each bone half way (" .. solver .. ")", function()
        math.randomseed(3)
        for _ = 1, 20 do
          local n = solver == "two_bone" and 3 or math.random(3, 12)
          local p = random_positions(n)
          local target = random_target(p, rand(0.3, 0.8))
          local none = ik.chain{ positions = p, solver = solver, weight = 0 }
          local half = ik.chain{ positions = p, solver = solver, weight = 0.5 }
          local full = ik.chain{ positions = p, solver = solver }
          local reached, distance, iterations = none:solve(target)
          assert.is_true(same_pose(p, joints(none)))
          assert.are.equal(0, iterations)
          assert.is_true(approx(distance, dist(p[n], target), EPS))
          assert.are.equal(distance <= none.tolerance, reached)
          local _, half_distance = half:solve(target)
          full:solve(target)
          local h, f = joints(half), joints(full)
          assert.are.equal(p[1][1], h[1][1])
          assert.is_true(approx(half_distance, dist(h[n], target), EPS))
          for i = 1, n - 1 do
            local old, mid, new = sub(p[i + 1], p[i]), sub(h[i + 1], h[i]), sub(f[i + 1], f[i])
            assert.is_true(approx(len(mid), len(old), EPS))
            assert.is_true(math.abs(angle(old, mid) - angle(old, new) / 2) <= ANGLE_EPS)
            assert.is_true(math.abs(angle(mid, new) - angle(old, new) / 2) <= ANGLE_EPS)
          end
        end
      end)
    end
  end)

  describe("pose access", function()
    it("counts joints with # and sums bones with length()", function()
      local p = random_positions(7)
      local c = ik.chain{ positions = p }
      assert.are.equal(7, #c)
      assert.is_true(approx(c:length(), total_length(p), EPS))
      assert.are.equal(5, #ik.chain{ positions = STRAIGHT5 })
    end)

    it("gives the same joint from joint and joint_xyz", function()
      local c = ik.chain{ positions = random_positions(9) }
      c:solve({ 1, 2, 3 })
      for i = 1, #c do
        local v = c:joint(i)
        local x, y, z = c:joint_xyz(i)
        assert.are.equal("ik.vec3", getmetatable(v).__name)
        assert.are.equal(v.x, x)
        assert.are.equal(v.y, y)
        assert.are.equal(v.z, z)
      end
    end)

    it("round-trips positions() through set_positions()", function()
      local c = ik.chain{ positions = random_positions(6) }
      c:solve({ 0, 1, 0 })
      local before, list = joints(c), c:positions()
      assert.are.equal(6, #list)
      assert.are.equal("ik.vec3", getmetatable(list[1]).__name)
      c:set_positions(list)
      assert.is_true(same_pose(before, joints(c)))
    end)

    it("takes a new pose with set_positions and measures its bones again", function()
      local c = ik.chain{ positions = STRAIGHT5 }
      assert.are.equal(4, c:length())
      local scaled = {}
      for i, q in ipairs(STRAIGHT5) do scaled[i] = { 2 * q[1], 2 * q[2], 2 * q[3] } end
      c:set_positions(scaled)
      assert.are.equal(8, c:length())
      assert.is_true(same_pose(scaled, joints(c)))
      c:solve({ 3, 3, 0 })
      for _, l in ipairs(bone_lengths(joints(c))) do assert.is_true(approx(l, 2, EPS)) end
    end)
  end)

  describe("fields", function()
    it("has the documented defaults", function()
      local c = ik.chain{ positions = STRAIGHT5 }
      assert.are.equal("fabrik", c.solver)
      assert.are.equal(10, c.iterations)
      assert.is_true(approx(c.tolerance, 1e-3, EPS))
      assert.are.equal(1, c.weight)
      assert.is_nil(c.pole)
      assert.is_nil(c.base_direction)
    end)

    it("reads back what was written", function()
      local c = ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 } } }
      c.solver = "two_bone"
      c.iterations = 3
      c.tolerance = 0.5
      c.weight = 0.25
      c.base_direction = { 0, 0, 2 }
      assert.are.equal("two_bone", c.solver)
      assert.are.equal(3, c.iterations)
      assert.are.equal(0.5, c.tolerance)
      assert.are.equal(0.25, c.weight)
      assert.are.equal(2, c.base_direction.z)
      c.base_direction = nil
      assert.is_nil(c.base_direction)
      for _, solver in ipairs(SOLVERS) do
        c.solver = solver
        assert.are.equal(solver, c.solver)
      end
    end)

    it("caps the sweeps at iterations", function()
      local c = ik.chain{ positions = random_positions(20), solver = "ccd", iterations = 1,
                          tolerance = 1e-12 }
      local _, _, iterations = c:solve({ 1, 1, 1 })
      assert.are.equal(1, iterations)
    end)

    it("prints its solver and joint count", function()
      local c = ik.chain{ positions = STRAIGHT5, solver = "dls" }
      assert.are.equal("ik.chain(dls, 5 joints)", tostring(c))
    end)
  end)

  describe("lifetime", function()
    -- Made in a function of their own, so no stack slot of the test holds them.
    local function attach(c, weak)
      local pole = ik.pole{ position = { 0, 0, 1 }, weight = 0.5 }
      local cone = ik.cone{ angle = 0.75 }
      c.pole = pole
      c:set_constraint(2, cone)
      weak.pole, weak.cone = pole, cone
    end

    it("keeps its pole and constraints alive, and lets them go when dropped", function()
      local c = ik.chain{ positions = STRAIGHT5 }
      local weak = setmetatable({}, { __mode = "v" })
      attach(c, weak)
      collectgarbage("collect")
      collectgarbage("collect")
      assert.is_not_nil(weak.pole)
      assert.is_not_nil(weak.cone)
      c:solve({ 1, 2, 0 })
      assert.are.equal(1, c.pole.position.z)
      assert.are.equal(0.5, c.pole.weight)
      assert.are.equal(0.75, c:constraint(2).angle)
      c.pole = nil
      c:set_constraint(2, nil)
      collectgarbage("collect")
      collectgarbage("collect")
      assert.is_nil(weak.pole)
      assert.is_nil(weak.cone)
    end)

    local METHODS = {
      solve = { { 1, 1, 1 } }, joint = { 1 }, joint_xyz = { 1 }, positions = {},
      set_positions = { STRAIGHT5 }, length = {}, set_constraint = { 1 }, constraint = { 1 }, close = {},
    }

    it("raises on every use once closed, and still prints", function()
      local c = ik.chain{ positions = STRAIGHT5 }
      local saved = {}
      for name in pairs(METHODS) do saved[name] = c[name] end
      c:close()
      assert.are.equal("ik.chain (closed)", tostring(c))
      for name, args in pairs(METHODS) do
        -- Through the chain, and through a method fetched before it was closed.
        assert_error_has("attempt to use a closed ik.chain", function() c[name](c, args[1]) end)
        if name ~= "close" then
          assert_error_has("attempt to use a closed ik.chain", function() saved[name](c, args[1]) end)
        end
      end
      assert_error_has("attempt to use a closed ik.chain", function() return c.solver end)
      assert_error_has("attempt to use a closed ik.chain", function() c.solver = "ccd" end)
      assert_error_has("attempt to use a closed ik.chain", function() return #c end)
    end)

    if _VERSION == "Lua 5.4" then
      it("closes as a to-be-closed variable", function()
        local c = ik.chain{ positions = STRAIGHT5 }
        assert(load("local c = ...; do local x <close> = c end"))(c)
        assert.are.equal("ik.chain (closed)", tostring(c))
      end)
    end
  end)

  describe("allocation", function()
    -- KiB the GC gained over 1,000 solves of a warm chain, the collector stopped.
    local function allocated(c, target1, target2)
      local function run(k)
        for i = 1, k do c:solve(i % 2 == 0 and target1 or target2) end
      end
      -- Warm up through the same loop: the first calls may grow the interpreter's call
      -- structures, and LuaJIT compiles the loop into traces.
      run(1000)
      collectgarbage("collect")
      collectgarbage("stop")
      local before = collectgarbage("count")
      run(1000)
      local after = collectgarbage("count")
      collectgarbage("restart")
      return after - before
    end

    it("solve allocates nothing", function()
      local target1, target2 = ik.vec3(1, 2, 0.5), ik.vec3(-1, 1, 1)
      for _, solver in ipairs(SOLVERS) do
        local p = solver == "two_bone" and { { 0, 0, 0 }, { 0, 1, 0.2 }, { 0, 2, 0 } } or random_positions(12)
        local c = ik.chain{ positions = p, solver = solver, weight = 0.5, pole = { 0, 0, 3 } }
        if solver ~= "two_bone" then c:set_constraint(2, ik.cone{ angle = 1 }) end
        if jit then
          -- LuaJIT's traces are GC objects, and it may still compile a side trace during
          -- the measurement (a few hundred bytes, now and then). The interpreter alone
          -- shows the binding's own allocation exactly (spec_helper's jit_off); with the
          -- JIT on, anything per solve would be at least 1,000 userdata or strings.
          require("spec_helper").jit_off()
          local interpreted = allocated(c, target1, target2)
          jit.on()
          assert.are.equal(0, interpreted, solver .. " allocated " .. interpreted .. " KiB")
          local compiled = allocated(c, target1, target2)
          assert.is_true(compiled < 4, solver .. " allocated " .. compiled .. " KiB with the JIT on")
        else
          local delta = allocated(c, target1, target2)
          assert.are.equal(0, delta, solver .. " allocated " .. delta .. " KiB")
        end
      end
    end)
  end)

  describe("range", function()
    -- The reach (root's largest coordinate plus the length) must be within the core's
    -- limit, half the largest coordinate, so that no solve can leave the range.
    local REACH = double and 5e139 or 5e14
    local message = "the chain reaches too far: its root's largest coordinate plus its length must be at most"

    it("is checked when the pose comes in", function()
      -- each coordinate within range, the bone between them too long
      assert_error_has("ik.chain: bad field 'positions' (" .. message,
        function() ik.chain{ positions = { { -0.9 * REACH, 0, 0 }, { 0.9 * REACH, 0, 0 } } } end)
      assert_error_has("ik.chain: bad field 'positions' (" .. message,
        function() ik.chain{ positions = { { 0.6 * REACH, 0, 0 }, { 0.6 * REACH, 0.5 * REACH, 0 } } } end)
      local c = ik.chain{ positions = { { 0.5 * REACH, 0, 0 }, { 0.5 * REACH, 0.4 * REACH, 0 } } }
      local before = joints(c)
      assert_error_has("(" .. message, function()
        c:set_positions{ { 0.5 * REACH, 0, 0 }, { 0.5 * REACH, 0.6 * REACH, 0 } }
      end)
      assert.are.same(before, joints(c))
    end)

    for _, solver in ipairs(SOLVERS) do
      it("leaves every solved pose solvable again (" .. solver .. ")", function()
        -- as far out as allowed, solved towards the far corners again and again
        local r = 0.33 * REACH
        local c = ik.chain{ positions = { { r, -r, r }, { r, -r, r + 0.3 * REACH },
                                          { r, -r, r + 0.6 * REACH } },
                            solver = solver, pole = ik.pole{ position = { 0, 0, 0 }, weight = 0.5 } }
        for k = 0, 15 do
          local far = 2 * REACH
          c:solve({ k % 2 == 0 and far or -far, k % 4 < 2 and far or -far, k % 8 < 4 and far or -far })
        end
        local p = joints(c)
        assert.is_true(approx(dist(p[1], p[2]), 0.3 * REACH, EPS))
      end)
    end
  end)

  describe("errors", function()
    local c5
    before_each(function() c5 = ik.chain{ positions = STRAIGHT5 } end)

    it("in solve", function()
      assert_error_has("bad argument #1 to 'solve' (vec3 expected, got string)", function() c5:solve("x") end)
      assert_error_has("bad argument #1 to 'solve' (vec3 expected, got no value)", function() c5:solve() end)
      local fake = { solve = c5.solve }
      assert_error_has("calling 'solve' on bad self", function() fake:solve({ 1, 1, 1 }) end)
      -- Another ik type, and a vec3 where the chain goes: the fast type checks (against
      -- metatables the functions hold) fall back to the named ones.
      assert_error_has("(ik.chain expected, got ik.vec3)",
        function() c5.solve(ik.vec3(), ik.vec3(1, 1, 1)) end)
      assert_error_has("bad argument #1 to 'solve' (vec3 expected, got ik.quat)",
        function() c5:solve(ik.quat()) end)
      assert_error_has("bad argument #1 to 'solve' (finite vec3 expected",
        function() c5:solve({ 0 / 0, 1, 1 }) end)
      assert.is_true((c5:solve({ 1, 1, 1 }))) -- a table still does
      c5:close()
      assert_error_has("attempt to use a closed ik.chain", function() c5:solve(ik.vec3(1, 1, 1)) end)
    end)

    it("in the method and field lookup", function()
      local index = getmetatable(c5).__index
      assert.are.equal("function", type(index(c5, "solve")))
      assert.are.equal(c5.tolerance, index(c5, "tolerance"))
      assert.is_nil(index(c5, "match_rotation")) -- a bone chain's field only
      assert.is_nil(index(c5, 1))
      assert_error_has("(ik.chain expected, got ik.vec3)", function() index(ik.vec3(), "solve") end)
      assert_error_has("(ik.chain expected, got number)", function() index(5, "tolerance") end)
      c5:close()
      assert_error_has("attempt to use a closed ik.chain", function() return c5.solve end)
    end)

    it("in the constructor", function()
      assert_error_has("table expected, got no value", function() ik.chain() end)
      assert_error_has("ik.chain: bad field 'positions' (at least 2 vec3 expected, got 1)",
        function() ik.chain{ positions = { { 0, 0, 0 } } } end)
      assert_error_has("ik.chain: bad field 'positions' (at least 2 vec3 expected, got nil)",
        function() ik.chain{} end)
      assert_error_has("ik.chain: bad field 'positions' (vec3 expected at index 2, got string)",
        function() ik.chain{ positions = { { 0, 0, 0 }, "up" } } end)
      assert_error_has("ik.chain: bad field 'positions' (bone 2 has zero length",
        function() ik.chain{ positions = { { 0, 0, 0 }, { 0, 1, 0 }, { 0, 1, 0 } } } end)
      assert_error_has("ik.chain: bad field 'tolerance' (positive number expected, got -1)",
        function() ik.chain{ positions = STRAIGHT5, tolerance = -1 } end)
      assert_error_has("ik.chain: bad field 'tolerance' (positive number expected, got 0)",
        function() ik.chain{ positions = STRAIGHT5, tolerance = 0 } end)
      assert_error_has("ik.chain: bad field 'iterations' (integer in 1..10000 expected, got 0)",
        function() ik.chain{ positions = STRAIGHT5, iterations = 0 } end)
      assert_error_has("ik.chain: bad field 'iterations' (integer in 1..10000 expected, got 2.5)",
        function() ik.chain{ positions = STRAIGHT5, iterations = 2.5 } end)
      assert_error_has("ik.chain: bad field 'weight' (number in [0, 1] expected, got 2)",
        function() ik.chain{ positions = STRAIGHT5, weight = 2 } end)
      assert_error_has(
        "ik.chain: bad field 'solver' ('fabrik', 'ccd', 'two_bone' or 'dls' expected, got 'jacobian')",
        function() ik.chain{ positions = STRAIGHT5, solver = "jacobian" } end)
      assert_error_has("ik.chain: solver 'two_bone' needs exactly 3 joints (this chain has 5)",
        function() ik.chain{ positions = STRAIGHT5, solver = "two_bone" } end)
      assert_error_has("ik.chain: bad field 'pole' (ik.pole or vec3 expected, got string)",
        function() ik.chain{ positions = STRAIGHT5, pole = "left" } end)
      assert_error_has("ik.chain: no field 'tolerence'",
        function() ik.chain{ positions = STRAIGHT5, tolerence = 1e-6 } end)
    end)

    it("in field assignment, changing nothing", function()
      local function bad(field, value, text)
        local before = c5[field]
        assert_error_has(text, function() c5[field] = value end)
        assert.are.equal(before, c5[field])
      end
      bad("tolerance", -1, "ik.chain: bad field 'tolerance' (positive number expected, got -1)")
      bad("tolerance", "small", "ik.chain: bad field 'tolerance' (positive number expected, got string)")
      bad("iterations", 0, "ik.chain: bad field 'iterations' (integer in 1..10000 expected, got 0)")
      bad("weight", -0.5, "ik.chain: bad field 'weight' (number in [0, 1] expected, got -0.5)")
      bad("solver", "two_bone", "ik.chain: solver 'two_bone' needs exactly 3 joints (this chain has 5)")
      bad("solver", "newton", "ik.chain: bad field 'solver' ('fabrik', 'ccd', 'two_bone' or 'dls' expected")
      bad("solver", 1, "ik.chain: bad field 'solver'")
      assert_error_has("ik.chain: no field 'foo'", function() c5.foo = 1 end)
      assert_error_has("ik.chain: no field 'solve'", function() c5.solve = print end)
    end)

    it("bounding a solve's work: iterations, and iterations times joints", function()
      assert_error_has("ik.chain: bad field 'iterations' (integer in 1..10000 expected, got 2147483647)",
        function() ik.chain{ positions = STRAIGHT5, iterations = 2 ^ 31 - 1 } end)
      assert_error_has("ik.chain: bad field 'iterations' (integer in 1..10000 expected, got 10001)",
        function() ik.chain{ positions = STRAIGHT5, solver = "ccd", iterations = 10001 } end)
      local function line(n)
        local t = {}
        for i = 1, n do t[i] = { 0, i, 0 } end
        return t
      end
      -- 2^20 joint moves: iterations x joints, x (joints - 1) / 2 for CCD's sweeps.
      assert_error_has("ik.chain: bad field 'iterations' (integer in 1..9986 expected, got 10000)",
        function() ik.chain{ positions = line(105), iterations = 10000 } end)
      assert_error_has("ik.chain: bad field 'iterations' (integer in 1..211 expected, got 212)",
        function() ik.chain{ positions = line(100), solver = "ccd", iterations = 212 } end)
      local c = ik.chain{ positions = line(100), iterations = 10000 }
      assert_error_has(
        "ik.chain: solver 'ccd' runs at most 211 iterations on 100 joints (iterations is 10000)",
        function() c.solver = "ccd" end)
      assert.are.equal("fabrik", c.solver)
      c.iterations = 211
      c.solver = "ccd"
      assert_error_has("ik.chain: bad field 'iterations' (integer in 1..211 expected, got 212)",
        function() c.iterations = 212 end)
      assert.are.equal(211, c.iterations)
      -- The default 10 is lowered to what the chain allows; one iteration is the least.
      assert.are.equal(1, ik.chain{ positions = line(1448), solver = "ccd" }.iterations)
      assert.are.equal(5, ik.chain{ positions = line(200000) }.iterations)
      assert_error_has("ik.chain: solver 'ccd' takes too many joint moves for 1449 joints",
        function() ik.chain{ positions = line(1449), solver = "ccd", iterations = 1 } end)
    end)

    it("in the pose methods", function()
      assert_error_has("bad argument #1 to 'joint' (index out of range: 1..5)", function() c5:joint(0) end)
      assert_error_has("bad argument #1 to 'joint' (index out of range: 1..5)", function() c5:joint(6) end)
      assert_error_has("bad argument #1 to 'joint_xyz' (index out of range: 1..5)",
        function() c5:joint_xyz(6) end)
      assert_error_has("bad argument #1 to 'set_positions' (5 positions expected, got 4)",
        function() c5:set_positions({ { 0, 0, 0 }, { 0, 1, 0 }, { 0, 2, 0 }, { 0, 3, 0 } }) end)
      assert_error_has("bad argument #1 to 'set_positions' (table expected, got number)",
        function() c5:set_positions(5) end)
      assert_error_has("bad argument #1 to 'set_constraint' (index out of range: 1..4)",
        function() c5:set_constraint(5, ik.cone{ angle = 1 }) end)
      assert_error_has("bad argument #1 to 'set_constraint' (index out of range: 1..4)",
        function() c5:set_constraint(0, nil) end)
      assert_error_has("bad argument #2 to 'set_constraint' (ik.cone, ik.hinge or nil expected, got table)",
        function() c5:set_constraint(1, { angle = 1 }) end)
      assert_error_has("bad argument #1 to 'constraint' (index out of range: 1..4)",
        function() c5:constraint(5) end)
    end)

    describe("NaN and infinity", function()
      local nan, inf = 0 / 0, math.huge
      local bad_vectors = { { nan, 0, 0 }, { 0, inf, 0 }, { 0, 0, -inf }, { 1e300, 0, 0 } }

      it("raise in the constructor", function()
        for _, v in ipairs(bad_vectors) do
          assert_error_has("ik.chain: bad field 'positions' (finite vec3 expected at index 2",
            function() ik.chain{ positions = { { 0, 0, 0 }, v, { 0, 2, 0 } } } end)
          assert_error_has("ik.chain: bad field 'base_direction' (finite vec3 expected",
            function() ik.chain{ positions = STRAIGHT5, base_direction = v } end)
          assert_error_has("ik.chain: bad field 'pole' (finite vec3 expected",
            function() ik.chain{ positions = STRAIGHT5, pole = v } end)
        end
      end)

      it("raise elsewhere and leave the chain exactly as it was", function()
        local c = ik.chain{ positions = random_positions(5), base_direction = { 0, 1, 0 },
                            pole = { 1, 0, 0 } }
        c:solve({ 1, 1, 1 })
        local pose, length, pole = joints(c), c:length(), c.pole
        for _, v in ipairs(bad_vectors) do
          assert_error_has("bad argument #1 to 'solve' (finite vec3 expected", function() c:solve(v) end)
          local list = c:positions()
          list[5] = v -- the last one: everything before it was read already
          assert_error_has("bad argument #1 to 'set_positions' (finite vec3 expected at index 5",
            function() c:set_positions(list) end)
          assert_error_has("ik.chain: bad field 'base_direction' (finite vec3 expected",
            function() c.base_direction = v end)
          assert_error_has("ik.chain: bad field 'pole' (finite vec3 expected", function() c.pole = v end)
          assert.is_true(same_pose(pose, joints(c)))
          assert.are.equal(length, c:length())
          assert.is_true(rawequal(pole, c.pole))
          assert.are.equal(1, c.base_direction.y)
        end
        local list = c:positions()
        list[3] = list[2] -- a zero-length bone is refused the same way
        assert_error_has("bad argument #1 to 'set_positions' (bone 2 has zero length",
          function() c:set_positions(list) end)
        assert.is_true(same_pose(pose, joints(c)))
      end)
    end)
  end)
end)
