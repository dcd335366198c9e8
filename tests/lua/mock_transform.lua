-- A host engine's transform in plain Lua, for the specs: `local mock = require("mock_transform")`.
--
--   local hips = mock.new{ position = {0, 1, 0} }
--   local t = mock.new{ position = {x, y, z}, rotation = {x, y, z, w}, parent = hips }
--
-- position and rotation are local (relative to the parent; world without one), as an
-- engine's scene graph keeps them; the world transform is worked out from the parents
-- at every call, so moving a parent moves its children. The methods are the transform
-- contract ik.chain and friends use (get_position, get_rotation, set_rotation, world
-- space) plus set_position and the local accessors. Values come back as fresh plain
-- tables {x =, y =, z = [, w =]}; values going in may be ik.vec3/ik.quat, such tables or
-- arrays {x, y, z[, w]}. The maths is written out here, independent of the module, so
-- comparing a chain on mocks with one on ik.bone cross-checks both.
local mock = {}

local function vec(v)
  return { x = v.x or v[1], y = v.y or v[2], z = v.z or v[3] }
end

local function normalize(q)
  local l = math.sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w)
  assert(l > 0, "mock_transform: zero quaternion")
  return { x = q.x / l, y = q.y / l, z = q.z / l, w = q.w / l }
end

local function quat(q)
  return normalize{ x = q.x or q[1], y = q.y or q[2], z = q.z or q[3], w = q.w or q[4] }
end

local function mul(a, b) -- a * b: b first, then a
  return {
    x = a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
    y = a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
    z = a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
    w = a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
  }
end

local function conj(q) return { x = -q.x, y = -q.y, z = -q.z, w = q.w } end

local function rotate(q, v) -- q v q^-1, q unit
  local r = mul(mul(q, { x = v.x, y = v.y, z = v.z, w = 0 }), conj(q))
  return { x = r.x, y = r.y, z = r.z }
end

local Transform = {}
Transform.__index = Transform

--- A transform; spec = { position =, rotation =, parent = } (all optional).
function mock.new(spec)
  spec = spec or {}
  return setmetatable({
    parent = spec.parent,
    lp = vec(spec.position or { 0, 0, 0 }),
    lr = quat(spec.rotation or { 0, 0, 0, 1 }),
  }, Transform)
end

function Transform:get_position()
  if not self.parent then return vec(self.lp) end
  local pp, pr = self.parent:get_position(), self.parent:get_rotation()
  local d = rotate(pr, self.lp)
  return { x = pp.x + d.x, y = pp.y + d.y, z = pp.z + d.z }
end

function Transform:get_rotation()
  if not self.parent then return quat(self.lr) end
  return normalize(mul(self.parent:get_rotation(), self.lr))
end

--- Moves the transform (not its parent) to a world position.
function Transform:set_position(p)
  p = vec(p)
  if not self.parent then
    self.lp = p
    return
  end
  local pp, pr = self.parent:get_position(), self.parent:get_rotation()
  self.lp = rotate(conj(pr), { x = p.x - pp.x, y = p.y - pp.y, z = p.z - pp.z })
end

--- Turns the transform to a world rotation; its children follow.
function Transform:set_rotation(q)
  q = quat(q)
  self.lr = self.parent and normalize(mul(conj(self.parent:get_rotation()), q)) or q
end

function Transform:get_local_position() return vec(self.lp) end
function Transform:get_local_rotation() return quat(self.lr) end
function Transform:set_local_position(p) self.lp = vec(p) end
function Transform:set_local_rotation(q) self.lr = quat(q) end

return mock
