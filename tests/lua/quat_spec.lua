-- ik.quat: unit quaternions, (x, y, z, w) with w the scalar part; q * r applies r first.
local ik = require("ik")
local h = require("spec_helper")

local pi = math.pi
local X, Y, Z = ik.vec3(1, 0, 0), ik.vec3(0, 1, 0), ik.vec3(0, 0, 1)

local function xyzw(q) return { q.x, q.y, q.z, q.w } end

local function neg(q)
  local x, y, z, w = q:unpack()
  return ik.quat(-x, -y, -z, -w)
end

-- A few rotations that are not special.
local function samples()
  return {
    ik.quat.axis_angle({ 1, 2, 3 }, 0.7),
    ik.quat.axis_angle({ -2, 0.5, 1 }, 2.9),
    ik.quat(0.1, -0.7, 0.3, 0.4),
    ik.quat.euler(0.3, -1.2, 2.2),
  }
end

describe("ik.quat", function()
  describe("constructor", function()
    it("gives the identity without arguments", function()
      assert.are.same({ 0, 0, 0, 1 }, xyzw(ik.quat()))
    end)

    it("normalises its components", function()
      assert.are.same({ 0, 0, 0, 1 }, xyzw(ik.quat(0, 0, 0, 2)))
      assert.are.same({ 0, -1, 0, 0 }, xyzw(ik.quat(0, -0.5, 0, 0)))
      local s = math.sqrt(30)
      local q = ik.quat(1, 2, 3, 4)
      assert(h.quat_near(q, { 1 / s, 2 / s, 3 / s, 4 / s }))
      assert.is_true(q.w > 0) -- normalised, not negated
    end)

    it("turns the zero quaternion into the identity, not NaN", function()
      assert.are.same({ 0, 0, 0, 1 }, xyzw(ik.quat(0, 0, 0, 0)))
    end)

    it("copies a quat-like value, normalised", function()
      assert.are.same({ 0, 0, 1, 0 }, xyzw(ik.quat({ 0, 0, 3, 0 })))
      assert.are.same({ 1, 0, 0, 0 }, xyzw(ik.quat({ x = 2, y = 0, z = 0, w = 0 })))
      local q = ik.quat(0.1, -0.7, 0.3, 0.4)
      local copy = ik.quat(q)
      assert.is_false(rawequal(q, copy))
      assert.are.same(xyzw(q), xyzw(copy))
    end)

    it("gives back the same value from its own components", function()
      for _, q in ipairs(samples()) do
        assert.is_true(ik.quat(q:unpack()) == q, tostring(q))
        assert.are.same(xyzw(q), xyzw(ik.quat(q:unpack())))
      end
      math.randomseed(7)
      for _ = 1, 200 do
        local q = ik.quat(math.random() - 0.5, math.random() - 0.5, math.random() - 0.5, math.random() - 0.5)
        assert.are.same(xyzw(q), xyzw(ik.quat(q:unpack())))
      end
    end)

    it("needs four numbers when given more than one", function()
      assert(h.raises(function() return ik.quat(1, 2) end,
        "bad argument #3", "(number expected, got no value)"))
      assert(h.raises(function() return ik.quat(1, 2, 3, "4") end,
        "bad argument #4", "(number expected, got string)"))
    end)

    it("refuses non-quats, NaN, infinite and huge components", function()
      assert(h.raises(function() return ik.quat(ik.vec3()) end, "(quat expected, got ik.vec3)"))
      assert(h.raises(function() return ik.quat("q") end, "(quat expected, got string)"))
      assert(h.raises(function() return ik.quat({ 0, 0, 1 }) end, "(quat expected, got table)"))
      assert(h.raises(function() return ik.quat(0 / 0, 0, 0, 1) end, "finite number expected, got nan"))
      assert(h.raises(function() return ik.quat(0, 0, 0, math.huge) end, "finite number expected, got inf"))
      assert(h.raises(function() return ik.quat({ 0, 0, 0 / 0, 1 }) end, "finite quat expected"))
      assert(h.raises(function() return ik.quat(1e300, 0, 0, 1) end, "finite number expected"))
      assert(h.raises(function() return ik.quat({ 1e300, 0, 0, 1 }) end, "finite quat expected"))
    end)
  end)

  describe("fields", function()
    it("reads x, y, z and w, and nothing else", function()
      local q = ik.quat(0, 0.6, 0, 0.8)
      assert(h.near(q.y, 0.6))
      assert(h.near(q.w, 0.8))
      assert.are.equal(0, q.x)
      assert.are.equal(0, q.z)
      assert.is_nil(q.v)
      assert.is_nil(q[4])
    end)

    it("are read-only, and the failed write changes nothing", function()
      local q = ik.quat()
      assert(h.raises(function() q.w = 0 end, "ik.quat: fields are read-only (a value"))
      assert(h.raises(function() q.angle = 0 end, "read-only"))
      assert.are.same({ 0, 0, 0, 1 }, xyzw(q))
    end)

    it("unpack gives exactly x, y, z, w", function()
      assert.are.equal(4, select("#", ik.quat():unpack()))
      assert.are.same({ 0, 0, 1, 0 }, { ik.quat(0, 0, 1, 0):unpack() })
    end)

    it("tostring reads the same on every Lua", function()
      assert.are.equal("quat(0, 0, 0, 1)", tostring(ik.quat()))
      assert.are.equal("quat(0, 0, -1, 0)", tostring(ik.quat(0, 0, -4, 0)))
      assert.are.equal("quat(0.5, -0.5, 0.5, 0.5)", tostring(ik.quat(1, -1, 1, 1)))
    end)
  end)

  describe("named constructors", function()
    it("identity", function()
      assert.are.same({ 0, 0, 0, 1 }, xyzw(ik.quat.identity()))
      assert.are.same({ 1, 2, 3 }, { (ik.quat.identity() * ik.vec3(1, 2, 3)):unpack() })
    end)

    it("axis_angle: a quarter turn about +Y takes +Z to +X and +X to -Z", function()
      local q = ik.quat.axis_angle({ 0, 1, 0 }, pi / 2)
      assert(h.vec_near(q * Z, X))
      assert(h.vec_near(q * X, -Z))
      assert(h.vec_near(q * Y, Y))
      assert(h.quat_near(q, { 0, math.sin(pi / 4), 0, math.cos(pi / 4) }))
    end)

    it("axis_angle follows the right-hand rule", function()
      assert(h.vec_near(ik.quat.axis_angle(Z, pi / 2) * X, Y))
      assert(h.vec_near(ik.quat.axis_angle(X, pi / 2) * Y, Z))
      assert(h.vec_near(ik.quat.axis_angle(Z, -pi / 2) * X, -Y))
    end)

    it("axis_angle takes an axis of any length; a zero axis gives identity", function()
      assert(h.quat_near(ik.quat.axis_angle({ 0, 5, 0 }, 1), ik.quat.axis_angle(Y, 1)))
      assert.are.same({ 0, 0, 0, 1 }, xyzw(ik.quat.axis_angle({ 0, 0, 0 }, 1)))
    end)

    it("from_to turns a onto b", function()
      local cases = {
        { { 1, 0, 0 }, { 0, 1, 0 } },
        { { 1, 2, 3 }, { -2, 0.5, 4 } },
        { { 0, 0, 2 }, { 0, 3, 3 } },
      }
      for _, p in ipairs(cases) do
        local a, b = ik.vec3(p[1]), ik.vec3(p[2])
        assert(h.vec_near(ik.quat.from_to(a, b) * a:normalized(), b:normalized()))
      end
    end)

    it("from_to is the minimal rotation: about a x b, by the angle between them", function()
      local a, b = ik.vec3(1, 2, 3), ik.vec3(-2, 0.5, 4)
      local q = ik.quat.from_to(a, b)
      local angle = math.acos(a:normalized():dot(b:normalized()))
      assert(h.near(q:angle_to(ik.quat()), angle))
      local axis = a:cross(b)
      assert(h.vec_near(q * axis, axis, 100 * h.TOL)) -- |axis| is about 13
    end)

    it("from_to of opposite vectors is a half turn", function()
      local q = ik.quat.from_to({ 1, 0, 0 }, { -1, 0, 0 })
      assert(h.vec_near(q * X, -X))
      assert(h.near(q:angle_to(ik.quat()), pi))
      local q2 = ik.quat.from_to({ 0, 0, 2 }, { 0, 0, -1 })
      assert(h.vec_near(q2 * Z, -Z))
    end)

    it("from_to with a zero vector gives identity", function()
      assert(h.quat_near(ik.quat.from_to({ 0, 0, 0 }, { 1, 0, 0 }), ik.quat()))
      assert(h.quat_near(ik.quat.from_to({ 1, 0, 0 }, { 0, 0, 0 }), ik.quat()))
    end)

    it("look_rotation takes +Z to forward and keeps +Y up", function()
      local q = ik.quat.look_rotation({ 1, 0, 0 })
      assert(h.vec_near(q * Z, X))
      assert(h.vec_near(q * Y, Y))
      assert(h.vec_near(q * X, -Z))
    end)

    it("look_rotation turns +Y as near up as forward allows, right-handed", function()
      local f = ik.vec3(0, 1, 1)
      local q = ik.quat.look_rotation(f, { 0, 1, 0 })
      local r = math.sqrt(0.5)
      assert(h.vec_near(q * Z, { 0, r, r }))
      assert(h.vec_near(q * Y, { 0, r, -r }))
      assert(h.vec_near(q * X, (q * Y):cross(q * Z)))
    end)

    it("look_rotation follows a given up", function()
      local q = ik.quat.look_rotation({ 0, 0, 3 }, { 2, 0, 0 })
      assert(h.vec_near(q * Z, Z))
      assert(h.vec_near(q * Y, X))
    end)

    it("look_rotation with up parallel to forward still looks forward, with a unit result", function()
      for _, f in ipairs({ Y, -Y, ik.vec3(0, 3, 0) }) do
        local q = ik.quat.look_rotation(f, { 0, 1, 0 })
        assert(h.vec_near(q * Z, f:normalized()))
        assert(h.near(math.sqrt(q.x ^ 2 + q.y ^ 2 + q.z ^ 2 + q.w ^ 2), 1))
      end
    end)

    it("look_rotation with a zero forward gives identity", function()
      assert(h.quat_near(ik.quat.look_rotation({ 0, 0, 0 }), ik.quat()))
    end)

    it("euler is q = qy * qx * qz", function()
      local x, y, z = 0.3, -1.1, 2.0
      local expected = ik.quat.axis_angle(Y, y) * ik.quat.axis_angle(X, x) * ik.quat.axis_angle(Z, z)
      assert(h.quat_near(ik.quat.euler(x, y, z), expected))
    end)

    it("euler applies roll first, then pitch, then yaw", function()
      -- roll takes +X to +Y, then pitch takes +Y to +Z (the other order leaves +Y)
      assert(h.vec_near(ik.quat.euler(pi / 2, 0, pi / 2) * X, Z))
      -- pitch takes +Y to +Z, then yaw takes +Z to +X (the other order leaves +Z)
      assert(h.vec_near(ik.quat.euler(pi / 2, pi / 2, 0) * Y, X))
      assert(h.vec_near(ik.quat.euler(0, pi / 2, 0) * Z, X))
    end)

    it("raise on bad arguments", function()
      assert(h.raises(function() return ik.quat.axis_angle("y", 1) end,
        "bad argument #1", "(vec3 expected, got string)"))
      assert(h.raises(function() return ik.quat.axis_angle(Y) end,
        "bad argument #2", "(number expected, got no value)"))
      assert(h.raises(function() return ik.quat.axis_angle(Y, 0 / 0) end, "finite number expected, got nan"))
      assert(h.raises(function() return ik.quat.from_to(X, { 0, 0 / 0, 0 }) end,
        "bad argument #2", "finite vec3"))
      assert(h.raises(function() return ik.quat.look_rotation(nil) end, "(vec3 expected, got nil)"))
      assert(h.raises(function() return ik.quat.look_rotation(Z, ik.quat()) end,
        "(vec3 expected, got ik.quat)"))
      assert(h.raises(function() return ik.quat.euler(1, 2) end,
        "bad argument #3", "(number expected, got no value)"))
      assert(h.raises(function() return ik.quat.euler(1, math.huge, 0) end, "bad argument #2", "got inf"))
    end)
  end)

  describe("multiplication", function()
    it("q * v rotates a vector, also a vec3-like table", function()
      local q = ik.quat.axis_angle(Y, pi / 2)
      local v = q * ik.vec3(0, 0, 2)
      assert.are.equal(getmetatable(X), getmetatable(v))
      assert(h.vec_near(v, { 2, 0, 0 }))
      assert(h.vec_near(q * { 0, 0, 2 }, { 2, 0, 0 }))
      assert(h.vec_near(q * { x = 0, y = 3, z = 0 }, { 0, 3, 0 }))
    end)

    it("q * r applies r first, then q", function()
      local qz, qx = ik.quat.axis_angle(Z, pi / 2), ik.quat.axis_angle(X, pi / 2)
      -- qx takes +Y to +Z, which qz leaves; qz first would take +Y to -X, which qx leaves
      assert(h.vec_near((qz * qx) * Y, Z))
      assert(h.vec_near((qx * qz) * Y, -X))
      for _, q in ipairs(samples()) do
        for _, r in ipairs(samples()) do
          assert(h.vec_near((q * r) * ik.vec3(1, -2, 0.5), q * (r * ik.vec3(1, -2, 0.5))))
        end
      end
    end)

    it("q * r is a unit ik.quat", function()
      local p = ik.quat(1, 2, 3, 4) * ik.quat(-1, 0.5, 2, 0.1)
      assert.are.equal(getmetatable(ik.quat()), getmetatable(p))
      assert(h.near(p.x ^ 2 + p.y ^ 2 + p.z ^ 2 + p.w ^ 2, 1))
    end)

    it("refuses what is neither quat nor vec3", function()
      local q = ik.quat()
      assert(h.raises(function() return q * "x" end, "(quat or vec3 expected, got string)"))
      assert(h.raises(function() return q * 2 end, "(quat or vec3 expected, got number)"))
      assert(h.raises(function() return q * { 0 / 0, 0, 0 } end, "finite vec3 expected"))
      assert(h.raises(function() return 2 * q end, "(ik.quat expected, got number)"))
    end)

    it("has no v * q: a vector times a rotation raises", function()
      assert(h.raises(function() return X * ik.quat() end, "(number expected, got ik.quat)"))
    end)
  end)

  describe("equality", function()
    it("holds for equal components and for q and -q", function()
      for _, q in ipairs(samples()) do
        assert.is_true(q == ik.quat(q), tostring(q))
        assert.is_true(q == neg(q), tostring(q))
        assert.is_true(neg(q) == q, tostring(q))
      end
      assert.is_true(ik.quat(0, 0, 0, 1) == ik.quat(0, 0, 0, -1))
    end)

    it("fails for different rotations", function()
      local q = ik.quat.axis_angle(Y, 1)
      assert.is_false(q == ik.quat.axis_angle(Y, 1.5))
      assert.is_false(q == ik.quat.axis_angle(X, 1))
      assert.is_true(q ~= ik.quat())
      assert.is_false(ik.quat(1, 0, 0, 0) == ik.quat(0, 1, 0, 0))
    end)

    it("is false, without error, against other types", function()
      assert.is_false(ik.quat() == ik.vec3(0, 0, 0))
      assert.is_false(ik.quat() == { 0, 0, 0, 1 })
      assert.is_false(ik.quat() == ik.cone({ angle = 1 }))
      assert.is_false(ik.cone({ angle = 1 }) == ik.quat())
    end)
  end)

  describe("methods", function()
    it("inverse undoes the rotation", function()
      for _, q in ipairs(samples()) do
        assert(h.quat_near(q * q:inverse(), ik.quat()))
        assert(h.quat_near(q:inverse() * q, ik.quat()))
        assert(h.vec_near(q:inverse() * (q * ik.vec3(1, 2, 3)), { 1, 2, 3 }))
      end
      assert.are.same({ 0, 0, 0, 1 }, xyzw(ik.quat():inverse()))
      assert(h.vec_near(ik.quat.axis_angle(Y, pi / 2):inverse() * X, Z))
    end)

    it("normalized keeps a unit quat", function()
      for _, q in ipairs(samples()) do assert(h.quat_near(q:normalized(), q)) end
      assert.are.same({ 0, 0, 0, 1 }, xyzw(ik.quat():normalized()))
    end)

    it("slerp: t = 0 and t = 1 are the endpoints", function()
      local a, b = ik.quat.axis_angle(X, 0.4), ik.quat.axis_angle({ 1, 1, 0 }, 2)
      assert(h.quat_near(a:slerp(b, 0), a))
      assert(h.quat_near(a:slerp(b, 1), b))
    end)

    it("slerp: halfway is half the angle", function()
      local q = ik.quat():slerp(ik.quat.axis_angle(Y, pi / 2), 0.5)
      assert(h.quat_near(q, ik.quat.axis_angle(Y, pi / 4)))
      local q3 = ik.quat():slerp(ik.quat.axis_angle(Y, 1.2), 0.25)
      assert(h.quat_near(q3, ik.quat.axis_angle(Y, 0.3)))
    end)

    it("slerp takes the shortest path", function()
      local b = ik.quat.axis_angle(Y, pi / 2)
      assert(h.quat_near(ik.quat():slerp(neg(b), 0.5), ik.quat.axis_angle(Y, pi / 4)))
      -- three quarters of a turn one way is a quarter the other way
      local long_way = ik.quat.axis_angle(Y, 1.5 * pi)
      assert(h.quat_near(ik.quat():slerp(long_way, 0.5), ik.quat.axis_angle(Y, -pi / 4)))
    end)

    it("slerp takes a quat-like table, normalised", function()
      assert(h.quat_near(ik.quat.axis_angle(X, 1):slerp({ 0, 0, 0, 2 }, 1), ik.quat()))
    end)

    it("angle_to measures the rotation between, in [0, pi]", function()
      local q = ik.quat.axis_angle(X, 1)
      assert(h.near(ik.quat():angle_to(q), 1))
      assert(h.near(q:angle_to(ik.quat()), 1))
      assert(h.near(q:angle_to(q), 0))
      assert(h.near(q:angle_to(neg(q)), 0))
      assert(h.near(ik.quat():angle_to(ik.quat.axis_angle(Z, 1.5 * pi)), pi / 2))
      assert(h.near(ik.quat():angle_to(ik.quat.axis_angle(Z, pi)), pi))
      assert(h.near(q:angle_to({ 0, 0, 0, 3 }), 1))
    end)

    it("raise on bad arguments", function()
      local q = ik.quat()
      assert(h.raises(function() return q:slerp("a", 0.5) end, "(quat expected, got string)"))
      assert(h.raises(function() return q:slerp(q) end, "(number expected, got no value)"))
      assert(h.raises(function() return q:slerp(q, 0 / 0) end, "finite number expected, got nan"))
      assert(h.raises(function() return q:angle_to(ik.vec3()) end, "(quat expected, got ik.vec3)"))
      assert(h.raises(function() return q:angle_to({ 0 / 0, 0, 0, 1 }) end, "finite quat expected"))
      local inverse = q.inverse
      assert(h.raises(function() return inverse(ik.vec3()) end, "(ik.quat expected, got "))
    end)
  end)
end)
