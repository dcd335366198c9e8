-- A test course for rigs that walk: `local terrain = require("terrain")` (tests/lua is on
-- the specs' path). One triangle mesh, along +Z, 4 m wide (x in [-2, 2]):
--
--   z in [-3, 2]        flat ground, y = 0
--   z in [2, 3.6]       stairs up: 4 risers of `RISE` (0.1), treads `RUN` (0.4) deep
--   z in [3.6, 4.6]     landing, y = 0.4
--   z in [4.6, 7.6]     a 20 degree slope up (rising along +Z)
--   z in [7.6, 9.6]     plateau, y = 0.4 + 3 tan 20deg (about 1.49)
--   z = 9.6             the ledge: a vertical drop to y = 0
--   z in [9.6, 12]      the floor below the ledge, deeper than any test leg reaches
--
-- Risers and the ledge face are vertical (a ray straight down never hits them). Outside
-- the course there is no ground at all.
--
--   terrain.height(x, z)      the ground's height there, or nil off the course (plain
--                             Lua, for checking; on a riser or the ledge edge itself,
--                             the higher side)
--   terrain.normal(x, z)      the ground's unit normal there (3 numbers), or nil
--   terrain.vertices, terrain.triangles   the mesh: vertices as {x, y, z}, triangles as
--                             1-based index triples
--   terrain.ground()          the course as an ik.ground.mesh (a new one each call)
--   terrain.flat_ground(y)    an endless flat ik.ground.plane at height y (default 0)
local ik = require("ik")
local course_of = require("ik.demo.terrain").course

local terrain = {}

local tan, rad = math.tan, math.rad

local X0, X1 = -2, 2
terrain.X_MIN, terrain.X_MAX = X0, X1
terrain.Z_START = -3
terrain.STAIRS_Z, terrain.RISE, terrain.RUN, terrain.STEPS = 2, 0.1, 0.4, 4
terrain.LANDING_Z = terrain.STAIRS_Z + terrain.STEPS * terrain.RUN -- 3.6
terrain.SLOPE_Z = terrain.LANDING_Z + 1 -- 4.6
terrain.SLOPE_ANGLE = rad(20)
terrain.SLOPE_LENGTH = 3
terrain.PLATEAU_Z = terrain.SLOPE_Z + terrain.SLOPE_LENGTH -- 7.6
terrain.LEDGE_Z = terrain.PLATEAU_Z + 2 -- 9.6
terrain.Z_END = 12
terrain.LANDING_Y = terrain.STEPS * terrain.RISE -- 0.4
terrain.PLATEAU_Y = terrain.LANDING_Y + terrain.SLOPE_LENGTH * tan(terrain.SLOPE_ANGLE)
terrain.FLOOR_Y = 0 -- below the ledge

-- The mesh, height and normal: the demo's course builder, with this layout along +Z.
local course = course_of{
  along = "z", across_min = X0, across_max = X1,
  start = terrain.Z_START, stairs = terrain.STAIRS_Z, rise = terrain.RISE, run = terrain.RUN,
  steps = terrain.STEPS, landing = terrain.LANDING_Z, landing_y = terrain.LANDING_Y,
  slope = terrain.SLOPE_Z, slope_angle = terrain.SLOPE_ANGLE, plateau = terrain.PLATEAU_Z,
  plateau_y = terrain.PLATEAU_Y, ledge = terrain.LEDGE_Z, floor_y = terrain.FLOOR_Y,
  finish = terrain.Z_END,
}
terrain.height, terrain.normal = course.height, course.normal
terrain.vertices, terrain.triangles = course.vertices, course.triangles

-- ---- grounds ----

terrain.ground = course.ground

function terrain.flat_ground(y)
  return ik.ground.plane{ point = { 0, y or 0, 0 }, normal = { 0, 1, 0 } }
end

return terrain
