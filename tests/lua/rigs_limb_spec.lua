-- ik.rigs.limb on its own (no rig around it): a three-bone ik.skeleton limb reaches,
-- bends to its pole's side, reports the distance when out of reach, keeps the bend's side
-- (no half-turn in a frame) while the target passes through the root-pole line, and
-- aims steadily through the root (at most 0.6 rad a frame where no spring turns 1.37).
local ik = require("ik")
local limb = require("ik.rigs.limb")
local common = require("ik.rigs.common")

local DT = 1 / 60

-- Upper 0.3, lower 0.25, along +X from the origin.
local function build()
  local sk = ik.skeleton{
    { name = "root", position = { 0, 0, 0 } },
    { name = "mid", parent = "root", position = { 0.3, 0, 0 } },
    { name = "tip", parent = "mid", position = { 0.25, 0, 0 } },
  }
  local bones = { sk:bone("root"), sk:bone("mid"), sk:bone("tip") }
  return bones, limb.new(bones, { tolerance = 1e-4, bend_time = 0.1 })
end

local function pos(b) return ik.vec3(b:get_position()) end

-- The middle joint's side across the root-target line, as a unit vector.
local function bend_side(bones)
  local r, m, t = pos(bones[1]), pos(bones[2]), pos(bones[3])
  local aim = (t - r):normalized()
  local across = (m - r) - aim * (m - r):dot(aim)
  return across:normalized()
end

describe("ik.rigs.limb", function()
  it("reaches a target within reach, bending towards the pole", function()
    local bones, l = build()
    for _, pole in ipairs({ ik.vec3(0.2, 1, 0), ik.vec3(0.2, -1, 0), ik.vec3(0.2, 0, 1) }) do
      local target = ik.vec3(0.3, 0.1, 0.2)
      local reached, distance = l:solve(target, pole, 1, DT)
      assert.is_true(reached)
      assert.is_true(distance <= 1e-4)
      assert.is_true((pos(bones[3]) - target):length() <= 1e-4)
      local side = bend_side(bones)
      local aim = target:normalized()
      local want = (pole - aim * pole:dot(aim)):normalized()
      assert.is_true(side:dot(want) > 0.99, tostring(pole))
      l:forget()
    end
  end)

  it("stretches towards a target out of reach and says how far it is", function()
    local bones, l = build()
    local reached, distance = l:solve(ik.vec3(0, 1, 0), ik.vec3(1, 1, 0), 1, DT)
    assert.is_false(reached)
    assert.is_true(math.abs(distance - (1 - 0.55)) < 1e-6)
    assert.is_true(math.abs(pos(bones[3]):length() - 0.55) < 1e-6)
  end)

  -- Each frame's direction (of what `of` measures) turns from the last by less than 0.6 rad
  -- while the target follows `path` over k = -30 .. 30.
  local function steady(path, of)
    local bones, l = build()
    local prev
    for k = -30, 30 do
      l:solve(path(k), ik.vec3(0, 1, 0), 1, DT)
      local dir = of(bones)
      if prev then assert.is_true(dir:dot(prev) > math.cos(0.6), "frame " .. k) end
      prev = dir
    end
  end

  it("keeps the bend's side while the target passes through the root-pole line", function()
    -- the target sweeps across the pole's axis (+Y), 0.35 up it
    steady(function(k) return ik.vec3(0.01 * k, 0.35, 0.002) end, bend_side)
  end)

  it("aims steadily while the target passes through the root", function()
    steady(function(k) return ik.vec3(0.005 * k, 0, 0.001) end,
      function(bones) return (pos(bones[3]) - pos(bones[1])):normalized() end)
  end)

  it("is what ik.rigs.common.limb makes", function()
    local bones = build()
    local l = common.limb(bones, { tolerance = 1e-3, bend_time = 0 })
    assert.are.equal(getmetatable(select(2, build())), getmetatable(l))
    assert.is_nil(l.omega)
    assert.is_true((l:solve(ik.vec3(0.2, 0.3, 0), nil, 1, DT)))
  end)
end)
