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

local SLOPE_TAN = tan(terrain.SLOPE_ANGLE)

--- The ground's height at (x, z), or nil off the course.
-- @number x
-- @number z
-- @treturn ?number
function terrain.height(x, z)
  if z < terrain.Z_MIN or z > terrain.Z_MAX or x < terrain.X_START or x > terrain.X_END then return nil end
  if x < terrain.STAIRS_X then return 0 end
  if x < terrain.LANDING_X then
    local k = floor((x - terrain.STAIRS_X) / terrain.RUN) + 1
    if k > terrain.STEPS then k = terrain.STEPS end
    return k * terrain.RISE
  end
  if x < terrain.SLOPE_X then return terrain.LANDING_Y end
  if x < terrain.PLATEAU_X then return terrain.LANDING_Y + (x - terrain.SLOPE_X) * SLOPE_TAN end
  if x <= terrain.LEDGE_X then return terrain.PLATEAU_Y end
  return terrain.FLOOR_Y
end

--- The ground's unit normal at (x, z), or nil off the course.
-- @number x
-- @number z
-- @treturn ?number x
-- @treturn ?number y
-- @treturn ?number z
function terrain.normal(x, z)
  if not terrain.height(x, z) then return nil end
  if x >= terrain.SLOPE_X and x < terrain.PLATEAU_X then
    local c = 1 / sqrt(1 + SLOPE_TAN * SLOPE_TAN)
    return -SLOPE_TAN * c, c, 0
  end
  return 0, 1, 0
end

-- ---- the mesh ----

local vertices, triangles = {}, {}
terrain.vertices, terrain.triangles = vertices, triangles

local function vertex(x, y, z)
  vertices[#vertices + 1] = { x, y, z }
  return #vertices
end

-- A quad across the course's width from (x0, y0) to (x1, y1): horizontal, sloped or
-- vertical (x0 == x1).
local function strip(x0, y0, x1, y1)
  local a, b = vertex(x0, y0, terrain.Z_MIN), vertex(x0, y0, terrain.Z_MAX)
  local c, d = vertex(x1, y1, terrain.Z_MAX), vertex(x1, y1, terrain.Z_MIN)
  triangles[#triangles + 1] = { a, b, c }
  triangles[#triangles + 1] = { a, c, d }
end

strip(terrain.X_START, 0, terrain.STAIRS_X, 0)
for k = 1, terrain.STEPS do
  local x = terrain.STAIRS_X + (k - 1) * terrain.RUN
  strip(x, (k - 1) * terrain.RISE, x, k * terrain.RISE) -- riser
  strip(x, k * terrain.RISE, x + terrain.RUN, k * terrain.RISE) -- tread
end
strip(terrain.LANDING_X, terrain.LANDING_Y, terrain.SLOPE_X, terrain.LANDING_Y)
strip(terrain.SLOPE_X, terrain.LANDING_Y, terrain.PLATEAU_X, terrain.PLATEAU_Y)
strip(terrain.PLATEAU_X, terrain.PLATEAU_Y, terrain.LEDGE_X, terrain.PLATEAU_Y)
strip(terrain.LEDGE_X, terrain.PLATEAU_Y, terrain.LEDGE_X, terrain.FLOOR_Y) -- the ledge face
strip(terrain.LEDGE_X, terrain.FLOOR_Y, terrain.X_END, terrain.FLOOR_Y)

--- The course as an ik.ground.mesh (a new one each call).
-- @treturn ik.ground
function terrain.ground()
  return ik.ground.mesh{ vertices = vertices, triangles = triangles }
end

return terrain
