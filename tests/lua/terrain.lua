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

local terrain = {}

local sqrt, tan, rad = math.sqrt, math.tan, math.rad

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

local SLOPE_TAN = tan(terrain.SLOPE_ANGLE)

function terrain.height(x, z)
  if x < X0 or x > X1 or z < terrain.Z_START or z > terrain.Z_END then return nil end
  if z < terrain.STAIRS_Z then return 0 end
  if z < terrain.LANDING_Z then
    local k = math.floor((z - terrain.STAIRS_Z) / terrain.RUN) + 1
    if k > terrain.STEPS then k = terrain.STEPS end
    return k * terrain.RISE
  end
  if z < terrain.SLOPE_Z then return terrain.LANDING_Y end
  if z < terrain.PLATEAU_Z then return terrain.LANDING_Y + (z - terrain.SLOPE_Z) * SLOPE_TAN end
  if z <= terrain.LEDGE_Z then return terrain.PLATEAU_Y end
  return terrain.FLOOR_Y
end

function terrain.normal(x, z)
  if not terrain.height(x, z) then return nil end
  if z >= terrain.SLOPE_Z and z < terrain.PLATEAU_Z then
    local c = 1 / sqrt(1 + SLOPE_TAN * SLOPE_TAN)
    return 0, c, -SLOPE_TAN * c
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

-- A quad across the course's width from (z0, y0) to (z1, y1): horizontal, sloped or
-- vertical (z0 == z1).
local function strip(z0, y0, z1, y1)
  local a, b = vertex(X0, y0, z0), vertex(X1, y0, z0)
  local c, d = vertex(X1, y1, z1), vertex(X0, y1, z1)
  triangles[#triangles + 1] = { a, b, c }
  triangles[#triangles + 1] = { a, c, d }
end

strip(terrain.Z_START, 0, terrain.STAIRS_Z, 0)
for k = 1, terrain.STEPS do
  local z = terrain.STAIRS_Z + (k - 1) * terrain.RUN
  strip(z, (k - 1) * terrain.RISE, z, k * terrain.RISE) -- riser
  strip(z, k * terrain.RISE, z + terrain.RUN, k * terrain.RISE) -- tread
end
strip(terrain.LANDING_Z, terrain.LANDING_Y, terrain.SLOPE_Z, terrain.LANDING_Y)
strip(terrain.SLOPE_Z, terrain.LANDING_Y, terrain.PLATEAU_Z, terrain.PLATEAU_Y)
strip(terrain.PLATEAU_Z, terrain.PLATEAU_Y, terrain.LEDGE_Z, terrain.PLATEAU_Y)
strip(terrain.LEDGE_Z, terrain.PLATEAU_Y, terrain.LEDGE_Z, terrain.FLOOR_Y) -- the ledge face
strip(terrain.LEDGE_Z, terrain.FLOOR_Y, terrain.Z_END, terrain.FLOOR_Y)

-- ---- grounds ----

function terrain.ground()
  return ik.ground.mesh{ vertices = vertices, triangles = triangles }
end

function terrain.flat_ground(y)
  return ik.ground.plane{ point = { 0, y or 0, 0 }, normal = { 0, 1, 0 } }
end

return terrain
