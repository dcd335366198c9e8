-- ik.cone and ik.hinge: immutable joint constraints.
local ik = require("ik")
local h = require("spec_helper")

local pi = math.pi
local function xyz(v) return { v.x, v.y, v.z } end

describe("ik.cone", function()
  it("holds its angle", function()
    local c = ik.cone({ angle = 0.5 })
    assert.are.equal("userdata", type(c))
    assert.are.equal("cone", c.kind)
    assert.are.equal(0.5, c.angle)
  end)

  it("accepts both ends of [0, pi]", function()
    assert.are.equal(0, ik.cone({ angle = 0 }).angle)
    assert(h.near(ik.cone({ angle = pi }).angle, pi))
  end)

  it("has only kind and angle", function()
    local c = ik.cone({ angle = 1 })
    assert.is_nil(c.axis)
    assert.is_nil(c.min)
    assert.is_nil(c.max)
    assert.is_nil(c.foo)
  end)

  it("needs a table", function()
    assert(h.raises(function() return ik.cone(1) end, "bad argument #1", "(table expected, got number)"))
  end)

  it("requires an angle", function()
    assert(h.raises(function() return ik.cone({}) end,
      "ik.cone: bad field 'angle' (number in [0, pi] expected, got nil)"))
  end)

  it("refuses an angle outside [0, pi] or not a finite number", function()
    assert(h.raises(function() return ik.cone({ angle = -0.5 }) end,
      "ik.cone: bad field 'angle' (number in [0, pi] expected, got -0.5)"))
    assert(h.raises(function() return ik.cone({ angle = 4 }) end, "(number in [0, pi] expected, got 4)"))
    assert(h.raises(function() return ik.cone({ angle = pi + 1e-6 }) end,
      "(number in [0, pi] expected, got 3.14159"))
    assert(h.raises(function() return ik.cone({ angle = 0 / 0 }) end,
      "(number in [0, pi] expected, got nan)"))
    assert(h.raises(function() return ik.cone({ angle = "1" }) end,
      "(number in [0, pi] expected, got string)"))
  end)

  it("is immutable", function()
    local c = ik.cone({ angle = 1 })
    assert(h.raises(function() c.angle = 2 end,
      "ik.cone: fields are read-only (immutable: make a new one and set it on the chain again)"))
    assert(h.raises(function() c.foo = 2 end, "ik.cone: fields are read-only"))
    assert.are.equal(1, c.angle)
    assert.is_nil(c.foo)
  end)

  it("tostring", function()
    assert.are.equal("ik.cone(angle = 0.5)", tostring(ik.cone({ angle = 0.5 })))
    assert.are.equal("ik.cone(angle = 0)", tostring(ik.cone({ angle = 0 })))
  end)

  it("equals a cone of the same angle only", function()
    assert.is_true(ik.cone({ angle = 0.5 }) == ik.cone({ angle = 0.5 }))
    assert.is_false(ik.cone({ angle = 0.5 }) == ik.cone({ angle = 0.25 }))
    assert.is_true(ik.cone({ angle = 0.5 }) ~= ik.cone({ angle = 0.25 }))
  end)
end)

describe("ik.hinge", function()
  it("normalises its axis and defaults to the full turn", function()
    local c = ik.hinge({ axis = { 0, 0, 2 } })
    assert.are.equal("userdata", type(c))
    assert.are.equal("hinge", c.kind)
    assert.are.equal(getmetatable(ik.vec3()), getmetatable(c.axis))
    assert.are.same({ 0, 0, 1 }, xyz(c.axis))
    assert(h.near(c.min, -pi))
    assert(h.near(c.max, pi))
  end)

  it("normalises any axis", function()
    assert(h.vec_near(ik.hinge({ axis = { 3, 0, -4 } }).axis, { 0.6, 0, -0.8 }))
    assert(h.vec_near(ik.hinge({ axis = ik.vec3(1, 1, 1) }).axis, ik.vec3(1, 1, 1):normalized()))
    assert(h.vec_near(ik.hinge({ axis = { x = 0, y = -5, z = 0 } }).axis, { 0, -1, 0 }))
  end)

  it("holds min and max", function()
    local c = ik.hinge({ axis = { 1, 0, 0 }, min = 0, max = 2.5 })
    assert.are.equal(0, c.min)
    assert.are.equal(2.5, c.max)
    local fixed = ik.hinge({ axis = { 1, 0, 0 }, min = 0.5, max = 0.5 })
    assert.are.equal(0.5, fixed.min)
    assert.are.equal(0.5, fixed.max)
    local only_max = ik.hinge({ axis = { 1, 0, 0 }, max = -1 })
    assert(h.near(only_max.min, -pi))
    assert.are.equal(-1, only_max.max)
  end)

  it("accepts min = -pi and max = pi", function()
    local c = ik.hinge({ axis = { 1, 0, 0 }, min = -pi, max = pi })
    assert(h.near(c.min, -pi))
    assert(h.near(c.max, pi))
  end)

  it("has only kind, axis, min and max", function()
    local c = ik.hinge({ axis = { 1, 0, 0 } })
    assert.is_nil(c.angle)
    assert.is_nil(c.foo)
  end)

  it("requires a non-zero, finite axis", function()
    assert(h.raises(function() return ik.hinge({ min = 0 }) end,
      "ik.hinge: bad field 'axis' (vec3 expected, got nil)"))
    assert(h.raises(function() return ik.hinge({ axis = { 0, 0, 0 } }) end,
      "ik.hinge: bad field 'axis' (non-zero vec3 expected, got the zero vector)"))
    assert(h.raises(function() return ik.hinge({ axis = { 1e-30, 0, 0 } }) end, "(non-zero vec3 expected"))
    assert(h.raises(function() return ik.hinge({ axis = "x" }) end,
      "ik.hinge: bad field 'axis' (vec3 expected, got string)"))
    assert(h.raises(function() return ik.hinge({ axis = { 0, 0 / 0, 1 } }) end,
      "ik.hinge: bad field 'axis' (finite vec3 expected"))
    assert(h.raises(function() return ik.hinge() end, "bad argument #1", "(table expected, got no value)"))
  end)

  it("refuses min greater than max", function()
    assert(h.raises(function() return ik.hinge({ axis = { 1, 0, 0 }, min = 1, max = 0.5 }) end,
      "ik.hinge: bad field 'min' (at most max expected, got 1 > 0.5)"))
    assert(h.raises(function() return ik.hinge({ axis = { 1, 0, 0 }, min = 1.0, max = -1.0 }) end,
      "(at most max expected, got 1 > -1)"))
  end)

  it("refuses min or max outside [-pi, pi] or not a finite number", function()
    assert(h.raises(function() return ik.hinge({ axis = { 1, 0, 0 }, min = -4 }) end,
      "ik.hinge: bad field 'min' (number in [-pi, pi] expected, got -4)"))
    assert(h.raises(function() return ik.hinge({ axis = { 1, 0, 0 }, max = 3.5 }) end,
      "ik.hinge: bad field 'max' (number in [-pi, pi] expected, got 3.5)"))
    assert(h.raises(function() return ik.hinge({ axis = { 1, 0, 0 }, max = 0 / 0 }) end,
      "ik.hinge: bad field 'max' (number in [-pi, pi] expected, got nan)"))
    assert(h.raises(function() return ik.hinge({ axis = { 1, 0, 0 }, min = -math.huge }) end,
      "ik.hinge: bad field 'min' (number in [-pi, pi] expected, got -inf)"))
    assert(h.raises(function() return ik.hinge({ axis = { 1, 0, 0 }, min = "0" }) end,
      "ik.hinge: bad field 'min' (number in [-pi, pi] expected, got string)"))
  end)

  it("is immutable", function()
    local c = ik.hinge({ axis = { 1, 0, 0 }, min = 0, max = 1 })
    assert(h.raises(function() c.min = -1 end,
      "ik.hinge: fields are read-only (immutable: make a new one and set it on the chain again)"))
    assert(h.raises(function() c.axis = { 0, 1, 0 } end, "ik.hinge: fields are read-only"))
    assert.are.equal(0, c.min)
    assert.are.same({ 1, 0, 0 }, xyz(c.axis))
  end)

  it("tostring", function()
    assert.are.equal("ik.hinge(axis = vec3(0, 1, 0), min = -0.5, max = 1.5)",
      tostring(ik.hinge({ axis = { 0, 2, 0 }, min = -0.5, max = 1.5 })))
  end)

  it("equals a hinge with the same normalised axis and limits only", function()
    local function hinge(axis, min, max) return ik.hinge({ axis = axis, min = min, max = max }) end
    assert.is_true(hinge({ 0, 0, 1 }, -1, 1) == hinge({ 0, 0, 1 }, -1, 1))
    assert.is_true(hinge({ 0, 0, 1 }, -1, 1) == hinge({ 0, 0, 5 }, -1, 1))
    assert.is_true(hinge({ 0, 0, 1 }) == hinge({ 0, 0, 1 }))
    assert.is_false(hinge({ 0, 0, 1 }, -1, 1) == hinge({ 0, 1, 0 }, -1, 1))
    assert.is_false(hinge({ 0, 0, 1 }, -1, 1) == hinge({ 0, 0, -1 }, -1, 1))
    assert.is_false(hinge({ 0, 0, 1 }, -1, 1) == hinge({ 0, 0, 1 }, -0.5, 1))
    assert.is_false(hinge({ 0, 0, 1 }, -1, 1) == hinge({ 0, 0, 1 }, -1, 0.5))
  end)

  it("compares limits as numbers: 0 equals -0", function()
    local negative_zero = -1 / math.huge
    assert.are.equal(-math.huge, 1 / negative_zero)
    local a = ik.hinge({ axis = { 1, 0, 0 }, min = 0 })
    local b = ik.hinge({ axis = { 1, 0, 0 }, min = negative_zero })
    assert.is_true(a == b)
  end)
end)

describe("constraints", function()
  it("a cone never equals a hinge, nor other types, and comparing raises nothing", function()
    local cone, hinge = ik.cone({ angle = 0 }), ik.hinge({ axis = { 1, 0, 0 } })
    assert.is_false(cone == hinge)
    assert.is_false(hinge == cone)
    assert.is_false(cone == ik.vec3())
    assert.is_false(ik.vec3() == hinge)
    assert.is_false(hinge == ik.quat())
    assert.is_false(cone == { angle = 0 })
  end)

  it("have distinct metatables", function()
    assert.are.equal("ik.cone", getmetatable(ik.cone({ angle = 0 })).__name)
    assert.are.equal("ik.hinge", getmetatable(ik.hinge({ axis = { 1, 0, 0 } })).__name)
  end)
end)

describe("a cone on a bone folded straight back over its parent", function()
  it("keeps the bone's length (every solver)", function()
    for _, solver in ipairs({ "fabrik", "ccd", "dls" }) do
      for k = 1, 20 do
        local u = ik.vec3(1, 0.37 * k, 0.21 * k * k):normalized()
        local arm = ik.chain{ positions = { { 0, 0, 0 }, u, u + ik.vec3(0.3, -0.2, 0.1):normalized() },
                              solver = solver }
        arm:set_constraint(2, ik.cone{ angle = 1.0 })
        arm:solve({ 0, 0, 0 }) -- the first pass folds bone 2 exactly back onto bone 1
        local l = (arm:joint(3) - arm:joint(2)):length()
        assert(h.near(l, 1, ik.real == "float" and 1e-5 or 1e-9))
      end
    end
  end)
end)
