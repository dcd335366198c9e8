--- The built-in demo scene, the one `ikrig run` and `ikrig watch` use when given no
-- script (and the scene every script given to them runs in).
--
-- A course with stairs, a 20 degree slope and a ledge (`ik.demo.terrain`: one
-- `ik.ground.mesh` running along +X, so the side view shows its profile). On the stairs
-- stands a humanoid (23 bones) facing up them, its left foot a step higher than its
-- right; its right hand reaches for a target going round a figure of eight in front of
-- it, its head follows a second target drifting about ahead of it. Behind it a
-- four-legged robot walks a loop: up the stairs, over the landing and up the slope,
-- round on the plateau short of the ledge, back down the slope and the stairs, round
-- again at their foot (about 41 s a lap; in the first 10 s it climbs the stairs and the
-- slope). The scene moves the targets and the robot's body along their paths
-- (`advance`); the rig scripts `ik.demo.humanoid` and `ik.demo.walker` (lua/ik/demo/)
-- do the rest with the shipped rigs of `ik.rigs`.
--
-- **The scene contract** (what ikrig reads; a replacement scene module keeps it):
--
-- - the module has `new()`, which returns a fresh scene, and `scripts`, the list of
--   rig scripts that drive it by default, as module names (found on `package.path`);
-- - a scene is a table with
--   - `name`: a string, shown in the SVG;
--   - `skeletons`: name -> `ik.skeleton` (or any object with `bones()` returning
--     transforms that have `name` and `parent`);
--   - `nodes`: name -> `ik.node` (or any transform): targets, poles, free objects;
--   - `ground`: an `ik.ground` or nil;
--   - `targets`, `poles`: lists of names in `nodes`, drawn as such;
--   - `trails`: list of what leaves a trail in the drawing: `"skeleton.bone"` or a
--     node name (feet, say);
--   - `advance(self, dt)`, optional: called by the host once per frame before the
--     scripts run, for what the scene animates by itself (targets on their paths).
-- - The host adds `scene.report(name, reached, distance, iterations, chain)` before the
--   scripts load: rig scripts call it once per chain and frame with the chain's
--   result (`iterations` and `chain` may be omitted); ikrig writes those into its
--   output and sums them up per script. Given the `ik.chain`, its
--   `constraint_shapes()` go into the output too (the live view draws them).
--
-- Optional, for the live view: `view_model = { skeleton =, asset = }`, a skinned mesh
-- (a glTF file among the page's own files) the view draws for that skeleton, its bones
-- following the skeleton's by name.
--
-- This scene also has `time` (seconds advanced so far), `walked` (metres along the
-- robot's loop) and `params`, what its rig scripts need to know about the bodies:
-- `params.humanoid.foot_offset` (ankle above sole) and `.map` (its humanoid map),
-- `params.walker.body_height`, `.foot_offset`, `.legs` (a list of `{ name, side }`,
-- side 1 on the robot's left) and `.tail` (its tail's bone names, root to tip).
-- @module ik.demo.scene

local ik = require("ik")
local terrain = require("ik.demo.terrain")

local M = {}

--- The rig scripts that drive this scene when no script is given, by module name, in
-- the order they run.
M.scripts = { "ik.demo.humanoid", "ik.demo.walker" }

--- The demo humanoid's humanoid map (role -> bone name), as `ik.rigs.humanoid` and
-- `ik.rigs.body` take it; also the scene's `params.humanoid.map`.
M.humanoid_map = {
  hips = "hips", spine = "spine", chest = "chest", neck = "neck", head = "head",
  leftShoulder = "l_shoulder", leftUpperArm = "l_upper_arm", leftLowerArm = "l_lower_arm",
  leftHand = "l_hand", rightShoulder = "r_shoulder", rightUpperArm = "r_upper_arm",
  rightLowerArm = "r_lower_arm", rightHand = "r_hand", leftUpperLeg = "l_upper_leg",
  leftLowerLeg = "l_lower_leg", leftFoot = "l_foot", leftToes = "l_toes",
  rightUpperLeg = "r_upper_leg", rightLowerLeg = "r_lower_leg", rightFoot = "r_foot",
  rightToes = "r_toes",
}

local sin, cos, pi = math.sin, math.cos, math.pi

local function smoothstep(x)
  if x <= 0 then return 0 end
  if x >= 1 then return 1 end
  return x * x * (3 - 2 * x)
end

-- ---- the humanoid ----

-- Its joints in its own frame (+Z forward, +Y up, +X its left), the hip joint at the
-- origin, as the "animation" has it: standing in a short stride, the left foot 16 cm
-- ahead and the right 16 cm behind, knees a little bent, arms hanging. Bones come in
-- this order, each after its parent; all but the hips have no rotation of their own.
local FOOT_OFFSET = 0.08 -- ankle above the sole
local BODY = {
  { "hips", nil, { 0, 0, 0 } },
  { "spine", "hips", { 0, 0.10, -0.01 } },
  { "chest", "spine", { 0, 0.28, -0.02 } },
  { "neck", "chest", { 0, 0.50, -0.02 } },
  { "head", "neck", { 0, 0.60, 0.0 } },
  { "head_top", "head", { 0, 0.79, 0.0 } },
  { "nose", "head", { 0, 0.69, 0.11 } }, -- shows where the head looks
}
for _, side in ipairs({ { "l", 1 }, { "r", -1 } }) do
  local s, x = side[1], side[2]
  local a = {
    { s .. "_shoulder", "chest", { 0.03 * x, 0.47, -0.02 } },
    { s .. "_upper_arm", s .. "_shoulder", { 0.18 * x, 0.47, -0.04 } },
    { s .. "_lower_arm", s .. "_upper_arm", { 0.19 * x, 0.19, -0.06 } },
    { s .. "_hand", s .. "_lower_arm", { 0.19 * x, -0.06, -0.02 } },
  }
  for _, b in ipairs(a) do BODY[#BODY + 1] = b end
end
-- left leg forward, right leg back
BODY[#BODY + 1] = { "l_upper_leg", "hips", { 0.09, -0.03, 0 } }
BODY[#BODY + 1] = { "l_lower_leg", "l_upper_leg", { 0.10, -0.45, 0.12 } }
BODY[#BODY + 1] = { "l_foot", "l_lower_leg", { 0.10, -0.87, 0.16 } }
BODY[#BODY + 1] = { "l_toes", "l_foot", { 0.10, -0.93, 0.30 } }
BODY[#BODY + 1] = { "r_upper_leg", "hips", { -0.09, -0.03, 0 } }
BODY[#BODY + 1] = { "r_lower_leg", "r_upper_leg", { -0.10, -0.46, -0.06 } }
BODY[#BODY + 1] = { "r_foot", "r_lower_leg", { -0.10, -0.87, -0.16 } }
BODY[#BODY + 1] = { "r_toes", "r_foot", { -0.10, -0.93, -0.02 } }
local ANKLE_Y = -0.87 -- both ankles, below the hip joint

-- Where it stands: facing +X up the stairs, the right foot on step 3 and the left on
-- step 4 (both ankles well inside their treads), at z = -0.9, clear of the walker's
-- lanes. The animation holds the hips as if both feet stood 3 cm into the higher step;
-- the pelvis rig lowers them onto the lower one.
local RISER = terrain.STAIRS_X + 3 * terrain.RUN -- between the feet's steps
local HUMANOID_X = RISER - 0.04 -- hips: the right ankle 20 cm behind the riser
local HUMANOID_Z = -0.9
local HIGH_STEP_Y = 4 * terrain.RISE
local HUMANOID_Y = HIGH_STEP_Y + FOOT_OFFSET - 0.03 - ANKLE_Y
local HEADING = ik.quat.axis_angle({ 0, 1, 0 }, pi / 2) -- its +Z to the world's +X

-- Its own frame to the world's (hips at their animated place); into `out` when given.
local function humanoid_point(x, y, z, out)
  if out then return out:set(HUMANOID_X + z, HUMANOID_Y + y, HUMANOID_Z - x) end
  return ik.vec3(HUMANOID_X + z, HUMANOID_Y + y, HUMANOID_Z - x)
end

local function make_humanoid()
  local at = {}
  for _, b in ipairs(BODY) do at[b[1]] = b[3] end
  local specs = {}
  for i, b in ipairs(BODY) do
    local name, parent, p = b[1], b[2], b[3]
    if parent then
      local q = at[parent]
      specs[i] = { name = name, parent = parent, position = { p[1] - q[1], p[2] - q[2], p[3] - q[3] } }
    else
      specs[i] = { name = name, position = humanoid_point(p[1], p[2], p[3]), rotation = HEADING }
    end
  end
  return ik.skeleton(specs)
end

-- The reach target: a figure of eight in front of the right shoulder, a little low,
-- swinging across (towards and away from the viewer) as it goes; always within reach.
local function reach_path(t, out)
  local a = 0.9 * t
  return humanoid_point(-0.24 + 0.12 * cos(a), 0.30 + 0.16 * sin(2 * a), 0.36 + 0.10 * sin(a), out)
end

-- The look target: drifts round a wide loop ahead, above head height.
local function look_path(t, out)
  local b = 0.5 * t
  return humanoid_point(-0.4 - 1.3 * sin(b), 0.95 + 0.25 * sin(2 * b + 0.5), 2.0 + 0.45 * cos(b), out)
end

-- ---- the walker ----

local WALKER_BODY_HEIGHT, WALKER_FOOT_OFFSET = 0.5, 0.02
-- A four-legged robot: name, side (1: its left, +X in its frame), hip z (+Z forward).
local WALKER_LEGS = { { "fl", 1, 0.34 }, { "bl", 1, -0.34 }, { "fr", -1, 0.34 }, { "br", -1, -0.34 } }
-- Each leg, from the hip: thigh and shin of WALKER_BONE, the foot under the hip (3 cm
-- further out), the knee halfway down and back: standing, the knees point backwards,
-- as a robot dog's do, well bent.
local WALKER_BONE = 0.35
-- The tail's bones after its root "tail", root to tip.
local WALKER_TAIL = { "tail_2", "tail_3", "tail_4", "tail_tip" }
local FOOT = { 0.06, WALKER_FOOT_OFFSET - WALKER_BODY_HEIGHT, 0 }
local KNEE = { 0.03, FOOT[2] / 2, -math.sqrt(WALKER_BONE ^ 2 - (FOOT[2] / 2) ^ 2 - 0.03 ^ 2) }

-- The loop, a stadium: lane A along +X at z = LANE_Z from START_X to TURN_X (on the
-- plateau, 1.5 m short of the ledge), a half circle of RADIUS, lane B back along -X,
-- and a half circle at the foot of the stairs.
local LANE_Z, RADIUS = 0.55, 0.75
local START_X, TURN_X = -1.0, terrain.LEDGE_X - 1.5
local STRAIGHT = TURN_X - START_X
local ARC = pi * RADIUS
local LOOP = 2 * STRAIGHT + 2 * ARC
local SPEED, TURN_SPEED, BLEND = 0.42, 0.3, 0.6 -- m/s on the lanes and round the turns; m to change
local START_S = 1.0 -- where it starts: on lane A, its front feet on the first step
local EASE_IN = 2.5 -- seconds to get up to speed

-- The point of the loop s metres along it: x, z and the heading (yaw about +Y of the
-- robot's +Z), and how far it is from the nearest turn (0 in a turn).
local function loop_point(s)
  s = s % LOOP
  if s < STRAIGHT then
    return START_X + s, LANE_Z, pi / 2, math.min(s, STRAIGHT - s)
  end
  s = s - STRAIGHT
  if s < ARC then
    local phi = s / RADIUS
    return TURN_X + RADIUS * sin(phi), LANE_Z + RADIUS - RADIUS * cos(phi), pi / 2 - phi, 0
  end
  s = s - ARC
  if s < STRAIGHT then
    return TURN_X - s, LANE_Z + 2 * RADIUS, -pi / 2, math.min(s, STRAIGHT - s)
  end
  s = s - STRAIGHT
  local phi = s / RADIUS
  return START_X - RADIUS * sin(phi), LANE_Z + RADIUS + RADIUS * cos(phi), -pi / 2 - phi, 0
end

-- Speed at s along the loop: slower round the turns, so the outer feet do not rush.
local function speed_at(s)
  local _, _, _, d = loop_point(s)
  return TURN_SPEED + (SPEED - TURN_SPEED) * smoothstep(d / BLEND)
end

local function make_walker()
  local x, z, yaw = loop_point(START_S)
  local ground = terrain.height(x, z) or 0
  local bones = { { name = "body", position = { x, ground + WALKER_BODY_HEIGHT, z },
                    rotation = ik.quat.axis_angle({ 0, 1, 0 }, yaw) } }
  bones[2] = { name = "neck", parent = "body", position = { 0, 0.02, 0.34 } }
  bones[3] = { name = "sensor", parent = "neck", position = { 0, 0.12, 0.12 } }
  -- the tail: four segments back and up from its root, a chain the walker rig wags
  bones[4] = { name = "tail", parent = "body", position = { 0, 0.1, -0.44 } }
  for i, seg in ipairs(WALKER_TAIL) do
    bones[4 + i] = { name = seg, parent = i == 1 and "tail" or WALKER_TAIL[i - 1],
                     position = { 0, 0.045, -0.095 } }
  end
  for _, l in ipairs(WALKER_LEGS) do
    local name, side, hz = l[1], l[2], l[3]
    bones[#bones + 1] = { name = "hip_" .. name, parent = "body", position = { side * 0.14, 0, hz } }
    bones[#bones + 1] = { name = "knee_" .. name, parent = "hip_" .. name,
                          position = { side * KNEE[1], KNEE[2], KNEE[3] } }
    bones[#bones + 1] = { name = "foot_" .. name, parent = "knee_" .. name,
                          position = { side * (FOOT[1] - KNEE[1]), FOOT[2] - KNEE[2], FOOT[3] - KNEE[3] } }
  end
  return ik.skeleton(bones)
end

-- ---- the scene ----

--- Makes the scene.
-- @treturn table the scene (see the contract above)
function M.new()
  local humanoid, walker = make_humanoid(), make_walker()
  local chest, hips = humanoid:bone("chest"), humanoid:bone("hips")
  local scene = {
    name = "humanoid on the stairs, robot dog walking a loop",
    skeletons = { humanoid = humanoid, walker = walker },
    nodes = {
      reach_target = ik.node{ position = reach_path(0) },
      look_target = ik.node{ position = look_path(0) },
      -- the elbow goes out, down and back; the knees forward
      elbow_pole = ik.node{ position = { -0.35, -0.3, -0.8 }, parent = chest },
      knee_pole = ik.node{ position = { 0, -0.4, 0.8 }, parent = hips },
    },
    ground = terrain.ground(),
    targets = { "reach_target", "look_target" },
    poles = { "elbow_pole", "knee_pole" },
    trails = { "humanoid.r_hand" },
    -- the live view draws the humanoid as this skinned mesh (scripts/gen_demo_humanoid.py)
    view_model = { skeleton = "humanoid", asset = "humanoid.glb" },
    time = 0,
    walked = START_S, -- metres along the walker's loop
    params = {
      humanoid = { foot_offset = FOOT_OFFSET, map = M.humanoid_map },
      walker = { body_height = WALKER_BODY_HEIGHT, foot_offset = WALKER_FOOT_OFFSET, legs = {},
                 tail = { "tail" } },
    },
  }
  for i, seg in ipairs(WALKER_TAIL) do scene.params.walker.tail[i + 1] = seg end
  for i, l in ipairs(WALKER_LEGS) do
    scene.params.walker.legs[i] = { name = l[1], side = l[2] }
    if l[3] > 0 then scene.trails[#scene.trails + 1] = "walker.foot_" .. l[1] end -- the front feet
  end

  -- Moves the targets along their paths and the walker's body along its loop (its x,
  -- z and heading; the walker rig owns its height and tilt). dt in seconds. Allocates
  -- nothing: it writes into these.
  local at, heading, up = ik.vec3(), ik.quat(), ik.vec3(0, 1, 0)
  function scene:advance(dt)
    self.time = self.time + dt
    local t = self.time
    self.nodes.reach_target:set_position(reach_path(t, at))
    self.nodes.look_target:set_position(look_path(t, at))
    -- midpoint rule on ds/dt = speed(s), eased in over the first seconds
    local ease = smoothstep((t - 0.5 * dt) / EASE_IN)
    local half = self.walked + 0.5 * dt * ease * speed_at(self.walked)
    self.walked = self.walked + dt * ease * speed_at(half)
    local x, z, yaw = loop_point(self.walked)
    local body = self.skeletons.walker:bone("body")
    body:set_position(at:set(x, body:get_position(at).y, z))
    body:set_rotation(ik.quat.axis_angle(up, yaw, heading))
  end

  return scene
end

--- The walker's loop as a function, for checking: where it is `s` metres along it
-- (`M.LOOP_LENGTH` metres a lap, from the start of the lane up the stairs).
-- @number s metres along the loop
-- @treturn number x
-- @treturn number z
-- @treturn number heading (radians about +Y)
function M.loop_point(s)
  local x, z, yaw = loop_point(s)
  return x, z, yaw
end
M.LOOP_LENGTH = LOOP -- metres

return M
