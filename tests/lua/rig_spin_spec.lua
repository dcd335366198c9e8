-- No bone spins about its own length: an arm rig (upper arm, forearm, hand, a pole
-- behind and below) follows targets on paths that cross the shoulder-to-pole line, pass
-- through the shoulder and circle the pole axis, on the built-in humanoid and on each
-- test character, with and without reset_pose. At every frame each bone's turn about
-- its own length, in its parent's frame, is at most the turn of its direction there
-- (the animation adds no twist: it is the rest pose, or the last frame's result).
local ik = require("ik")
local arm = require("ik.rigs.arm")
local cases = require("humanoid_cases")
local h = require("spec_helper")

local FRAMES, DT = 120, 1 / 60
local SLACK = ik.real == "float" and 2e-3 or 1e-6

local function local_rotation(bone, parent)
  return parent:get_rotation():inverse() * bone:get_rotation()
end

-- The arm's frame: shoulder, a unit forward (from the eyes, else the toes' side),
-- up, and out (the arm's side).
local function arm_frame(sk, map, side)
  local function p(role) return sk:bone(map[role]):get_position() end
  local up = ik.vec3(0, 1, 0)
  local across = p("leftUpperArm") - p("rightUpperArm")
  local forward = across:cross(up):normalized()
  local out = side == "left" and across:normalized() or across:normalized() * -1
  return p(side .. "UpperArm"), forward, up, out
end

local function paths(shoulder, forward, up, out, reach)
  local pole_dir = (up * -0.6 + forward * -0.8):normalized()
  local list = {}
  -- across the shoulder-to-pole line, at 0.6 of the reach along it
  list.cross_pole_line = function(t)
    local side = forward:cross(pole_dir):normalized()
    return shoulder + pole_dir * (0.6 * reach) + side * ((t - 0.5) * 0.6 * reach)
  end
  -- through the shoulder, from in front to behind and out
  list.through_shoulder = function(t)
    local d = (forward + out * 0.3):normalized()
    return shoulder + d * ((0.5 - t) * reach)
  end
  -- round the pole axis (0.6 of the reach along it, radius 0.3 of it), twice
  list.circle_pole_axis = function(t)
    local a = 4 * math.pi * t
    local u = forward:cross(pole_dir):normalized()
    local v = pole_dir:cross(u)
    return shoulder + pole_dir * (0.6 * reach) + u * (0.3 * reach * math.cos(a))
        + v * (0.3 * reach * math.sin(a))
  end
  return list, shoulder + pole_dir * 2
end

-- Worst (twist - direction turn) over a path, for the upper arm and the forearm;
-- `forget` makes the limb's chain deterministic (the turn from the pose alone, as
-- before bones remembered their last turn).
local function run(case, side, path_name, reset_pose, forget)
  local sk, map = case.skeleton, case.map
  local upper, lower, hand = sk:bone(map[side .. "UpperArm"]), sk:bone(map[side .. "LowerArm"]),
      sk:bone(map[side .. "Hand"])
  local shoulder_bone = sk:bone(map[side .. "Shoulder"])
  local shoulder, forward, up, out = arm_frame(sk, map, side)
  local reach = (lower:get_position() - upper:get_position()):length() +
      (hand:get_position() - lower:get_position()):length()
  local list, pole_at = paths(shoulder, forward, up, out, reach)
  local target = ik.node{ position = list[path_name](0) }
  local rig = arm.new{ upper = upper, lower = lower, hand = hand, target = target,
                       pole = ik.node{ position = pole_at }, reset_pose = reset_pose, hand_weight = 0 }
  if forget then rig._limb.chain.deterministic = true end
  local axis_u = upper:get_rotation():inverse() * (lower:get_position() - upper:get_position()):normalized()
  local axis_l = lower:get_rotation():inverse() * (hand:get_position() - lower:get_position()):normalized()
  rig:update(DT)
  local pu, pl = local_rotation(upper, shoulder_bone), local_rotation(lower, upper)
  local worst, worst_twist, misses = 0, 0, 0
  for f = 1, FRAMES do
    target:set_position(list[path_name](f / FRAMES))
    rig:update(DT)
    local nu, nl = local_rotation(upper, shoulder_bone), local_rotation(lower, upper)
    for _, pair in ipairs({ { pu, nu, axis_u }, { pl, nl, axis_l } }) do
      local twist, turn = h.twist_and_turn(pair[1], pair[2], pair[3])
      worst = math.max(worst, twist - turn)
      worst_twist = math.max(worst_twist, twist)
    end
    pu, pl = nu, nl
    local to = (target:get_position() - shoulder):length()
    if to < 0.95 * reach and (hand:get_position() - target:get_position()):length() > 1e-3 * reach then
      misses = misses + 1
    end
  end
  return worst, worst_twist, misses
end

describe("the arm rig's bones never spin", function()
  it("on paths where turning from the pose alone spins them (a deterministic chain)", function()
    for _, case in ipairs(cases.all()) do
      local worst = 0
      for _, path_name in ipairs({ "cross_pole_line", "through_shoulder", "circle_pole_axis" }) do
        worst = math.max(worst, (run(case, "right", path_name, true, true)))
      end
      assert.is_true(worst > math.rad(10), case.name)
    end
  end)

  for _, case in ipairs(cases.all()) do
    for _, side in ipairs({ "right", "left" }) do
      for _, path_name in ipairs({ "cross_pole_line", "through_shoulder", "circle_pole_axis" }) do
        for _, reset_pose in ipairs({ true, false }) do
          it(string.format("%s, %s arm, %s, reset_pose %s", case.name, side, path_name, tostring(reset_pose)),
            function()
              local excess, _, misses = run(case, side, path_name, reset_pose)
              assert.is_true(excess <= SLACK, string.format("a bone twisted %.2f deg more than it turned",
                math.deg(excess)))
              if path_name == "cross_pole_line" or path_name == "circle_pole_axis" then
                assert.equal(0, misses)
              end
            end)
        end
      end
    end
  end
end)

return { run = run, cases = cases }
