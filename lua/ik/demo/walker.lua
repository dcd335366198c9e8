-- The built-in demo's four-legged robot, walking its loop over the stairs and the
-- slope: a rig script (see ik.runtime: its top level runs on every (re)load with `ik`,
-- `scene` and `state`; it defines update(dt)). The scene moves the body along the loop
-- (x, z and heading, in its `advance`); ik.rigs.walker does the rest: it steps the legs
-- in a trot (diagonal pairs), plants the feet on the ground, and sets the body's
-- height, pitch and roll from where they stand. Each leg is reported as a chain. Its
-- tail, four bones, wags after a target swinging behind it, each bone held within a
-- cone of the one before it (the first of the body's backward-and-up direction): a
-- CCD chain (smoother than FABRIK under cones) reported with its chain, so `ikrig view`
-- draws the cones.
--
-- The rig lives in `state`, so a reload keeps it and where its feet are planted; edit
-- the gait numbers below and save to see them change (`ikrig watch`). The swing of a
-- foot is fastest mid-step, at about 4.3 times the body's speed in a trot; the scene
-- keeps the body at 0.42 m/s (0.3 in the turns) so no foot moves 5 cm in a frame.
-- luacheck: globals ik scene state update

local walker = require("ik.rigs.walker")

local STEP_HEIGHT = 0.08 -- m the feet lift above the higher of their two footholds
local STEP_TIME = 0.45 -- s a step takes
local STEP_DISTANCE = 0.14 -- m a planted foot trails its rest place before it steps
-- How far above and below the feet's mean height a foot may plant: the body is as long
-- as two treads, so on the stairs its front and back feet are up to two risers apart.
local MAX_STEP = 0.35
-- How slowly the body follows the height of the feet: going down the stairs, the body
-- must not drop before the front feet have swung over the step edge.
local HEIGHT_TIME = 0.3

local sk = scene.skeletons.walker
local params = scene.params.walker

local function make_rig()
  local legs = {}
  for i, l in ipairs(params.legs) do
    legs[i] = { name = l.name, hip = sk:bone("hip_" .. l.name), knee = sk:bone("knee_" .. l.name),
                foot = sk:bone("foot_" .. l.name), pole_offset = { 0, 0, -0.5 } } -- knees bend backwards
  end
  return walker.new{ body = sk:bone("body"), legs = legs, ground = scene.ground, gait = "alternate",
                     body_height = params.body_height, foot_offset = params.foot_offset,
                     step_height = STEP_HEIGHT, step_time = STEP_TIME, step_distance = STEP_DISTANCE,
                     max_step_up = MAX_STEP, max_step_down = MAX_STEP, height_time = HEIGHT_TIME }
end

state.rig = state.rig or make_rig()
state.rig.step_height, state.rig.step_time = STEP_HEIGHT, STEP_TIME

-- The tail: how far each bone may turn from the one before (radians), and its wag.
local TAIL_CONE = math.rad(25)
local TAIL_ROOT_CONE = math.rad(35)
local WAG_SPEED = 3.0 -- radians a second
local WAG_SIDE, WAG_LIFT = 0.14, 0.03 -- m: the target's swing across and up and down

local function make_tail()
  local bones = {}
  for i, name in ipairs(params.tail) do bones[i] = sk:bone(name) end
  local root, first = ik.vec3(bones[1]:get_position()), ik.vec3(bones[2]:get_position())
  local tail = ik.chain{ bones = bones, solver = "ccd", iterations = 20, tolerance = 0.01,
                         base_direction = (first - root):normalized() }
  return { chain = tail, time = 0 }
end
state.tail = state.tail or make_tail()
-- the cones, set again on every (re)load: a reload with new angles takes them at once
state.tail.chain:set_constraint(1, ik.cone{ angle = TAIL_ROOT_CONE })
for i = 2, #params.tail - 1 do state.tail.chain:set_constraint(i, ik.cone{ angle = TAIL_CONE }) end

-- What a frame computes goes into these, made once: a frame allocates nothing.
local tail_root, body = sk:bone("tail"), sk:bone("body")
local wag, offset, body_rotation = ik.vec3(), ik.vec3(), ik.quat()
local foot_at, target_at = ik.vec3(), ik.vec3()
local report_names = {} -- leg name -> its chain's name in the reports
for _, leg in ipairs(params.legs) do report_names[leg.name] = "leg_" .. leg.name end

-- Where the tail reaches for: behind and above its root in the body's frame, swinging
-- from side to side. It is nearer than the straight tail's length, so the tail must
-- curl, which its cones limit: it often stops a few cm short (reported as not reached).
local function wag_target(tail, dt)
  tail.time = tail.time + dt
  local a = WAG_SPEED * tail.time
  offset:set(WAG_SIDE * math.sin(a), 0.17 + WAG_LIFT * math.sin(2 * a), -0.34)
  body:get_rotation(body_rotation):rotate(offset, offset)
  return tail_root:get_position(wag):add(offset, wag)
end

-- How far a leg's foot is from its target this frame (m).
local function miss(leg)
  local t = leg.target
  return leg.foot:get_position(foot_at):sub(target_at:set(t[1], t[2], t[3]), foot_at):length()
end

function update(dt)
  local rig = state.rig
  rig:update(dt)
  for _, leg in ipairs(rig.legs) do scene.report(report_names[leg.name], leg.reached, miss(leg)) end
  local tail = state.tail
  local reached, distance, iterations = tail.chain:solve(wag_target(tail, dt))
  scene.report("tail", reached, distance, iterations, tail.chain)
end
