-- ik.rigs.arm on an ik.skeleton and on plain-Lua host transforms: targets all around the
-- shoulder reached, the elbow on the pole's side, no elbow flip while the target circles
-- through the pole's axis (and a check that the same path does flip an arm without the
-- bend speed limit, so that test can fail), the hand's rotation, the body turned round,
-- fading out, and the option errors.
local ik = require("ik")
local R = require("rig_helper")
local arm = require("ik.rigs.arm")

local DT = 1 / 60

-- A character's arm on `host`, its pole parented to the chest behind and below the elbow.
local function setup(host, options)
  local b = R.build(host, R.ARM)
  local shoulder = R.pos(b.upper)
  local pole = R.node(host, shoulder + ik.vec3(0.1, -0.3, -0.5), nil, b.chest)
  local target = R.node(host, shoulder + ik.vec3(0.3, -0.2, 0.2))
  local o = { upper = b.upper, lower = b.lower, hand = b.hand, target = target, pole = pole }
  for k, v in pairs(options or {}) do o[k] = v end
  return b, arm.new(o), target, pole
end

-- The elbow's side of the shoulder-target line agrees with the pole's (dot of the parts
-- across the line), and how far the pole is off that line (sine of the angle).
local function elbow_side(b, pole)
  local s, e, h, p = R.pos(b.upper), R.pos(b.lower), R.pos(b.hand), R.pos(pole)
  local aim = (h - s):normalized()
  local across_e = (e - s) - aim * (e - s):dot(aim)
  local across_p = (p - s) - aim * (p - s):dot(aim)
  return across_e:dot(across_p), across_p:length() / (p - s):length()
end

-- A point at phase phi on a circle of `radius` in a plane across the line from the
-- shoulder to the pole, 0.35 along it, whose phase 0 is `0.1 - radius` from the line.
local function around_pole_axis(b, pole, radius)
  local s = R.pos(b.upper)
  local axis = (R.pos(pole) - s):normalized()
  local e1 = axis:cross(ik.vec3(0, 1, 0)):normalized()
  local e2 = axis:cross(e1)
  local centre = s + axis * 0.35 + e1 * 0.1
  return function(phi) return centre - e1 * (radius * math.cos(phi)) + e2 * (radius * math.sin(phi)) end
end

for _, host in ipairs(R.HOSTS) do
  describe("ik.rigs.arm on " .. host, function()
    it("reaches targets all around the shoulder, the elbow on the pole's side", function()
      local checked = 0
      for x = -1, 1 do
        for y = -1, 1 do
          for z = -1, 1 do
            for _, distance in ipairs{ 0.2, 0.35, 0.5 } do
              local dir = ik.vec3(x, y, z)
              if dir:length() > 0 then
                local b, rig, target, pole = setup(host)
                local goal = R.pos(b.upper) + dir:normalized() * distance
                target:set_position(goal)
                local reached, d = rig:update(DT)
                local where = string.format("target dir (%d, %d, %d) at %g", x, y, z, distance)
                assert.is_true(reached, where)
                assert.is_true(d <= 1e-3, where)
                assert.is_true((R.pos(b.hand) - goal):length() <= 1e-3, where)
                local side, off_line = elbow_side(b, pole)
                if off_line > 0.3 then -- the pole says which side
                  assert.is_true(side > 0, "elbow not on the pole's side for " .. where)
                  checked = checked + 1
                end
              end
            end
          end
        end
      end
      assert.is_true(checked > 40)
    end)

    -- The target goes round a circle, 0.1 in radius, in a plane across the line from the
    -- shoulder to the pole, passing through that line: there the pole's side of the
    -- shoulder-target line turns half round at once. 240 frames a lap: the target moves
    -- 2.6 mm a frame, under 1% of the 0.55 arm.
    local function circle_through_pole_axis(rig_options)
      local b, rig, target, pole = setup(host, rig_options)
      local on_circle = around_pole_axis(b, pole, 0.1)
      local function at(f) return on_circle(2 * math.pi * f / 240) end
      target:set_position(at(-30))
      for f = -29, 0 do -- settle on the path first
        target:set_position(at(f))
        rig:update(DT)
      end
      local worst_distance, step = 0, 0
      local turn = R.max_turn_per_frame({ b.upper, b.lower }, 480, function(f)
        local p = at(f)
        step = math.max(step, (p - R.pos(target)):length())
        target:set_position(p)
        local _, d = rig:update(DT)
        worst_distance = math.max(worst_distance, d)
      end)
      assert.is_true(step < 0.01 * 0.55)
      return turn, worst_distance
    end

    it("does not flip the elbow while the target circles through the pole's axis", function()
      local turn, worst_distance = circle_through_pole_axis()
      assert.is_true(turn <= math.rad(30), "a joint turned " .. math.deg(turn) .. " degrees in one frame")
      assert.is_true(worst_distance <= 1e-3)
    end)

    it("(the same path flips an arm that follows its pole at once)", function()
      local turn = circle_through_pole_axis{ bend_time = 0 }
      assert.is_true(turn > math.rad(90), "expected a flip, the worst turn was " .. math.deg(turn))
    end)

    -- The target goes once past the pole's axis, 1 cm from it, in 1 s, updated at hz:
    -- the elbow's positions every 1/6 s (a whole number of frames at 30, 60 and 144 Hz).
    -- The bend turn clamped to bend_speed * dt swung it at full speed from its first
    -- frame to its last, and the elbows' paths were 1.0 mm apart at 30 and 60 Hz.
    local function elbow_passing_the_pole_axis(hz)
      local b, rig, target, pole = setup(host)
      local on_circle = around_pole_axis(b, pole, 0.09)
      local function at(t) return on_circle(2 * math.pi * t / 4) end
      local path = {}
      for f = 0, hz do
        target:set_position(at(-0.5 + f / hz))
        rig:update(1 / hz)
        if f % (hz / 6) == 0 then path[#path + 1] = R.pos(b.lower) end
      end
      return path
    end

    it("swings the elbow along the same path at 30, 60 and 144 Hz", function()
      local at60 = elbow_passing_the_pole_axis(60)
      for _, hz in ipairs{ 30, 144 } do
        local apart = 0
        for k, p in ipairs(elbow_passing_the_pole_axis(hz)) do
          apart = math.max(apart, (p - at60[k]):length())
        end
        assert.is_true(apart <= 1e-3 * 0.55, hz .. " Hz: the elbow's path is " .. apart .. " from 60 Hz's")
      end
    end)

    -- The target on a line through the shoulder, 0.3 either side, 1% of the arm a frame.
    -- Inside the inner reach (0.05) no pose reaches it, and its direction turns half round
    -- at the shoulder: aimed at it, the arm turned 179 degrees between two frames.
    it("does not flip the arm when the target passes through the shoulder", function()
      local b, rig, target = setup(host)
      local s = R.pos(b.upper)
      local dir = ik.vec3(0.3, -0.8, 0.5):normalized()
      local step = 0.01 * 0.55
      local frames = math.floor(0.6 / step)
      target:set_position(s + dir * 0.3)
      rig:update(DT)
      local turn = R.max_turn_per_frame({ b.upper, b.lower }, frames, function(f)
        target:set_position(s + dir * (0.3 - f * step))
        rig:update(DT)
      end)
      assert.is_true(turn <= math.rad(30), "a joint turned " .. math.deg(turn) .. " degrees in one frame")
      -- and out of the inner reach on the far side, the hand is on the target again
      assert.is_true((R.pos(b.hand) - R.pos(target)):length() <= 1e-3)
    end)

    -- The same line through the shoulder, crossed at t = 0.5 in a second: the arm 1/6 s
    -- after, at 30, 60, 144 and 2,880 Hz. Its aim swung half round in its bend's plane,
    -- through the bend, and the side the elbow came out on was rounding's: up to 0.5 of
    -- the arm apart between rates (and 1.3e-3 still after 0.5 s).
    local function arm_after_the_shoulder(hz)
      local b, rig, target = setup(host)
      local s = R.pos(b.upper)
      local dir = ik.vec3(0.3, -0.8, 0.5):normalized()
      for f = 0, math.floor(hz * 2 / 3 + 0.5) do
        target:set_position(s + dir * (0.3 * (1 - 2 * f / hz)))
        rig:update(f == 0 and 0 or 1 / hz)
      end
      return { R.pos(b.lower), R.pos(b.hand) }
    end

    it("comes out of the shoulder the same way at every rate", function()
      local fine = arm_after_the_shoulder(2880)
      for _, hz in ipairs{ 30, 60, 144 } do
        local at = arm_after_the_shoulder(hz)
        for k = 1, 2 do
          local apart = (at[k] - fine[k]):length()
          -- (a float build's target a hair from the shoulder has a direction good to 1e-3)
          assert.is_true(apart <= (ik.real == "double" and 1e-3 or 3e-3) * 0.55,
            hz .. " Hz: joint " .. k .. " is " .. apart .. " from 2,880 Hz's")
        end
      end
    end)

    it("keeps the elbow on the pole's side with the body turned round", function()
      local b, rig, target, pole = setup(host)
      -- the character faces the other way: chest turned half round about +Y
      b.chest:set_rotation(ik.quat.axis_angle({ 0, 1, 0 }, math.pi))
      local s = R.pos(b.upper)
      target:set_position(s + ik.vec3(-0.3, -0.2, -0.2)) -- in front of the turned body
      assert.is_true(rig:update(DT))
      local side = elbow_side(b, pole)
      assert.is_true(side > 0)
      -- the pole went round with the chest: behind the turned body (+Z) and below
      local p = R.pos(pole) - s
      assert.is_true(p.z > 0.4 and p.y < -0.2)
    end)

    it("turns the hand to the target's rotation by hand_weight", function()
      local goal = ik.quat.euler(0.3, -0.5, 0.2)
      local b, rig, target = setup(host)
      target:set_rotation(goal)
      rig:update(DT)
      assert.is_true(R.rot(b.hand):angle_to(goal) < R.FINE)

      local b2, rig2, target2 = setup(host, { hand_weight = 0 })
      target2:set_rotation(goal)
      rig2:update(DT)
      -- the hand just follows the forearm: its local rotation is the rest one
      assert.is_true(ik.quat(b2.hand:get_local_rotation()):angle_to(ik.quat()) < R.FINE)

      local b3, rig3, target3 = setup(host, { hand_weight = 0.5 })
      target3:set_rotation(goal)
      rig3:update(DT)
      local half = R.rot(b3.hand):angle_to(goal)
      local follow = R.rot(b2.hand):angle_to(goal)
      assert.is_true(math.abs(half - follow / 2) < R.FINE)
    end)

    it("fades out when disabled, then leaves the animated pose alone", function()
      local b, rig, target = setup(host, { reset_pose = true, blend_time = 0.2 })
      local rest_hand = R.pos(b.hand)
      target:set_position(R.pos(b.upper) + ik.vec3(0.2, -0.3, 0.2))
      rig:update(DT)
      assert.is_true((R.pos(b.hand) - R.pos(target)):length() < 1e-3)
      rig.enabled = false
      local frames = 0
      repeat
        local before = rig.applied_weight
        rig:update(DT)
        assert.is_true(before - rig.applied_weight <= DT / 0.2 + 1e-12)
        frames = frames + 1
      until rig.applied_weight == 0 or frames > 100
      assert.are.equal(12, frames) -- 0.2 s at 60 Hz
      rig:update(DT)
      assert.is_true((R.pos(b.hand) - rest_hand):length() < R.TOL)
      assert.is_false(rig.reached)
    end)

    it("says what is wrong with its options", function()
      local b = R.build(host, R.ARM)
      local t = R.node(host, { 0, 1, 0 })
      assert(R.raises(function() arm.new{ lower = b.lower, hand = b.hand, target = t } end,
        "ik.rigs.arm: option 'upper' (transform expected, got nil)"))
      assert(R.raises(function() arm.new{ upper = b.upper, lower = 3, hand = b.hand, target = t } end,
        "ik.rigs.arm: option 'lower' (transform expected, got 3)"))
      assert(R.raises(function() arm.new{ upper = b.upper, lower = b.lower, hand = b.hand } end,
        "ik.rigs.arm: option 'target' (transform or vec3 expected, got nil)"))
      assert(R.raises(function()
        arm.new{ upper = b.upper, lower = b.lower, hand = b.hand, target = t, hand_weight = 2 }
      end, "ik.rigs.arm: option 'hand_weight' (number in [0, 1] expected, got 2)"))
      assert(R.raises(function()
        arm.new{ upper = b.upper, lower = b.lower, hand = b.hand, target = t, pol = t }
      end, "ik.rigs.arm: no option 'pol'"))
      assert(R.raises(function() arm.new() end, "ik.rigs.arm: options table expected, got nil"))
      local rig = arm.new{ upper = b.upper, lower = b.lower, hand = b.hand, target = t }
      assert(R.raises(function() rig:update(-1) end,
        "ik.rigs.arm: update: dt (non-negative number expected, got -1)"))
      rig.weight = 1.5
      assert(R.raises(function() rig:update(DT) end,
        "ik.rigs.arm: field 'weight' (number in [0, 1] expected, got 1.5)"))
    end)
  end)
end
