-- chain:constraint_shapes(): the constraints as the solver sees them in the pose now, for
-- drawing; point and bone chains. A solved pose has every bone inside its shape.
local ik = require("ik")

local double = ik.real == "double"
local EPS = double and 1e-9 or 1e-4
local ANGLE_EPS = double and 1e-6 or 1e-3

local function v(p) return ik.vec3(p) end
local atan2 = math.atan2 or math.atan

-- The signed angle of dir about axis from the parent direction (the hinge's own measure).
local function hinge_angle(dir, parent, axis)
  local e1 = (parent - axis * parent:dot(axis)):normalized()
  local e2 = axis:cross(e1)
  return atan2(dir:dot(e2), dir:dot(e1))
end

-- Every bone of the chain (joint positions p, 1-based list of vec3) lies inside its shape.
local function check_inside(shapes, p, what)
  for _, s in ipairs(shapes) do
    local dir = (p[s.bone + 1] - p[s.bone]):normalized()
    assert.is_true((s.apex - p[s.bone]):length() <= EPS, what .. ": apex is not the bone's joint")
    assert.is_true(math.abs(s.direction:length() - 1) <= EPS, what .. ": direction not unit")
    assert.is_true(math.abs(s.length - (p[s.bone + 1] - p[s.bone]):length()) <= EPS, what .. ": length")
    if s.bone > 1 then
      local parent = (p[s.bone] - p[s.bone - 1]):normalized()
      assert.is_true((s.direction - parent):length() <= 1e3 * EPS, what .. ": direction is not the parent's")
    end
    if s.kind == "cone" then
      assert.is_nil(s.axis)
      local off = atan2(dir:cross(s.direction):length(), dir:dot(s.direction))
      assert.is_true(off <= s.angle + ANGLE_EPS, what .. ": bone outside its cone")
    else
      assert.are.equal("hinge", s.kind)
      assert.is_nil(s.angle)
      assert.is_true(math.abs(s.axis:length() - 1) <= EPS, what .. ": axis not unit")
      assert.is_true(math.abs(dir:dot(s.axis)) <= ANGLE_EPS, what .. ": bone off its hinge plane")
      local a = hinge_angle(dir, s.direction, s.axis)
      assert.is_true(a >= s.min - ANGLE_EPS and a <= s.max + ANGLE_EPS, what .. ": bone outside its range")
    end
  end
end

describe("chain:constraint_shapes", function()
  it("is empty for a chain with no constraint, and skips bone 1 without a base direction", function()
    local c = ik.chain{ positions = { { 0, 0, 0 }, { 1, 0, 0 }, { 2, 0, 0 } } }
    assert.are.same({}, c:constraint_shapes())
    c:set_constraint(1, ik.cone{ angle = 0.5 })
    assert.are.same({}, c:constraint_shapes())
    c.base_direction = { 1, 0, 0 }
    local s = c:constraint_shapes()
    assert.are.equal(1, #s)
    assert.are.equal(1, s[1].bone)
    assert.are.equal("cone", s[1].kind)
    assert.is_true((s[1].direction - v{ 1, 0, 0 }):length() <= EPS)
  end)

  it("describes a solved point chain: every bone inside its cone or hinge", function()
    local c = ik.chain{ positions = { { 0, 0, 0 }, { 0.5, 0, 0 }, { 1, 0, 0 }, { 1.5, 0, 0 }, { 2, 0, 0 } },
                        base_direction = { 1, 0, 0 }, iterations = 40 }
    c:set_constraint(1, ik.cone{ angle = 0.6 })
    c:set_constraint(2, ik.hinge{ axis = { 0, 0, 1 }, min = 0, max = 2 })
    c:set_constraint(3, ik.cone{ angle = 0.4 })
    c:set_constraint(4, ik.hinge{ axis = { 0, 1, 0 }, min = -1, max = 0.5 })
    for _, target in ipairs({ { 1, 1, 0.5 }, { 0.5, 1.2, -0.6 }, { -0.5, 0.3, 0 } }) do
      c:solve(target)
      local p = {}
      for i = 1, #c do p[i] = c:joint(i) end
      local shapes = c:constraint_shapes()
      assert.are.equal(4, #shapes)
      for i, s in ipairs(shapes) do assert.are.equal(i, s.bone) end
      assert.is_true(math.abs(shapes[1].angle - 0.6) <= ANGLE_EPS)
      assert.are.equal(2, shapes[2].max) -- exact in float too
      check_inside(shapes, p, "target " .. table.concat(target, ","))
    end
  end)

  it("reads a bone chain's bones now, its base turned with what it hangs from", function()
    local sk = ik.skeleton{
      { name = "pelvis", position = { 0, 1, 0 } },
      { name = "hip", parent = "pelvis", position = { 0.1, 0, 0 } },
      { name = "knee", parent = "hip", position = { 0, -0.5, 0.05 } },
      { name = "ankle", parent = "knee", position = { 0, -0.5, -0.05 } },
    }
    local bones = { sk:bone("hip"), sk:bone("knee"), sk:bone("ankle") }
    local leg = ik.chain{ bones = bones, solver = "fabrik", iterations = 100, base_direction = { 0, -1, 0 } }
    leg:set_constraint(1, ik.cone{ angle = 1 })
    leg:set_constraint(2, ik.hinge{ axis = { 1, 0, 0 }, min = 0, max = 2.5 })
    sk:bone("pelvis"):set_rotation(ik.quat.axis_angle({ 0, 0, 1 }, 0.4))
    local hip = v(sk:bone("hip"):get_position())
    leg:solve(hip + v{ 0.2, -0.7, 0.1 }) -- reached or not, the pose is inside its limits
    local p = {}
    for i, b in ipairs(bones) do p[i] = v(b:get_position()) end
    local shapes = leg:constraint_shapes()
    assert.are.equal(2, #shapes)
    check_inside(shapes, p, "bone chain")
    -- bone 1's cone is about the base direction as the pelvis turned it
    local down = ik.quat.axis_angle({ 0, 0, 1 }, 0.4) * v{ 0, -1, 0 }
    assert.is_true((shapes[1].direction - down):length() <= 1e3 * EPS)
    -- the knee's axis: the rest axis turned with the pelvis, then carried by the thigh's
    -- least rotation from its rest direction (turned with the pelvis) to where it is now
    local turn = ik.quat.axis_angle({ 0, 0, 1 }, 0.4)
    local carry = ik.quat.from_to(turn * v{ 0, -0.5, 0.05 }, p[2] - p[1])
    local axis = (carry * turn * v{ 1, 0, 0 }):normalized()
    assert.is_true((shapes[2].axis - axis):length() <= 1e3 * EPS)
    -- moving the bones moves the shapes: they are read at each call
    sk:bone("pelvis"):set_position({ 1, 1, 0 })
    assert.is_true((leg:constraint_shapes()[1].apex - shapes[1].apex - v{ 1, 0, 0 }):length() <= 1e3 * EPS)
  end)

  it("raises on a closed chain", function()
    local c = ik.chain{ positions = { { 0, 0, 0 }, { 1, 0, 0 } } }
    c:close()
    assert.has_error(function() c:constraint_shapes() end)
  end)
end)
