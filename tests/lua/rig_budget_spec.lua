-- The rigs' iteration budget (level of detail): a lowered budget caps what each chain
-- and loop of a rig may take; raised again, the rig is as exact as before.
local ik = require("ik")
local h = require("spec_helper")

package.path = "lua/?.lua;lua/?/init.lua;" .. package.path
local rigs = require("ik.rigs")
local scene_mod = require("ik.demo.scene")

local DT = 1 / 60
-- acos near 1 in float (ik.real == "float") keeps about 1e-3 rad
local AIM = ik.real == "float" and 2e-3 or 1e-4

-- How far the head's forward axis passes from the target (radians).
local function gaze_error(head, target)
  local forward = head:get_rotation() * ik.vec3(0, 0, 1)
  local to_target = (target - head:get_position()):normalized()
  return math.acos(math.max(-1, math.min(1, forward:dot(to_target))))
end

describe("the iteration budget", function()
  local sc, sk
  before_each(function()
    sc = scene_mod.new()
    sk = sc.skeletons.humanoid
  end)
  local function bone(name) return sk:bone(name) end

  it("caps the look rig's passes, and raised gives them back", function()
    -- spine, neck and head share the turn; inside the limits the head makes up in the
    -- first pass what the others left, and the second finds nothing left to do
    local target = ik.vec3(bone("head"):get_position()) + ik.vec3(0.8, 0.3, 0.6)
    local rig = rigs.look.new{ spine = { bone("chest") }, neck = bone("neck"), head = bone("head"),
                               target = target, reset_pose = true }
    rig:update(DT)
    local full_passes, full_error = rig.iterations, gaze_error(bone("head"), target)
    assert.is_true(full_passes >= 2 and full_passes <= rigs.look.PASSES)
    assert.is_true(full_error < AIM)
    rig:set_budget(1)
    assert.are.equal(1, rig.budget)
    rig:update(DT)
    assert.are.equal(1, rig.iterations)
    assert.is_true(gaze_error(bone("head"), target) < AIM)
    rig:set_budget(nil)
    rig:update(DT)
    assert.are.equal(full_passes, rig.iterations)
    assert(h.near(gaze_error(bone("head"), target), full_error, 1e-9))
  end)

  it("caps every chain a rig owns, and nil gives the full count back", function()
    local arm = rigs.arm.new{ upper = bone("r_upper_arm"), lower = bone("r_lower_arm"), hand = bone("r_hand"),
                              target = sc.nodes.reach_target, budget = 3 }
    local chain = arm._limb.chain
    assert.are.equal(3, chain.iterations)
    arm:update(DT)
    assert.is_true(arm.iterations >= 1 and arm.iterations <= 3)
    arm:set_budget(nil)
    assert.are.equal(10, chain.iterations)
    arm:set_budget(12) -- never above what the chain was given
    assert.are.equal(10, chain.iterations)

    local w = sc.skeletons.walker
    local legs = {}
    for i, l in ipairs(sc.params.walker.legs) do
      legs[i] = { name = l.name, hip = w:bone("hip_" .. l.name), knee = w:bone("knee_" .. l.name),
                  foot = w:bone("foot_" .. l.name) }
    end
    local walker = rigs.walker.new{ body = w:bone("body"), legs = legs, ground = sc.ground }
    local set = rigs.set{ arm, walker }
    set:set_budget(2)
    for _, leg in ipairs(walker.legs) do assert.are.equal(2, leg.chain.iterations) end
    assert.are.equal(2, chain.iterations)
    set:update(DT)
    assert.is_true(walker.iterations >= 1 and walker.iterations <= 2)
    set:set_budget(nil)
    for _, leg in ipairs(walker.legs) do assert.are.equal(10, leg.chain.iterations) end
  end)

  it("is a positive integer or nil", function()
    local rig = rigs.chest.new{ spine = { bone("spine"), bone("chest") }, target = { 0, 3, 0 } }
    assert(h.raises(function() rig:set_budget(0) end,
      "ik.rigs.chest: set_budget: budget (integer >= 1 or nil expected, got 0)"))
    assert(h.raises(function() rig:set_budget(1.5) end,
      "ik.rigs.chest: set_budget: budget (integer >= 1 or nil expected, got 1.5)"))
    assert(h.raises(function() rig:set_budget("x") end,
      "ik.rigs.chest: set_budget: budget (integer >= 1 or nil expected, got \"x\")"))
    local target = sc.nodes.look_target
    assert(h.raises(function() rigs.root.new{ hips = bone("hips"), target = target, budget = -1 } end,
      "ik.rigs.root: option 'budget' (integer >= 1 expected, got -1)"))
    assert.is_nil(rig.budget)
  end)
end)
