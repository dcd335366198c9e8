--- The built-in demo's course: `local terrain = require("ik.demo.terrain")`.
--
-- One triangle mesh running along +X, the same all across its width (z in [-2, 3.2]),
-- so the side view (x right, y up) shows its profile:
--
--     x in [-2.8, 0]      flat ground, y = 0
--     x in [0, 1.6]       stairs up: 4 risers of `RISE` (0.12), treads `RUN` (0.4) deep
--     x in [1.6, 2.1]     landing, y = 0.48
--     x in [2.1, 3.7]     a 20 degree slope up (rising along +X)
--     x in [3.7, 5.8]     plateau, y = 0.48 + 1.6 tan 20deg (about 1.06)
--     x = 5.8             the ledge: a vertical drop to y = 0
--     x in [5.8, 6.8]     the floor below the ledge
--
-- Risers and the ledge face are vertical (a ray straight down never hits them). Outside
-- the course there is no ground. The test course of tests/lua/terrain.lua turned to run
-- along X, with 12 cm risers and a shorter slope and plateau, to fit one picture.
--
--   terrain.height(x, z)      the ground's height there, or nil off the course (plain
--                             Lua, for checking; on a riser or the ledge itself, the
--                             higher side)
--   terrain.normal(x, z)      its unit normal there (3 numbers), or nil
--   terrain.vertices, terrain.triangles   the mesh ({x, y, z}; 1-based index triples)
--   terrain.ground()          the course as an ik.ground.mesh (a new one each call)
-- @module ik.demo.terrain

local ik = require("ik")

local terrain = {}

local sqrt, tan, rad, floor = math.sqrt, math.tan, math.rad, math.floor

terrain.Z_MIN, terrain.Z_MAX = -2, 3.2
terrain.X_START = -2.8
terrain.STAIRS_X, terrain.RISE, terrain.RUN, terrain.STEPS = 0, 0.12, 0.4, 4
terrain.LANDING_X = terrain.STAIRS_X + terrain.STEPS * terrain.RUN -- 1.6
terrain.LANDING_Y = terrain.STEPS * terrain.RISE -- 0.48
terrain.SLOPE_X = terrain.LANDING_X + 0.5 -- 2.1
terrain.SLOPE_ANGLE = rad(20)
terrain.SLOPE_LENGTH = 1.6 -- along x
terrain.PLATEAU_X = terrain.SLOPE_X + terrain.SLOPE_LENGTH -- 3.7
terrain.PLATEAU_Y = terrain.LANDING_Y + terrain.SLOPE_LENGTH * tan(terrain.SLOPE_ANGLE)
terrain.LEDGE_X = terrain.PLATEAU_X + 2.1 -- 5.8
terrain.FLOOR_Y = 0 -- below the ledge
terrain.X_END = terrain.LEDGE_X + 1

--- Builds a course of this shape along `x` or `z`: flat ground from `start`, `steps`
-- stairs at `stairs` (risers of `rise`, treads `run` deep), a landing at `landing`
-- (`landing_y` high), a slope of `slope_angle` from `slope`, a plateau from `plateau`
-- (`plateau_y` high) to the ledge at `ledge`, then the floor (`floor_y`) to `finish`;
-- the same all across `[across_min, across_max]`. The demo's course and the test
-- course (tests/lua/terrain.lua) are both made by it.
-- @tparam table c the layout: `along` ("x" or "z"), `across_min`, `across_max`,
-- `start`, `stairs`, `rise`, `run`, `steps`, `landing`, `landing_y`, `slope`,
-- `slope_angle`, `plateau`, `plateau_y`, `ledge`, `floor_y`, `finish`
-- @treturn table `height(x, z)`, `normal(x, z)`, `vertices`, `triangles`, `ground()`,
-- as documented for this module
function terrain.course(c)
  local along_x = c.along == "x"
  local slope_tan = tan(c.slope_angle)
  local course = {}

  -- (x, z) as (along, across)
  local function split(x, z)
    if along_x then return x, z end
    return z, x
  end

  function course.height(x, z)
    local s, w = split(x, z)
    if w < c.across_min or w > c.across_max or s < c.start or s > c.finish then return nil end
    if s < c.stairs then return 0 end
    if s < c.landing then
      local k = floor((s - c.stairs) / c.run) + 1
      if k > c.steps then k = c.steps end
      return k * c.rise
    end
    if s < c.slope then return c.landing_y end
    if s < c.plateau then return c.landing_y + (s - c.slope) * slope_tan end
    if s <= c.ledge then return c.plateau_y end
    return c.floor_y
  end

  function course.normal(x, z)
    if not course.height(x, z) then return nil end
    local s = split(x, z)
    if s >= c.slope and s < c.plateau then
      local k = 1 / sqrt(1 + slope_tan * slope_tan)
      if along_x then return -slope_tan * k, k, 0 end
      return 0, k, -slope_tan * k
    end
    return 0, 1, 0
  end

  local vertices, triangles = {}, {}
  course.vertices, course.triangles = vertices, triangles

  local function vertex(s, y, w)
    if along_x then
      vertices[#vertices + 1] = { s, y, w }
    else
      vertices[#vertices + 1] = { w, y, s }
    end
    return #vertices
  end

  -- A quad across the course's width from (s0, y0) to (s1, y1) along it: horizontal,
  -- sloped or vertical (s0 == s1).
  local function strip(s0, y0, s1, y1)
    local a, b = vertex(s0, y0, c.across_min), vertex(s0, y0, c.across_max)
    local d, e = vertex(s1, y1, c.across_max), vertex(s1, y1, c.across_min)
    triangles[#triangles + 1] = { a, b, d }
    triangles[#triangles + 1] = { a, d, e }
  end

  strip(c.start, 0, c.stairs, 0)
  for k = 1, c.steps do
    local s = c.stairs + (k - 1) * c.run
    strip(s, (k - 1) * c.rise, s, k * c.rise) -- riser
    strip(s, k * c.rise, s + c.run, k * c.rise) -- tread
  end
  strip(c.landing, c.landing_y, c.slope, c.landing_y)
  strip(c.slope, c.landing_y, c.plateau, c.plateau_y)
  strip(c.plateau, c.plateau_y, c.ledge, c.plateau_y)
  strip(c.ledge, c.plateau_y, c.ledge, c.floor_y) -- the ledge face
  strip(c.ledge, c.floor_y, c.finish, c.floor_y)

  function course.ground()
    return ik.ground.mesh{ vertices = vertices, triangles = triangles }
  end

  return course
end

local course = terrain.course{
  along = "x", across_min = terrain.Z_MIN, across_max = terrain.Z_MAX,
  start = terrain.X_START, stairs = terrain.STAIRS_X, rise = terrain.RISE, run = terrain.RUN,
  steps = terrain.STEPS, landing = terrain.LANDING_X, landing_y = terrain.LANDING_Y,
  slope = terrain.SLOPE_X, slope_angle = terrain.SLOPE_ANGLE, plateau = terrain.PLATEAU_X,
  plateau_y = terrain.PLATEAU_Y, ledge = terrain.LEDGE_X, floor_y = terrain.FLOOR_Y,
  finish = terrain.X_END,
}

--- The ground's height at (x, z), or nil off the course.
-- @function height
-- @number x
-- @number z
-- @treturn ?number
terrain.height = course.height

--- The ground's unit normal at (x, z), or nil off the course.
-- @function normal
-- @number x
-- @number z
-- @treturn ?number x
-- @treturn ?number y
-- @treturn ?number z
terrain.normal = course.normal

terrain.vertices, terrain.triangles = course.vertices, course.triangles

--- The course as an ik.ground.mesh (a new one each call).
-- @function ground
-- @treturn ik.ground
terrain.ground = course.ground

return terrain
