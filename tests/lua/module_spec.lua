-- The module itself: require("ik"), what it exports, and the types' metatables.
local h = require("spec_helper")

-- Forgets the loaded module, so the next require runs it (and luaopen_ik_core) again.
local function unload()
  package.loaded["ik"] = nil
  package.loaded["ik.core"] = nil
end

describe("require('ik')", function()
  it("sets no globals, and changes none", function()
    unload()
    local before = {}
    for k, v in pairs(_G) do before[k] = v end
    local ik = require("ik")
    assert.are.equal("table", type(ik))
    for k, v in pairs(_G) do
      assert.is_true(before[k] ~= nil, "new global: " .. tostring(k))
      assert.is_true(rawequal(before[k], v), "changed global: " .. tostring(k))
    end
    for k in pairs(before) do assert.is_true(rawget(_G, k) ~= nil, "removed global: " .. tostring(k)) end
    assert.is_nil(rawget(_G, "ik"))
  end)

  it("returns the same table every time", function()
    local a = require("ik")
    local b = require("ik")
    assert.is_true(rawequal(a, b))
    assert.is_true(rawequal(a, package.loaded["ik"]))
  end)

  it("re-exports every field of ik.core, as the same values", function()
    local ik = require("ik")
    local core = require("ik.core")
    assert.is_false(rawequal(ik, core))
    local n = 0
    for k, v in pairs(core) do
      assert.is_true(rawequal(ik[k], v), "not re-exported: " .. tostring(k))
      n = n + 1
    end
    assert.is_true(n >= 7) -- vec3, quat, pole, cone, hinge, _VERSION, real at least
  end)

  it("has the constructors", function()
    local ik = require("ik")
    for _, name in ipairs({ "vec3", "quat" }) do
      assert.are.equal("table", type(ik[name]), name)
      assert.are.equal("function", type(getmetatable(ik[name]).__call), name)
    end
    for _, name in ipairs({ "pole", "cone", "hinge" }) do
      assert.are.equal("function", type(ik[name]), name)
    end
    for _, name in ipairs({ "identity", "axis_angle", "from_to", "look_rotation", "euler" }) do
      assert.are.equal("function", type(ik.quat[name]), name)
    end
  end)

  it("has a version string", function()
    local ik = require("ik")
    assert.are.equal("string", type(ik._VERSION))
    assert.is_truthy(ik._VERSION:match("^%d+%.%d+%.%d+$"), ik._VERSION)
  end)

  it("says which scalar type it computes in, and does", function()
    local ik = require("ik")
    assert.is_true(ik.real == "double" or ik.real == "float", tostring(ik.real))
    -- 0.1 survives a round trip through a double, not through a float
    assert.are.equal(ik.real == "double", ik.vec3(0.1, 0, 0).x == 0.1)
    assert.are.equal(ik.real == "double", 2 ^ 30 + 1 == ik.vec3(2 ^ 30 + 1).x)
  end)

  it("keeps working for values made before it was loaded again", function()
    local old = require("ik").vec3(1, 2, 3)
    unload()
    local ik = require("ik")
    assert.is_true(rawequal(getmetatable(old), getmetatable(ik.vec3())))
    assert.are.same({ 2, 4, 6 }, { (old + ik.vec3(1, 2, 3)):unpack() })
    assert.is_true(old == ik.vec3(1, 2, 3))
  end)
end)

describe("metatables", function()
  local ik = require("ik")
  local values = {
    ["ik.vec3"] = function() return ik.vec3(1, 2, 3) end,
    ["ik.quat"] = function() return ik.quat() end,
    ["ik.pole"] = function() return ik.pole({ position = { 0, 0, 0 } }) end,
    ["ik.cone"] = function() return ik.cone({ angle = 1 }) end,
    ["ik.hinge"] = function() return ik.hinge({ axis = { 0, 1, 0 } }) end,
  }

  for name, make in pairs(values) do
    it(name .. ": getmetatable gives the real metatable, named " .. name, function()
      local v = make()
      local mt = getmetatable(v)
      assert.are.equal("table", type(mt)) -- no __metatable field hides it
      assert.is_nil(rawget(mt, "__metatable"))
      assert.is_true(rawequal(mt, debug.getmetatable(v)))
      assert.are.equal(name, mt.__name)
    end)

    it(name .. ": one metatable for all values, kept in the registry under its name", function()
      local mt = getmetatable(make())
      assert.is_true(rawequal(mt, getmetatable(make())))
      assert.is_true(rawequal(mt, debug.getregistry()[name]))
    end)

    it(name .. ": fields are served by functions and writes are intercepted", function()
      local mt = getmetatable(make())
      assert.are.equal("function", type(mt.__index))
      assert.are.equal("function", type(mt.__newindex))
      assert.are.equal("function", type(mt.__tostring))
    end)
  end

  it("the types' metatables are all different", function()
    local seen = {}
    for name, make in pairs(values) do
      local mt = getmetatable(make())
      assert.is_nil(seen[mt], name)
      seen[mt] = name
    end
  end)

  it("only ik.pole can be closed or collected", function()
    for name, make in pairs(values) do
      local mt = getmetatable(make())
      assert.are.equal(name == "ik.pole", mt.__gc ~= nil, name)
      assert.are.equal(name == "ik.pole", mt.__close ~= nil, name)
    end
  end)
end)

describe("spec_helper", function()
  it("near", function()
    assert.is_true(h.near(1, 1 + h.TOL / 2))
    assert.is_false(h.near(1, 1 + 2 * h.TOL))
    assert.is_false(h.near(0 / 0, 0 / 0))
    assert.is_false(h.near(1, "1"))
    assert.is_true(h.near(1, 1.5, 0.5))
    local ok, msg = h.near(1, 2)
    assert.is_false(ok)
    assert.is_truthy(msg:find("expected 2, got 1", 1, true))
  end)

  it("vec_near", function()
    local ik = require("ik")
    assert.is_true(h.vec_near(ik.vec3(1, 2, 3), { 1, 2, 3 }))
    assert.is_true(h.vec_near({ x = 1, y = 2, z = 3 }, ik.vec3(1, 2, 3)))
    assert.is_false(h.vec_near(ik.vec3(1, 2, 3), { 1, 2, 3.1 }))
    assert.is_false(h.vec_near(ik.vec3(1, 2, 3), { 1, 2 }))
    assert.is_false(h.vec_near(1, { 1, 2, 3 }))
  end)

  it("quat_near treats q and -q as equal", function()
    local ik = require("ik")
    assert.is_true(h.quat_near(ik.quat(), { 0, 0, 0, 1 }))
    assert.is_true(h.quat_near(ik.quat(), { 0, 0, 0, -1 }))
    assert.is_false(h.quat_near(ik.quat(), { 0, 0, 1, 0 }))
    assert.is_false(h.quat_near({ 0.6, 0, 0, 0.8 }, { -0.6, 0, 0, 0.8 }))
  end)

  it("raises", function()
    assert.is_true(h.raises(function() error("x (a b) y") end, "(a b)", "x"))
    assert.is_false(h.raises(function() error("x (a b) y") end, "(a c)"))
    assert.is_false(h.raises(function() end, "anything"))
    assert.is_false(h.raises(function() error("[") end, "%"))
  end)
end)
