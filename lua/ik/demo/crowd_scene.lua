--- A crowd scene: a field of walking, reaching characters on gentle hills, one
-- `ik.crowd` (docs/crowd.md) solved once a frame in the scene's `advance`.
--
-- `ikrig view --scene ik.demo.crowd_scene` (or `run`, `watch`). 400 characters of one
-- template (hips, a spine of 3, two arms from its top, two legs from the hips): the legs
-- two-bone with poles, their targets the animated ankles (a stride cycle, the host's
-- targets), each ankle's foot raycasting the heightfield; the spine FABRIK towards a
-- point hung from the hips; the arms reaching for points that sway in front of them.
-- The first 64 characters are in `skeletons` as views over the crowd's positions
-- buffer, which is what the live view draws; the others are solved all the same.
-- It keeps the scene contract of `ik.demo.scene` and runs no rig scripts: the crowd
-- is the host's.
-- @module ik.demo.crowd_scene

local ik = require("ik")
local crowd_views = require("ik.crowd").views

local M = {}

--- No rig scripts: the scene solves its crowd itself.
M.scripts = {}

local sin, cos, floor, pi = math.sin, math.cos, math.floor, math.pi
local COUNT, SHOWN, SIDE, SPACING = 400, 64, 20, 1.6
local SPEED, STRIDE_HZ = 1.2, 0.9

local function hill(x, z) return 0.3 * sin(x * 0.21) * cos(z * 0.17) + 0.1 * sin(x * 0.53 + z * 0.41) end

local BONES = {
  { name = "hips", position = { 0, 1, 0 } },
  { name = "spine1", parent = "hips", position = { 0, 0.12, 0 } },
  { name = "spine2", parent = "spine1", position = { 0, 0.16, 0.01 } },
  { name = "spine3", parent = "spine2", position = { 0, 0.16, -0.01 } },
  { name = "l_shoulder", parent = "spine3", position = { 0.18, 0, 0 } },
  { name = "l_elbow", parent = "l_shoulder", position = { 0.05, -0.28, 0 } },
  { name = "l_hand", parent = "l_elbow", position = { 0, -0.25, 0.05 } },
  { name = "r_shoulder", parent = "spine3", position = { -0.18, 0, 0 } },
  { name = "r_elbow", parent = "r_shoulder", position = { -0.05, -0.28, 0 } },
  { name = "r_hand", parent = "r_elbow", position = { 0, -0.25, 0.05 } },
  { name = "l_thigh", parent = "hips", position = { 0.1, -0.05, 0 } },
  { name = "l_knee", parent = "l_thigh", position = { 0, -0.43, 0.03 } },
  { name = "l_ankle", parent = "l_knee", position = { 0, -0.43, -0.03 } },
  { name = "r_thigh", parent = "hips", position = { -0.1, -0.05, 0 } },
  { name = "r_knee", parent = "r_thigh", position = { 0, -0.43, 0.03 } },
  { name = "r_ankle", parent = "r_knee", position = { 0, -0.43, -0.03 } },
}

local function template()
  local function hung(at) return { bone = "hips", offset = at } end
  local foot = { foot_offset = 0.08 }
  return ik.crowd_template{ skeleton = ik.skeleton(BONES), chains = {
    { bones = { "spine1", "spine2", "spine3" }, solver = "fabrik", target = hung({ 0, 0.4, 0.1 }) },
    { bones = { "l_thigh", "l_knee", "l_ankle" }, pole = hung({ 0.1, -0.4, 1 }), foot = foot },
    { bones = { "r_thigh", "r_knee", "r_ankle" }, pole = hung({ -0.1, -0.4, 1 }), foot = foot },
    { bones = { "l_shoulder", "l_elbow", "l_hand" }, target = hung({ 0.3, 0.35, 0.35 }),
      pole = hung({ 0.5, 0.4, -1 }) },
    { bones = { "r_shoulder", "r_elbow", "r_hand" }, target = hung({ -0.3, 0.35, 0.35 }),
      pole = hung({ -0.5, 0.4, -1 }) },
  } }
end

local function ground_of()
  local cell, columns = 0.5, floor((SIDE * SPACING + 10) / 0.5) + 1
  local heights = {}
  for r = 0, columns - 1 do
    for c = 0, columns - 1 do heights[r * columns + c + 1] = hill(c * cell, r * cell) end
  end
  return ik.ground.heightfield{ origin = { 0, 0, 0 }, cell_size = cell, columns = columns, rows = columns,
                                heights = heights }
end

-- Character k's skeleton as the view reads one: bones with a name and a parent, their
-- world position from the crowd's buffer, their world rotation composed from the local
-- ones (the buffer's order is parents first).
local function skeleton_view(scene, k, names, parent_of)
  local bones = {}
  local v = scene.views
  local function rotation(b)
    local base = (k - 1) * v.stride.rotations + 4 * (b - 1)
    local r = v.rotations
    local x, y, z, w = r[base + 1], r[base + 2], r[base + 3], r[base + 4]
    local p = parent_of[b]
    if not p then return x, y, z, w end
    local px, py, pz, pw = rotation(p)
    return pw * x + px * w + py * z - pz * y, pw * y - px * z + py * w + pz * x,
      pw * z + px * y - py * x + pz * w, pw * w - px * x - py * y - pz * z
  end
  for b, name in ipairs(names) do
    bones[b] = {
      name = name,
      get_position = function()
        local base = (k - 1) * v.stride.positions + 3 * (b - 1)
        return { v.positions[base + 1], v.positions[base + 2], v.positions[base + 3] }
      end,
      get_rotation = function() return { rotation(b) } end,
    }
  end
  for b in ipairs(names) do
    if parent_of[b] then bones[b].parent = bones[parent_of[b]] end
  end
  return { bones = function() return bones end }
end

-- The animation: every character walks along +Z over the hills (wrapping round the
-- field), its ankles in a stride cycle; then one solve.
local function advance(self, dt)
  self.time = self.time + dt
  local t, v = self.time, self.views
  local sr, st = v.stride.roots, v.stride.targets
  local span = SIDE * SPACING
  for k = 1, COUNT do
    local x = 2 + (k - 1) % SIDE * SPACING
    local z = 2 + (floor((k - 1) / SIDE) * SPACING + SPEED * t) % span
    local s = ((k * 0.37) % 1 + STRIDE_HZ * t) % 1 * 2 * pi
    local r, o = (k - 1) * sr, (k - 1) * st
    v.roots[r + 1], v.roots[r + 2], v.roots[r + 3] = x, hill(x, z) + 0.88 + 0.03 * cos(2 * s), z
    for side = -1, 1, 2 do
      local a = s + (side > 0 and 0 or pi)
      local lift = sin(a)
      local px, pz = x + 0.1 * side, z + 0.25 * cos(a)
      local at = o + (side > 0 and 0 or 3)
      v.targets[at + 1], v.targets[at + 3] = px, pz
      v.targets[at + 2] = hill(px, pz) + 0.05 + (lift > 0 and 0.12 * lift or 0)
    end
  end
  v.push()
  self.reached = self.crowd:solve(dt)
  v.pull()
end

--- A fresh scene.
function M.new()
  local t = template()
  local scene = {
    name = "crowd", time = 0, reached = 0, skeletons = {}, nodes = {}, targets = {}, poles = {}, trails = {},
    ground = ground_of(), advance = advance,
  }
  scene.crowd = ik.crowd{ template = t, count = COUNT, threads = 2, ground = scene.ground }
  scene.views = crowd_views(scene.crowd)
  local names, index, parent_of = t:bone_names(), {}, {}
  for b, name in ipairs(names) do index[name] = b end
  for _, bone in ipairs(BONES) do
    if bone.parent then parent_of[index[bone.name]] = index[bone.parent] end
  end
  advance(scene, 0)
  for k = 1, SHOWN do scene.skeletons["c" .. k] = skeleton_view(scene, k, names, parent_of) end
  return scene
end

return M
