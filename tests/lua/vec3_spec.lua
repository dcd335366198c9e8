-- ik.vec3: a read-only value type, and the vec3-like values the module accepts.
local ik = require("ik")
local h = require("spec_helper")

local function xyz(v) return { v.x, v.y, v.z } end

-- A host's own vector type: nothing stored in the table, x, y, z served by __index.
local function host_vec(x, y, z)
  local store = { x = x, y = y, z = z }
  return setmetatable({}, { __index = function(_, k) return store[k] end })
end

describe("ik.vec3", function()
  describe("constructor", function()
    it("takes three numbers", function()
      local v = ik.vec3(1, -2, 3.5)
      assert.are.same({ 1, -2, 3.5 }, xyz(v))
    end)

    it("makes the zero vector without arguments", function()
      assert.are.same({ 0, 0, 0 }, xyz(ik.vec3()))
    end)

    it("fills missing components with 0", function()
      assert.are.same({ 7, 0, 0 }, xyz(ik.vec3(7)))
      assert.are.same({ 7, 8, 0 }, xyz(ik.vec3(7, 8)))
      assert.are.same({ 0, 8, 0 }, xyz(ik.vec3(nil, 8)))
    end)

    it("copies an array {x, y, z}", function()
      assert.are.same({ 4, 5, 6 }, xyz(ik.vec3({ 4, 5, 6 })))
    end)

    it("copies a table {x =, y =, z =}", function()
      assert.are.same({ 4, 5, 6 }, xyz(ik.vec3({ x = 4, y = 5, z = 6 })))
    end)

    it("copies a host vector whose fields come from its metatable's __index", function()
      local host = host_vec(-1, 2, -3)
      assert.is_nil(rawget(host, "x"))
      assert.are.same({ -1, 2, -3 }, xyz(ik.vec3(host)))
    end)

    it("copies an ik.vec3 into a new value", function()
      local a = ik.vec3(1, 2, 3)
      local b = ik.vec3(a)
      assert.is_false(rawequal(a, b))
      assert.are.same({ 1, 2, 3 }, xyz(b))
    end)

    it("copies, so changing the source table afterwards changes nothing", function()
      local t = { 1, 2, 3 }
      local v = ik.vec3(t)
      t[1], t[2], t[3] = 9, 9, 9
      assert.are.same({ 1, 2, 3 }, xyz(v))
    end)

    it("makes userdata sharing one metatable", function()
      local v = ik.vec3(1, 2, 3)
      assert.are.equal("userdata", type(v))
      assert.are.equal(getmetatable(ik.vec3()), getmetatable(v))
    end)

    it("refuses a string as the one argument", function()
      assert(h.raises(function() return ik.vec3("1") end, "bad argument #1", "(vec3 expected, got string)"))
    end)

    it("refuses a non-number component", function()
      assert(h.raises(function() return ik.vec3(1, "2", 3) end,
        "bad argument #2", "(number expected, got string)"))
      assert(h.raises(function() return ik.vec3(1, 2, {}) end,
        "bad argument #3", "(number expected, got table)"))
    end)

    it("refuses an array that is too short", function()
      assert(h.raises(function() return ik.vec3({ 1, 2 }) end, "(vec3 expected, got table)"))
    end)

    it("refuses a table with a missing named component", function()
      assert(h.raises(function() return ik.vec3({ x = 1, y = 2 }) end, "(vec3 expected, got table)"))
    end)

    it("refuses NaN, infinite and huge components", function()
      assert(h.raises(function() return ik.vec3(0 / 0, 0, 0) end,
        "bad argument #1", "finite number expected, got nan"))
      assert(h.raises(function() return ik.vec3(0, math.huge, 0) end, "bad argument #2", "finite", "got inf"))
      assert(h.raises(function() return ik.vec3(0, 0, -math.huge) end,
        "bad argument #3", "finite", "got -inf"))
      assert(h.raises(function() return ik.vec3(1e300, 0, 0) end, "finite", "got 1e+300"))
      assert(h.raises(function() return ik.vec3({ 1, 0 / 0, 3 }) end, "finite vec3 expected"))
      assert(h.raises(function() return ik.vec3({ x = 1, y = 2, z = math.huge }) end, "finite vec3 expected"))
    end)

    it("refuses an ik.quat, though it has x, y and z", function()
      assert(h.raises(function() return ik.vec3(ik.quat()) end, "(vec3 expected, got ik.quat)"))
    end)

    it("refuses, without raising otherwise, a userdata it cannot index", function()
      -- A closed file handle, stripped of its metatable, then given one without __index:
      -- reading x from it would raise "attempt to index a userdata value".
      local f = io.tmpfile()
      f:close()
      local mt = getmetatable(f)
      debug.setmetatable(f, nil)
      local ok, err = pcall(ik.vec3, f)
      debug.setmetatable(f, { __name = "host.thing" })
      local ok2, err2 = pcall(ik.vec3, f)
      debug.setmetatable(f, mt)
      assert.is_false(ok)
      assert(h.raises(function() error(err, 0) end, "(vec3 expected, got userdata)"))
      assert.is_false(ok2)
      assert(h.raises(function() error(err2, 0) end, "(vec3 expected, got host.thing)"))
    end)

    it("refuses the module's other types", function()
      local cone = ik.cone({ angle = 1 })
      assert(h.raises(function() return ik.vec3(cone) end, "(vec3 expected, got ik.cone)"))
      local pole = ik.pole({ position = { 1, 2, 3 } })
      assert(h.raises(function() return ik.vec3(pole) end, "(vec3 expected, got ik.pole)"))
      pole:close()
      assert(h.raises(function() return ik.vec3(pole) end, "(vec3 expected, got ik.pole)"))
    end)
  end)

  describe("fields", function()
    it("reads x, y and z", function()
      local v = ik.vec3(1.5, -2.5, 3.25)
      assert.are.equal(1.5, v.x)
      assert.are.equal(-2.5, v.y)
      assert.are.equal(3.25, v.z)
    end)

    it("has no other fields than its methods", function()
      local v = ik.vec3(1, 2, 3)
      assert.is_nil(v.w)
      assert.is_nil(v.xy)
      assert.is_nil(v[1])
      assert.are.equal("function", type(v.dot))
    end)

    it("are read-only, and the failed write changes nothing", function()
      local v = ik.vec3(1, 2, 3)
      assert(h.raises(function() v.x = 5 end, "ik.vec3: fields are read-only (a value"))
      assert(h.raises(function() v.w = 5 end, "read-only"))
      assert(h.raises(function() v.dot = 5 end, "read-only"))
      assert.are.same({ 1, 2, 3 }, xyz(v))
      assert.is_nil(v.w)
    end)
  end)

  describe("arithmetic", function()
    local a, b = ik.vec3(1, 2, 3), ik.vec3(10, 20, 30)

    it("adds", function()
      local s = a + b
      assert.are.same({ 11, 22, 33 }, xyz(s))
      assert.are.equal(getmetatable(a), getmetatable(s))
      assert.are.same({ 1, 2, 3 }, xyz(a)) -- operands untouched
    end)

    it("subtracts in the written order", function()
      assert.are.same({ 9, 18, 27 }, xyz(b - a))
      assert.are.same({ -9, -18, -27 }, xyz(a - b))
    end)

    it("takes vec3-like tables on either side of + and -", function()
      assert.are.same({ 2, 3, 4 }, xyz(a + { 1, 1, 1 }))
      assert.are.same({ 2, 3, 4 }, xyz({ 1, 1, 1 } + a))
      assert.are.same({ 0, 1, 2 }, xyz(a - { x = 1, y = 1, z = 1 }))
      assert.are.same({ 0, -1, -2 }, xyz({ x = 1, y = 1, z = 1 } - a))
      assert.are.same({ 9, 18, 27 }, xyz(host_vec(10, 20, 30) - a))
      assert.are.same({ -9, -18, -27 }, xyz(a - host_vec(10, 20, 30)))
    end)

    it("scales by a number on either side", function()
      assert.are.same({ 2, 4, 6 }, xyz(a * 2))
      assert.are.same({ 2, 4, 6 }, xyz(2 * a))
      assert.are.same({ -0.5, -1, -1.5 }, xyz(a * -0.5))
    end)

    it("divides by a number", function()
      assert.are.same({ 0.5, 1, 1.5 }, xyz(a / 2))
      assert.are.same({ -4, -8, -12 }, xyz(ik.vec3(2, 4, 6) / -0.5))
    end)

    it("negates", function()
      assert.are.same({ -1, -2, -3 }, xyz(-a))
      assert.are.same({ 1, 2, 3 }, xyz(-(-a)))
    end)

    it("has no vector product through *", function()
      assert(h.raises(function() return a * b end, "(number expected, got ik.vec3)"))
    end)

    it("refuses division by zero, and a number divided by a vector", function()
      assert(h.raises(function() return a / 0 end, "division by zero"))
      assert(h.raises(function() return 2 / a end, "(number expected, got ik.vec3)"))
    end)

    it("refuses non-vectors and non-finite scalars", function()
      assert(h.raises(function() return a + "1" end, "(vec3 expected, got string)"))
      assert(h.raises(function() return a + 1 end, "(vec3 expected, got number)"))
      assert(h.raises(function() return a + ik.quat() end, "(vec3 expected, got ik.quat)"))
      assert(h.raises(function() return a - { 1, 0 / 0, 1 } end, "finite vec3 expected"))
      assert(h.raises(function() return a * (0 / 0) end, "finite number expected, got nan"))
      assert(h.raises(function() return math.huge * a end, "finite number expected, got inf"))
      assert(h.raises(function() return a / -math.huge end, "finite number expected, got -inf"))
    end)
  end)

  describe("equality", function()
    it("holds for equal components", function()
      assert.is_true(ik.vec3(1, 2, 3) == ik.vec3(1, 2, 3))
      assert.is_false(ik.vec3(1, 2, 3) ~= ik.vec3(1, 2, 3))
      assert.is_true(ik.vec3(0, 0, 0) == ik.vec3(-0.0, 0, 0))
    end)

    it("fails when any component differs", function()
      local v = ik.vec3(1, 2, 3)
      assert.is_false(v == ik.vec3(9, 2, 3))
      assert.is_false(v == ik.vec3(1, 9, 3))
      assert.is_false(v == ik.vec3(1, 2, 9))
      assert.is_true(v ~= ik.vec3(1, 2, 3.5))
    end)

    it("is false, without error, against other types", function()
      local v = ik.vec3(0, 0, 0)
      assert.is_false(v == { 0, 0, 0 }) -- Lua compares a table and a userdata without metamethods
      assert.is_false(v == ik.quat())
      assert.is_false(ik.quat() == v)
      assert.is_false(v == ik.cone({ angle = 1 }))
      local pole = ik.pole({ position = { 0, 0, 0 } })
      assert.is_false(v == pole)
      pole:close()
      assert.is_false(v == pole)
      assert.is_false(pole == v)
    end)
  end)

  describe("methods", function()
    it("length", function()
      assert.are.equal(13, ik.vec3(3, 4, 12):length())
      assert.are.equal(0, ik.vec3():length())
      assert.are.equal(5, ik.vec3(-3, 0, -4):length())
    end)

    it("normalized gives a unit vector along the original", function()
      local v = ik.vec3(3, 0, -4)
      local n = v:normalized()
      assert(h.vec_near(n, { 0.6, 0, -0.8 }))
      assert(h.near(n:length(), 1))
      assert.are.same({ 3, 0, -4 }, xyz(v))
    end)

    it("normalized keeps the zero vector zero, never NaN", function()
      local n = ik.vec3():normalized()
      assert.are.same({ 0, 0, 0 }, xyz(n))
      assert.are.equal(n.x, n.x)
    end)

    it("dot", function()
      local v = ik.vec3(1, 2, 3)
      assert.are.equal(12, v:dot(ik.vec3(4, -5, 6)))
      assert.are.equal(12, ik.vec3(4, -5, 6):dot(v))
      assert.are.equal(12, v:dot({ 4, -5, 6 }))
      assert.are.equal(0, ik.vec3(1, 0, 0):dot({ x = 0, y = 1, z = 0 }))
    end)

    it("cross is right-handed", function()
      local x, y, z = ik.vec3(1, 0, 0), ik.vec3(0, 1, 0), ik.vec3(0, 0, 1)
      assert.are.same({ 0, 0, 1 }, xyz(x:cross(y)))
      assert.are.same({ 1, 0, 0 }, xyz(y:cross(z)))
      assert.are.same({ 0, 1, 0 }, xyz(z:cross(x)))
      assert.are.same({ 0, 0, -1 }, xyz(y:cross(x)))
    end)

    it("cross of general vectors, with a table argument", function()
      assert.are.same({ -3, 6, -3 }, xyz(ik.vec3(1, 2, 3):cross({ 4, 5, 6 })))
      assert.are.same({ 0, 0, 0 }, xyz(ik.vec3(1, 2, 3):cross({ 2, 4, 6 })))
    end)

    it("lerp: t = 0 is self, t = 1 is the other, between is on the segment", function()
      local a, b = ik.vec3(1, 2, 3), ik.vec3(5, -2, 7)
      assert(h.vec_near(a:lerp(b, 0), { 1, 2, 3 }))
      assert(h.vec_near(a:lerp(b, 1), { 5, -2, 7 }))
      assert(h.vec_near(a:lerp(b, 0.25), { 2, 1, 4 }))
      assert(h.vec_near(a:lerp({ 5, -2, 7 }, 0.5), { 3, 0, 5 }))
    end)

    it("lerp refuses a non-finite t", function()
      local a = ik.vec3()
      assert(h.raises(function() return a:lerp(a, 0 / 0) end, "finite number expected, got nan"))
      assert(h.raises(function() return a:lerp(a) end, "(number expected, got no value)"))
    end)

    it("distance", function()
      assert.are.equal(5, ik.vec3(1, 2, 3):distance(ik.vec3(4, 6, 3)))
      assert.are.equal(5, ik.vec3(4, 6, 3):distance({ 1, 2, 3 }))
      assert.are.equal(0, ik.vec3(1, 2, 3):distance({ 1, 2, 3 }))
    end)

    it("unpack gives exactly the three components", function()
      assert.are.equal(3, select("#", ik.vec3(1, 2, 3):unpack()))
      local x, y, z = ik.vec3(1, -2, 0.5):unpack()
      assert.are.same({ 1, -2, 0.5 }, { x, y, z })
    end)

    it("tostring reads the same on every Lua", function()
      assert.are.equal("vec3(1, -2, 0.5)", tostring(ik.vec3(1, -2, 0.5)))
      assert.are.equal("vec3(0, 0, 0)", tostring(ik.vec3()))
      assert.are.equal("vec3(10000000000, 0.0009765625, -3)", tostring(ik.vec3(1e10, 2 ^ -10, -3)))
    end)

    it("raise with Lua's wording on bad arguments", function()
      local v = ik.vec3(1, 2, 3)
      assert(h.raises(function()
        local r = v:dot("a")
        return r
      end, "bad argument #1 to 'dot' (vec3 expected, got string)"))
      assert(h.raises(function() return v:cross(nil) end, "(vec3 expected, got nil)"))
      assert(h.raises(function() return v:distance(ik.quat()) end, "(vec3 expected, got ik.quat)"))
      assert(h.raises(function() return v:dot({ 0 / 0, 0, 0 }) end, "finite vec3 expected"))
    end)

    it("raise when called on something that is not an ik.vec3", function()
      local length, dot = ik.vec3().length, ik.vec3().dot
      assert(h.raises(function() return length({ 1, 2, 3 }) end, "(ik.vec3 expected, got table)"))
      assert(h.raises(function() return dot("a", ik.vec3()) end, "(ik.vec3 expected, got string)"))
    end)
  end)
end)
