-- ik.pole: a mutable pole target (position, weight) that can be closed.
local ik = require("ik")
local h = require("spec_helper")

local function xyz(v) return { v.x, v.y, v.z } end

local CLOSED = "attempt to use a closed ik.pole"

describe("ik.pole", function()
  describe("constructor", function()
    it("takes a position, with weight 1 by default", function()
      local p = ik.pole({ position = { 1, 2, 3 } })
      assert.are.equal("userdata", type(p))
      assert.are.same({ 1, 2, 3 }, xyz(p.position))
      assert.are.equal(1, p.weight)
    end)

    it("takes any vec3-like position and a weight", function()
      local host = setmetatable({}, { __index = function(_, k) return ({ x = 7, y = 8, z = 9 })[k] end })
      assert.are.same({ 7, 8, 9 }, xyz(ik.pole({ position = host }).position))
      assert.are.same({ 4, 5, 6 }, xyz(ik.pole({ position = ik.vec3(4, 5, 6) }).position))
      local p = ik.pole({ position = { x = -1, y = 0, z = 2 }, weight = 0.25 })
      assert.are.same({ -1, 0, 2 }, xyz(p.position))
      assert.are.equal(0.25, p.weight)
    end)

    it("accepts both ends of the weight range", function()
      assert.are.equal(0, ik.pole({ position = { 0, 0, 0 }, weight = 0 }).weight)
      assert.are.equal(1, ik.pole({ position = { 0, 0, 0 }, weight = 1 }).weight)
    end)

    it("copies the position table", function()
      local t = { 1, 2, 3 }
      local p = ik.pole({ position = t })
      t[1] = 100
      assert.are.same({ 1, 2, 3 }, xyz(p.position))
    end)

    it("needs a table", function()
      assert(h.raises(function() return ik.pole() end, "bad argument #1", "(table expected, got no value)"))
      assert(h.raises(function() return ik.pole({ 1, 2, 3 }, 1) end,
        "ik.pole: no field '1' (fields: position, weight)"))
    end)

    it("requires a position", function()
      assert(h.raises(function() return ik.pole({ weight = 1 }) end,
        "ik.pole: bad field 'position' (vec3 expected, got nil)"))
    end)

    it("refuses a position that is no finite vec3", function()
      assert(h.raises(function() return ik.pole({ position = "up" }) end,
        "ik.pole: bad field 'position' (vec3 expected, got string)"))
      assert(h.raises(function() return ik.pole({ position = ik.quat() }) end,
        "ik.pole: bad field 'position' (vec3 expected, got ik.quat)"))
      assert(h.raises(function() return ik.pole({ position = { 0, 0 / 0, 0 } }) end,
        "ik.pole: bad field 'position' (finite vec3 expected"))
    end)

    it("refuses a weight outside [0, 1], with the value in the message", function()
      assert(h.raises(function() return ik.pole({ position = { 0, 0, 0 }, weight = 2 }) end,
        "ik.pole: bad field 'weight' (number in [0, 1] expected, got 2)"))
      assert(h.raises(function() return ik.pole({ position = { 0, 0, 0 }, weight = 2.0 }) end,
        "ik.pole: bad field 'weight' (number in [0, 1] expected, got 2)"))
      assert(h.raises(function() return ik.pole({ position = { 0, 0, 0 }, weight = -0.5 }) end,
        "(number in [0, 1] expected, got -0.5)"))
      assert(h.raises(function() return ik.pole({ position = { 0, 0, 0 }, weight = 0 / 0 }) end,
        "(number in [0, 1] expected, got nan)"))
      assert(h.raises(function() return ik.pole({ position = { 0, 0, 0 }, weight = math.huge }) end,
        "(number in [0, 1] expected, got inf)"))
      assert(h.raises(function() return ik.pole({ position = { 0, 0, 0 }, weight = "1" }) end,
        "(number in [0, 1] expected, got string)"))
    end)
  end)

  describe("fields", function()
    it("position reads as a new ik.vec3", function()
      local p = ik.pole({ position = { 1, 2, 3 } })
      local a, b = p.position, p.position
      assert.are.equal(getmetatable(ik.vec3()), getmetatable(a))
      assert.is_true(a == b)
      assert.is_false(rawequal(a, b))
    end)

    it("position can be set from any vec3-like value", function()
      local p = ik.pole({ position = { 1, 2, 3 } })
      p.position = ik.vec3(4, 5, 6)
      assert.are.same({ 4, 5, 6 }, xyz(p.position))
      p.position = { -1, -2, -3 }
      assert.are.same({ -1, -2, -3 }, xyz(p.position))
      p.position = { x = 0.5, y = 0, z = 0 }
      assert.are.same({ 0.5, 0, 0 }, xyz(p.position))
    end)

    it("weight can be set within [0, 1]", function()
      local p = ik.pole({ position = { 0, 0, 0 } })
      p.weight = 0.25
      assert.are.equal(0.25, p.weight)
      p.weight = 0
      assert.are.equal(0, p.weight)
    end)

    it("a refused weight leaves the old one", function()
      local p = ik.pole({ position = { 0, 0, 0 }, weight = 0.5 })
      assert(h.raises(function() p.weight = 2 end,
        "ik.pole: bad field 'weight' (number in [0, 1] expected, got 2)"))
      assert(h.raises(function() p.weight = 0 / 0 end, "(number in [0, 1] expected, got nan)"))
      assert(h.raises(function() p.weight = -1e-9 end, "(number in [0, 1] expected, got -1e-09)"))
      assert(h.raises(function() p.weight = nil end, "(number in [0, 1] expected, got nil)"))
      assert(h.raises(function() p.weight = "0.5" end, "(number in [0, 1] expected, got string)"))
      assert.are.equal(0.5, p.weight)
    end)

    it("a refused position leaves the old one", function()
      local p = ik.pole({ position = { 1, 2, 3 } })
      assert(h.raises(function() p.position = { 0 / 0, 0, 0 } end,
        "ik.pole: bad field 'position' (finite vec3 expected"))
      assert(h.raises(function() p.position = { 0, -math.huge, 0 } end, "(finite vec3 expected"))
      assert(h.raises(function() p.position = "here" end,
        "ik.pole: bad field 'position' (vec3 expected, got string)"))
      assert(h.raises(function() p.position = nil end, "(vec3 expected, got nil)"))
      assert.are.same({ 1, 2, 3 }, xyz(p.position))
    end)

    it("has no other fields", function()
      local p = ik.pole({ position = { 0, 0, 0 } })
      assert.is_nil(p.foo)
      assert.are.equal("function", type(p.close))
      assert(h.raises(function() p.foo = 1 end, "ik.pole: no field 'foo' (fields: position, weight)"))
      assert(h.raises(function() p.close = 1 end, "ik.pole: no field 'close'"))
      assert.are.equal("function", type(p.close))
    end)

    it("is shared: every reference sees a change", function()
      local p = ik.pole({ position = { 0, 0, 0 } })
      local same = p
      p.weight = 0.75
      assert.are.equal(0.75, same.weight)
    end)
  end)

  describe("tostring", function()
    it("shows position and weight, the same on every Lua", function()
      local p = ik.pole({ position = { 1, -2, 0.5 }, weight = 0.25 })
      assert.are.equal("ik.pole(position = vec3(1, -2, 0.5), weight = 0.25)", tostring(p))
      p.weight = 1
      assert.are.equal("ik.pole(position = vec3(1, -2, 0.5), weight = 1)", tostring(p))
    end)

    it("says when the pole is closed", function()
      local p = ik.pole({ position = { 1, 2, 3 } })
      p:close()
      assert.are.equal("ik.pole (closed)", tostring(p))
    end)
  end)

  describe("close", function()
    it("makes every later use raise", function()
      local p = ik.pole({ position = { 1, 2, 3 } })
      p:close()
      assert(h.raises(function() return p.position end, CLOSED))
      assert(h.raises(function() return p.weight end, CLOSED))
      assert(h.raises(function() p.weight = 0.5 end, CLOSED))
      assert(h.raises(function() p.position = { 0, 0, 0 } end, CLOSED))
      assert(h.raises(function() p:close() end, CLOSED))
    end)

    it("closes only that pole", function()
      local a, b = ik.pole({ position = { 1, 2, 3 } }), ik.pole({ position = { 1, 2, 3 } })
      a:close()
      assert.are.same({ 1, 2, 3 }, xyz(b.position))
    end)

    it("refuses what is not a pole", function()
      local close = ik.pole({ position = { 0, 0, 0 } }).close
      assert(h.raises(function() close(ik.vec3()) end, "(ik.pole expected, got "))
    end)

    if _VERSION >= "Lua 5.4" then
      -- Loaded from a string: 5.1 and LuaJIT cannot parse <close>.
      local scoped = assert(load([[
        local ik, out, fail = ...
        do
          local p <close> = ik.pole({ position = { 0, 0, 0 } })
          out.pole = p
          out.inside = tostring(p)
          if fail then error("boom") end
        end
      ]]))

      it("is called by a to-be-closed variable at the end of its scope", function()
        local out = {}
        scoped(ik, out, false)
        assert.are.equal("ik.pole(position = vec3(0, 0, 0), weight = 1)", out.inside)
        assert.are.equal("ik.pole (closed)", tostring(out.pole))
        assert(h.raises(function() return out.pole.weight end, CLOSED))
      end)

      it("is called by a to-be-closed variable when its scope raises", function()
        local out = {}
        assert.is_false(pcall(scoped, ik, out, true))
        assert.are.equal("ik.pole (closed)", tostring(out.pole))
      end)
    else
      pending("to-be-closed variables need Lua 5.4")
    end
  end)
end)
