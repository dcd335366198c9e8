-- No bone of a bone tree spins about its own length: a spine with two arms bound to a
-- skeleton follows hand targets on paths that cross the line from the shoulders' branch
-- point through the arms' poles, pass through the root, and come round behind the body
-- (where an arm points opposite its rest direction). At every frame each bone's turn
-- about its own length, in its parent's frame, is at most the turn of its direction
-- there (the animation adds no twist: it is the rest pose, reset every frame, or the
-- last frame's result).
local ik = require("ik")
local h = require("spec_helper")

local FRAMES = 120
local SLACK = ik.real == "float" and 2e-3 or 1e-6

-- Each bone with one child, and that child.
local TURNED = { hips = "spine", spine = "chest", l_sh = "l_el", l_el = "l_hand", r_sh = "r_el",
                 r_el = "r_hand" }
local PARENT = { spine = "hips", l_sh = "chest", l_el = "l_sh", r_sh = "chest", r_el = "r_sh" }

local function local_rotation(sk, name)
  local b = sk:bone(name)
  if not PARENT[name] then return b:get_rotation() end
  return sk:bone(PARENT[name]):get_rotation():inverse() * b:get_rotation()
end

local CHEST, L_SH, R_SH = ik.vec3(0, 2, 0), ik.vec3(0.3, 2.2, 0), ik.vec3(-0.3, 2.2, 0)
local L_POLE, R_POLE = ik.vec3(0.8, 1.2, -1.5), ik.vec3(-0.8, 1.2, -1.5)

-- Left and right hand targets at t in [0, 1].
local PATHS = {
  -- across the line from the branch point through each arm's pole, 0.6 of the way
  cross_pole_line = function(t)
    local s = (t - 0.5) * 1.2
    return CHEST + (L_POLE - CHEST) * 0.6 + ik.vec3(s, 0, 0),
        CHEST + (R_POLE - CHEST) * 0.6 + ik.vec3(0, s, 0)
  end,
  -- through the root, from in front to behind
  through_root = function(t)
    local d = ik.vec3(0.4, 0.3, 1):normalized() * ((0.5 - t) * 1.6)
    return d, ik.vec3(-d.x, d.y, d.z)
  end,
  -- each hand round behind its shoulder, across the body, twice
  behind_the_body = function(t)
    local a = 4 * math.pi * t
    return L_SH + ik.vec3(-0.7, 0.4 * math.sin(a), 0.4 * math.cos(a)),
        R_SH + ik.vec3(0.7, 0.4 * math.cos(a), -0.4 * math.sin(a))
  end,
}

-- Worst (twist - direction turn) over a path, and the worst twist.
local function run(path_name, reset_pose, deterministic)
  local sk = h.tree_body()
  local t = ik.tree{ bones = sk:bones(), iterations = 50 }
  if deterministic ~= nil then t.deterministic = deterministic end
  t:set_pole(t:effector_joint(1), L_POLE)
  t:set_pole(t:effector_joint(2), R_POLE)
  local axes = {}
  for name, child in pairs(TURNED) do
    local b = sk:bone(name)
    axes[name] = b:get_rotation():inverse() * (sk:bone(child):get_position() - b:get_position()):normalized()
  end
  local function frame(f)
    if reset_pose then sk:reset() end
    t:solve(PATHS[path_name](f / FRAMES))
    local out = {}
    for name in pairs(TURNED) do out[name] = local_rotation(sk, name) end
    return out
  end
  local prev = frame(0)
  local worst, worst_twist = 0, 0
  for f = 1, FRAMES do
    local now = frame(f)
    for name in pairs(TURNED) do
      local twist, turn = h.twist_and_turn(prev[name], now[name], axes[name])
      worst = math.max(worst, twist - turn)
      worst_twist = math.max(worst_twist, twist)
    end
    prev = now
  end
  return worst, worst_twist
end

describe("a bone tree's bones never spin", function()
  it("on paths where turning from the pose alone spins them (a deterministic tree)", function()
    local worst = 0
    for name in pairs(PATHS) do worst = math.max(worst, (run(name, true, true))) end
    assert.is_true(worst > math.rad(10), string.format("%.2f deg", math.deg(worst)))
  end)

  it("remembers by default (not deterministic), as a bone chain does", function()
    assert.is_false(ik.tree{ bones = h.tree_body():bones() }.deterministic)
  end)

  for _, name in ipairs({ "cross_pole_line", "through_root", "behind_the_body" }) do
    for _, reset_pose in ipairs({ true, false }) do
      it(string.format("%s, reset_pose %s", name, tostring(reset_pose)), function()
        local excess, twist = run(name, reset_pose)
        assert.is_true(excess <= SLACK, string.format(
          "a bone twisted %.2f deg more than it turned (twist %.2f)", math.deg(excess), math.deg(twist)))
      end)
    end
  end
end)

return { run = run }
