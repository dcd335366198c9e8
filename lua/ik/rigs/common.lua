--- What the rigs share: option checking, the smoothed weight, critically damped
-- springs, pose keeping and the two-bone limb with its pole.
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
-- @module ik.rigs.common

local ik = require("ik")

local abs, atan2, exp, max, min = math.abs, math.atan2 or math.atan, math.exp, math.max, math.min
local pi, sqrt = math.pi, math.sqrt

local common = {}

--- Default blend time in seconds: how long the applied weight takes from 0 to 1.
common.BLEND_TIME = 0.2

-- ---- describing values ----

--- How a value reads in a message: a number as itself, a string quoted, anything else
-- by its type (`__name` for userdata that have one, like "ik.bone").
-- @param v any value
-- @treturn string
-- @usage local common = require("ik.rigs.common")
-- assert(common.describe(nil) == "nil" and common.describe(2) == "2")
function common.describe(v)
  local t = type(v)
  if t == "number" then return string.format("%.14g", v) end
  if t == "string" then return string.format("%q", v) end
  if t == "userdata" or t == "table" then
    local mt = getmetatable(v)
    if type(mt) == "table" and type(rawget(mt, "__name")) == "string" then return mt.__name end
  end
  return t
end

local function index(v, name) return v[name] end

-- Looks a method up without raising (a closed ik object raises on any index).
local function method(v, name)
  local t = type(v)
  if t ~= "table" and t ~= "userdata" then return nil end
  local ok, m = pcall(index, v, name) -- no closure: this runs every frame
  if not ok then return nil end
  if type(m) == "function" then return m end
  local mt = type(m) == "table" and getmetatable(m)
  if mt and mt.__call then return m end
  return nil
end
common.method = method

--- Whether v has the read half of the transform contract (`get_position` and
-- `get_rotation`).
-- @param v any value
-- @treturn boolean
function common.is_transform(v)
  return method(v, "get_position") ~= nil and method(v, "get_rotation") ~= nil
end

--- v as an ik.vec3 when it is a vec3-like (not a transform), else nil.
-- @param v any value
-- @tparam[opt] ik.vec3 out written and returned instead of a new vector
-- @treturn ?ik.vec3
function common.to_vec3(v, out)
  if v == nil or type(v) == "number" or common.is_transform(v) then return nil end
  local ok, r
  if out then ok, r = pcall(out.set, out, v) else ok, r = pcall(ik.vec3, v) end
  if ok then return r end
  return nil
end

-- ---- option checking ----

-- Each kind: a test (value, option spec) returning true, or false and what was expected.
local kinds = {}

function kinds.transform(v)
  return common.is_transform(v), "transform"
end

-- A transform the rig turns: it must also take set_rotation.
function kinds.bone(v)
  return common.is_transform(v) and method(v, "set_rotation") ~= nil, "transform"
end

-- A transform the rig moves and turns.
function kinds.movable(v)
  return common.is_transform(v) and method(v, "set_rotation") ~= nil and method(v, "set_position") ~= nil,
    "transform with set_position and set_rotation"
end

function kinds.point(v)
  return common.is_transform(v) or common.to_vec3(v) ~= nil, "transform or vec3"
end

function kinds.vec3(v)
  local p = common.to_vec3(v)
  return p ~= nil and p:length() > 1e-9, "non-zero vec3"
end

function kinds.quat(v)
  if common.is_transform(v) or type(v) == "number" or v == nil then return false, "quat" end
  local ok, q = pcall(ik.quat, v)
  return ok and q ~= nil, "quat"
end

local function finite(v) return type(v) == "number" and v == v and v > -math.huge and v < math.huge end

function kinds.unit(v) return finite(v) and v >= 0 and v <= 1, "number in [0, 1]" end
function kinds.positive(v) return finite(v) and v > 0, "positive number" end
function kinds.non_negative(v) return finite(v) and v >= 0, "non-negative number" end
function kinds.number(v) return finite(v), "number" end
function kinds.boolean(v) return type(v) == "boolean", "boolean" end
function kinds.table(v) return type(v) == "table", "table" end
function kinds.budget(v) return finite(v) and v >= 1 and v % 1 == 0, "integer >= 1" end

function kinds.ground(v)
  return method(v, "raycast") ~= nil, "ik.ground"
end

-- A third result, when given, says what is wrong in place of "<expected> expected, got
-- <value>".
function kinds.bones(v)
  if type(v) ~= "table" or #v < 1 then return false, "list of transforms" end
  for i = 1, #v do
    if not kinds.bone(v[i]) then
      return false, "list of transforms",
        "item " .. i .. ": transform expected, got " .. common.describe(v[i])
    end
  end
  return true
end

common.kinds = kinds

--- Raises "<owner>: option '<name>' (<expected> expected, got <value>)".
-- @string owner e.g. "ik.rigs.arm"
-- @string name the option
-- @string expected what it should have been
-- @param value what it was
function common.option_error(owner, name, expected, value)
  error(string.format("%s: option '%s' (%s expected, got %s)", owner, name, expected, common.describe(value)),
    3)
end

--- Checks a rig's options and returns them with defaults filled in.
--
-- `fields` is a list of `{ name, kind, default = , required = }` where kind is one of
-- transform, bone, movable, point, vec3, quat, unit, positive, non_negative, number,
-- boolean, table, ground, bones. An unknown option, a missing required one or a value
-- of the wrong kind raises, naming the owner and the option.
-- @string owner e.g. "ik.rigs.arm"
-- @tparam table spec the options given
-- @tparam table fields what the rig takes
-- @treturn table the options, defaults filled in
-- @usage local common = require("ik.rigs.common")
-- local ok, err = pcall(common.options, "ik.rigs.demo", {}, { { "upper", "transform", required = true } })
-- assert(not ok and err:find("ik.rigs.demo: option 'upper' (transform expected, got nil)", 1, true))
function common.options(owner, spec, fields)
  if type(spec) ~= "table" then
    error(string.format("%s: options table expected, got %s", owner, common.describe(spec)), 2)
  end
  local known, names = {}, {}
  for _, f in ipairs(fields) do
    known[f[1]] = f
    names[#names + 1] = f[1]
  end
  for key in pairs(spec) do
    if not known[key] then
      local list = table.concat(names, ", ")
      error(string.format("%s: no option '%s' (options: %s)", owner, tostring(key), list), 2)
    end
  end
  local out = {}
  for _, f in ipairs(fields) do
    local name, kind = f[1], f[2]
    local v = spec[name]
    if v == nil then
      if f.required then
        local _, expected = kinds[kind](nil, f)
        error(string.format("%s: option '%s' (%s expected, got nil)", owner, name, expected), 2)
      end
      v = f.default
    else
      local ok, expected, detail = kinds[kind](v, f)
      if not ok then
        detail = detail or string.format("%s expected, got %s", expected, common.describe(v))
        error(string.format("%s: option '%s' (%s)", owner, name, detail), 2)
      end
    end
    out[name] = v
  end
  return out
end

--- The options every rig takes: weight, enabled, blend_time, reset_pose and order.
-- @number order the rig's default place in a rig set
-- @treturn table fields for `common.options`
function common.rig_fields(order)
  return {
    { "weight", "unit", default = 1 },
    { "enabled", "boolean", default = true },
    { "blend_time", "non_negative", default = common.BLEND_TIME },
    { "reset_pose", "boolean", default = false },
    { "order", "number", default = order },
    { "budget", "budget" },
  }
end

--- Joins lists of option fields.
-- @tparam table ... lists of fields
-- @treturn table one list
function common.fields(...)
  local out = {}
  for i = 1, select("#", ...) do
    for _, f in ipairs((select(i, ...))) do out[#out + 1] = f end
  end
  return out
end

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
  local p = common.to_vec3(v, out)
  if p then return p end
  error(string.format("%s: field '%s' (transform or vec3 expected, got %s)", owner or "ik.rigs", field or "?",
    common.describe(v)), 2)
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
    common.describe(value)), 3)
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
      common.describe(n)), 3)
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

--- Moves `applied` towards `goal` by at most dt / blend_time (all the way when
-- blend_time is 0): the weight never snaps.
-- @number applied
-- @number goal
-- @number dt seconds
-- @number blend_time seconds
-- @treturn number
-- @usage local common = require("ik.rigs.common")
-- assert(common.blend(0, 1, 0.05, 0.2) == 0.25)
function common.blend(applied, goal, dt, blend_time)
  if blend_time <= 0 then return goal end
  local step = dt / blend_time
  if goal > applied then return min(goal, applied + step) end
  if goal < applied then return math.max(goal, applied - step) end
  return applied
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
      common.describe(dt)), 3)
  end
  if not kinds.unit(self.weight) then field_error(self, "weight", "number in [0, 1]", self.weight) end
  if type(self.enabled) ~= "boolean" then field_error(self, "enabled", "boolean", self.enabled) end
  if not kinds.non_negative(self.blend_time) then
    field_error(self, "blend_time", "non-negative number", self.blend_time)
  end
  if self._pose then common.restore_pose(self._pose) end
  local goal = self.enabled and self.weight or 0
  self.applied_weight = common.blend(self.applied_weight, goal, dt, self.blend_time)
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
        .. "set_local_rotation (%s has none)", owner, common.describe(b)), 3)
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

-- ---- springs ----

--- The angular frequency of a critically damped spring with this smooth time
-- (2 / smooth_time: a step is about 90% done after 2 * smooth_time), or nil for 0 (no
-- smoothing).
-- @number smooth_time seconds
-- @treturn ?number
function common.omega(smooth_time)
  if smooth_time <= 0 then return nil end
  return 2 / smooth_time
end

--- One step of a critically damped spring, integrated exactly: x (with velocity v)
-- follows a goal that moves linearly from g0 to g1 over dt seconds. Being exact it
-- gives the same path at any frame rate for a goal moving steadily, and never
-- overshoots or explodes for a long step. omega nil: no smoothing (x jumps to g1).
-- @number x position
-- @number v velocity per second
-- @number g0 the goal at the start of the step
-- @number g1 the goal at its end
-- @tparam ?number omega from `common.omega`
-- @number dt seconds, >= 0
-- @treturn number x
-- @treturn number v
-- @usage local common = require("ik.rigs.common")
-- local x, v = 0, 0
-- for _ = 1, 60 do x, v = common.spring(x, v, 1, 1, common.omega(0.1), 1 / 60) end
-- assert(math.abs(x - 1) < 1e-6)   -- there in a second, never past it
function common.spring(x, v, g0, g1, omega, dt)
  if dt <= 0 then return x, v end
  local u = (g1 - g0) / dt
  if not omega then return g1, u end
  -- f = x - g + 2u/omega obeys the free critically damped equation
  local f = x - g0 + 2 * u / omega
  local fd = v - u
  local c = fd + omega * f
  local e = exp(-omega * dt)
  local f1 = (f + c * dt) * e
  local fd1 = (fd - omega * c * dt) * e
  return g1 + f1 - 2 * u / omega, u + fd1
end

--- The rotation vector (axis times angle, the shorter way round) of an ik.quat.
-- @tparam ik.quat q
-- @treturn number x
-- @treturn number y
-- @treturn number z
function common.quat_log(q)
  local x, y, z, w = q:unpack()
  if w < 0 then x, y, z, w = -x, -y, -z, -w end
  local s = sqrt(x * x + y * y + z * z)
  if s < 1e-12 then return 2 * x, 2 * y, 2 * z end
  local a = 2 * atan2(s, w) / s
  return x * a, y * a, z * a
end

-- Scratch for the helpers below, which never call each other while using it.
local scratch_v = ik.vec3()
local X, Y, Z = ik.vec3(1, 0, 0), ik.vec3(0, 1, 0), ik.vec3(0, 0, 1)

--- The rotation of a rotation vector (inverse of `quat_log`).
-- @number x
-- @number y
-- @number z
-- @tparam[opt] ik.quat out written and returned instead of a new quaternion
-- @treturn ik.quat
function common.quat_exp(x, y, z, out)
  local a = sqrt(x * x + y * y + z * z)
  if a < 1e-300 then return out and out:set() or ik.quat() end
  return ik.quat.axis_angle(scratch_v:set(x, y, z), a, out)
end

-- ---- vector helpers ----

--- Unsigned angle between two directions, in [0, pi] (precise near 0 and pi).
-- @tparam ik.vec3 a
-- @tparam ik.vec3 b
-- @treturn number
function common.angle(a, b)
  return atan2(a:cross(b, scratch_v):length(), a:dot(b))
end

--- v turned by `angle` about the unit `axis` (v perpendicular to it).
-- @tparam ik.vec3 v
-- @tparam ik.vec3 axis
-- @number angle
-- @tparam[opt] ik.vec3 out written and returned instead of a new vector (may be v)
-- @treturn ik.vec3
function common.turn(v, axis, angle, out)
  local c, s = math.cos(angle), math.sin(angle)
  local ax, ay, az = axis:unpack()
  local vx, vy, vz = v:unpack()
  out = out or ik.vec3()
  return out:set(vx * c + (ay * vz - az * vy) * s, vy * c + (az * vx - ax * vz) * s,
    vz * c + (ax * vy - ay * vx) * s)
end

--- Some unit vector perpendicular to the unit vector a.
-- @tparam ik.vec3 a
-- @tparam[opt] ik.vec3 out written and returned instead of a new vector
-- @treturn ik.vec3
function common.perpendicular(a, out)
  local other = abs(a.x) < 0.57735 and X or (abs(a.y) < 0.57735 and Y) or Z
  out = a:cross(other, out)
  return out:normalized(out)
end

-- ---- the two-bone limb (arm, leg) ----

local Limb = {}
Limb.__index = Limb

--- The two-bone limb of the arm and leg rigs: an `ik.chain` over three bones whose
-- middle joint bends towards a pole.
--
-- The side the middle joint goes to is the pole's side of the line from the root to
-- the target. When the target passes through the line from the root to the pole that
-- side is undefined, and following it would swing the elbow half a turn in one frame;
-- the side instead follows the pole's through a critically damped spring in its angle
-- round the root-target line (`bend_time`, solved exactly as `spring` is, so the path
-- is the same at any frame rate). Inside the inner reach (nearer the root than the
-- bones' difference), where no pose reaches the target and its direction turns half
-- round as it passes the root, the limb aims along a direction that follows the
-- target's through the same spring, blended into the target's own by the distance.
-- @tparam table bones three transforms, root first
-- @tparam table opts `tolerance`, `bend_time`
-- @treturn table the limb: `solve(self, target, pole, weight, dt)` and `forget(self)`
function common.limb(bones, opts)
  local self = setmetatable({}, Limb)
  self.bones = bones
  self.omega = common.omega(opts.bend_time)
  self.chain = ik.chain{ bones = bones, solver = "two_bone", tolerance = opts.tolerance }
  self.pole = ik.pole{ position = { 0, 0, 0 } }
  -- the spring of the bend side (_bend, its rate, last frame's goal) and of the aim
  self._bend, self._bend_rate, self._bend_goal, self._has_bend = ik.vec3(), 0, ik.vec3(), false
  self._aim_dir, self._aim_rate, self._aim_goal, self._has_aim = ik.vec3(), 0, ik.vec3(), false
  -- scratch, so that a frame allocates nothing
  self._root, self._aim, self._mid, self._tip = ik.vec3(), ik.vec3(), ik.vec3(), ik.vec3()
  self._raw, self._across, self._prev, self._normal = ik.vec3(), ik.vec3(), ik.vec3(), ik.vec3()
  self._axis, self._goal, self._last_raw, self._last_to_target = ik.vec3(), ik.vec3(), ik.vec3(), ik.vec3()
  self._dir, self._aim_used, self._last_aim_offset = ik.vec3(), ik.vec3(), ik.vec3()
  return self
end

-- The signed angle from unit `from` to `to` about unit `axis` (from across it).
local function angle_about(from, to, axis, scratch)
  return atan2(from:cross(to, scratch):dot(axis), from:dot(to))
end

-- Unit `from` (across unit `axis`) turned about `axis` by a critically damped spring
-- whose goal moved from direction goal0 (nil: none) to goal1 over dt; a goal that
-- jumped by more than a quarter turn is a step, not a sweep. Returns the direction (in
-- out) and the spring's rate.
function Limb:_spring_turn(from, axis, goal0, goal1, rate, dt, out)
  local a1 = angle_about(from, goal1, axis, self._normal)
  local a0 = goal0 and angle_about(from, goal0, axis, self._normal) or a1
  if abs(a1 - a0) > pi / 2 then a0 = a1 end
  local x
  x, rate = common.spring(0, rate, a0, a1, self.omega, dt)
  out = common.turn(from, axis, x, out)
  return out:normalized(out), rate
end

-- Across unit `aim`, towards `raw` (the pole from the root), normalised into out; nil
-- when the pole is on the aim's line.
local function across_towards(raw, aim, out)
  local t, raw_len = raw:dot(aim), raw:length()
  local rx, ry, rz = raw:unpack()
  out = out:set(rx - aim.x * t, ry - aim.y * t, rz - aim.z * t) -- out may be raw
  local len = out:length()
  return len > 1e-9 * math.max(raw_len, 1e-300) and out:scale(1 / len, out) or nil
end

-- The spring's sub-steps: near the pole's axis the pole's side turns fast and not
-- linearly in time, so the step is cut where the side turns by more than this (the
-- root's offsets to the target and to the pole interpolated linearly across the frame).
local SUBSTEP_ANGLE, SUBSTEPS_MAX = 0.05, 32

-- The bend direction for this frame: across the root-target line, following the pole's
-- side through the spring. `to_target` is the target from the root, `aim` the unit
-- direction the limb aims along. Returns one of the limb's scratch vectors, or nil.
function Limb:_bend_direction(root, to_target, aim, pole, dt)
  local raw = pole:sub(root, self._raw)
  local goal = across_towards(raw, aim, self._across)
  local prev = nil
  if self._has_bend then
    prev = across_towards(self._bend, aim, self._prev)
  end
  if not goal then return prev end
  if not prev then
    self._bend_rate = 0
    self._bend_goal:set(goal)
    self._last_raw:set(raw)
    self._last_to_target:set(to_target)
    return goal
  end
  local turn = common.angle(self._bend_goal, goal)
  local n = min(SUBSTEPS_MAX, math.floor(turn / SUBSTEP_ANGLE) + 1)
  local bend = prev
  for k = 1, n do
    local f = k / n
    local sub_aim = self._last_to_target:lerp(to_target, f, self._axis)
    sub_aim = sub_aim:length() > 1e-12 and sub_aim:normalized(sub_aim) or sub_aim:set(aim)
    local sub_raw = self._last_raw:lerp(raw, f, self._goal)
    local sub_goal = k == n and goal or across_towards(sub_raw, sub_aim, self._goal)
    if sub_goal then
      bend = across_towards(bend, sub_aim, bend) or bend
      bend, self._bend_rate =
        self:_spring_turn(bend, sub_aim, self._bend_goal, sub_goal, self._bend_rate, dt / n, bend)
      self._bend_goal:set(sub_goal)
    end
  end
  self._last_raw:set(raw)
  self._last_to_target:set(to_target)
  return across_towards(bend, aim, bend) or prev
end

-- The direction the limb aims along this frame, given the target from the root
-- (`to_target`, `d` long, `dir` its direction) and the inner reach. The spring's step is
-- cut as the bend's is, the target's offset interpolated across the frame, so a target
-- passing through the root turns the goal half round at the moment it passed. Returns
-- one of the limb's vectors.
function Limb:_aim_direction(to_target, dir, d, inner, dt)
  local aim = self._aim_dir
  if not self._has_aim then
    self._has_aim, self._aim_rate = true, 0
    self._aim_goal:set(dir)
    self._last_aim_offset:set(to_target)
    return aim:set(dir)
  end
  local n = min(SUBSTEPS_MAX, math.floor(common.angle(self._aim_goal, dir) / SUBSTEP_ANGLE) + 1)
  local axis = self._axis
  for k = 1, n do
    local goal = self._last_aim_offset:lerp(to_target, k / n, self._goal)
    goal = goal:length() > 1e-9 and goal:normalized(goal) or goal:set(self._aim_goal)
    do
      -- the spring's axis: across its direction and the goal's, else across its bend plane
      axis = aim:cross(goal, axis)
      if axis:length() < 1e-6 then axis = aim:cross(self._bend, axis) end
      if axis:length() < 1e-6 then axis = common.perpendicular(aim, axis) end
      axis = axis:normalized(axis)
      aim, self._aim_rate = self:_spring_turn(aim, axis, self._aim_goal, goal, self._aim_rate, dt / n, aim)
      self._aim_goal:set(goal)
    end
  end
  self._aim_goal:set(dir)
  self._last_aim_offset:set(to_target)
  if d >= inner then return dir end
  -- blended: the spring's at the root, the target's at the inner reach (by the square of
  -- the distance: the spring has then turned further before the target's pull grows)
  local k = (d / inner) ^ 2
  local a = angle_about(aim, dir, axis, self._normal)
  local out = common.turn(aim, axis, k * a, self._aim_used)
  return out:normalized(out)
end

--- Solves the limb towards `target` (an ik.vec3) with the middle joint towards `pole`
-- (an ik.vec3, or nil for the side it bends to now), at `weight`.
-- @treturn boolean reached
-- @treturn number distance
-- @treturn int the chain's iterations
function Limb:solve(target, pole, weight, dt)
  local chain, bones = self.chain, self.bones
  local root = common.get_position(bones[1], self._root)
  local to_target = target:sub(root, self._aim)
  local d = to_target:length()
  local goal = target
  if d > 1e-9 or self._has_aim then
    local mid = common.get_position(bones[2], self._mid)
    local tip = common.get_position(bones[3], self._tip)
    local l1, l2 = mid:sub(root, self._raw):length(), tip:sub(mid, self._across):length()
    -- on the root the target has no direction: the aim holds its goal (and a hair of
    -- distance, for the solver to have one)
    local dir = d > 1e-9 and to_target:scale(1 / d, self._dir) or self._dir:set(self._aim_goal)
    local aim = self:_aim_direction(to_target, dir, d, abs(l1 - l2), dt)
    if not rawequal(aim, dir) or d <= 1e-9 then
      goal = aim:scale(max(d, 1e-6 * (l1 + l2)), self._tip):add(root, self._tip)
    end
    local bend = pole and self:_bend_direction(root, to_target, aim, pole, dt)
    if bend then
      self._bend:set(bend)
      self._has_bend = true
      self.pole.position = self._bend:scale(l1 + l2, self._prev):add(root, self._prev)
      chain.pole = self.pole
    end
  end
  if not pole then
    chain.pole = nil
    self._has_bend = false
  end
  chain.weight = weight
  local reached, distance, iterations = chain:solve(goal)
  if not rawequal(goal, target) then
    distance = common.get_position(bones[3], self._mid):sub(target, self._mid):length()
    reached = distance <= chain.tolerance
  end
  return reached, distance, iterations
end

--- Forgets the bend side kept between frames (the rig went idle).
function Limb:forget()
  self._has_bend, self._has_aim = false, false
end

return common
