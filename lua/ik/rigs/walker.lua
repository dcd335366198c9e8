--- Walker rig: procedural walking for four- and six-legged robots.
--
-- Each leg is a two-bone limb (hip, knee, foot) solved towards a foot target, its knee
-- bending towards a pole above the knee. A planted foot stays where it is in the world
-- while the body moves. Every frame a ray goes straight down from a point above each
-- leg's rest position under the body; when the planted point is farther than the leg's
-- step distance from where that ray meets the ground, the leg steps (when its gait
-- group may: no neighbouring leg in the air), its foot travelling to a new point on a
-- sine arc over `step_time`. The body rides at the mean height of the feet plus
-- `body_height`, pitched and rolled to the plane through the feet, through exact
-- critically damped springs.
--
-- The host moves the body: its x, z and heading (yaw) are read at every update and
-- kept as they are (or the walker moves it itself: `velocity`, `turn_rate`, `path`).
-- The walker owns the body's height, pitch and roll, and the legs' rotations.
--
-- Where the simple recipe fails:
--
-- - Ledges: a ray that finds no ground, or ground further below or above the feet than
--   the legs reach (`max_step_down`, `max_step_up`), or too steep (`max_slope`), is no
--   place to step. The leg then looks on the way back from there towards the body's
--   centre, finds where the good ground begins and steps a little inside it, or keeps
--   its plant when there is none. The heading is never taken from the feet, pitch and
--   roll are clamped to `max_tilt`, and the body is lowered when a planted foot would
--   be out of its leg's reach: the body cannot spin or flip whatever the feet find.
-- - Slopes: the height and tilt follow where the feet stand and will land, never the
--   swinging feet, so a step does not rock the body; the rays start from a level frame
--   (the body's position and heading only), so the tilt and height never feed back into
--   where the rays go; the step trigger has hysteresis (a leg wants a step beyond its
--   step distance, and stops wanting it only back below `1 - hysteresis` of it), and a
--   step shorter than `min_step` is not taken.
-- - Frame rate: a step that fell due between two frames starts at the moment it did
--   (its swing runs ahead by the remainder, its landing point predicted from the rest
--   point and its velocity at that moment), and groups that came due within one frame
--   go in the order they came due, so 30, 60 and 144 Hz put the feet in the same
--   places to within 1e-3 of a leg's length, turning or not.
--
-- Sides and neighbours come from the rest pose in the body's frame (+Z forward, +Y up,
-- so +X is left): legs whose hip has x > 0 are on the left, ranked front to back by hip
-- z. Neighbours are the legs next to each other on a side and the two legs of a rank.
--
-- Fields, read and write: `weight`, `enabled`, `blend_time`, `order`, `step_height`,
-- `step_time`, `body_height`, `velocity`, `turn_rate`. Read only: `applied_weight`,
-- `budget` (`set_budget` sets it), `iterations` (the most any leg's chain took),
-- `height`, `pitch`, `roll` (the body's, before weighting), `yaw`, `groups` (lists of
-- leg indices), and `legs[i]`: `name`, `side` ("left" or "right"), `rank` (1 at the
-- front), `group`, `neighbours` (leg indices), `planted`, `plant` (the ground point
-- {x, y, z} a planted foot stands on), `dest` (where a swinging foot will land),
-- `target` (the ankle's target this frame), `steps` (finished), `reached`, `upper`,
-- `lower`, `step_distance`. The walker reuses the tables it hands out (`plant`,
-- `dest`, `target`): copy what you keep.
-- @module ik.rigs.walker

local ik = require("ik")
local common = require("ik.rigs.common")
local gait = require("ik.rigs.gait")
local motion = require("ik.rigs.motion")
local opt = require("ik.rigs.options")

local OWNER = "ik.rigs.walker"

local walker = {}

--- The walker's place in a rig set: with the legs (300).
walker.order = 300

local sqrt, sin, cos, abs, exp = math.sqrt, math.sin, math.cos, math.abs, math.exp
local max, min, huge, pi = math.max, math.min, math.huge, math.pi
local atan2 = math.atan2 or math.atan -- 5.1 has atan2; 5.4's atan takes two arguments
local clamp, distance, smoothstep = motion.clamp, motion.distance, motion.smoothstep
local wrap_angle = motion.wrap_angle
local describe, finite = opt.describe, opt.finite

-- Options opt.check checks; gait, legs and velocity are checked here.
local FIELDS = opt.fields({
  { "body", "movable", required = true },
  { "ground", "ground", required = true },
  { "step_height", "non_negative", default = 0.15 },
  { "step_time", "positive", default = 0.25 },
  { "step_distance", "positive" },
  { "body_height", "number" },
  { "foot_offset", "non_negative", default = 0 },
  { "hysteresis", "unit", default = 0.2 },
  { "min_step", "non_negative" },
  { "max_step_up", "non_negative" },
  { "max_step_down", "non_negative" },
  { "max_slope", "non_negative", default = 0.9 },
  { "height_time", "non_negative", default = 0.15 },
  { "tilt_time", "non_negative", default = 0.3 },
  { "dead_zone", "non_negative", default = 0.035 },
  { "max_tilt", "non_negative", default = 0.6 },
  { "turn_rate", "number" },
  { "path", "table" },
  { "speed", "non_negative", default = 0.5 },
  { "tolerance", "positive", default = 1e-3 },
}, opt.rig_fields(walker.order))
local MANUAL = { gait = true, legs = true, velocity = true }

-- ---- reading values, rotations ----

-- The three numbers of a vec3-like (ik.vec3, a host vector with x/y/z, {x, y, z}).
local function read3(v)
  if type(v) == "table" and v[1] ~= nil then return v[1], v[2], v[3] end
  return v.x, v.y, v.z
end

-- The unit quaternion of a quat-like, as four numbers: divided by its length, as the
-- walker always has (ik.quat scales by the inverse length, a last bit apart).
local function read4(q)
  local x, y, z, w
  if type(q) == "table" and q[1] ~= nil then
    x, y, z, w = q[1], q[2], q[3], q[4]
  else
    x, y, z, w = q.x, q.y, q.z, q.w
  end
  local n = sqrt(x * x + y * y + z * z + w * w)
  if n ~= n or n <= 0 or n == huge then return 0, 0, 0, 1 end
  return x / n, y / n, z / n, w / n
end

local function qmul(ax, ay, az, aw, bx, by, bz, bw)
  return aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
    aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz
end

-- The body's rotation from heading (about +Y), pitch (about +X) and roll (about +Z),
-- roll applied first: (qy * qx) * qz, as four numbers. Not ik.quat.euler, which groups
-- qy * (qx * qz) and normalises: the body's rotation would move by a last bit.
local function euler(pitch, yaw, roll)
  local x, y, z, w = qmul(0, sin(yaw / 2), 0, cos(yaw / 2), sin(pitch / 2), 0, 0, cos(pitch / 2))
  return qmul(x, y, z, w, 0, 0, sin(roll / 2), cos(roll / 2))
end

-- Scratch for the rotation helpers below, which never call each other while using it.
local X, Y, Z = ik.vec3(1, 0, 0), ik.vec3(0, 1, 0), ik.vec3(0, 0, 1)
local axis_v, off_q, heading_q = ik.vec3(), ik.quat(), ik.quat()

-- The heading of an ik.quat: the angle about +Y of its forward (+Z) axis, which a tilt
-- applied before the heading (as euler() does) leaves alone.
local function yaw_of(q)
  local fx, _, fz = q:rotate(Z, axis_v):unpack()
  if fx * fx + fz * fz < 1e-24 then -- looking straight up or down: go by the up axis
    local ux, _, uz = q:rotate(Y, axis_v):unpack()
    return atan2(-ux, -uz)
  end
  return atan2(fx, fz)
end

-- Pitch and roll of an ik.quat once its heading is taken off (the inverse of euler()).
local function tilt_of(q)
  local h = ik.quat.axis_angle(Y, -yaw_of(q), heading_q):mul(q, heading_q) -- qx * qz
  local fx, fy, fz = h:rotate(Z, axis_v):unpack()
  local pitch = -atan2(fy, sqrt(fx * fx + fz * fz))
  local r = ik.quat.axis_angle(X, -pitch, off_q):mul(h, off_q) -- qz
  local ux, uy = r:rotate(X, axis_v):unpack()
  return pitch, atan2(uy, ux)
end

-- ---- construction ----

local Walker = {}
Walker.__index = Walker

--- Makes a walker. It reads the rest pose (body, hips, knees and feet as they stand
-- now), and plants every foot on the ground under its rest position.
-- @tparam table options
--
-- - `body`: the transform the hips hang from (it must take set_position); required.
-- - `legs`: 4 or 6 tables, each `hip`, `knee`, `foot` (transforms, the foot the tip,
--   children of each other as in a skeleton), `pole_offset` (vec3 in the body's frame
--   from the knee's rest position to the point the knee bends towards, default half a
--   leg's length up), `step_distance` (default the walker's) and `name`; required.
-- - `ground`: an `ik.ground` (or anything with its `raycast`); required.
-- - `gait`: "alternate" (default; diagonal pairs, or the two tripods of six legs),
--   "tripod" (six legs), "ripple" (one leg at a time on four; a wave of pairs on six),
--   or a list of groups, each a list of leg indices, none holding two neighbours.
-- - `step_height` (0.15), `step_time` (0.25 s), `step_distance` (a third of the mean
--   leg length), `min_step` (a quarter of a leg's step distance), `hysteresis` (0.2).
-- - `body_height`: the body above the feet's mean ground height (default: as it
--   stands); `foot_offset` (0): the ankle above the ground.
-- - `max_step_up`, `max_step_down`: how far above or below the feet's mean height a
--   foot may plant (default: what the legs reach); `max_slope` (0.9 rad).
-- - `height_time` (0.15 s), `tilt_time` (0.3 s): the springs' smooth times;
--   `dead_zone` (0.035 rad): tilts below it are ignored, fully followed from twice it;
--   `max_tilt` (0.6 rad).
-- - `velocity` (world vec3, per second), `turn_rate` (rad/s), or `path` (list of points
--   followed at `speed`, 0.5, turning at most `turn_rate`, default pi/2 rad/s): the
--   walker moves the body itself.
-- - `tolerance` (1e-3), `weight`, `enabled`, `blend_time` (0.2 s), `order` (300),
--   `reset_pose` (false), `budget` (none: see `set_budget`).
-- @treturn table the rig
-- @usage -- four legs on a floor; the host walks the body along +Z
-- local bones = { { name = "body", position = {0, 0.5, 0} } }
-- local legs = {}
-- for i, at in ipairs({ {1, 0.3}, {1, -0.3}, {-1, 0.3}, {-1, -0.3} }) do
--   local side, z = at[1], at[2]
--   bones[#bones + 1] = { name = "hip" .. i, parent = "body", position = {0.2 * side, 0, z} }
--   bones[#bones + 1] = { name = "knee" .. i, parent = "hip" .. i, position = {0.2 * side, 0.1, 0} }
--   bones[#bones + 1] = { name = "foot" .. i, parent = "knee" .. i, position = {0.1 * side, -0.6, 0} }
-- end
-- local sk = ik.skeleton(bones)
-- for i = 1, 4 do
--   legs[i] = { hip = sk:bone("hip" .. i), knee = sk:bone("knee" .. i), foot = sk:bone("foot" .. i) }
-- end
-- local body = sk:bone("body")
-- local rig = require("ik.rigs.walker").new{ body = body, legs = legs, ground = ik.ground.plane() }
-- for frame = 1, 120 do
--   body:set_position({0, body:get_position().y, frame / 120})   -- 1 m in 2 s
--   rig:update(1 / 60)
-- end
-- assert(rig:step_count() >= 4)   -- each leg stepped about every 25 cm
function walker.new(options)
  if type(options) ~= "table" then
    error(string.format("%s: options table expected, got %s", OWNER, describe(options)), 2)
  end
  local checked = {}
  for k, v in pairs(options) do
    if not MANUAL[k] then checked[k] = v end
  end
  local o = opt.check(OWNER, checked, FIELDS)
  local self = setmetatable({}, Walker)
  self.body, self.ground = o.body, o.ground
  self.step_height, self.step_time = o.step_height, o.step_time
  self.foot_offset, self.hysteresis = o.foot_offset, min(o.hysteresis, 0.9)
  self.max_slope = min(o.max_slope, pi / 2)
  self.height_time, self.tilt_time = o.height_time, o.tilt_time
  self.dead_zone, self.max_tilt = o.dead_zone, min(o.max_tilt, pi / 2 - 0.01)
  self.turn_rate, self.speed = o.turn_rate, o.speed
  if options.velocity ~= nil then
    local ok, v = pcall(ik.vec3, options.velocity)
    if type(options.velocity) == "number" or not ok then
      opt.option_error(OWNER, "velocity", "vec3", options.velocity)
    end
    self.velocity = v
  end

  local specs = options.legs
  if type(specs) ~= "table" or (#specs ~= 4 and #specs ~= 6) then
    error(string.format("%s: option 'legs' (4 or 6 legs expected, got %s)", OWNER,
      type(specs) == "table" and #specs .. " legs" or describe(specs)), 2)
  end

  -- The rest pose, in the body's frame.
  local body_at = common.get_position(o.body, ik.vec3())
  local body_q = ik.quat(read4(o.body:get_rotation()))
  local to_local = body_q:inverse()
  local function to_body(t)
    local at = common.get_position(t, ik.vec3())
    local lx, ly, lz = to_local:rotate(at - body_at):unpack()
    return { lx, ly, lz }, at:unpack()
  end
  local by = body_at.y

  self.legs = {}
  local bones = {}
  local length_sum, foot_y_sum = 0, 0
  for i, spec in ipairs(specs) do
    if type(spec) ~= "table" then
      error(string.format("%s: option 'legs' (leg %d: table expected, got %s)", OWNER, i,
        describe(spec)), 2)
    end
    for _, part in ipairs({ "hip", "knee", "foot" }) do
      if not opt.kinds.bone(spec[part]) then
        error(string.format("%s: option 'legs' (leg %d: '%s' transform expected, got %s)", OWNER, i, part,
          describe(spec[part])), 2)
      end
    end
    local leg = { index = i, name = spec.name or ("leg" .. i), hip = spec.hip, knee = spec.knee,
                  foot = spec.foot, target = { 0, 0, 0 } }
    local hx, hy, hz, kx, ky, kz, fx, fy, fz
    leg.hip_local, hx, hy, hz = to_body(spec.hip)
    leg.knee_local, kx, ky, kz = to_body(spec.knee)
    leg.foot_local, fx, fy, fz = to_body(spec.foot)
    leg.upper = sqrt((kx - hx) ^ 2 + (ky - hy) ^ 2 + (kz - hz) ^ 2)
    leg.lower = sqrt((fx - kx) ^ 2 + (fy - ky) ^ 2 + (fz - kz) ^ 2)
    leg.length = leg.upper + leg.lower
    length_sum = length_sum + leg.length
    foot_y_sum = foot_y_sum + fy
    if spec.pole_offset ~= nil then
      local ok, p = pcall(ik.vec3, spec.pole_offset)
      if not ok or type(spec.pole_offset) == "number" then
        error(string.format("%s: option 'legs' (leg %d: 'pole_offset' vec3 expected, got %s)", OWNER, i,
          describe(spec.pole_offset)), 2)
      end
      leg.pole_offset = { p.x, p.y, p.z }
    else
      leg.pole_offset = { 0, leg.length / 2, 0 }
    end
    if spec.step_distance ~= nil and not (finite(spec.step_distance) and spec.step_distance > 0) then
      error(string.format("%s: option 'legs' (leg %d: 'step_distance' positive number expected, got %s)",
        OWNER, i,
        describe(spec.step_distance)), 2)
    end
    leg.chain = ik.chain{ bones = { spec.hip, spec.knee, spec.foot }, solver = "two_bone",
                          tolerance = o.tolerance }
    leg.pole = ik.pole{ position = { kx, ky + leg.length, kz } }
    leg.chain.pole = leg.pole
    self.legs[i] = leg
    bones[#bones + 1], bones[#bones + 2], bones[#bones + 3] = spec.hip, spec.knee, spec.foot
  end
  local n = #self.legs
  self.step_distance = o.step_distance or length_sum / n / 3
  for i, spec in ipairs(specs) do
    local leg = self.legs[i]
    leg.step_distance = spec.step_distance or self.step_distance
    leg.min_step = o.min_step or leg.step_distance / 4
  end
  self.body_height = o.body_height or (by - (foot_y_sum / n - self.foot_offset))

  -- How far below (and above) the feet's mean height a foot may plant: what each leg
  -- reaches from its hip at standing height, keeping a little bend.
  local reach_down = huge
  for _, leg in ipairs(self.legs) do
    local hip_h = self.body_height + leg.hip_local[2] - self.foot_offset
    local dx, dz = leg.foot_local[1] - leg.hip_local[1], leg.foot_local[3] - leg.hip_local[3]
    local reach2, r2 = (0.95 * leg.length) ^ 2, dx * dx + dz * dz
    reach_down = min(reach_down, reach2 > r2 and sqrt(reach2 - r2) - hip_h or 0)
  end
  reach_down = max(0, reach_down)
  self.max_step_down = o.max_step_down or reach_down
  self.max_step_up = o.max_step_up or max(reach_down, 0.5 * abs(self.body_height))
  self._ray_margin = 0.2 * abs(self.body_height) + 1e-3 * self.step_distance -- above and below the limits

  self.gait = options.gait or "alternate"
  local anchors = {}
  for i, leg in ipairs(self.legs) do anchors[i] = leg.hip_local end
  local g = gait.new{ owner = OWNER, feet = self.legs, anchors = anchors, pattern = self.gait,
                      step_time = self.step_time, step_height = self.step_height,
                      hysteresis = self.hysteresis }
  self._gait, self.groups, self.left, self.right = g, g.groups, g.left, g.right

  if o.path then
    if #o.path < 1 then error(OWNER .. ": option 'path' (list of points expected, got an empty table)", 2) end
    self.path = {}
    for i, p in ipairs(o.path) do
      local ok, v = pcall(ik.vec3, p)
      if not ok or type(p) == "number" then
        error(string.format("%s: option 'path' (point %d: vec3 expected, got %s)", OWNER, i,
          describe(p)), 2)
      end
      self.path[i] = { v.x, v.y, v.z }
    end
    self.path_index, self.path_done = 1, false
  end

  common.init_rig(self, OWNER, o, bones)
  for _, leg in ipairs(self.legs) do common.own_chain(self, leg.chain) end
  -- scratch, so that an update allocates nothing
  self._position, self._rotation, self._host_rotation = ik.vec3(), ik.quat(), ik.quat()
  self._offset = ik.vec3()
  self._ray, self._hit_point, self._hit_normal = ik.vec3(), ik.vec3(), ik.vec3()
  self._pole_at, self._target_at = ik.vec3(), ik.vec3()
  self._written_buf = { 0, 0, 0, 0, 0 }
  self.yaw = yaw_of(body_q)
  self.base_y = by
  self.base_pitch, self.base_roll = tilt_of(body_q)
  self.body_vel = { 0, 0 }
  self:reset()
  return self
end

-- ---- the ground ----

local DOWN = ik.vec3(0, -1, 0)

-- The ground under (x, z) where a foot may plant (3 numbers), or nil: `ref` is the
-- feet's mean height, which the step limits are measured from.
function Walker:_probe(x, z, ref)
  local margin = self._ray_margin
  local top = ref + self.max_step_up + margin
  local reach = self.max_step_up + self.max_step_down + 2 * margin
  local hit, point, normal = self.ground:raycast(self._ray:set(x, top, z), DOWN, reach, self._hit_point,
    self._hit_normal)
  if not hit then return nil end
  local px, py, pz = read3(point)
  if py > ref + self.max_step_up or py < ref - self.max_step_down then return nil end
  if normal ~= nil then
    local nx, ny, nz = read3(normal)
    local nl = sqrt(nx * nx + ny * ny + nz * nz)
    if nl > 0 and abs(ny) / nl < cos(self.max_slope) then return nil end
  end
  return px, py, pz
end

-- A leg's rest point in the level frame at (px, pz) heading (c, s) = (cos, sin) yaw.
local function rest_point(leg, px, pz, c, s)
  local lx, lz = leg.foot_local[1], leg.foot_local[3]
  return px + c * lx + s * lz, pz - s * lx + c * lz
end

--- Plants every foot on the ground under its rest position and snaps the body to that
-- stance's height and tilt (no springing). `new` does it; call it after teleporting
-- the body.
function Walker:reset()
  local px, py, pz = common.get_position(self.body, self._position):unpack()
  self.yaw = yaw_of(self._host_rotation:set(read4(self.body:get_rotation(self._host_rotation))))
  local c, s = cos(self.yaw), sin(self.yaw)
  local ref = py - self.body_height
  for _, leg in ipairs(self.legs) do
    local rx, rz = rest_point(leg, px, pz, c, s)
    local gx, gy, gz = self:_probe(rx, rz, ref)
    if not gx then gx, gy, gz = rx, ref, rz end -- nothing there: stand level with the body
    gait.plant(leg, gx, gy, gz)
    leg.rest, leg.vel = { rx, rz }, { 0, 0 }
    leg.prev_rest, leg.prev_vel = { rx, rz }, { 0, 0 }
  end
  self.prev_px, self.prev_pz = px, pz
  self.body_vel[1], self.body_vel[2] = 0, 0
  local hg, pg, rg = self:_goals(px, pz, c, s)
  self.height_goal, self.pitch_goal, self.roll_goal = hg, pg, rg
  self.height, self.height_v = hg, 0
  self.pitch, self.pitch_v = pg, 0
  self.roll, self.roll_v = rg, 0
  self._dormant = false
  self._written = nil
end

-- Height, pitch and roll goals from the support points (plants, and where swinging
-- feet will land) in the level frame at (px, pz) heading (c, s).
function Walker:_goals(px, pz, c, s)
  local n = #self.legs
  local pts = self._pts or {}
  self._pts = pts
  local mx, my, mz = 0, 0, 0
  for i, leg in ipairs(self.legs) do
    local p = leg.planted and leg.plant or leg.dest
    local dx, dz = p[1] - px, p[3] - pz
    local q = pts[i] or {}
    pts[i] = q
    q[1], q[2], q[3] = c * dx - s * dz, p[2], s * dx + c * dz
    mx, my, mz = mx + q[1], my + q[2], mz + q[3]
  end
  mx, my, mz = mx / n, my / n, mz / n
  -- Least-squares plane y = my + b (x - mx) + k (z - mz): exact on planar ground
  -- whatever the feet's layout; for a symmetric stance, the front-minus-back heights
  -- give the pitch and the left-minus-right heights the roll.
  local sxx, sxz, szz, sxy, szy = 0, 0, 0, 0, 0
  for i = 1, n do
    local q = pts[i]
    local x, y, z = q[1] - mx, q[2] - my, q[3] - mz
    sxx, sxz, szz, sxy, szy = sxx + x * x, sxz + x * z, szz + z * z, sxy + x * y, szy + z * y
  end
  local det = sxx * szz - sxz * sxz
  local b, k = 0, 0
  if det > 1e-12 * max(1e-300, sxx * szz) then
    b = (sxy * szz - szy * sxz) / det
    k = (szy * sxx - sxy * sxz) / det
  end
  local pitch, roll = -atan2(k, 1), atan2(b, 1)
  -- The dead zone fades in (zero below it, all of the tilt from twice it), so the goal
  -- never jumps at its edge.
  local dz0 = self.dead_zone
  if dz0 > 0 then
    pitch = pitch * smoothstep((abs(pitch) - dz0) / dz0)
    roll = roll * smoothstep((abs(roll) - dz0) / dz0)
  end
  local lim = self.max_tilt
  return my + self.body_height, clamp(pitch, -lim, lim), clamp(roll, -lim, lim)
end

-- ---- driving the body (optional) ----

function Walker:_drive(dt, px, pz, yaw)
  if self.velocity then
    local vx, _, vz = self.velocity:unpack()
    px, pz = px + vx * dt, pz + vz * dt
  end
  if self.path and not self.path_done then
    local budget = self.speed * dt
    while budget > 0 and not self.path_done do
      local p = self.path[self.path_index]
      local dx, dz = p[1] - px, p[3] - pz
      local d = sqrt(dx * dx + dz * dz)
      if d <= budget then
        px, pz, budget = p[1], p[3], budget - d
        self.path_index = self.path_index + 1
        self.path_done = self.path_index > #self.path
      else
        px, pz, budget = px + dx / d * budget, pz + dz / d * budget, 0
        local most = (self.turn_rate or pi / 2) * dt
        yaw = yaw + clamp(wrap_angle(atan2(dx, dz) - yaw), -most, most)
      end
    end
  elseif self.turn_rate and not self.path then
    yaw = yaw + self.turn_rate * dt
  end
  return px, pz, yaw
end

-- ---- stepping ----

-- Where a leg whose step began `late` seconds ago lands: ahead of its rest point by its
-- motion until then and by one swing's motion more (at most half a step), so it lands
-- about as far ahead as it will trail when it next steps. When that is no place to
-- stand, it looks on the way back from there towards the body's centre, finds where
-- the good ground begins (to a millimetre or so, so the answer moves smoothly with the
-- body and does not jump between samples), and stands a little inside it.
-- The rest point and its velocity are taken at the step's moment (`back` of the frame
-- before now), interpolated between the frames, so the prediction starts from the same
-- state whichever frame the moment fell in.
function Walker:_landing(leg, late, back)
  local px, pz, ref = self._px, self._pz, self._ref
  local ahead = self.step_time - late
  local vel, vel0, rest, rest0 = leg.vel, leg.prev_vel, leg.rest, leg.prev_rest
  local vx, vz = vel[1] + (vel0[1] - vel[1]) * back, vel[2] + (vel0[2] - vel[2]) * back
  local ox, oz = vx * self.step_time, vz * self.step_time
  local ol, cap = sqrt(ox * ox + oz * oz), 0.5 * leg.step_distance
  if ol > cap then ox, oz = ox * cap / ol, oz * cap / ol end
  local ax = rest[1] + (rest0[1] - rest[1]) * back + vx * self.step_time + ox
  local az = rest[2] + (rest0[2] - rest[2]) * back + vz * self.step_time + oz
  local gx, gy, gz = self:_probe(ax, az, ref)
  if gx then return gx, gy, gz end
  local cx, cz = px + self.body_vel[1] * ahead, pz + self.body_vel[2] * ahead
  local dx, dz = cx - ax, cz - az
  local len = sqrt(dx * dx + dz * dz)
  if len < 1e-9 then return nil end
  local bad = 0
  for k = 1, 6 do
    local good = k / 6
    if self:_probe(ax + dx * good, az + dz * good, ref) then
      for _ = 1, 10 do
        local mid = (bad + good) / 2
        if self:_probe(ax + dx * mid, az + dz * mid, ref) then good = mid else bad = mid end
      end
      local inside = min(1, good + 0.1 * leg.step_distance / len)
      gx, gy, gz = self:_probe(ax + dx * inside, az + dz * inside, ref)
      if gx then return gx, gy, gz end
      return self:_probe(ax + dx * good, az + dz * good, ref)
    end
    bad = good
  end
  return nil
end

-- How far each planted foot is from the ground under its rest point (off the ground:
-- from the rest point), for the gait's step trigger.
function Walker:_measure(dt, ref)
  local g = self._gait
  for _, leg in ipairs(self.legs) do
    local d = 0
    if leg.planted then
      local rx, rz = leg.rest[1], leg.rest[2]
      local gx, gy, gz = self:_probe(rx, rz, ref)
      d = gx and distance(leg.plant, gx, gy, gz) or sqrt((leg.plant[1] - rx) ^ 2 + (leg.plant[3] - rz) ^ 2)
    end
    g:measure(leg, d, dt)
  end
end

-- ---- the body ----

-- The host's own height and tilt, what a weight below 1 blends from: taken afresh when
-- the host wrote the body since the walker did.
function Walker:_host_pose(py, q)
  local wr = self._written
  local same = wr and abs(py - wr[1]) <= 1e-9
  local qx, qy, qz, qw = q:unpack()
  if same and abs(qx * wr[2] + qy * wr[3] + qz * wr[4] + qw * wr[5]) >= 1 - 1e-12 then
    return
  end
  self.base_y = py
  self.base_pitch, self.base_roll = tilt_of(q)
end

-- The body heights between which every planted foot stays within its leg's reach: at
-- most 98% of the leg's length from the hip (a little bend left), and no closer than
-- the knee can fold.
function Walker:_reach_limits(px, pz, q)
  local hi, lo = huge, -huge
  for _, leg in ipairs(self.legs) do
    if leg.planted then
      local ox, oy, oz = q:rotate(leg.hip_local, self._offset):unpack()
      local tx, ty, tz = leg.plant[1], leg.plant[2] + self.foot_offset, leg.plant[3]
      local dh2 = (px + ox - tx) ^ 2 + (pz + oz - tz) ^ 2
      local reach = 0.98 * leg.length
      if dh2 < reach * reach then hi = min(hi, ty - oy + sqrt(reach * reach - dh2)) end
      local inner = abs(leg.upper - leg.lower) * 1.05 + 1e-3 * leg.length
      if dh2 < inner * inner then lo = max(lo, ty - oy + sqrt(inner * inner - dh2)) end
    end
  end
  return hi, lo
end

-- ---- the frame ----

--- Runs the walker for one frame: reads where the host put the body, steps the legs,
-- sets the body's height, pitch and roll, and turns the legs.
-- @number dt seconds since the last update, >= 0
function Walker:update(dt)
  local w = common.begin(self, dt)
  local px, py, pz = common.get_position(self.body, self._position):unpack()
  local host_q = self._host_rotation:set(read4(self.body:get_rotation(self._host_rotation)))
  self:_host_pose(py, host_q)
  local yaw = yaw_of(host_q)
  px, pz, yaw = self:_drive(dt, px, pz, yaw)
  local g = self._gait
  g.step_time, g.step_height, g.hysteresis = self.step_time, self.step_height, self.hysteresis
  g:tick(dt)
  if not w then
    -- Idle: the body and legs are the host's; driving still moves the body.
    if self.velocity or self.path or self.turn_rate then
      self.body:set_position(self._position:set(px, py, pz))
      self.body:set_rotation(self._rotation:set(euler(self.base_pitch, yaw, self.base_roll)))
    end
    self.iterations = 0
    return
  end
  if self._dormant then -- back from idle: stand afresh where the body is now
    self.body:set_position(self._position:set(px, py, pz))
    self:reset()
  end
  self.yaw = yaw
  local c, s = cos(yaw), sin(yaw)

  -- Rest points, and how fast they move (turning moves the legs' points faster than
  -- the centre), smoothed over 0.1 s.
  local alpha = 1 - exp(-dt / 0.1)
  for _, leg in ipairs(self.legs) do
    local rx, rz = rest_point(leg, px, pz, c, s)
    leg.prev_rest[1], leg.prev_rest[2] = leg.rest[1], leg.rest[2]
    leg.prev_vel[1], leg.prev_vel[2] = leg.vel[1], leg.vel[2]
    if dt > 0 then
      leg.vel[1] = leg.vel[1] + ((rx - leg.rest[1]) / dt - leg.vel[1]) * alpha
      leg.vel[2] = leg.vel[2] + ((rz - leg.rest[2]) / dt - leg.vel[2]) * alpha
    end
    leg.rest[1], leg.rest[2] = rx, rz
  end
  local bv = self.body_vel
  if dt > 0 then
    bv[1] = bv[1] + ((px - self.prev_px) / dt - bv[1]) * alpha
    bv[2] = bv[2] + ((pz - self.prev_pz) / dt - bv[2]) * alpha
  end
  self.prev_px, self.prev_pz = px, pz

  -- Steps: land, then decide, measured from the feet's mean height before this frame.
  g:swing(dt)
  local ref = self.height_goal - self.body_height
  self:_measure(dt, ref)
  self._px, self._pz, self._ref = px, pz, ref
  g:start_steps(dt, Walker._landing, self)

  -- The body: springs towards the stance's height and tilt.
  local hg, pg, rg = self:_goals(px, pz, c, s)
  local spring, ht, tt = motion.spring, motion.omega(self.height_time), motion.omega(self.tilt_time)
  self.height, self.height_v = spring(self.height, self.height_v, self.height_goal, hg, ht, dt)
  self.pitch, self.pitch_v = spring(self.pitch, self.pitch_v, self.pitch_goal, pg, tt, dt)
  self.roll, self.roll_v = spring(self.roll, self.roll_v, self.roll_goal, rg, tt, dt)
  self.height_goal, self.pitch_goal, self.roll_goal = hg, pg, rg
  local lim = self.max_tilt
  self.pitch, self.roll = clamp(self.pitch, -lim, lim), clamp(self.roll, -lim, lim)

  local pitch = self.base_pitch + (self.pitch - self.base_pitch) * w
  local roll = self.base_roll + (self.roll - self.base_roll) * w
  local body_q = self._rotation:set(euler(pitch, yaw, roll))
  local hi, lo = self:_reach_limits(px, pz, body_q)
  if self.height > hi then
    self.height, self.height_v = hi, min(0, self.height_v)
  elseif self.height < lo and lo <= hi then
    self.height, self.height_v = lo, max(0, self.height_v)
  end
  local y = self.base_y + (self.height - self.base_y) * w
  self.body:set_position(self._position:set(px, y, pz))
  self.body:set_rotation(body_q)
  local written = self._written_buf
  written[1], written[2], written[3], written[4], written[5] = y, body_q:unpack()
  self._written = written

  -- The legs.
  local most = 0
  for _, leg in ipairs(self.legs) do
    local t = leg.target
    local fx, fy, fz = g:foot_point(leg)
    t[1], t[2], t[3] = fx, fy + self.foot_offset, fz
    local o = leg.pole_offset
    local k, at = leg.knee_local, self._offset
    local ox, oy, oz = body_q:rotate(at:set(k[1] + o[1], k[2] + o[2], k[3] + o[3]), at):unpack()
    leg.pole.position = self._pole_at:set(px + ox, y + oy, pz + oz)
    leg.chain.weight = w
    local iterations
    leg.reached, leg.miss, iterations = leg.chain:solve(self._target_at:set(t[1], t[2], t[3]))
    most = max(most, iterations)
  end
  self.iterations = most
end

--- Sets the iteration budget of the legs' chains (see `ik.rigs.common.set_budget`): for
-- distant characters. Two-bone legs are exact in one iteration whatever the budget.
-- @tparam ?int n iterations at most, or nil for the full count
function Walker:set_budget(n)
  common.set_budget(self, n)
end

function Walker:_on_idle()
  self._dormant = true
end

--- How many steps the legs have finished, all together.
-- @treturn integer
function Walker:step_count()
  local n = 0
  for _, leg in ipairs(self.legs) do n = n + leg.steps end
  return n
end

function Walker:__tostring()
  return string.format("ik.rigs.walker (%d legs, weight %.3g)", #self.legs, self.applied_weight)
end

return walker
