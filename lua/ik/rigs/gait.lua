--- Procedural stepping: which feet step and when, and the arcs they swing along.
--
-- A gait knows feet, not bodies. Its feet are the caller's own tables (the walker's
-- `legs[i]`), each holding what the caller keeps up to date:
--
-- - `rest`: `{x, z}`, the ground point the foot steps about (under its hip, say),
--   moved every frame before `measure`;
-- - `step_distance`: how far the foot may trail `rest` before it wants a step;
-- - `min_step`: no step shorter than this is taken;
--
-- and what the gait keeps there: `side` ("left" or "right"), `rank` (1 at the front),
-- `neighbours` (foot indices), `group` (its gait group), `planted`, `plant` (the ground
-- point `{x, y, z}` it stands on), `from` and `dest` (where a swing started and will
-- land), `t` (how far through its swing, 0 to 1), `steps` (finished), and the step
-- trigger's `want_since`, `blocked_at`, `land_time`, `distance`.
--
-- A foot stands where `gait.plant` puts it. A frame: `tick(dt)` (also when the rig is
-- idle: the clock runs), `swing(dt)` (feet in the air move on; those whose time is up
-- land), `measure` for every foot (how far it is from where it should stand), then
-- `start_steps` (the groups that may step do, in the order they came to, which may be
-- between two frames: a step that fell due between frames starts at the moment it did,
-- its swing ahead by the remainder), and `foot_point` for every foot (where it is on its
-- plant or arc).
--
-- A group steps when one of its feet wants to and no foot of the group, nor any of
-- their neighbours, is in the air. A foot wants a step from the moment it is farther
-- than its step distance from where it should stand (found between the frames, by
-- interpolating the distance), until it is back within `1 - hysteresis` of it. A foot
-- that finds nowhere to land keeps its plant and waits until its rest point has moved
-- on by a quarter of its step distance.
-- @module ik.rigs.gait

local motion = require("ik.rigs.motion")
local options = require("ik.rigs.options")

local clamp, distance, smoothstep = motion.clamp, motion.distance, motion.smoothstep
local describe = options.describe
local huge, max, min, pi, sin = math.huge, math.max, math.min, math.pi, math.sin

local gait = {}

-- Errors blame the caller of the rig's constructor, which called gait.new.
local LEVEL = 4

-- ---- layout and groups ----

-- Sides, ranks and neighbours from where the feet's legs hang (`anchors`, {x, y, z} in
-- the body's frame: +X left, +Z forward). Returns the left and right feet, front first.
local function layout(owner, feet, anchors)
  local n = #feet
  local left, right = {}, {}
  for i = 1, n do
    local x = anchors[i][1]
    if x > 1e-9 then
      left[#left + 1] = i
    elseif x < -1e-9 then
      right[#right + 1] = i
    else
      error(string.format("%s: leg %d's hip is on the body's centre line (x = 0 in the body's frame): on "
        .. "neither side", owner, i), LEVEL)
    end
  end
  if #left ~= n / 2 then
    error(string.format("%s: option 'legs' (as many legs on the left, hip x > 0 in the body's frame, as on "
      .. "the right expected, got %d and %d)", owner, #left, #right), LEVEL)
  end
  local function by_front(a, b) return anchors[a][3] > anchors[b][3] end
  table.sort(left, by_front)
  table.sort(right, by_front)
  for rank = 1, n / 2 do
    feet[left[rank]].side, feet[left[rank]].rank = "left", rank
    feet[right[rank]].side, feet[right[rank]].rank = "right", rank
  end
  for _, side in ipairs({ left, right }) do
    for rank = 1, #side do
      local nb = feet[side[rank]].neighbours
      if rank > 1 then nb[#nb + 1] = side[rank - 1] end
      if rank < #side then nb[#nb + 1] = side[rank + 1] end
    end
  end
  for rank = 1, n / 2 do
    local l, r = left[rank], right[rank]
    feet[l].neighbours[#feet[l].neighbours + 1] = r
    feet[r].neighbours[#feet[r].neighbours + 1] = l
  end
  return left, right
end

local PATTERN_EXPECTED = "'alternate', 'tripod', 'ripple' or a list of groups of legs"

local function groups_of(owner, pattern, feet, left, right)
  local n = #feet
  local groups = {}
  local function fail(fmt, ...)
    error(string.format("%s: option 'gait' (" .. fmt .. ")", owner, ...), LEVEL + 1)
  end
  if type(pattern) == "table" then
    local seen = {}
    for gi, g in ipairs(pattern) do
      if type(g) ~= "table" or #g == 0 then
        fail("%s expected, got %s", PATTERN_EXPECTED, describe(pattern))
      end
      groups[gi] = {}
      for _, i in ipairs(g) do
        if type(i) ~= "number" or not feet[i] or seen[i] then
          fail("group %d: leg %s is no leg or in two groups", gi, describe(i))
        end
        seen[i] = true
        groups[gi][#groups[gi] + 1] = i
      end
    end
    for i = 1, n do
      if not seen[i] then fail("leg %d is in no group", i) end
    end
  elseif pattern == "alternate" or pattern == "tripod" then
    if pattern == "tripod" and n ~= 6 then fail("'tripod' needs 6 legs, got %d", n) end
    -- A checkerboard: the diagonal pairs of four legs, the two tripods of six.
    groups[1], groups[2] = {}, {}
    for rank = 1, n / 2 do
      local a, b = left[rank], right[rank]
      if rank % 2 == 0 then a, b = b, a end
      groups[1][#groups[1] + 1] = a
      groups[2][#groups[2] + 1] = b
    end
  elseif pattern == "ripple" then
    if n == 4 then -- one leg at a time: back left, front left, back right, front right
      groups = { { left[2] }, { left[1] }, { right[2] }, { right[1] } }
    elseif n == 6 then -- a back-to-front wave down each side, the sides half a cycle apart
      groups = { { left[3], right[2] }, { left[2], right[1] }, { left[1], right[3] } }
    else
      fail("'ripple' needs 4 or 6 legs, got %d", n)
    end
  else
    fail("%s expected, got %s", PATTERN_EXPECTED, describe(pattern))
  end
  for gi, g in ipairs(groups) do
    for _, i in ipairs(g) do
      feet[i].group = gi
      for _, j in ipairs(g) do
        for _, nb in ipairs(feet[i].neighbours) do
          if nb == j then fail("group %d holds neighbouring legs %d and %d", gi, i, j) end
        end
      end
    end
  end
  return groups
end

-- ---- the gait ----

local Gait = {}
Gait.__index = Gait

--- Makes a gait over `feet`, sorting them into sides, ranks, neighbours and groups.
--
-- Patterns: "alternate" (a checkerboard: the diagonal pairs of four legs, the two
-- tripods of six; also the two feet of a biped), "tripod" (six legs), "ripple" (one
-- leg at a time on four; a back-to-front wave of pairs on six), or a list of groups,
-- each a list of foot indices, none holding two neighbours. A layout or pattern that
-- cannot walk raises, naming `owner` and its option ('legs' or 'gait'), and blaming the
-- caller of the function that called `new` (a rig's constructor).
-- @tparam table spec
--
-- - `owner`: for messages, e.g. "ik.rigs.walker";
-- - `feet`: an even number of tables (see the module's description), each given
--   `neighbours`, `steps` (0), `planted` (true) and `t` (0) here;
-- - `anchors`: for each foot, where its leg hangs from the body, `{x, y, z}` in the
--   body's frame (+X left, +Z forward): x > 0 on the left, ranked by z;
-- - `pattern`: as above (default "alternate");
-- - `step_time`: seconds a swing takes; `step_height`: how far the arc rises above the
--   higher of its ends; `hysteresis`: in [0, 1) (fields, read at every frame).
-- @treturn table the gait: `feet`, `groups` (lists of foot indices), `left` and
--   `right` (foot indices, front first), `time` (its clock), and the three numbers
-- @usage local gait = require("ik.rigs.gait")
-- local feet, anchors = {}, { {1, 0, 1}, {1, 0, -1}, {-1, 0, 1}, {-1, 0, -1} }
-- for i = 1, 4 do feet[i] = { rest = { 0, 0 }, step_distance = 0.2, min_step = 0.05 } end
-- local g = gait.new{ owner = "demo", feet = feet, anchors = anchors, step_time = 0.25,
--                     step_height = 0.1, hysteresis = 0.2 }
-- assert(#g.groups == 2 and feet[1].group == 1 and feet[4].group == 1 and feet[2].group == 2)
-- assert(feet[1].side == "left" and feet[2].rank == 2)
function gait.new(spec)
  local feet = spec.feet
  for _, foot in ipairs(feet) do
    foot.neighbours, foot.steps, foot.planted, foot.t = {}, 0, true, 0
  end
  local self = setmetatable({ feet = feet, time = 0, next_group = 1, _tried = {} }, Gait)
  self.left, self.right = layout(spec.owner, feet, spec.anchors)
  self.groups = groups_of(spec.owner, spec.pattern or "alternate", feet, self.left, self.right)
  self.step_time, self.step_height, self.hysteresis = spec.step_time, spec.step_height, spec.hysteresis
  return self
end

--- Plants a foot at (x, y, z), forgetting any swing and want of a step: at the start,
-- and when the rig stands afresh. Allocates the foot's tables the first time.
-- @tparam table foot
-- @number x
-- @number y
-- @number z
function gait.plant(foot, x, y, z)
  foot.plant, foot.from, foot.dest, foot.spare = { x, y, z }, nil, nil, foot.spare or { 0, 0, 0 }
  foot.blocked_buf = foot.blocked_buf or { 0, 0 }
  foot.planted, foot.t = true, 0
  foot.want_since, foot.blocked_at = nil, nil
  foot.land_time, foot.last_distance, foot.prev_distance, foot.distance = -huge, 0, 0, 0
end

--- Runs the gait's clock by dt: every frame, whether or not the feet move.
-- @number dt seconds
function Gait:tick(dt)
  self.time = self.time + dt
end

--- Moves the swinging feet on by dt; those whose time is up land (at the moment they
-- did, between the frames: `land_time`), their destination their new plant.
-- @number dt seconds
function Gait:swing(dt)
  local step_time = self.step_time
  for _, foot in ipairs(self.feet) do
    if not foot.planted then
      foot.t = foot.t + dt / step_time
      if foot.t >= 1 then
        foot.land_time = self.time - (foot.t - 1) * step_time
        foot.planted, foot.t = true, 0
        -- the plant it left is the next step's destination table
        foot.plant, foot.from, foot.dest, foot.spare = foot.dest, nil, nil, foot.from
        foot.steps = foot.steps + 1
        foot.last_distance = 0
      end
    end
  end
end

--- Tells the gait how far a foot is from where it should stand this frame (`d`, ignored
-- for a foot in the air): it wants a step beyond its step distance, from the moment
-- that happened between the frames, until it is back within `1 - hysteresis` of it.
-- @tparam table foot
-- @number d
-- @number dt seconds since the last frame
function Gait:measure(foot, d, dt)
  if not foot.planted then
    foot.want_since = nil
    return
  end
  local sd = foot.step_distance
  if not foot.want_since then
    if d > sd then
      local prev = foot.last_distance
      local f = (prev < sd and d > prev) and (sd - prev) / (d - prev) or 0
      foot.want_since = self.time - dt * (1 - clamp(f, 0, 1))
    end
  elseif d < sd * (1 - self.hysteresis) then
    foot.want_since = nil -- the body came back: no step after all
  end
  local blocked, rest = foot.blocked_at, foot.rest
  if blocked and (rest[1] - blocked[1]) ^ 2 + (rest[2] - blocked[2]) ^ 2 > (0.25 * sd) ^ 2 then
    foot.blocked_at = nil -- moved on since it found nowhere to go: look again
  end
  foot.prev_distance, foot.last_distance, foot.distance = foot.last_distance, d, d
end

-- When group gi may step: the moment the last of "one of its feet wants to" and "its
-- feet and their neighbours have landed" became true (huge: not yet), and whether none
-- of them is in the air now.
function Gait:_group_start(gi)
  local feet = self.feet
  local start, free = huge, true
  for _, i in ipairs(self.groups[gi]) do
    local foot = feet[i]
    if foot.want_since and not foot.blocked_at then start = min(start, foot.want_since) end
  end
  if start == huge then return start, false end
  for _, i in ipairs(self.groups[gi]) do
    local foot = feet[i]
    if not foot.planted then free = false end
    start = max(start, foot.land_time)
    for _, nb in ipairs(foot.neighbours) do
      if not feet[nb].planted then free = false end
      start = max(start, feet[nb].land_time)
    end
  end
  return start, free
end

-- Moments closer than this (seconds) are one: feet alike want a step at the same moment
-- up to the rounding of how it was found, which differs with the frame rate.
local SAME_MOMENT = 1e-6

--- Starts the steps of the groups that may step, in the order their moments came,
-- which may be between the frames (the group next in turn goes first only on a tie).
-- Taken in turn order instead, two groups that came to want a step within one frame
-- would go by the turn at 30 Hz and by the moment at 144 Hz. A group's feet swing from
-- its moment, and land where they would have.
--
-- `landing(host, foot, late, back)` says where a foot whose step began `late` seconds
-- ago (`back` of the frame before now) lands: x, y, z, or nil for nowhere.
-- @number dt seconds since the last frame
-- @tparam function landing
-- @param host its first argument
function Gait:start_steps(dt, landing, host)
  local ng, tried = #self.groups, self._tried
  for gi = 1, ng do tried[gi] = false end
  while true do
    local first, first_start = nil, huge
    for k = 0, ng - 1 do
      local gi = (self.next_group + k - 1) % ng + 1
      if not tried[gi] then
        local start, free = self:_group_start(gi)
        if free and start < first_start - SAME_MOMENT then first, first_start = gi, start end
      end
    end
    if not first then return end
    tried[first] = true
    self:_step_group(first, first_start, dt, landing, host)
  end
end

-- Starts group gi's steps at the moment `start` (at most dt before now).
function Gait:_step_group(gi, start, dt, landing, host)
  local feet, ng = self.feet, #self.groups
  local late = clamp(self.time - start, 0, dt)
  local back = dt > 0 and late / dt or 0
  local started = false
  for _, i in ipairs(self.groups[gi]) do
    local foot = feet[i]
    -- The feet that go: those that want to, and (so the group keeps together) those
    -- more than half their step distance off at the moment the group goes.
    local d = foot.distance - (foot.distance - foot.prev_distance) * back
    if not foot.blocked_at and (foot.want_since or d > 0.5 * foot.step_distance) then
      local gx, gy, gz = landing(host, foot, late, back)
      if gx and distance(foot.plant, gx, gy, gz) >= foot.min_step then
        local dest = foot.spare
        dest[1], dest[2], dest[3] = gx, gy, gz
        foot.from, foot.dest, foot.spare = foot.plant, dest, nil
        foot.planted, foot.t = false, late / self.step_time
        foot.want_since, foot.blocked_at = nil, nil
        started = true
      elseif foot.want_since then
        local blocked = foot.blocked_buf -- nowhere better: keep the plant
        blocked[1], blocked[2] = foot.rest[1], foot.rest[2]
        foot.blocked_at = blocked
      end
    end
  end
  if started then self.next_group = gi % ng + 1 end
end

--- The point at `s` (0 to 1) of a swing from `a` to `b` (`{x, y, z}`) rising `height`
-- above the higher of them: a sine arc, the foot rising before it moves across and
-- coming down after, so it clears a riser next to either end.
-- @tparam table a
-- @tparam table b
-- @number s
-- @number height
-- @treturn number x
-- @treturn number y
-- @treturn number z
-- @usage local gait = require("ik.rigs.gait")
-- local x, y = gait.arc({ 0, 0, 0 }, { 1, 0.2, 0 }, 0.5, 0.1)
-- assert(math.abs(x - 0.5) < 1e-12 and math.abs(y - 0.3) < 1e-12)   -- half way across, at the top
function gait.arc(a, b, s, height)
  local h = smoothstep((s - 0.15) / 0.7)
  local top = max(a[2], b[2]) + height
  local lift = sin(pi * s)
  local y = s < 0.5 and a[2] + (top - a[2]) * lift or b[2] + (top - b[2]) * lift
  return a[1] + (b[1] - a[1]) * h, y, a[3] + (b[3] - a[3]) * h
end

--- Where a foot is: on its plant, or on the arc of its swing.
-- @tparam table foot
-- @treturn number x
-- @treturn number y
-- @treturn number z
function Gait:foot_point(foot)
  if foot.planted then return foot.plant[1], foot.plant[2], foot.plant[3] end
  return gait.arc(foot.from, foot.dest, foot.t, self.step_height)
end

return gait
