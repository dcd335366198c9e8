--- What the rigs share: the fields every rig has (weight and its blending, enabled,
-- order, the iteration budget, the pose kept for `reset_pose`), how an update begins,
-- and reading the transforms they drive.
--
-- Rig modules use it; a rig of your own may too. Everything here works through the
-- transform contract (`get_position`, `get_rotation`, `set_position`, `set_rotation`,
-- `get_local_rotation`, `set_local_rotation`), so an `ik.bone`, an `ik.node` and a
-- host's own object are driven alike.
--
-- A rig's update allocates nothing once it runs (the garbage collector then has nothing
-- to do for it): the rigs keep scratch vectors and quaternions, made once, and pass them
-- as the `out` arguments of `ik.vec3`, `ik.quat` and the transform getters. The helpers
-- here that return a vector or quaternion take such an `out` too.
--
-- Every rig has an iteration budget (`budget` option, `set_budget`), which a host lowers
-- for distant characters: its chains' `iterations`, and the passes of its own loops.
--
-- The rest of what rigs share lives in modules of its own, and this one hands it on
-- under the names it always had: `ik.rigs.options` (option checking: `describe`,
-- `method`, `is_transform`, `to_vec3`, `kinds`, `option_error`, `fields`, `rig_fields`,
-- `BLEND_TIME`, and `options.check` as `common.options`), `ik.rigs.motion` (springs
-- and maths: `omega`, `spring`, `blend`, `quat_log`, `quat_exp`, `angle`, `turn`,
-- `perpendicular`) and `ik.rigs.limb` (`limb.new` as `common.limb`).
-- @module ik.rigs.common

local ik = require("ik")
local options = require("ik.rigs.options")
local motion = require("ik.rigs.motion")

local common = {}

for _, name in ipairs({ "BLEND_TIME", "describe", "method", "is_transform", "to_vec3", "kinds",
                        "option_error", "rig_fields", "fields" }) do
  common[name] = options[name]
end
common.options = options.check
for _, name in ipairs({ "omega", "spring", "blend", "quat_log", "quat_exp", "angle", "turn",
                        "perpendicular" }) do
  common[name] = motion[name]
end

--- The two-bone limb of the arm and leg rigs: `ik.rigs.limb.new`.
-- @tparam table bones three transforms, root first
-- @tparam table opts `tolerance`, `bend_time`
-- @treturn table the limb
function common.limb(bones, opts)
  return require("ik.rigs.limb").new(bones, opts) -- limb uses this module: required when first used
end

local describe, finite, kinds, method = options.describe, options.finite, options.kinds, options.method

-- ---- reading transforms ----

--- The world position of a transform, written into `out` (and returned). An ik.bone
-- or ik.node fills `out` itself; what a host's transform returns is copied.
-- @param t a transform
-- @tparam ik.vec3 out
-- @treturn ik.vec3 out
function common.get_position(t, out)
  return out:set(t:get_position(out))
end

--- The world rotation of a transform, written into `out` (and returned), as
-- `get_position`.
-- @param t a transform
-- @tparam ik.quat out
-- @treturn ik.quat out
function common.get_rotation(t, out)
  return out:set(t:get_rotation(out))
end

--- The position of a transform or vec3-like, as an ik.vec3. Raises, naming the owner's
-- field, when it is neither.
-- @param v a transform or a vec3-like
-- @string[opt] owner for the message
-- @string[opt] field for the message
-- @tparam[opt] ik.vec3 out written and returned instead of a new vector
-- @treturn ik.vec3
function common.position(v, owner, field, out)
  local get = method(v, "get_position")
  if get then
    if out then return out:set(get(v, out)) end
    return ik.vec3(get(v))
  end
  local p = options.to_vec3(v, out)
  if p then return p end
  error(string.format("%s: field '%s' (transform or vec3 expected, got %s)", owner or "ik.rigs", field or "?",
    describe(v)), 2)
end

--- The world rotation of a transform as an ik.quat, or nil for anything else (a vec3
-- target has none).
-- @param v any value
-- @tparam[opt] ik.quat out written and returned instead of a new quaternion
-- @treturn ?ik.quat
function common.rotation(v, out)
  local get = method(v, "get_rotation")
  if get then
    if out then return out:set(get(v, out)) end
    return ik.quat(get(v))
  end
  return nil
end

-- ---- the weight ----

local function field_error(self, field, expected, value)
  error(string.format("%s: field '%s' (%s expected, got %s)", self._owner, field, expected,
    describe(value)), 3)
end

--- Sets a rig's shared fields from its checked options: `weight` (the goal),
-- `applied_weight` (what update uses; starts at the goal, or 0 when disabled),
-- `enabled`, `blend_time`, `order`, and the pose kept for `reset_pose`.
-- @tparam table self the rig
-- @string owner e.g. "ik.rigs.arm"
-- @tparam table o checked options
-- @tparam {transform,...} bones what `reset_pose` puts back
-- @tparam[opt] {transform,...} placed transforms whose local position `reset_pose` puts back too
function common.init_rig(self, owner, o, bones, placed)
  self._owner = owner
  self.weight = o.weight
  self.enabled = o.enabled
  self.blend_time = o.blend_time
  self.order = o.order
  self.budget = o.budget
  self.applied_weight = o.enabled and o.weight or 0
  self._idle = self.applied_weight <= 0
  self.iterations = 0
  self._chains, self._full_iterations = {}, {}
  if o.reset_pose then self._pose = common.capture_pose(owner, bones, placed) end
end

-- ---- the iteration budget ----

--- Puts a chain under the rig's iteration budget: `set_budget` caps its `iterations`
-- (what it was given is its full budget).
-- @tparam table self the rig
-- @tparam ik.chain chain
function common.own_chain(self, chain)
  local n = #self._chains + 1
  self._chains[n], self._full_iterations[n] = chain, chain.iterations
  if self.budget then chain.iterations = math.min(self.budget, chain.iterations) end
end

--- Sets a rig's iteration budget: at most `n` iterations for each of its chains and
-- each of its own iterative loops, from the next update on; nil gives each its full
-- count back. For distant characters, whose small errors nobody sees. Raises
-- "<owner>: set_budget: budget (integer >= 1 or nil expected, got <value>)".
-- @tparam table self the rig
-- @tparam ?int n
-- @usage local common = require("ik.rigs.common")
-- local rig = { _owner = "ik.rigs.demo" }
-- common.init_rig(rig, "ik.rigs.demo", { weight = 1, enabled = true, blend_time = 0, order = 1 })
-- local chain = ik.chain{ positions = { {0, 0, 0}, {1, 0, 0}, {2, 0, 0} }, iterations = 20 }
-- common.own_chain(rig, chain)
-- common.set_budget(rig, 3)
-- assert(chain.iterations == 3 and rig.budget == 3)
-- common.set_budget(rig, nil)
-- assert(chain.iterations == 20)
function common.set_budget(self, n)
  if n ~= nil and not kinds.budget(n) then
    error(string.format("%s: set_budget: budget (integer >= 1 or nil expected, got %s)", self._owner,
      describe(n)), 3)
  end
  self.budget = n
  for i, chain in ipairs(self._chains) do
    local full = self._full_iterations[i]
    chain.iterations = n and math.min(n, full) or full
  end
end

--- The passes a rig's own loop of `full` passes may run under its budget.
-- @tparam table self the rig
-- @int full
-- @treturn int
function common.passes(self, full)
  local n = self.budget
  if n and n < full then return n end
  return full
end

--- Starts a rig's update: checks dt and the rig's fields, puts the kept pose back
-- (`reset_pose`), and moves `applied_weight` towards its goal (`weight`, or 0 when
-- not `enabled`). Returns the applied weight, or nil when it is 0: the rig then does
-- nothing this frame (the first such frame calls `self:_on_idle()`, where a rig forgets
-- its smoothing).
-- @tparam table self the rig
-- @number dt seconds since the last update, >= 0
-- @treturn ?number
function common.begin(self, dt)
  if not finite(dt) or dt < 0 then
    error(string.format("%s: update: dt (non-negative number expected, got %s)", self._owner,
      describe(dt)), 3)
  end
  if not kinds.unit(self.weight) then field_error(self, "weight", "number in [0, 1]", self.weight) end
  if type(self.enabled) ~= "boolean" then field_error(self, "enabled", "boolean", self.enabled) end
  if not kinds.non_negative(self.blend_time) then
    field_error(self, "blend_time", "non-negative number", self.blend_time)
  end
  if self._pose then common.restore_pose(self._pose) end
  local goal = self.enabled and self.weight or 0
  self.applied_weight = motion.blend(self.applied_weight, goal, dt, self.blend_time)
  if self.applied_weight <= 0 then
    if not self._idle then
      self._idle = true
      if self._on_idle then self:_on_idle() end
    end
    return nil
  end
  self._idle = false
  return self.applied_weight
end

-- ---- pose keeping ----

--- Records the local rotations of `bones` (and the local positions of `placed`, or
-- their world positions when they have no `get_local_position`), for `restore_pose`.
-- @string owner for the message when a bone lacks the local methods
-- @tparam {transform,...} bones
-- @tparam[opt] {transform,...} placed
-- @treturn table
function common.capture_pose(owner, bones, placed)
  local pose = { bones = {}, rotations = {}, placed = {}, positions = {}, local_position = {} }
  for i, b in ipairs(bones or {}) do
    if not method(b, "get_local_rotation") or not method(b, "set_local_rotation") then
      error(string.format("%s: option 'reset_pose' needs transforms with get_local_rotation and "
        .. "set_local_rotation (%s has none)", owner, describe(b)), 3)
    end
    pose.bones[i] = b
    pose.rotations[i] = ik.quat(b:get_local_rotation())
  end
  for i, t in ipairs(placed or {}) do
    pose.placed[i] = t
    local has_local = method(t, "get_local_position") and method(t, "set_local_position")
    pose.local_position[i] = has_local and true or false
    pose.positions[i] = ik.vec3(has_local and t:get_local_position() or t:get_position())
  end
  return pose
end

--- Puts a recorded pose back: what animation does each frame, for bones nothing
-- animates.
-- @tparam table pose from `capture_pose`
function common.restore_pose(pose)
  for i, t in ipairs(pose.placed) do
    if pose.local_position[i] then
      t:set_local_position(pose.positions[i])
    else
      t:set_position(pose.positions[i])
    end
  end
  for i, b in ipairs(pose.bones) do b:set_local_rotation(pose.rotations[i]) end
end

return common
