-- ik.rigs.options: how values read in messages, the kinds of option, and the checked
-- options of a rig's new{...} with their exact messages and the caller they blame.
local ik = require("ik")
local options = require("ik.rigs.options")
local common = require("ik.rigs.common")

local OWNER = "ik.rigs.demo"
local FIELDS = {
  { "upper", "transform", required = true },
  { "weight", "unit", default = 1 },
  { "spine", "bones" },
}

-- A rig's constructor: what options.check blames is its caller (not a tail call, which
-- would leave no caller to blame).
local function new(spec)
  local o = options.check(OWNER, spec, FIELDS)
  return o
end

local function message(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok)
  return err
end

describe("ik.rigs.options", function()
  local sk = ik.skeleton{ { name = "a", position = { 0, 0, 0 } },
                          { name = "b", parent = "a", position = { 0, 1, 0 } } }
  local bone = sk:bone("a")

  it("describes values as messages show them", function()
    assert.are.equal("nil", options.describe(nil))
    assert.are.equal("2", options.describe(2))
    assert.are.equal("0.33333333333333", options.describe(1 / 3))
    assert.are.equal('"a\\"b"', options.describe('a"b'))
    assert.are.equal("ik.vec3", options.describe(ik.vec3()))
    assert.are.equal("ik.bone", options.describe(bone))
    assert.are.equal("table", options.describe({}))
    assert.are.equal("thing", options.describe(setmetatable({}, { __name = "thing" })))
    assert.are.equal("boolean", options.describe(true))
  end)

  it("tells finite numbers", function()
    assert.is_true(options.finite(0))
    assert.is_true(options.finite(-1e308))
    assert.is_false(options.finite(0 / 0))
    assert.is_false(options.finite(math.huge))
    assert.is_false(options.finite(-math.huge))
    assert.is_false(options.finite("1"))
    assert.is_false(options.finite(nil))
  end)

  it("looks methods up without raising", function()
    local callable = setmetatable({}, { __call = function() end })
    local obj = { f = function() end, c = callable, n = 1 }
    assert.are.equal(obj.f, options.method(obj, "f"))
    assert.are.equal(callable, options.method(obj, "c"))
    assert.is_nil(options.method(obj, "n"))
    assert.is_nil(options.method(obj, "missing"))
    assert.is_nil(options.method(5, "f"))
    local raising = setmetatable({}, { __index = function() error("closed") end })
    assert.is_nil(options.method(raising, "f"))
    assert.is_true(options.is_transform(bone))
    assert.is_false(options.is_transform({ get_position = function() end }))
  end)

  it("reads vec3-likes, not transforms or numbers", function()
    assert.are.equal(ik.vec3(1, 2, 3), options.to_vec3({ 1, 2, 3 }))
    local out = ik.vec3()
    assert.are.equal(out, options.to_vec3({ x = 1, y = 2, z = 3 }, out))
    assert.are.equal(ik.vec3(1, 2, 3), out)
    assert.is_nil(options.to_vec3(bone))
    assert.is_nil(options.to_vec3(3))
    assert.is_nil(options.to_vec3(nil))
    assert.is_nil(options.to_vec3("x"))
  end)

  it("has kinds that say what they expected", function()
    local k = options.kinds
    assert.are.same({ true, "number in [0, 1]" }, { k.unit(1) })
    assert.are.same({ false, "number in [0, 1]" }, { k.unit(1.5) })
    assert.is_false((k.unit(0 / 0)))
    assert.are.same({ false, "positive number" }, { k.positive(0) })
    assert.are.same({ true, "non-negative number" }, { k.non_negative(0) })
    assert.are.same({ false, "integer >= 1" }, { k.budget(1.5) })
    assert.are.same({ false, "integer >= 1" }, { k.budget(0) })
    assert.is_true((k.budget(3)))
    assert.are.same({ false, "non-zero vec3" }, { k.vec3({ 0, 0, 0 }) })
    assert.are.same({ true, "transform or vec3" }, { k.point({ 0, 0, 0 }) })
    assert.are.same({ false, "quat" }, { k.quat(bone) })
    assert.is_true((k.quat({ 0, 0, 0, 1 })))
    assert.are.same({ false, "transform with set_position and set_rotation" },
      { k.movable({ get_position = function() end, get_rotation = function() end }) })
    assert.is_true((k.movable(bone)))
    assert.are.same({ false, "list of transforms", "item 2: transform expected, got 3" },
      { k.bones({ bone, 3 }) })
    assert.are.same({ false, "list of transforms" }, { k.bones({}) })
    assert.are.same({ false, "ik.ground" }, { k.ground({}) })
    assert.is_true((k.ground(ik.ground.plane())))
  end)

  it("fills in defaults and keeps what was given", function()
    local o = new{ upper = bone }
    assert.are.equal(bone, o.upper)
    assert.are.equal(1, o.weight)
    assert.is_nil(o.spine)
    assert.are.equal(0.5, new{ upper = bone, weight = 0.5 }.weight)
  end)

  it("raises exact messages, blaming the caller of the rig's constructor", function()
    local function at_caller(err) return err:match("^[^:]*rigs_options_spec%.lua:%d+: (.*)$") end
    assert.are.equal("ik.rigs.demo: option 'upper' (transform expected, got nil)",
      at_caller(message(new, {})))
    assert.are.equal("ik.rigs.demo: no option 'colour' (options: upper, weight, spine)",
      at_caller(message(new, { upper = bone, colour = 1 })))
    assert.are.equal("ik.rigs.demo: option 'weight' (number in [0, 1] expected, got 2)",
      at_caller(message(new, { upper = bone, weight = 2 })))
    assert.are.equal("ik.rigs.demo: option 'spine' (item 2: transform expected, got \"x\")",
      at_caller(message(new, { upper = bone, spine = { bone, "x" } })))
    assert.are.equal("ik.rigs.demo: options table expected, got 5", at_caller(message(new, 5)))
    local function rig_new(o) options.option_error(OWNER, "speed", "positive number", o.speed) end
    local function caller() rig_new({ speed = -1 }) end
    local err = message(caller)
    assert.are.equal("ik.rigs.demo: option 'speed' (positive number expected, got -1)", at_caller(err))
  end)

  it("gives every rig its shared options, and joins lists", function()
    local f = options.rig_fields(250)
    local names = {}
    for i, field in ipairs(f) do names[i] = field[1] end
    assert.are.same({ "weight", "enabled", "blend_time", "reset_pose", "order", "budget" }, names)
    local o = options.check(OWNER, {}, f)
    assert.are.same({ weight = 1, enabled = true, blend_time = options.BLEND_TIME, reset_pose = false,
                      order = 250 }, o)
    local joined = options.fields({ { "a", "number" } }, {}, { { "b", "table" }, { "c", "boolean" } })
    assert.are.same({ { "a", "number" }, { "b", "table" }, { "c", "boolean" } }, joined)
  end)

  it("is what ik.rigs.common hands on under the old names", function()
    assert.are.equal(options.check, common.options)
    for _, name in ipairs({ "describe", "method", "is_transform", "to_vec3", "kinds", "option_error",
                            "rig_fields", "fields", "BLEND_TIME" }) do
      assert.are.equal(options[name], common[name], name)
    end
    assert.are.equal(options, require("ik.rigs").options)
  end)
end)
