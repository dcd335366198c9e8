-- Shared by the rig specs (rig_*_spec.lua): `local R = require("rig_helper")`.
--
-- Builds the same character parts on two hosts, an ik.skeleton ("skeleton": ik.bone
-- bones, ik.node targets) and the plain-Lua host transforms of mock_transform ("mock"),
-- from one description, so every rig is checked on both.
local ik = require("ik")
local mock = require("mock_transform")

local R = {}

--- The hosts each rig spec runs on.
R.HOSTS = { "skeleton", "mock" }

--- Tolerances for results the rigs get exactly, up to rounding: TOL for lengths and
-- radians, FINE for looser checks (degrees, and sums of several steps). Float builds
-- (ik.real == "float") round far more.
local float = ik.real == "float"
R.TOL = float and 2e-5 or 1e-9
R.FINE = float and 2e-4 or 1e-6

-- Builds bones from specs { name =, parent =, position = (relative to the parent,
-- rotations identity at rest) } on `host`; returns name -> transform, and the skeleton
-- (nil for mock).
function R.build(host, specs)
  local bones = {}
  if host == "skeleton" then
    local sk = ik.skeleton(specs)
    for _, s in ipairs(specs) do bones[s.name] = sk:bone(s.name) end
    return bones, sk
  end
  for _, s in ipairs(specs) do -- mock positions and rotations are local, as the skeleton's
    local parent = s.parent and bones[s.parent] or nil
    bones[s.name] = mock.new{ position = s.position or { 0, 0, 0 }, rotation = s.rotation, parent = parent }
  end
  return bones, nil
end

-- A free transform at a world position (and rotation), hanging from `parent` when
-- given: ik.node on the skeleton host, a mock transform on the other.
function R.node(host, position, rotation, parent)
  local t
  if host == "skeleton" then
    t = ik.node{ parent = parent }
  else
    t = mock.new{ parent = parent }
  end
  t:set_position(position)
  t:set_rotation(rotation or { 0, 0, 0, 1 })
  return t
end

function R.pos(t) return ik.vec3(t:get_position()) end
function R.rot(t) return ik.quat(t:get_rotation()) end

-- Unsigned angle between two directions, radians.
function R.angle(a, b)
  local atan2 = math.atan2 or math.atan
  return atan2(a:cross(b):length(), a:dot(b))
end

-- An arm: chest at (0, 1.4, 0), shoulder 0.2 to its +X, upper arm 0.3 and forearm 0.25
-- along +X with a slight bend back (-Z) at the elbow.
R.ARM = {
  { name = "chest", position = { 0, 1.4, 0 } },
  { name = "upper", parent = "chest", position = { 0.2, 0, 0 } },
  { name = "lower", parent = "upper", position = { 0.3, 0, -0.02 } },
  { name = "hand", parent = "lower", position = { 0.25, 0, 0.02 } },
}

-- Two legs under hips at (0, 1, 0): thighs at x = +-0.1, knees bent slightly forward,
-- the ankles 0.08 above y = 0 (at y = 0.08), so the soles touch y = 0 with a foot_offset
-- of 0.08.
function R.legs_spec()
  local specs = { { name = "root" }, { name = "hips", parent = "root", position = { 0, 1, 0 } } }
  for _, side in ipairs{ "l", "r" } do
    local x = side == "l" and 0.1 or -0.1
    specs[#specs + 1] = { name = side .. "_thigh", parent = "hips", position = { x, -0.05, 0 } }
    specs[#specs + 1] = { name = side .. "_shin", parent = side .. "_thigh", position = { 0, -0.44, 0.03 } }
    specs[#specs + 1] = { name = side .. "_foot", parent = side .. "_shin", position = { 0, -0.43, -0.03 } }
  end
  return specs
end

-- A spine: root at the origin, hips at y = 1, three spine bones 0.15 apart, neck, head.
R.SPINE = {
  { name = "root" },
  { name = "hips", parent = "root", position = { 0, 1, 0 } },
  { name = "spine1", parent = "hips", position = { 0, 0.1, 0 } },
  { name = "spine2", parent = "spine1", position = { 0, 0.15, 0 } },
  { name = "spine3", parent = "spine2", position = { 0, 0.15, 0 } },
  { name = "neck", parent = "spine3", position = { 0, 0.15, 0 } },
  { name = "head", parent = "neck", position = { 0, 0.1, 0 } },
}

-- The largest per-frame rotation change seen on `transforms` while running `frames`
-- of step(i) (each step does one frame's work), in radians.
function R.max_turn_per_frame(transforms, frames, step)
  local worst = 0
  local before = {}
  for i, t in ipairs(transforms) do before[i] = R.rot(t) end
  for f = 1, frames do
    step(f)
    for i, t in ipairs(transforms) do
      local now = R.rot(t)
      local a = before[i]:angle_to(now)
      if a > worst then worst = a end
      before[i] = now
    end
  end
  return worst
end

-- Whether fn raises an error containing every fragment (plain): spec_helper's.
R.raises = require("spec_helper").raises

return R
